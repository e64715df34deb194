"""The stills of the views drawn on the page, made by the code the page runs.

A page view is an anywidget whose ES module (its ``_esm``) exports, beside
anywidget's ``render``, ``still(state)``: the figure as SVG text, from a plain
object of the model's traits. The kernel cannot run it, so a stored
notebook's still (the ``image/png`` GitHub and nbviewer show) is made here,
when the notebook is stored: headless Chromium (Debian's, through
Playwright's sync API, started once for many stills) imports the module as
anywidget does (from a blob URL), calls ``still`` with the stored traits (the
state without the keys that start with ``_``, parsed from JSON as the page
parses it), puts the SVG alone on a white page and screenshots exactly that
element at device scale factor 1: the PNG is the SVG's CSS size.

Each still gets a fresh blank document, so nothing one module leaves behind
reaches the next; every network request is refused, so a still depends on
the module's text and the state alone (the project's modules inline their
imports: :func:`echomq_viz.widgets.page_modules.page_module`).

    with PageStills() as page:
        png = page.render(model["state"])  # base64 PNG text

:class:`NoBrowser` (no Playwright, no Chromium, or one that does not start)
and :class:`StillError` (no ``still`` export, ``still`` threw, not an SVG)
carry one line each, the JavaScript error's message included.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "StillError", "NoBrowser", "exports_still", "browser_missing", "PageStills"]

CHROMIUM = os.environ.get("ECHOMQ_VIZ_CHROMIUM", "/usr/bin/chromium")  # Debian's; never a downloaded browser
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1024, "height": 768}  # wider than any view (840 px at most); grown for a larger SVG

# A named export ``still``: ``export function still``, ``export const still =``, ``export { still }``...
_STILL_DECLARED = re.compile(r"\bexport\s+(?:async\s+)?function\s*\*?\s*still\s*\(|\bexport\s+(?:const|let|var)\s+still\s*=")
_EXPORT_LIST = re.compile(r"\bexport\s*\{([^}]*)\}")

_BLANK = ('<!doctype html><html><head><meta charset="utf-8"></head>'
          '<body style="margin:0;padding:0;background:#ffffff"></body></html>')

# Import the module, call still(state), put the SVG alone in the body. Every failure comes back as
# {error: one line} rather than as a thrown error (whose text Playwright wraps in a stack).
_RENDER_JS = """async ({source, stateText}) => {
  const oneLine = (e) => String((e && e.message) || e).split("\\n")[0].trim() || String(e);
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  let module;
  try {
    module = await import(url);
  } catch (e) {
    return {error: `the module does not load: ${e && e.name ? e.name + ": " : ""}${oneLine(e)}`};
  } finally {
    URL.revokeObjectURL(url);
  }
  if (typeof module.still !== "function") return {error: "the module has no `still` export"};
  let svg;
  try {
    svg = await module.still(JSON.parse(stateText));
  } catch (e) {
    return {error: `still(state) threw ${e && e.name ? e.name + ": " : ""}${oneLine(e)}`};
  }
  if (typeof svg !== "string" || !/^\\s*<svg[\\s>]/.test(svg))
    return {error: `still(state) returned ${typeof svg === "string" ? JSON.stringify(svg.slice(0, 40)) : typeof svg}, not SVG text`};
  document.body.innerHTML = svg.trim();
  const root = document.body.firstElementChild;
  if (!root || root.tagName.toLowerCase() !== "svg" || document.body.children.length !== 1)
    return {error: "still(state) returned more than one SVG element"};
  root.id = "echomq-viz-still";
  const box = root.getBoundingClientRect();
  let width = box.width, height = box.height;
  try { width = root.width.baseVal.value; height = root.height.baseVal.value; } catch (e) {}
  return {svg, width, height};
}"""

T = TypeVar("T")


class StillError(RuntimeError):
    """A still that could not be made; its message is one line."""


class NoBrowser(StillError):
    """No browser to make stills with: Playwright or Chromium missing, or Chromium did not start."""


def exports_still(esm: object) -> bool:
    """Whether the module text ``esm`` (a model's ``_esm``) has a named export
    ``still``: a cheap text check, the browser tells for sure."""
    if not isinstance(esm, str):
        return False
    if _STILL_DECLARED.search(esm):
        return True
    return any(item.split()[-1] == "still" for listed in _EXPORT_LIST.findall(esm)  # ``x as still``, ``still``
               for item in listed.split(",") if item.split())


def browser_missing(chromium: str | None = None) -> str | None:
    """None, or why there is no browser to make stills with (one line)."""
    chromium = chromium or CHROMIUM
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"page stills need Playwright, which is not installed (pip install playwright): {exc}"
    if not (os.path.isfile(chromium) and os.access(chromium, os.X_OK)):
        return f"page stills need Chromium, and there is none at {chromium} (apt-get install chromium)"
    return None


class _DriverGone(logging.Filter):
    """Drops asyncio's "exception was never retrieved" for Playwright's driver gone away (the terminal's
    Ctrl-C reaches it too: it closes Chromium and exits). The call it failed said so already; Playwright
    reads that future only while it starts."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and str(record.exc_info[1]) == "Connection closed while reading from the driver")


_DRIVER_GONE = _DriverGone()


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip() and not set(line.strip()) <= set("=")]
    return lines[0] if lines else type(error).__name__


class PageStills:
    """Headless Chromium making page views' stills: started once (on the first
    still, or by :meth:`start` / ``with``), then about a tenth of a second a still.

    Every call to Playwright runs on one thread of its own, so an instance
    works from any thread, and beside a running asyncio loop (in a kernel),
    where Playwright's sync API refuses to run. :meth:`close` (or leaving the
    ``with`` block) stops the browser; a closed instance starts a new one if
    used again."""

    def __init__(self, chromium: str | None = None) -> None:
        self.chromium = chromium or CHROMIUM
        self._thread: ThreadPoolExecutor | None = None
        self._playwright = None
        self._browser = None
        self._page = None

    # -- the browser ---------------------------------------------------------------------------

    def __enter__(self) -> "PageStills":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def started(self) -> bool:
        return self._page is not None

    def start(self) -> "PageStills":
        """Start Chromium, unless started; :class:`NoBrowser` if it cannot."""
        if self._page is None:
            missing = browser_missing(self.chromium)
            if missing:
                raise NoBrowser(missing)
            if self._thread is None:
                self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echomq-viz-page-stills")
            self._call(self._start)
        return self

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        logging.getLogger("asyncio").addFilter(_DRIVER_GONE)  # once: a filter is added once
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(executable_path=self.chromium, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, service_workers="block",
                                          color_scheme="light", reduced_motion="reduce")
            context.route("**/*", lambda route: route.abort())  # a still is the module and the state, nothing else
            self._page = context.new_page()
        except Exception as exc:
            playwright.stop()
            raise NoBrowser(f"Chromium at {self.chromium} did not start for page stills: {_one_line(exc)}") from exc
        self._playwright, self._browser = playwright, browser

    def close(self) -> None:
        """Stop the browser (if started)."""
        if self._thread is None:
            return
        try:
            if self._playwright is not None:
                self._call(self._stop)
        finally:
            self._thread.shutdown(wait=True)
            self._thread = None

    def _stop(self) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            self._playwright.stop()
            self._playwright = self._browser = self._page = None

    def _call(self, work: Callable[..., T], *args: Any) -> T:
        return self._thread.submit(work, *args).result()

    # -- the stills ----------------------------------------------------------------------------

    def svg(self, state: dict) -> str:
        """The SVG text ``still`` returns for the stored model ``state`` (its
        ``_esm`` and traits)."""
        return self._draw(state, screenshot=False)[0]

    def render(self, state: dict) -> str:
        """The still of the stored model ``state`` (a dict holding ``_esm`` and
        the synced traits): base64 PNG text, the SVG's CSS size on white."""
        return self._draw(state, screenshot=True)[1]

    def _draw(self, state: dict, screenshot: bool) -> tuple[str, str]:
        source = state.get("_esm")
        if not isinstance(source, str) or not source.strip():
            raise StillError("no page still: the model's state holds no `_esm` module text")
        traits = {key: value for key, value in state.items() if not key.startswith("_")}
        try:
            state_text = json.dumps(traits)
        except (TypeError, ValueError) as exc:
            raise StillError(f"no page still: the model's traits are not JSON ({exc})") from None
        self.start()
        return self._call(self._draw_here, source, state_text, screenshot)

    def _draw_here(self, source: str, state_text: str, screenshot: bool) -> tuple[str, str]:
        from playwright.sync_api import Error as PlaywrightError

        page = self._page
        try:
            page.set_content(_BLANK)  # a fresh document: nothing of the last module's is left
            drawn = page.evaluate(_RENDER_JS, {"source": source, "stateText": state_text})
            if "error" in drawn:
                raise StillError(f"no page still: {drawn['error']}")
            if not screenshot:
                return drawn["svg"], ""
            width, height = math.ceil(drawn["width"]), math.ceil(drawn["height"])
            if width < 1 or height < 1:
                raise StillError(f"no page still: still(state) returned an SVG of {drawn['width']}x{drawn['height']} px")
            size = page.viewport_size
            if width > size["width"] or height > size["height"]:  # never squeezed by a max-width
                page.set_viewport_size({"width": max(width, VIEWPORT["width"]),
                                        "height": max(height, VIEWPORT["height"])})
            png = page.locator("#echomq-viz-still").screenshot(type="png", animations="disabled", caret="hide")
            if page.viewport_size != VIEWPORT:
                page.set_viewport_size(VIEWPORT)
        except PlaywrightError as exc:
            raise StillError(f"no page still: the browser failed: {_one_line(exc)}") from None
        return drawn["svg"], base64.b64encode(png).decode("ascii")
