"""The notebooks in a real browser: Debian's Chromium driven by Playwright.

Every notebook in ``notebooks/`` (found by glob, so new ones are covered
without touching this file) is opened

- in JupyterLab started by ``echomq-viz lab``: Run All, then
  :func:`run_all_and_check_in_lab` (called by test_page_views.py's
  ``TestInJupyterLab``, whose one page load per notebook first checks it
  as stored);
- in the Voila app started by ``echomq-viz app``: one page per notebook,

and checked the way a reader uses it: no "Error displaying widget", no error
output, the pages that ask first unanswered until the test acts. In the app
every slider is dragged to its far end and every Redis control (buttons such
as "Run it on Redis", "Pop one", "Drain", and the "live on Redis" switch) is
pressed, each changing what the view shows; in JupyterLab each view's first
slider moves from the keyboard (an arrow key, then Home/End), or where it has
none its first control is pressed. The sliders and buttons are the widgets'
own code, the same on both pages: each control is swept once, on the app,
whose kernel is ours. One screenshot per notebook goes to ``build/screenshots/``.

A view is of one of two kinds, and a notebook may hold either: an ipympl view
(ipywidgets controls around a matplotlib canvas the kernel draws) or a page
view (an anywidget whose module draws an SVG figure, its caption and its own
controls, native ``<input type=range>`` among them, in ``.emq-view``). Every
check here takes both: a "slider" is a ``.widget-slider`` or a page view's
range. A page view's ranges must be named and follow the keyboard (arrow keys
each way, Home/End), in JupyterLab, the app, Notebook 7 and on the offline
pages alike, its view answering each move: its caption follows (its figure
alone where the caption holds an answer back; a status line where the value
goes to the kernel). Its figure must be drawn, captioned by its own title, no
wider than 840 px, unclipped, its text 12 px or more (page_checks.py).
tests/launcher/test_page_views.py checks what only page views promise: alive
before any cell runs, the page's numbers equal to Python's, and a drag that
costs the kernel nothing.

Jupyter Notebook 7 gets a smoke test (issue 32): notebooks 01 and 10 run,
their views render and their first control moves (01's first slider: a page
view's range by the keyboard, an ipywidgets slider by a drag, as its handles
take no arrow keys there, upstream behaviour; 10, which has no slider, its
library menu). It renders widgets through the same
JupyterLab components, so the full checks run in JupyterLab, the app and the
offline pages only.

Then ``echomq-viz export --no-execute`` writes the offline pages of the
notebooks as stored, and each one is opened from disk with every network
request refused (:func:`check_offline_page`, called by test_page_views.py's
``TestOnTheOfflinePage``): widgets and figures render, every ipywidgets control is
visibly switched off while the page views' own controls move, and the notice
at the top says which figures move (``export.notice_html``).

axe-core (``npm pack axe-core@4``, cached like the export's JavaScript)
checks every app page and every offline page: no critical and no serious
accessibility violation.

One class per front end (``TestVoila`` and ``TestNotebook7`` here; JupyterLab's and
the offline pages' in test_page_views.py, whose checks ride on the same page
loads): pytest-xdist (``--dist=loadscope``) hands a whole class
to one worker, which starts that front end's server once for the class
(class-scoped fixtures: stopped when its class is done, not left running
beside the next front end) and one browser for the module. Every check of a
notebook rides on one page load: one test per notebook and front end.

Chromium is ``/usr/bin/chromium`` (``apt-get install chromium``; never a
downloaded browser). Without it these tests skip, saying why, unless
``ECHOMQ_VIZ_REQUIRE_BROWSER=1`` (CI), where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import nbformat
import pytest

from echomq_viz.launcher.export import JsAsset, cache_root, fetch_js_assets, notice_html
from echomq_viz.redis_side.server import RedisServer, free_tcp_port
from page_checks import STORED_VIEW_ERRORS, Watch, check_page, close_lab_sidebar
from processes import stop_group
from test_cli import TOKEN, Launched

pytestmark = pytest.mark.slow  # real browsers on real servers: minutes

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(path.name for path in NOTEBOOK_DIR.glob("*.ipynb"))
# Notebook 7's smoke test (issue 32): 01 and 10, by their numbers.
NOTEBOOK7_SMOKE = ("01-", "10-")
# The notebooks the issue names; they must have these controls.
MUST_HAVE = {
    "01-one-score-two-keys.ipynb": {"sliders": 2},
    "02-which-pops-first.ipynb": {"sliders": 4, "buttons": {"Run it on Redis"}},
    "03-inside-the-consume.ipynb": {"buttons": {"Pop one", "Drain"}},
    "04-tiers-as-bands.ipynb": {"sliders": 3},
}
SCREENSHOTS = Path(os.environ.get("ECHOMQ_VIZ_SCREENSHOTS", ROOT / "build" / "screenshots"))
CHROMIUM = os.environ.get("ECHOMQ_VIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1366, "height": 768}

# A view drawn in the page (an anywidget: its SVG figure, caption and controls), and its parts.
PAGE_VIEW = ".emq-view"
PAGE_RANGE = ".emq-view input[type=range]"
CAPTION = ".emq-caption"
# A slider of either kind: ipywidgets' or a page view's range.
SLIDERS = f".widget-slider, {PAGE_RANGE}"
# The "... on Redis" switches and the buttons, of either kind (a page view's checkbox sits in a
# row with its <label for>, as controls.js draws it; scoped to a view, a selector cannot name the
# view itself).
SWITCHES = ".widget-checkbox, .emq-row:has(> input[type=checkbox])"
# (a page view's pressable choice, aria-pressed, is a guess like a ToggleButtons' option, no action;
# a page view hides a button it has no use for yet)
BUTTONS = "button.widget-button, .emq-view button:not([aria-pressed]):visible"

# An output holding one of our interactive views.
VIEW = ".jp-OutputArea-output:has(.widget-slider, .widget-button, .widget-checkbox, .emq-view)"
STDERR = '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'

# One string per figure in an element: the size and a hash (FNV-1a) of every
# pixel on its ipympl canvas, or of the markup of a page view's SVG. Polled ten
# times a second while a view settles, so it sends a short string back rather
# than a PNG encoding (toDataURL).
FIGURES_JS = """el => [...el.querySelectorAll('.jupyter-matplotlib-canvas-div canvas:first-child, .emq-view .emq-figure svg')]
    .map(c => {
        let hash = 0x811c9dc5;
        if (c.tagName.toLowerCase() === 'svg') {
            const markup = c.outerHTML;
            for (let i = 0; i < markup.length; i++) hash = Math.imul(hash ^ markup.charCodeAt(i), 0x01000193);
            return `svg:${(hash >>> 0).toString(16)}`;
        }
        if (!c.width || !c.height) return '';
        const pixels = new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer);
        for (let i = 0; i < pixels.length; i++) hash = Math.imul(hash ^ pixels[i], 0x01000193);
        return `${c.width}x${c.height}:${(hash >>> 0).toString(16)}`;
    })"""
# How many pixels of each figure are drawn (not white, not transparent), sampled.
PAINTED_JS = """el => [...el.querySelectorAll('.jupyter-matplotlib-canvas-div canvas:first-child')]
    .map(c => {
        if (!c.width || !c.height) return 0;
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4 * 7)
            if (d[i + 3] > 0 && (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245)) n++;
        return n;
    })"""


AXE = JsAsset("axe-core@4", (("package/axe.min.js", "axe-core"),))
SEVERE = ("critical", "serious")
AXE_JS = """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
    .filter(v => %s.includes(v.impact))
    .map(v => `${v.impact} ${v.id} (${v.help}): ` + v.nodes.slice(0, 4)
        .map(n => n.target.join(' ') + ' ' + n.html.slice(0, 140)).join(' | '))""" % list(SEVERE)


# -- the browser and the servers ----------------------------------------------------------------


def _browser_available() -> str | None:
    """None, or why there is no browser to test with."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _browser_available()
    if reason:
        if os.environ.get("ECHOMQ_VIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required (ECHOMQ_VIZ_REQUIRE_BROWSER=1): {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
    finally:
        playwright.stop()


def _need_npm_once(what: str) -> None:
    """npm fetches ``what`` into the cache once; without either, skip (fail in CI)."""
    if shutil.which("npm") is None and not (cache_root() / "js").is_dir():
        reason = f"npm is needed once to fetch {what} (apt-get install npm)"
        if os.environ.get("ECHOMQ_VIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def axe_script(browser) -> Path:
    """axe-core's browser bundle, from the cache or ``npm pack``."""
    _need_npm_once("axe-core")
    return fetch_js_assets(assets=(AXE,))["axe-core/axe.min.js"]


def assert_accessible(page, axe_script: Path, where: str) -> None:
    """axe-core on the page as it is now: no critical or serious violation."""
    page.add_script_tag(path=str(axe_script))
    found = page.evaluate(AXE_JS)
    assert not found, f"{where}: accessibility violations (axe-core):\n" + "\n".join(found)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    """A copy of the notebooks: the browser runs and saves them there, never
    in the checkout."""
    folder = tmp_path_factory.mktemp("served") / "notebooks"
    folder.mkdir()
    for path in NOTEBOOK_DIR.glob("*.ipynb"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="class")
def lab(browser, served, tmp_path_factory):
    launched = Launched("lab", served, log=tmp_path_factory.mktemp("lab") / "lab.log")
    yield launched
    launched.stop_and_check()


@pytest.fixture(scope="class")
def app(browser, served, tmp_path_factory):
    launched = Launched("app", served, log=tmp_path_factory.mktemp("app") / "app.log")
    yield launched
    launched.stop_and_check()


@pytest.fixture(scope="class")
def notebook7(browser, served, tmp_path_factory):
    """Jupyter Notebook 7 on the served copy, its kernels on a private Redis: its base URL."""
    port = free_tcp_port()
    log = tmp_path_factory.mktemp("notebook7") / "notebook7.log"
    with RedisServer() as redis, open(log, "wb") as sink:
        env = {**os.environ, "REDIS_URL": redis.url}
        argv = [sys.executable, "-m", "notebook", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={served}"]
        if os.geteuid() == 0:
            argv.append("--allow-root")
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: proc.poll() is not None or _answers(f"{base}/api/status?token={TOKEN}"), 60,
                       lambda: f"Notebook 7 did not start:\n{log.read_text()[-2000:]}")
            assert proc.poll() is None, f"Notebook 7 exited:\n{log.read_text()[-2000:]}"
            yield base
        finally:
            # SIGTERM: the server stops and shuts its kernels down. Not Ctrl-C: with stdin not a
            # terminal, Jupyter Server leaves SIGINT to Python's KeyboardInterrupt, which a busy
            # server can swallow; under a full run it then ran on until the SIGKILL 60 s later.
            code = stop_group(proc, signum=signal.SIGTERM)
            assert code == 0, f"Notebook 7 did not stop on SIGTERM (exit code {code}):\n{log.read_text()[-2000:]}"


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield tab
    context.close()


class SharedTab:
    """One tab that the tests of a class take in turn, each loading its own page into it: the tab's
    renderer keeps the code it compiled, so JupyterLab loads in 2.6 to 3.4 CPU-s of Chromium
    instead of 5.2 to 6.2 in a new context. It stands for the page (every attribute is the
    page's); the handlers a test adds (``on``) go when it leaves (:meth:`leave`), and the tab is
    left on about:blank: the next test loads into an empty tab, watched only by its own handlers."""

    def __init__(self, tab) -> None:
        self._tab, self._handlers = tab, []
        # leaving a notebook that Run All changed asks "leave this page?" (beforeunload): yes
        tab.on("dialog", lambda dialog: dialog.accept() if dialog.type == "beforeunload" else dialog.dismiss())

    def __getattr__(self, name: str):
        return getattr(self._tab, name)

    def on(self, event: str, handler) -> None:
        self._handlers.append((event, handler))
        self._tab.on(event, handler)

    def leave(self, blank: bool = True) -> None:
        """The test's handlers go; unless ``blank`` is false (a class that keeps its page, as
        JupyterLab's keeps the app a reader opens notebook after notebook in), so does the page."""
        for event, handler in self._handlers:
            self._tab.remove_listener(event, handler)
        self._handlers.clear()
        if blank:
            self._tab.goto("about:blank")


@pytest.fixture(scope="class")
def shared_tab(browser):
    """A :class:`SharedTab` for a class's tests (as :func:`page`, one browser context)."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield SharedTab(tab)
    context.close()


@pytest.fixture
def page_in_shared_tab(shared_tab):
    """The class's :class:`SharedTab`, for one test: a class whose pages load one at a time
    takes it as its ``page``."""
    yield shared_tab
    shared_tab.leave()


@contextlib.contextmanager
def shot_on_failure(tab, label: str):
    """On a failure, keep what the browser showed: ``FAILED-<label>.png``
    (a passing run removes the one an earlier run left)."""
    shot = SCREENSHOTS / f"FAILED-{re.sub(r'[^A-Za-z0-9.-]+', '_', label)}.png"
    shot.unlink(missing_ok=True)
    try:
        yield
    except BaseException:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):
            tab.screenshot(path=str(shot))
        raise


# -- waiting -------------------------------------------------------------------------------------


def wait_until(check: Callable[[], object], timeout: float, message: Callable[[], str] | str):
    """``check()``'s first true value, looked for until ``timeout`` s, else an AssertionError with
    ``message``. It looks again after 10 ms, then twice as long each time up to 100 ms: most waits
    here are for a page to answer, within a frame or two, and a fixed 100 ms step kept each one
    waiting about 50 ms past its answer."""
    deadline, pause = time.monotonic() + timeout, 0.01
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def _figures(view) -> list[str]:
    return view.evaluate(FIGURES_JS)


# How many shapes each page view's figure has drawn (0: no SVG yet, or an empty one), and its width.
DRAWN_JS = """el => [...el.querySelectorAll('.emq-view')].map(view => {
    const svg = view.querySelector('.emq-figure svg');
    const title = svg && svg.querySelector(':scope > title');
    return svg ? [svg.querySelectorAll('rect, line, circle, path, text').length, svg.getBoundingClientRect().width,
                  !!title && /\\bempty\\b/.test(title.textContent)] : [0, 0, false];
})"""


def _wait_painted(scope, what: str, timeout: float = 30) -> None:
    """Every figure in ``scope`` shows a drawing. Each output holding one is
    scrolled into sight first: ipympl draws a figure once it is on screen. A
    page view's figure is drawn by its module: an SVG of some shapes, laid out."""
    outputs = scope.locator(".jp-OutputArea-output:has(.jupyter-matplotlib)")
    for index in range(outputs.count()):
        output = outputs.nth(index)
        output.scroll_into_view_if_needed()
        wait_until(lambda: all(n > 20 for n in output.evaluate(PAINTED_JS)), timeout,
                   lambda: f"{what}: a figure stayed blank (painted pixels {output.evaluate(PAINTED_JS)})")
    drawn = scope.locator(".jp-OutputArea-output:has(.emq-view)")
    for index in range(drawn.count()):
        output = drawn.nth(index)
        output.scroll_into_view_if_needed()
        # a figure of a few shapes is drawn when its own text alternative says it is empty (06's unread map)
        wait_until(lambda: all((shapes > 10 or empty) and shapes > 0 and width > 0
                               for shapes, width, empty in output.evaluate(DRAWN_JS)), timeout,
                   lambda: f"{what}: a page view drew no figure ([shapes, width, empty]: {output.evaluate(DRAWN_JS)})")


# (a page view is busy while it says so: aria-busy; its buttons may be off by design, before a guess)
BUSY = 'button.widget-button:disabled, .noUi-target[disabled], .emq-view[aria-busy="true"]'
# What settle() watches: how many controls are busy, the text, the figures.
LOOK_JS = f"""el => [el.querySelectorAll({BUSY!r}).length, el.innerText, ({FIGURES_JS})(el).join(' ')]"""


# settle() in the page: one call, where a look from here is three through Playwright's driver (find
# the element, evaluate, let it go), about 15 ms of CPU across four processes for a look that takes
# under 1 ms in the page. Null when the element left the page (its output drawn again) while watched.
SETTLE_JS = f"""async (el, [quiet, timeout]) => {{
    const look = {LOOK_JS};
    const started = performance.now();
    let last = JSON.stringify(look(el)), since = started;
    for (;;) {{
        await new Promise(resolve => setTimeout(resolve, 50));
        if (!el.isConnected) return null;
        const now = look(el), key = JSON.stringify(now);
        if (key !== last) [last, since] = [key, performance.now()];
        else if (now[0] === 0 && performance.now() - since >= quiet * 1000) return -1;
        if (performance.now() - started > timeout * 1000) return now[0];
    }}
}}"""


def settle(view, timeout: float = 30, quiet: float = 0.3) -> None:
    """Wait until the view is done: no control disabled (a Redis call in
    progress) and nothing shown (text, figures) changing for ``quiet`` s."""
    busy = view.evaluate(SETTLE_JS, [quiet, timeout])
    if busy is None:  # its element went: look again from here, finding the view anew each time
        return _settle_from_here(view, timeout, quiet)
    if busy >= 0:
        raise AssertionError(f"the view never settled (busy controls: {busy})")


def _settle_from_here(view, timeout: float, quiet: float) -> None:
    def look():  # one round trip to the browser per look
        return tuple(view.evaluate(LOOK_JS))

    deadline = time.monotonic() + timeout
    last, since = look(), time.monotonic()
    while True:
        time.sleep(0.05)
        now = look()
        if now != last:
            last, since = now, time.monotonic()
        elif now[0] == 0 and time.monotonic() - since >= quiet:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the view never settled (busy controls: {now[0]})")


def holds_in_page(scope, condition_js: str, arg, timeout: float) -> bool | None:
    """Whether ``condition_js`` ((element, arg) => truthy) held on ``scope``'s element within
    ``timeout`` s, looked at in the page every 20 ms (see SETTLE_JS); None if the element left."""
    return scope.evaluate(f"""async (el, [arg, timeout]) => {{
        const holds = {condition_js};
        const deadline = performance.now() + timeout * 1000;
        for (;;) {{
            if (!el.isConnected) return null;
            if (holds(el, arg)) return true;
            if (performance.now() > deadline) return false;
            await new Promise(resolve => setTimeout(resolve, 20));
        }}
    }}""", [arg, timeout])


def wait_for_change(scope, look_js: str, before, timeout: float, message: Callable[[], str] | str) -> None:
    """Wait until ``look_js`` (element => value) on ``scope``'s element gives other than ``before``,
    looked at in the page (:func:`holds_in_page`); where the element is drawn anew while watched,
    from here, finding it anew each look. Else an AssertionError with ``message``."""
    changed = holds_in_page(scope, f"(el, before) => JSON.stringify(({look_js})(el)) !== JSON.stringify(before)",
                            before, timeout)
    if changed is None:
        wait_until(lambda: scope.evaluate(look_js) != before, timeout, message)
    elif not changed:
        raise AssertionError(message() if callable(message) else message)


# A page view sits in an anywidget's element (no .jupyter-widgets class), one level down.
RENDERED_VIEWS = ".jp-OutputArea-output:has(> .jupyter-widgets, > .jupyter-matplotlib, .emq-view)"


def _wait_views_rendered(page, where: str, expected: int | None = None, timeout: float = 60) -> None:
    """Every widget output shows its view: none is left empty (a view still
    coming), and at least ``expected`` are there when that is known."""
    def done() -> bool:
        if page.locator(".jp-OutputArea-output:empty").count():
            return False
        return expected is None or page.locator(RENDERED_VIEWS).count() >= expected

    wait_until(done, timeout, lambda: f"{where}: widget views not rendered: "
               f"{page.locator(RENDERED_VIEWS).count()} of {expected}, "
               f"{page.locator('.jp-OutputArea-output:empty').count()} outputs still empty")


def _error_free(page, where: str) -> None:
    assert page.get_by_text("Error displaying widget").count() == 0, f"{where}: Error displaying widget"
    # ipywidgets' broken-widget picture (a view whose module did not load: Voila shows no text)
    assert page.locator(".jupyter-widgets-error-widget").count() == 0, (
        f"{where}: a widget failed to render (its module did not load?); the console may say why")
    errors = page.locator(STDERR).all_inner_texts()
    assert not errors, f"{where}: error output:\n" + "\n---\n".join(text[:2000] for text in errors)
    status = [text for text in page.locator(VIEW).all_inner_texts() if "\u26a0" in text]
    assert not status, f"{where}: a view shows an error line:\n" + "\n".join(
        line for text in status for line in text.splitlines() if "\u26a0" in line)


def assert_figures_named(page, where: str) -> None:
    """Every figure is an image in the accessibility tree, named by its
    caption: a screen reader announces the caption as the figure's. A figure
    hidden until the reader acts (02's score bars before a guess) is in no
    accessibility tree yet, so it is counted once it shows. A figure is an
    ipympl canvas or a static image (an image widget: a matplotlib figure no
    control moves); a page view's figure is named by its own <title>."""
    figures = page.locator(".jupyter-matplotlib-canvas-div:visible, img.widget-image:visible")
    named = page.get_by_role("img", name=re.compile(r"^Figure: "))
    wait_until(lambda: named.count() == figures.count(), 10,
               lambda: f"{where}: {named.count()} of {figures.count()} figures are images named by a caption")
    every = page.locator(".jupyter-matplotlib-canvas-div, img.widget-image")  # shown or not yet
    captions = [" ".join(text.split()) for text in page.locator(".echomq-viz-caption").all_inner_texts()]
    assert len(captions) == every.count(), f"{where}: {every.count()} figures, {len(captions)} captions"
    shown = [" ".join(text.split()) for text in figures.evaluate_all(
        "els => els.map(e => (document.getElementById(e.getAttribute('aria-labelledby')) || {}).innerText || '')")]
    for caption in shown:  # the accessibility tree's own name, as a screen reader reads it
        assert caption in captions and page.get_by_role("img", name=caption, exact=True).count() >= 1, \
            f"{where}: no figure is named {caption!r}"
    # A page view's SVG is an image named by its <title>, which its caption repeats after "Figure: "
    # (page_checks holds the two equal); a screen reader finds it by that name.
    for title in page.locator(".emq-view .emq-figure svg > title").all_text_contents():
        assert page.get_by_role("img", name=title, exact=True).count() >= 1, \
            f"{where}: no page view's figure is an image named {title!r}"


# -- exercising the views ---------------------------------------------------------------------------


def _is_page_range(slider) -> bool:
    return slider.evaluate("e => e.matches('.emq-view input[type=range]')")


def _slider_label(slider) -> str:
    if _is_page_range(slider):
        return slider.get_attribute("aria-label") or "range"
    return slider.locator(".widget-label").first.inner_text().strip() or "slider"


def _aria(handle) -> tuple[float, float, float]:
    return tuple(float(handle.get_attribute(name))
                 for name in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))


def _wait_readout(slider, before: str, how: str) -> str:
    readout = slider.locator(".widget-readout")
    return wait_until(lambda: (text := readout.inner_text()) != before and text, 10,
                      lambda: f"{how} did not move '{_slider_label(slider)}' (readout {before})")


def _expect_new_figure(view, slider, before: list[str], how: str, strict: bool) -> bool:
    """Whether the figure changed; if ``strict``, it must have. A strict
    check waits for the change itself: on a loaded machine the kernel may
    answer after any fixed quiet time."""
    if strict and before:
        wait_for_change(view, FIGURES_JS, before, 30,
                        lambda: f"{how} on '{_slider_label(slider)}' changed the readout but not the figure")
    settle(view)
    return not before or _figures(view) != before


def move_by_keyboard(page, view, slider, strict: bool = True) -> bool:
    """An arrow key (one step), then Home or End (the far end)."""
    handle = slider.locator(".noUi-handle")
    readout = slider.locator(".widget-readout")
    now, low, high = _aria(handle)
    before_figures, before = _figures(view), readout.inner_text()
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press("ArrowLeft" if now >= high else "ArrowRight")
    stepped = _wait_readout(slider, before, "an arrow key")
    settle(view)
    now, low, high = _aria(handle)
    handle.focus()
    page.keyboard.press("End" if now - low < high - now else "Home")
    _wait_readout(slider, stepped, "Home/End")
    return _expect_new_figure(view, slider, before_figures, "the keyboard", strict)


def move_by_drag(page, view, slider, strict: bool = True, to_end: bool = False) -> bool:
    """Drag the handle to the middle of the track (or near its start when it
    is already in the middle); with ``to_end``, past the end farther from it,
    where its readout is at its longest."""
    handle = slider.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    box, rail = handle.bounding_box(), slider.locator(".noUi-base").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    middle = rail["x"] + rail["width"] / 2
    if to_end:
        target = rail["x"] - 20 if x > middle else rail["x"] + rail["width"] + 20
    else:
        target = middle if abs(x - middle) > rail["width"] * 0.2 else rail["x"] + rail["width"] * 0.15
    before_figures, before = _figures(view), slider.locator(".widget-readout").inner_text()
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(target, y, steps=8)
    page.mouse.up()
    _wait_readout(slider, before, "a drag")
    return _expect_new_figure(view, slider, before_figures, "a drag", strict)


# -- a page view's ranges: native <input type=range>, moved and redrawn in the page -----------------

RANGE_JS = "r => [Number(r.value), Number(r.min), Number(r.max)]"
# Each page view range's accessible name, as its aria-label, <label for> or aria-labelledby give it.
RANGE_NAMES_JS = """el => [...el.querySelectorAll('.emq-view input[type=range]')].map(r =>
    (r.getAttribute('aria-label') || [...(r.labels || [])].map(l => l.innerText).join(' ')
     || (r.getAttribute('aria-labelledby') || '').split(/\\s+/)
            .map(id => (document.getElementById(id) || {}).innerText || '').join(' '))
    .trim())"""


def _own_view(control):
    """The page view (``.emq-view``) a control belongs to."""
    return control.locator("xpath=ancestor::*[contains(concat(' ', normalize-space(@class), ' '), ' emq-view ')][1]")


# What a move may change in a page view: its caption, its figure, its status lines.
VIEW_LOOK_JS = f"""view => [(view.querySelector('.emq-caption') || {{}}).textContent || '', ({FIGURES_JS})(view).join(' '),
    [...view.querySelectorAll('.emq-status')].map(line => line.textContent).join(' | ')]"""


def _answered(own, before: list, how: str, control) -> None:
    """Wait until the page view ``own`` shows something else than ``before`` (its VIEW_LOOK_JS):
    its caption follows a value drawn in the page; its figure alone, where the caption holds an
    answer back (a view that asks first); a status line, where the value goes to the kernel
    (its answer, or without one the line saying it needs one)."""
    def message() -> str:
        caption, _, lines = own.evaluate(VIEW_LOOK_JS)
        return (f"{how} moved '{_slider_label(control)}' to {control.input_value()} but its view showed nothing new: "
                f"caption {' '.join(caption.split())[:160]!r}, status lines {lines[:200]!r}")

    wait_for_change(own, VIEW_LOOK_JS, before, 30, message)


def press_on_range(page, control, key: str, how: str) -> None:
    """``key`` on a focused page view range: its value moves, and its view answers (:func:`_answered`)."""
    own = _own_view(control)
    value, before = control.input_value(), own.evaluate(VIEW_LOOK_JS)
    control.focus()
    page.keyboard.press(key)
    wait_until(lambda: control.input_value() != value, 10,
               lambda: f"{how} did not move '{_slider_label(control)}' (at {value})")
    _answered(own, before, how, control)


def step_both_ways(page, control) -> None:
    """ArrowRight then ArrowLeft (the other way round at the top): each moves the range one step
    and its view answers."""
    now, _, high = control.evaluate(RANGE_JS)
    control.scroll_into_view_if_needed()
    for key in ("ArrowLeft", "ArrowRight") if now >= high else ("ArrowRight", "ArrowLeft"):
        press_on_range(page, control, key, key)


def move_range_by_keyboard(page, view, control, strict: bool = True) -> bool:
    """A page view's range: an arrow key each way (one step), then Home or End (the far end)."""
    before_figures = _figures(view)
    step_both_ways(page, control)
    now, low, high = control.evaluate(RANGE_JS)
    press_on_range(page, control, "End" if now - low < high - now else "Home", "Home/End")
    return _expect_new_figure(view, control, before_figures, "the keyboard", strict)


def move_range_by_drag(page, view, control, strict: bool = True) -> bool:
    """A page view's range: an arrow key each way (keys work on every front end), then a drag
    past the end farther from it, where its readout is at its longest."""
    before_figures = _figures(view)
    step_both_ways(page, control)
    now, low, high = control.evaluate(RANGE_JS)
    box = control.bounding_box()
    at = (now - low) / (high - low) if high > low else 0
    # the thumb's middle: it runs from half a thumb (about 16 px) in from either edge to the other
    x, y = box["x"] + 8 + (box["width"] - 16) * at, box["y"] + box["height"] / 2
    end = low if at > 0.5 else high
    own = _own_view(control)
    before = own.evaluate(VIEW_LOOK_JS)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(box["x"] - 20 if end == low else box["x"] + box["width"] + 20, y, steps=8)
    page.mouse.up()
    wait_until(lambda: control.evaluate(RANGE_JS)[0] == end, 10,
               lambda: f"a drag left '{_slider_label(control)}' at {control.input_value()}, not its end {end}")
    _answered(own, before, "a drag", control)
    return _expect_new_figure(view, control, before_figures, "a drag", strict)


def assert_ranges_named(scope, where: str) -> None:
    """Every page view range has an accessible name, and the accessibility tree has a slider of
    that name: a screen reader says which value it moves."""
    names = scope.evaluate(RANGE_NAMES_JS)
    assert all(names), f"{where}: a page view range without an accessible name: {names}"
    for name in names:
        assert scope.get_by_role("slider", name=name, exact=True).count() >= 1, \
            f"{where}: no slider named {name!r} in the accessibility tree"


def press_controls(page, view, strict: bool = True, first_only: bool = False) -> dict[str, bool]:
    """Tick the "... on Redis" switches and press every button of the view
    (or only the first of them), in order; with ``strict`` each must change
    what the view shows (a read-only button pressed twice may rightly show the
    same). Returns label -> whether the view changed."""
    pressed = {}
    switches = view.locator(SWITCHES).filter(has_text="Redis")
    buttons = view.locator(BUTTONS)
    controls = [(switches.nth(i), "input") for i in range(switches.count())]
    controls += [(buttons.nth(i), None) for i in range(buttons.count())]
    for control, inner in controls[:1] if first_only else controls:
        label = control.inner_text().strip()
        if not control.is_enabled():  # a page view's button off by design (e.g. Redis before a guess)
            pressed[label] = False
            continue
        before = view.inner_text()
        control.scroll_into_view_if_needed()
        (control.locator(inner) if inner else control).click()
        if strict:
            wait_until(lambda: view.inner_text() != before, 30,
                       lambda: f"pressing '{label}' changed nothing shown:\n{before[-600:]}")
        settle(view)
        pressed[label] = view.inner_text() != before
    return pressed


def _labels(view) -> set[str]:
    """The labels of the view's Redis switches and buttons."""
    controls = view.locator(SWITCHES).filter(has_text="Redis").all_inner_texts()
    return {text.strip() for text in controls + view.locator(BUTTONS).all_inner_texts()}


def exercise(page, name: str, where: str, keyboard: bool = True, every: bool = True) -> dict:
    """Every slider by keyboard (an arrow key, then Home/End) or, without
    ``keyboard``, by a drag to its far end; then every Redis control; what was
    done. Either way each slider ends at an end, where its readout is longest.
    A page view's range takes an arrow key each way first, whichever way it
    then moves, and its view must answer every move (:func:`_answered`); its
    ranges must be named.
    Without ``every``, each view's first slider only, or where it has none its
    first control (all its controls when the slider only sets up what they run).

    A slider must change the figure at once, except in a view of a notebook
    beyond 01-04 that has buttons: there a slider may only set up what a
    button then runs, and the figure must change once the buttons are pressed.
    In 01-04 every button pressed must change what the view shows.
    """
    views = page.locator(VIEW)
    done = {"sliders": 0, "moved": 0, "buttons": set(), "pressed": set(), "unchanged": set()}
    for index in range(views.count()):
        view = views.nth(index)
        view.scroll_into_view_if_needed()
        settle(view)
        strict = name in MUST_HAVE or view.locator(BUTTONS).count() == 0
        sliders = view.locator(SLIDERS)
        count = sliders.count()
        if view.locator(PAGE_VIEW).count():
            assert_ranges_named(view, f"{where} {name}")
        done["sliders"] += count
        done["buttons"].update(_labels(view))
        waiting, unchanged_from = [], None  # the figure a move seemed to leave as it was
        for number in range(count if every else min(count, 1)):
            slider = sliders.nth(number)
            before_slider = _figures(view)
            page_range = _is_page_range(slider)
            if keyboard and not (move_range_by_keyboard if page_range else move_by_keyboard)(page, view, slider, strict):
                waiting.append(f"the keyboard on '{_slider_label(slider)}'")
            if not keyboard and not (move_range_by_drag(page, view, slider, strict) if page_range
                                     else move_by_drag(page, view, slider, strict, to_end=True)):
                waiting.append(f"a drag on '{_slider_label(slider)}'")
            if waiting and unchanged_from is None:
                unchanged_from = before_slider
            done["moved"] += 1
        if every or waiting or not count:
            pressed = press_controls(page, view, strict=name in MUST_HAVE, first_only=not every and not waiting)
            done["pressed"].update(pressed)
            done["unchanged"].update(label for label, changed in pressed.items() if not changed)
        if waiting and unchanged_from:
            # Compared with the figure before that move, not after it: on a loaded
            # machine its frame may land just after the look that missed it.
            wait_until(lambda: _figures(view) != unchanged_from, 30,
                       f"{where} {name}: neither {', '.join(waiting)} nor the buttons changed the figure")
    required = MUST_HAVE.get(name, {})
    assert done["sliders"] >= required.get("sliders", 0), f"{where}: {name} shows too few sliders: {done}"
    missing = required.get("buttons", set()) - done["buttons"]
    assert not missing, f"{where}: {name} lacks the controls {missing}: {done}"
    _error_free(page, f"{where} {name}, after the interactions")
    print(f"{where} {name}: {done['moved']} of {done['sliders']} sliders moved by "
          f"{'keyboard' if keyboard else 'drag'}, pressed {sorted(done['pressed'])}"
          + (f" ({sorted(done['unchanged'])} showed the same again)" if done["unchanged"] else ""))
    return done


# -- questions before answers ----------------------------------------------------------------------------
#
# The pages that ask the reader something first. Each must show no answer, verdict or selected guess
# until the test acts, and the right one once it does; a folded answer (<details>) stays closed
# until it is opened.


def _view_with(page, text: str):
    view = page.locator(VIEW).filter(has_text=text).first
    view.scroll_into_view_if_needed()
    settle(view)
    return view


def _wait_text(view, wanted: str, where: str, timeout: float = 60) -> None:
    wait_until(lambda: wanted in view.inner_text(), timeout,
               lambda: f"{where}: never showed {wanted!r}:\n{view.inner_text()[-800:]}")


def _press_key(page, view, slider_label: str, key: str, times: int, where: str) -> None:
    """Press ``key`` on a slider (its handle, or a page view's range) ``times`` times, each
    after the last one was taken."""
    page_range = view.locator(PAGE_RANGE).and_(view.get_by_label(slider_label, exact=True))
    if page_range.count():
        for _ in range(times):
            press_on_range(page, page_range.first, key, f"{where}: {key}")
            settle(view)
        return
    slider = view.locator(".widget-slider").filter(has_text=slider_label).first
    for _ in range(times):
        before = slider.locator(".widget-readout").inner_text()
        slider.locator(".noUi-handle").first.focus()
        page.keyboard.press(key)
        wait_until(lambda: slider.locator(".widget-readout").inner_text() != before, 30,
                   f"{where}: '{slider_label}' did not move")
        settle(view)


def _answers_folded(page, where: str) -> list:
    """Every folded answer on the page, each checked closed, its text out of sight."""
    folded = page.locator("details.echomq-viz-answer")  # the Lua listings are <details open> by design
    found = [folded.nth(i) for i in range(folded.count())]
    for answer in found:
        assert answer.evaluate("d => !d.open"), f"{where}: a folded answer is open before anyone opened it"
        assert not answer.locator("pre").first.is_visible(), f"{where}: a folded answer shows its text"
    return found


def _open(answer, wanted: str, where: str) -> None:
    answer.scroll_into_view_if_needed()
    answer.locator("summary").first.click()
    wait_until(lambda: answer.locator("pre").first.is_visible(), 10, f"{where}: the answer did not open")
    assert wanted in answer.locator("pre").first.inner_text(), f"{where}: the opened answer lacks {wanted!r}"


def _no_guess_selected(page, where: str) -> None:
    chosen = page.locator(".widget-toggle-buttons").filter(has_text="Your guess:").locator(".mod-active")
    assert chosen.count() == 0, f"{where}: a guess is selected before the reader made one"
    chosen = page.locator('.emq-view button[aria-pressed="true"]')  # a page view's guess, pressed
    assert chosen.count() == 0, f"{where}: a guess is pressed before the reader made one: {chosen.all_inner_texts()}"


# Pages with folded answers: how many, and what the first one says once opened.
FOLDED = {"02-which-pops-first.ipynb": (2, "Redis popped job A first"),
          "01-one-score-two-keys.ipynb": (1, "gap between the tiers: 1"),
          "03-inside-the-consume.ipynb": (1, "popped job 13 (wait list)"),
          "06-inspect-a-real-queue.ipynb": (1, "equal scores: 1 score shared by 3 jobs"),
          "08-every-path-scores-the-same-way.ipynb": (7, "landed: back of its tier"),
          "09-designs-that-fail.ipynb": (8, "this design pops: 1 2 3 4 5 6")}


def answers_one_step_away(page, name: str, where: str) -> None:
    """For a reader who cannot act (the offline pages): no guess made, each answer folded, and
    the first one opens on a click to what Redis did."""
    where = f"{where} {name}"
    answers = _answers_folded(page, where)
    count, first = FOLDED.get(name, (0, ""))
    assert len(answers) == count, f"{where}: {len(answers)} folded answers, not {count}"
    _no_guess_selected(page, where)
    if answers:
        _open(answers[0], first, where)


def questions_before_answers(page, name: str, where: str) -> None:
    """The reader's turn on the pages that ask first: nothing answered, then the test acts."""
    where = f"{where} {name}"
    if name.startswith("01-"):
        hero = _view_with(page, "live on Redis")
        shown = hero.inner_text()
        assert "score = 1 × 0x100000000 + 1" in shown, f"{where}: the hero is not at priority 1, counter 1"
        assert "via addPrioritizedJob-9" not in shown, f"{where}: a live line before the switch was ticked"
        switch = hero.locator(SWITCHES).filter(has_text="live on Redis").locator("input").first
        switch.click()
        # Python's line ("Python computed ...: equal") or the page's ("the page computed ...: stored: equal")
        agreed = re.compile(r"Redis stored 4,294,967,297, (Python|the page) computed 4,294,967,297: (stored: )?equal")
        wait_until(lambda: agreed.search(hero.inner_text()), 60,
                   lambda: f"{where}: never showed Redis and the computation agreeing:\n{hero.inner_text()[-800:]}")
        switch.click()
        settle(hero)
        _press_key(page, hero, "priority", "ArrowRight", 1, where)
        wait_until(lambda: "via addPrioritizedJob-9" not in hero.inner_text(), 30,
                   f"{where}: the live line stayed under a score that moved on with live off")
    elif name.startswith("02-"):
        answer = _answers_folded(page, where)[0]  # the first question's; the same-tier follow-up has its own
        _no_guess_selected(page, where)
        view = _view_with(page, "Your guess:")
        assert "smaller score" not in view.inner_text() and "Redis popped" not in view.inner_text(), (
            f"{where}: the verdict shows before a guess")
        assert "4,000,000,000" in view.inner_text(), f"{where}: job A's counter is not the 4,000,000,000 the prose says"
        view.get_by_role("button", name="A pops first").click()
        _wait_text(view, "A has the smaller score, so ZPOPMIN pops A first.", where)
        view.get_by_role("button", name="Run it on Redis").click()
        _wait_text(view, "Redis popped job A first", where)
        # the widgets' words ("you were right") or the page view's ("You guessed A: right — ...")
        assert re.search(r"you were right|You guessed A: right\b", view.inner_text()), \
            f"{where}: a right guess was not called right"
        _open(answer, "Redis popped job A first", where)
    elif name.startswith("03-"):
        view = _view_with(page, "Pop one")
        assert "nothing popped yet" in view.inner_text(), f"{where}: the consume view is popped before Pop one"
        view.get_by_role("button", name="Pop one").click()
        _wait_text(view, "1 popped, the last job 13 (wait list)", where)
    elif name.startswith("08-"):
        answers = _answers_folded(page, where)
        assert len(answers) == 7, f"{where}: {len(answers)} folded answers, not one per path"
        _no_guess_selected(page, where)
        views = page.locator(VIEW).filter(has_text="Your guess:")
        assert views.count() == 7 and not any("landed" in text for text in views.all_inner_texts()), (
            f"{where}: a path view shows where its job landed before it ran")
        assert page.locator(".emq-view input[type=radio]:checked").count() == 0, f"{where}: a guess made already"
        view = _view_with(page, "Change it to priority 3:")  # the first path: the same tier again
        view.get_by_role("radio", name="back of its tier").click()  # drawn in the page: nothing sent
        view.get_by_role("button", name="Run it on Redis").click()
        _wait_text(view, "you guessed 'back of its tier': right", where)
        _open(answers[0], "landed: back of its tier", where)
    elif name.startswith("06-"):
        answer = _answers_folded(page, where)[0]
        view = _view_with(page, "Inspect (read-only)")
        assert "nothing read yet" in view.inner_text(), f"{where}: the inspector read the queue before Inspect"
        view.get_by_role("button", name="Inspect (read-only)").click()
        _wait_text(view, "47 jobs in 4 tiers, all drawn", where)
        _open(answer, "equal scores: 1 score shared by 3 jobs", where)
    elif name.startswith("09-"):
        answers = _answers_folded(page, where)
        assert len(answers) == 8, f"{where}: {len(answers)} folded answers, not the designs' six and the exercise's two"
        view = _view_with(page, "tenant bits")
        assert "cannot be packed" in view.inner_text() and "fits in 53 bits" not in view.inner_text(), (
            f"{where}: the exercise view shows a working budget before the reader set one")
        for label, times in (("tenant bits", 3), ("priority bits", 2)):  # drawn in the page: nothing sent
            for _ in range(times):
                view.get_by_role("slider", name=label).focus()
                page.keyboard.press("ArrowRight")
        _wait_text(view, "fits in 53 bits: check_budget accepts it", where)
        view.get_by_role("button", name="Run this budget on Redis").click()
        _wait_text(view, "every score exact, pop order right", where)
        _open(answers[6], "every score exact, pop order right", where)


def screenshot(page, kind: str, name: str) -> None:
    """The reader's view: the first interactive view (else the top) on a 1366x768 screen."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    views = page.locator(VIEW)
    if views.count():
        views.first.evaluate("el => el.scrollIntoView({block: 'start'})")
    else:  # JupyterLab leaves a notebook scrolled to its last cell after Run All
        page.evaluate("() => document.querySelectorAll('.jp-WindowedPanel-outer')"
                      ".forEach(el => { el.scrollTop = 0; })")
    time.sleep(0.3)
    page.screenshot(path=str(SCREENSHOTS / f"{kind}-{Path(name).stem}.png"))


# -- JupyterLab ----------------------------------------------------------------------------------------


LAB_IDLE_JS = "() => ((document.getElementById('jp-main-statusbar') || {}).innerText || '').includes('| Idle')"
# Notebook 7's indicator says idle before any kernel is there: a kernel must be named too.
NOTEBOOK7_IDLE_JS = """() => {
    const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
    const kernel = document.querySelector('.jp-Toolbar-kernelName');
    return !!(status && status.dataset.status === 'idle' && kernel && /Python/.test(kernel.textContent));
}"""


def page_holds_within(page, condition_js: str, timeout: float) -> bool:
    """Whether ``condition_js`` (a function of no argument) held in the page within ``timeout`` s,
    looked at there every 50 ms in one call (see SETTLE_JS)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition_js, timeout=timeout * 1000, polling=50)
    except PlaywrightTimeout:
        return False
    return True


def wait_for_page(page, condition_js: str, timeout: float, message: Callable[[], str] | str) -> None:
    """:func:`page_holds_within`, else an AssertionError with ``message``."""
    if not page_holds_within(page, condition_js, timeout):
        raise AssertionError(message() if callable(message) else message)


def _run_all_in_lab(page, name: str, idle_js: str = LAB_IDLE_JS) -> None:
    """Run > Run All Cells, in JupyterLab or Notebook 7, and wait until every cell ran."""
    wait_for_page(page, idle_js, 90, f"{name}: the kernel never became idle")
    page.locator(".lm-MenuBar-itemLabel:text-is('Run')").click()
    page.locator(".lm-Menu-itemLabel:text-is('Run All Cells')").click()
    wait_for_page(page, ran_all_js(idle_js), 180, lambda: f"{name}: Run All did not finish: "
                  f"{page.locator(PROMPTS).evaluate_all('els => els.map(e => e.textContent)')}")


PROMPTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"


def ran_all_js(idle_js: str = LAB_IDLE_JS) -> str:
    """Whether every code cell of the notebook shown has run ([n] in its prompt) and the kernel is idle."""
    return f"""() => {{
        const texts = [...document.querySelectorAll({PROMPTS!r})].map(e => e.textContent);
        return texts.length > 0 && texts.every(text => /\\[\\d+\\]/.test(text)) && ({idle_js})();
    }}"""


class _Console:
    def __init__(self, text: str) -> None:
        self.type, self.text = "error", text


class _Page:
    def __init__(self) -> None:
        self.handlers = {}

    def on(self, event: str, handler) -> None:
        self.handlers[event] = handler


def test_a_stored_views_missing_model_is_tolerated_only_where_stored_views_open():
    stored = "Error: widget model not found\n    at x.get_model (http://h/lab/extensions/@jupyter-widgets/jupyterlab-manager/static/32.js)"
    for upstream, problems in ((STORED_VIEW_ERRORS, 0), ((), 1)):
        page = _Page()
        watch = Watch(page, upstream_console=upstream)
        page.handlers["console"](_Console(stored))
        assert len(watch.problems()) == problems and watch.tolerated == 1 - problems
    page = _Page()
    watch = Watch(page, upstream_console=STORED_VIEW_ERRORS)
    for other in ("Error: widget model not found", "Error: something else (@jupyter-widgets/jupyterlab-manager/)"):
        page.handlers["console"](_Console(other))  # the message without its source, another message
    assert len(watch.problems()) == 2 and watch.tolerated == 0


def run_all_and_check_in_lab(page, name: str, watch: Watch) -> None:
    """Run All on the notebook open in JupyterLab (``echomq-viz lab``), then what every front end
    gets: its views rendered and painted, no error, the questions asked before answered, each
    view's first slider moved by the keyboard (every slider and button is the app's test), the
    layout at two sizes. The test that opens the notebook, and first checks it as stored, is
    test_page_views.py's ``TestInJupyterLab``: one page load serves both."""
    _run_all_in_lab(page, name)
    _wait_views_rendered(page, f"JupyterLab {name}")
    _error_free(page, f"JupyterLab {name}")
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    _wait_painted(panel, f"JupyterLab {name}")
    screenshot(page, "lab", name)
    questions_before_answers(page, name, "JupyterLab")
    exercise(page, name, "JupyterLab", every=False)
    _error_free(page, f"JupyterLab {name}, after its controls moved")
    # after the moves, sliders at their ends: the longest readouts
    problems = check_page(page, SCREENSHOTS, f"lab-{Path(name).stem}", watch, prepare=close_lab_sidebar)
    assert not problems, f"JupyterLab {name}:\n" + "\n".join(problems)
    assert page.locator(".Toastify__toast").filter(has_text="news").count() == 0, "news toast"


# -- Voila ----------------------------------------------------------------------------------------------------


class TestVoila:
    """Every notebook as a page of the app (``echomq-viz app``), its views used, axe-core on it."""

    @pytest.fixture
    def page(self, page_in_shared_tab):
        return page_in_shared_tab

    def test_index(self, app, page, axe_script):
        """The front page: a card per notebook with its title, in path order; nothing asked of
        another host, nothing in the console. The app capped its kernels' demo queues on its own
        Redis before any started (echomq_viz.redis_side.caps, each kernel a student)."""
        assert "each visitor's demo queues hold at most 5,000 jobs a queue, 20,000 a student" in app.log.read_text()
        watch = Watch(page)
        with shot_on_failure(page, "voila-index"):
            page.goto(f"{app.base}/", wait_until="networkidle")
            assert "priority queue" in page.locator("h1").inner_text()
            cards = page.locator("a.emq-card").evaluate_all(
                "cards => cards.map(card => [card.getAttribute('href'), card.querySelector('h2').innerText])")
            headings = []
            for name in NOTEBOOKS:
                first = json.loads((NOTEBOOK_DIR / name).read_text(encoding="utf-8"))["cells"][0]
                headings.append(["/voila/render/" + name, "".join(first["source"]).splitlines()[0].split(" · ", 1)[1]])
            assert cards == headings
            screenshot(page, "voila", "index")
            assert_accessible(page, axe_script, "Voila index")
        assert not watch.problems(), "the app's index:\n" + "\n".join(watch.problems())

    @pytest.mark.parametrize("name", NOTEBOOKS)
    def test_notebook(self, app, page, axe_script, name):
        watch = Watch(page)
        with shot_on_failure(page, f"voila-{name}"):
            response = page.goto(f"{app.base}/voila/render/{name}", timeout=180_000)
            views = response.text().count('"application/vnd.jupyter.widget-view+json"')
            wait_until(lambda: page.evaluate(
                """() => !document.getElementById('loading')
                     && !document.querySelector('script[type="application/vnd.voila.cell-output+json"]')"""),
                120, f"Voila {name}: the page did not finish rendering")
            _wait_views_rendered(page, f"Voila {name}", views)
            _error_free(page, f"Voila {name}")
            _wait_painted(page.locator("body"), f"Voila {name}")
            screenshot(page, "voila", name)
            questions_before_answers(page, name, "Voila")
            exercise(page, name, "Voila", keyboard=False)  # every slider dragged to an end, every button pressed
            problems = check_page(page, SCREENSHOTS, f"voila-{Path(name).stem}", watch)  # after the moves
            assert not problems, f"Voila {name}:\n" + "\n".join(problems)
            assert_figures_named(page, f"Voila {name}")
            assert_accessible(page, axe_script, f"Voila {name}")


# -- Jupyter Notebook 7 ------------------------------------------------------------------------------------------


class TestNotebook7:
    """A smoke test of Jupyter Notebook 7: notebooks 01 and 10 open, Run All
    runs them, their views render without an error and their first slider
    moves (an ipywidgets slider by a drag: Notebook 7's slider handles take no
    arrow keys, upstream behaviour; a page view's range by the keyboard, which
    it takes here, its caption following). Notebook 10 has no slider: there
    its first control, the orders view's library menu, is set to another
    library and the view must change.

    Only a smoke test: Notebook 7 renders the widgets through the same
    JupyterLab components, so what a full check would find here it finds in
    JupyterLab (``test_page_views.TestInJupyterLab``); the full checks (every slider and control, layout
    at two sizes, questions before answers) run there, in the app and on the
    offline pages."""

    @pytest.fixture
    def page(self, page_in_shared_tab):
        return page_in_shared_tab

    @pytest.mark.parametrize("number", NOTEBOOK7_SMOKE)
    def test_notebook_runs_and_its_first_control_moves(self, notebook7, page, number):
        found = [name for name in NOTEBOOKS if name.startswith(number)]
        assert len(found) == 1, f"Notebook 7's smoke test wants one notebook {number}*, not {found}"
        name = found[0]
        watch = Watch(page)
        with shot_on_failure(page, f"notebook7-{name}"):
            page.goto(f"{notebook7}/notebooks/{name}?token={TOKEN}")
            _run_all_in_lab(page, name, idle_js=NOTEBOOK7_IDLE_JS)
            _wait_views_rendered(page, f"Notebook 7 {name}")
            _error_free(page, f"Notebook 7 {name}")
            _wait_painted(page.locator(".jp-NotebookPanel"), f"Notebook 7 {name}")
            screenshot(page, "notebook7", name)
            outputs = page.locator(".jp-OutputArea-output")
            view = outputs.filter(has=page.locator(SLIDERS)).first
            if view.count():
                view.scroll_into_view_if_needed()
                settle(view)
                strict = name in MUST_HAVE or view.locator(BUTTONS).count() == 0
                first = view.locator(SLIDERS).first
                if _is_page_range(first):  # a native range takes the keys here, unlike noUiSlider's handles
                    assert_ranges_named(view, f"Notebook 7 {name}")
                    move_range_by_keyboard(page, view, first, strict)
                else:
                    move_by_drag(page, view, first, strict)
            else:  # 10 has no slider: its first control is the library menu of its orders view
                menus = ".widget-dropdown select, .emq-view select"  # an ipywidgets Dropdown or a page view's own
                view = outputs.filter(has=page.locator(menus)).first
                assert view.count(), f"Notebook 7 {name}: neither a slider nor a menu to move"
                view.scroll_into_view_if_needed()
                settle(view)
                menu, before = view.locator(menus).first, view.inner_text()
                assert menu.locator("option").count() >= 2, f"Notebook 7 {name}: a menu of one choice"
                menu.select_option(index=0 if menu.evaluate("s => s.selectedIndex") else 1)
                wait_until(lambda: view.inner_text() != before, 30,
                           f"Notebook 7 {name}: choosing another library changed nothing shown")
                settle(view)
            _error_free(page, f"Notebook 7 {name}, after its first control moved")
            # its console is left out: Notebook 7's notebook_core throws "reading 'schema'" on every page here
            problems = watch.problems(console=False)
            assert not problems, f"Notebook 7 {name}:\n" + "\n".join(problems)


# -- offline pages ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """``echomq-viz export --no-execute`` into a temp folder: the pages of the notebooks as
    stored, whose outputs nbval checks against a fresh run and whose widget state and
    stills the refresh wrote (tests/launcher/test_stills.py). An export that runs every
    notebook first is tested in the fresh venv of the README's Explore command
    (tests/test_explore_command.py); running them all again here would check nothing more."""
    _need_npm_once("the widget JavaScript")
    out = tmp_path_factory.mktemp("html")
    result = subprocess.run([sys.executable, "-m", "echomq_viz", "export", "--no-execute", "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


# The controls still usable offline, a page view's own left out: it runs in the page.
CONTROLS_ON_JS = """() => [
    ...[...document.querySelectorAll('input, button, select, textarea')].filter(e => !e.disabled),
    ...document.querySelectorAll('.noUi-target:not([disabled]), .noUi-handle:not([aria-disabled="true"])'),
].filter(e => !e.closest('.emq-view')).map(e => e.outerHTML.slice(0, 160))"""
# A page view's controls that draw (its ranges and number boxes), switched off.
PAGE_CONTROLS_OFF_JS = """() => [...document.querySelectorAll('.emq-view input[type=range], .emq-view input[type=number]')]
    .filter(e => e.disabled).map(e => e.outerHTML.slice(0, 160))"""


def _check_page_views_move(tab, name: str) -> None:
    """A page view draws in the page, so offline too: its ranges and number boxes are on, each
    range is named and follows the keyboard with its caption."""
    assert not tab.evaluate(PAGE_CONTROLS_OFF_JS), \
        f"{name}: a page view's controls are switched off offline: {tab.evaluate(PAGE_CONTROLS_OFF_JS)}"
    assert_ranges_named(tab.locator("body"), f"offline {name}")
    ranges = tab.locator(PAGE_RANGE)
    for index in range(ranges.count()):
        step_both_ways(tab, ranges.nth(index))


def _check_switched_off(tab, name: str) -> None:
    """Every ipywidgets control is disabled, and neither a drag nor a key moves a slider."""
    wait_until(lambda: not tab.evaluate(CONTROLS_ON_JS), 10,
               lambda: f"{name}: controls that still look usable offline: {tab.evaluate(CONTROLS_ON_JS)}")
    sliders = tab.locator(".widget-slider")
    for index in range(sliders.count()):
        slider = sliders.nth(index)
        handle, readout = slider.locator(".noUi-handle"), slider.locator(".widget-readout")
        handle.scroll_into_view_if_needed()
        before = readout.inner_text()
        box, rail = handle.bounding_box(), slider.locator(".noUi-base").bounding_box()
        tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        tab.mouse.down()
        tab.mouse.move(rail["x"] + rail["width"] * (0.9 if box["x"] < rail["x"] + rail["width"] / 2 else 0.1),
                       box["y"] + box["height"] / 2, steps=6)
        tab.mouse.up()
        handle.focus()
        tab.keyboard.press("End")
        tab.keyboard.press("ArrowLeft")
        time.sleep(0.2)
        assert readout.inner_text() == before, f"{name}: '{_slider_label(slider)}' moved on a page that cannot recompute"


def offline_tab(browser):
    """A tab of a context that refuses every request to the network, and the list of what it asked."""
    context = browser.new_context(viewport=VIEWPORT)
    asked: list[str] = []

    def refuse(route):
        asked.append(route.request.url)
        route.abort()

    context.route(re.compile(r"^(https?|wss?|ftp):"), refuse)
    return context, context.new_page(), asked


def check_offline_page(tab, exported: Path, axe_script: Path, name: str, watch: Watch, asked: list[str]) -> None:
    """The offline page of ``name`` (``echomq-viz export``), opened from disk in ``tab`` (from
    :func:`offline_tab`) with every network request refused: every view renders, the notice at the
    top says which figures move, every ipywidgets control is switched off and every page view's
    range moves, each answer is one click away, axe-core finds nothing severe, the layout holds at
    two sizes. The test is test_page_views.py's ``TestOnTheOfflinePage``: the same load then
    holds each page view to Python's numbers."""
    missing: list[str] = []
    tab.on("requestfailed", lambda request: request.url.startswith("file:") and missing.append(request.url))
    tab.goto((exported / f"{Path(name).stem}.html").as_uri())
    # the widget manager puts each view beside its script, in a .widget-subarea
    wait_until(lambda: tab.evaluate(
        """() => [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
             .every(s => s.parentElement.querySelector('.widget-subarea > *'))"""), 30,
        f"{name}: not every widget view rendered offline")
    _wait_painted(tab.locator("body"), f"offline {name}")
    assert tab.get_by_text("Error displaying widget").count() == 0
    assert tab.locator(".jupyter-widgets-error-widget").count() == 0, (
        f"{name}: a widget failed to render offline (its module not shipped?): {watch.problems()}")
    if tab.locator(".widget-button i.fa").count():  # button icons come from local fonts
        assert tab.evaluate("() => document.fonts.load('900 14px \"Font Awesome 5 Free\"')"
                            ".then(faces => faces.some(face => face.status === 'loaded'))"), \
            f"{name}: the icon font did not load from disk"
    if name in MUST_HAVE and "sliders" in MUST_HAVE[name]:
        assert tab.locator(SLIDERS).count() >= MUST_HAVE[name]["sliders"]
    if name in MUST_HAVE:
        assert len(tab.locator("body").evaluate(FIGURES_JS)) >= 1, f"{name}: no figure offline"
    notice = tab.locator("main > .echomq-viz-snapshot")
    assert notice.count() == 1 and notice.is_visible(), f"{name}: no snapshot notice at the top"
    # which figures move and which are stills, as this notebook's stored views have it
    assert notice.inner_html() == notice_html(nbformat.read(NOTEBOOK_DIR / name, as_version=4))
    assert tab.evaluate("() => document.querySelector('main').firstElementChild.className") \
        == "echomq-viz-snapshot", f"{name}: the notice is not the first thing on the page"
    _check_switched_off(tab, name)
    _check_page_views_move(tab, name)
    answers_one_step_away(tab, name, "offline")
    assert_figures_named(tab, f"offline {name}")
    assert_accessible(tab, axe_script, f"offline {name}")
    screenshot(tab, "offline", name)
    # at 1400x900 and 1024x768: nothing wider than its output, figures at full size, labels that read;
    # other hosts are refused above and listed by `asked` (MathJax's CDN allowed there)
    watch.foreign.clear()
    problems = check_page(tab, SCREENSHOTS, f"offline-{Path(name).stem}", watch)
    assert not problems, f"offline {name}:\n" + "\n".join(problems)
    if "MathJax.js" in (exported / f"{Path(name).stem}.html").read_text(encoding="utf-8"):
        # a notebook with maths still asks MathJax's CDN (optional: the TeX shows as text)
        asked = [url for url in asked if "mathjax" not in url.lower()]
    assert not asked, f"{name} asked the network for {asked}"
    assert not missing, f"{name} looked for files the export did not write: {missing}"
