"""Every notebook as a static HTML page that renders its widgets and figures
from the stored widget state, with no network at all.

``jupyter nbconvert --to html`` alone loads its widget JavaScript from public
CDNs. Here the three pieces are fetched once, at build time, and copied next
to the pages:

- ``@jupyter-widgets/html-manager@^1`` (``dist/embed-amd.js``, the widget
  manager for ipywidgets 8, and its icon fonts) and ``requirejs``
  (``require.js``), taken from the npm registry with ``npm pack`` into a
  cache folder (``~/.cache/echomq-viz/js`` by default; nothing of it is
  committed);
- anywidget's AMD bundle, shipped in its wheel as
  ``share/jupyter/nbextensions/anywidget/index.js`` (the classic notebook's
  front end: an AMD module that needs only ``@jupyter-widgets/base``, which
  ``embed-amd.js`` defines); the page finds it through a ``require.config``
  path, so the widget manager's loader never falls back to its CDN.

An anywidget view (model ``AnyModel`` of module ``anywidget``) carries its ES
module as text (``_esm``); anywidget's front end imports it from a ``blob:``
URL, so it runs on a page opened from disk, and the controls it draws itself
move there with no kernel. Those are left alone; every ipywidgets control
is switched off (:func:`~.page_notice.freeze_controls`), and the notice at the top of each
page says which figures move and which are stills (:func:`~.page_notice.notice_html`).

Each notebook is run here (its own kernel, the embedded Redis or
``REDIS_URL``) with its widget state stored: a page view's figure is its
model's traits, drawn again by its module in the page; a figure no control
moves is an image widget, its PNG in the state.

Output layout::

    OUT/index.html                      (the notebooks as cards, as the app's front page)
    OUT/01-one-score-two-keys.html ...
    OUT/static/require.js
    OUT/static/embed-amd.js
    OUT/static/anywidget/index.js
    OUT/@jupyter-widgets/[html-manager/dist/]*.woff2  (icon fonts, where its CSS looks)
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, Sequence

from echomq_viz.launcher._notebook_run import execute_with_widgets  # re-exported: the run of one notebook
from echomq_viz.launcher.page_notice import (  # re-exported: what the pages say of their figures
    ANYWIDGET, LIVE_NOTICE_HTML, MOVING_NOTICE_HTML, SNAPSHOT_NOTICE_HTML, anywidget_versions, freeze_controls,
    notice_html, same_minor)
from echomq_viz.peers.npm import cache_root, one_process_at_a_time, run_npm
from echomq_viz.launcher.app_template import TEMPLATE, TEMPLATE_ROOT

__all__ = ["ExportError", "ExportStopped", "JsAsset", "JS_ASSETS", "fetch_js_assets",
           "anywidget_frontend", "export_notebooks", "execute_with_widgets", "redis_for_kernels",
           "freeze_controls", "notice_html", "STATIC", "SNAPSHOT_NOTICE_HTML", "MOVING_NOTICE_HTML",
           "LIVE_NOTICE_HTML"]

STATIC = "static"  # the folder beside the pages holding the JavaScript


class ExportError(RuntimeError):
    """The export could not be done; the message says what to do."""


class ExportStopped(Exception):
    """A stop (``stop()`` held) ended the export; ``written`` of ``total`` pages were written before it."""

    def __init__(self, written: Sequence[Path], total: int) -> None:
        super().__init__(f"stopped; {len(written)} of {total} pages written")
        self.written, self.total = list(written), total


@dataclass(frozen=True)
class JsAsset:
    """Files out of one npm package: (tarball member pattern, folder beside
    the pages) pairs; each matching member keeps its file name."""

    spec: str  # what ``npm pack`` is given
    files: tuple[tuple[str, str], ...]


JS_ASSETS = (
    JsAsset("@jupyter-widgets/html-manager@^1", (
        ("package/dist/embed-amd.js", STATIC),
        # its icon fonts (Font Awesome, for button icons), in the two folders
        # its two bundled stylesheets look in; woff2 is enough for browsers today
        ("package/dist/*.woff2", "@jupyter-widgets/html-manager/dist"),
        ("package/dist/*.woff2", "@jupyter-widgets"),
    )),
    JsAsset("requirejs@^2", (("package/require.js", STATIC),)),
)



# The lab template, plus: anywidget's module path for require.js, and MathJax only when a
# notebook has maths (it is the one piece still taken from a CDN).
_TEMPLATE = """\
{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}
{{ super() }}
<script>require.config({paths: {"anywidget": "__STATIC__/anywidget/index"}});</script>
{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}
{%- if resources.echomq_viz_mathjax -%}{{ super() }}{%- endif -%}
{%- endblock html_head_js_mathjax -%}
{%- block extra_css -%}
{{ super() }}
<style>/* JupyterLab gives widgets its UI font; a static page must say so itself */
.jupyter-widgets, .jupyter-widgets input, .jupyter-widgets button, .jupyter-widgets select,
.widget-readout { font-family: var(--jp-ui-font-family); }
/* prompts and code comments at a contrast of at least 4.5:1 on their backgrounds (WCAG AA) */
body.jp-Notebook { --jp-cell-prompt-not-active-opacity: 1; --jp-cell-prompt-not-active-font-color: #595959;
  --jp-cell-inprompt-font-color: #1f5890; --jp-cell-outprompt-font-color: #a3402a;
  --jp-mirror-editor-comment-color: #3b6363; --jp-mirror-editor-number-color: #007a00;
  --jp-mirror-editor-operator-color: #8a1ccf; --jp-mirror-editor-meta-color: #8a1ccf;
  --jp-mirror-editor-atom-color: #4d4dcc; --jp-mirror-editor-quote-color: #007a00;
  --jp-mirror-editor-bracket-color: #6b6b45; --jp-mirror-editor-error-color: #c00000; }
/* links in prose told apart by more than their colour */
.jp-RenderedHTMLCommon a, .jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited { text-decoration: underline !important; }
.echomq-viz-snapshot { margin: 0 0 1em; padding: 0.5em 1em; border-left: 4px solid #1f5890;
  background: #eef3f8; color: #1a1a1a; font-family: var(--jp-ui-font-family); }
.echomq-viz-snapshot code { color: inherit; }
__APP_PAGE_CSS__
</style>
{%- endblock extra_css -%}
{%- block body_header -%}
{{ super() }}
<p class="echomq-viz-snapshot" role="note">{{ resources.echomq_viz_notice }}</p>
{%- endblock body_header -%}
{%- block footer_js -%}
{{ super() }}
<script>__NAME_HANDLES__
__LABEL_FIGURES__
/* Handles are switched off like their sliders. (An anywidget view's own controls are not: they run in the page.) */
new MutationObserver(() => {
  document.querySelectorAll(".noUi-handle:not([aria-disabled])").forEach(h => h.setAttribute("aria-disabled", "true"));
}).observe(document.documentElement, {childList: true, subtree: true});
</script>
{%- endblock footer_js -%}
""".replace("__STATIC__", STATIC)
for _marker, _script in (("__NAME_HANDLES__", "name-slider-handles.js"), ("__LABEL_FIGURES__", "label-figures.js"),
                        ("__APP_PAGE_CSS__", "app-page.css")):
    # the app's own scripts and page style (its Voila template), the same on the offline pages
    _TEMPLATE = _TEMPLATE.replace(_marker, (TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE / _script).read_text(
        encoding="utf-8").strip())


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")


def fetch_js_assets(cache_dir: Path | None = None, *, log: Callable[[str], None] = lambda _: None,
                    assets: Sequence[JsAsset] = JS_ASSETS) -> dict[str, Path]:
    """The ``assets`` (by default the widget manager with its icon fonts, and
    require.js), from the cache or ``npm pack``.

    Each package is packed once into ``cache_dir/js/<spec>/`` and the files
    needed are unpacked beside its tarball (with a ``files.json`` listing
    them); later builds need no network. Returns path beside the pages ->
    cached file.
    """
    root = (cache_dir or cache_root()) / "js"
    found: dict[str, Path] = {}
    for asset in assets:
        folder = root / _slug(asset.spec)
        with one_process_at_a_time(folder):
            found.update(_cached_or_fetched(asset, folder, log))
    return found


def _cached_or_fetched(asset: JsAsset, folder: Path, log: Callable[[str], None]) -> dict[str, Path]:
    listing = folder / "files.json"
    wanted = [list(pair) for pair in asset.files]
    try:
        recorded = json.loads(listing.read_text())
        targets = {name: folder / "files" / name for name in recorded["files"]}
        if recorded["patterns"] == wanted and targets and all(target.is_file() for target in targets.values()):
            return targets
    except (OSError, ValueError, KeyError, TypeError):
        pass
    tarballs = sorted(folder.glob("*.tgz"))  # packed before: no network needed
    tarball = tarballs[-1] if tarballs else _npm_pack(asset.spec, folder, log)
    shutil.rmtree(folder / "files", ignore_errors=True)
    targets = _extract(tarball, asset.files, folder / "files")
    listing.write_text(json.dumps({"patterns": wanted, "files": sorted(targets)}))
    return targets


def _npm_pack(spec: str, folder: Path, log: Callable[[str], None]) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise ExportError("npm is needed once, to fetch the widget JavaScript from the npm registry "
                          "(install Node.js, e.g. apt-get install npm)")
    log(f"fetching {spec} with npm pack into {folder}")
    out = run_npm(npm, ["pack", spec, "--json", "--ignore-scripts", "--pack-destination", str(folder)],
                  cwd=folder, what=f"npm pack {spec}", error=ExportError)
    try:
        filename = json.loads(out)[0]["filename"]
    except (ValueError, LookupError, TypeError):
        raise ExportError(f"npm pack {spec}: unexpected output {out[:200]!r}") from None
    # npm names scoped tarballs "scope-name-1.2.3.tgz"
    tarball = folder / filename.replace("@", "").replace("/", "-")
    if not tarball.is_file():
        candidates = sorted(folder.glob("*.tgz"))
        if not candidates:
            raise ExportError(f"npm pack {spec} wrote no tarball into {folder}")
        tarball = candidates[-1]
    return tarball


def _extract(tarball: Path, patterns: Iterable[tuple[str, str]], into: Path) -> dict[str, Path]:
    """Unpack the regular files matching each pattern to ``into/<folder>/<name>``."""
    found: dict[str, Path] = {}
    with tarfile.open(tarball, "r:gz") as archive:
        members = [info for info in archive.getmembers() if info.isfile()]
        for pattern, folder in patterns:
            matched = [info for info in members if fnmatch.fnmatchcase(info.name, pattern)]
            if not matched:
                raise ExportError(f"{tarball.name} has no {pattern}")
            for info in matched:
                name = f"{folder}/{PurePosixPath(info.name).name}"
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                handle = archive.extractfile(info)
                assert handle is not None
                partial = target.with_name(target.name + ".part")
                partial.write_bytes(handle.read())
                partial.replace(target)
                found[name] = target
    return found


def _wheel_file(distribution_name: str, relative: str, what: str) -> Path:
    """A file a wheel installed under ``share/jupyter/`` (``relative``), found
    through the distribution's record, else on Jupyter's data path."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(distribution_name)
    except PackageNotFoundError:
        raise ExportError(f"{distribution_name} is not installed: pip install {distribution_name}") from None
    for file in dist.files or ():
        if str(file).replace("\\", "/").endswith(relative):
            path = Path(dist.locate_file(file)).resolve()
            if path.is_file():
                return path
    from jupyter_core.paths import jupyter_path

    for base in jupyter_path():
        path = Path(base, relative.removeprefix("share/jupyter/"))
        if path.is_file():
            return path
    raise ExportError(f"{what} ({relative}) is not installed with {distribution_name} "
                      f"{dist.version}: pip install --force-reinstall {distribution_name}")


def anywidget_frontend() -> Path:
    """anywidget's front end for static pages: the classic notebook's AMD
    module, as its wheel installed it (``define(["@jupyter-widgets/base"], ...)``,
    giving ``AnyModel`` and ``AnyView``)."""
    return _wheel_file(ANYWIDGET, "share/jupyter/nbextensions/anywidget/index.js", "anywidget's front end")


def _frontend_version(distribution_name: str) -> str:
    from importlib.metadata import version

    return version(distribution_name)


def _has_maths(nb) -> bool:
    return any(cell.cell_type == "markdown" and ("$" in cell.source or "\\begin{" in cell.source)
               for cell in nb.cells)


def _exporter():
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader({"echomq_viz_offline.html.j2": _TEMPLATE})],
        template_file="echomq_viz_offline.html.j2",
        widget_renderer_url=f"{STATIC}/embed-amd.js",
        require_js_url=f"{STATIC}/require.js",
    )


def _read(path: Path):
    """The notebook at ``path``, or an :class:`ExportError` of one line naming it (not JSON, not
    text, or JSON that is no notebook: nbformat's errors for each differ)."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001 (any of them means the same to the reader)
        first = (str(exc).strip().splitlines() or [""])[0][:120]
        raise ExportError(f"{path.name} is not a notebook that can be read: {type(exc).__name__}"
                          + (f": {first}" if first else "")) from None


def export_notebooks(
    notebooks: Path, out: Path, *, names: Sequence[str] | None = None, cache_dir: Path | None = None,
    execute: bool = True, timeout: int = 600, log: Callable[[str], None] = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
) -> list[Path]:
    """Write ``out/<notebook>.html`` for every notebook (or the ``names``
    given) and the JavaScript they need under ``out/static/``.

    :param execute: run each notebook first (the default) so its figures are
        in the widget state; False keeps the stored outputs and state as they are.
    :param stop: asked between the steps and while a notebook runs: once it holds,
        its kernel is shut down and :class:`ExportStopped` raised; the pages written stay.
    :returns: the pages written.
    """
    paths = _select(notebooks, names)
    read = {path: _read(path) for path in paths}  # a file that is no notebook is said before anything is written
    _writable_folder(out)  # before minutes of fetching and running: a folder that cannot be is said now
    try:
        assets = fetch_js_assets(cache_dir, log=log)
    except ExportError:  # npm has the Ctrl-C too
        if stop():
            raise ExportStopped([], len(paths)) from None
        raise
    try:
        assets[f"{STATIC}/{ANYWIDGET}/index.js"] = anywidget_frontend()
        no_anywidget = None
    except ExportError as missing:  # needed only by a page with an anywidget view: said there
        no_anywidget = missing
    out.mkdir(parents=True, exist_ok=True)
    for name, source in assets.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, out / name)

    exporter = _exporter()
    written = []
    from echomq_viz.launcher.page_stills import browser_missing

    # the views drawn in the page move on the pages; their stills (the pictures a
    # page shows in place of a view that cannot render) need a browser to draw
    no_browser = browser_missing() if execute else None
    if no_browser is not None:
        log(f"note: {no_browser}; the pages' moving views are stored without a still")
    with redis_for_kernels(execute):
        for path, nb in read.items():
            if stop():
                raise ExportStopped(written, len(paths))
            if execute:
                log(f"running {path.name}")
                try:
                    execute_with_widgets(nb, path, timeout, page_stills=no_browser is None, stop=stop)
                except Exception as exc:  # a failing cell: say which notebook; or the stop that ended it
                    if stop():  # (the browser making stills has the terminal's Ctrl-C too, and ends)
                        raise ExportStopped(written, len(paths)) from None
                    from nbconvert.filters import strip_ansi

                    said = strip_ansi(str(exc)).strip()  # nbclient's error keeps the traceback's colours
                    raise ExportError(f"{path.name} failed to run: {type(exc).__name__}: "
                                      f"{said.splitlines()[-1] if said else ''}") from exc
            elif "widgets" not in nb.metadata:
                log(f"note: {path.name} has no stored widget state; its widgets will not render")
            stored_for = anywidget_versions(nb)
            if stored_for and no_anywidget is not None:
                raise ExportError(f"{path.name} has anywidget views: {no_anywidget}")
            for stored in sorted(version for version in stored_for
                                 if not same_minor(version, _frontend_version(ANYWIDGET))):
                log(f"note: {path.name} stored anywidget views for {stored or 'no version'}; "
                    f"its page runs them with anywidget {_frontend_version(ANYWIDGET)}")
            freeze_controls(nb)
            body, _ = exporter.from_notebook_node(
                nb, resources={"echomq_viz_mathjax": _has_maths(nb), "echomq_viz_notice": notice_html(nb),
                               "metadata": {"name": path.stem}})
            page = out / f"{path.stem}.html"
            page.write_text(body, encoding="utf-8")
            log(f"wrote {page}")
            written.append(page)
    if stop():
        raise ExportStopped(written, len(paths))
    if not names:  # the whole set: its front page too (a subset would hide the others)
        from echomq_viz.launcher.app_index import write_offline_index

        log(f"wrote {write_offline_index(notebooks, [path.name for path in paths], out)}")
    return written


def _writable_folder(out: Path) -> None:
    """Make ``out`` (and its parents) or find it; one line when that cannot be."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not os.access(out, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied", str(out))
    except OSError as exc:
        raise ExportError(f"cannot write the pages into {out}: {exc.strerror or exc}; give --out a folder "
                          "you can write in") from None


def _select(notebooks: Path, names: Iterable[str] | None) -> list[Path]:
    if not names:
        paths = sorted(notebooks.glob("*.ipynb"))
        if not paths:
            raise ExportError(f"no notebooks in {notebooks}")
        return paths
    paths = []
    for name in names:
        candidate = Path(name)
        if not candidate.is_file():
            candidate = notebooks / Path(name).name
        if not candidate.is_file():
            raise ExportError(f"no notebook {name}")
        paths.append(candidate)
    return paths


class redis_for_kernels:
    """While running notebooks: ``REDIS_URL`` as given, else one private
    embedded server shared by their kernels, stopped afterwards."""

    def __init__(self, needed: bool) -> None:
        self.needed = needed
        self.server = None

    def __enter__(self):
        from echomq_viz.redis_side.server import ENV_URL, url_or_private_server

        if self.needed:
            url, self.server = url_or_private_server()
            os.environ[ENV_URL] = url
        return self

    def __exit__(self, *exc) -> None:
        from echomq_viz.redis_side.server import ENV_URL

        if self.server is not None:
            os.environ.pop(ENV_URL, None)
            self.server.stop()
