"""The stills of the views drawn on the page: headless Chromium runs a view
module's ``still(state)`` and screenshots the SVG it returns.

The browser tests need Debian's Chromium (``/usr/bin/chromium``, or
``ECHOMQ_VIZ_CHROMIUM``) and Playwright, never a downloaded browser: without
them they skip, saying why, unless ``ECHOMQ_VIZ_REQUIRE_BROWSER=1`` (CI),
where they fail. They are marked slow (a browser start is seconds); the
others run in the quick part. :func:`need_browser` and the ``page`` fixture
serve tests/launcher/test_stills.py too.
"""

from __future__ import annotations

import base64
import io
import os

import pytest
from conftest import assert_refused

from echomq_viz.launcher.page_stills import NoBrowser, PageStills, StillError, browser_missing, exports_still


def need_browser() -> None:
    """Skip (fail under ``ECHOMQ_VIZ_REQUIRE_BROWSER=1``) without a browser for page stills."""
    reason = browser_missing()
    if reason:
        if os.environ.get("ECHOMQ_VIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required (ECHOMQ_VIZ_REQUIRE_BROWSER=1): {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def page():
    """One started browser for the module's page stills."""
    need_browser()
    with PageStills() as started:
        yield started


# A view module as small as one can be: a bar as wide as the state's ``bar``, red, on a 200x60
# figure; blue instead if ``still`` was handed a key starting with "_" (the module, say).
BAR_MODULE = """
export function render({ model, el }) { el.textContent = "a bar"; }
export function still(state) {
  const leaked = Object.keys(state).some((key) => key.startsWith("_"));
  const fill = leaked ? "#0000ff" : "#ff0000";
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${state.width ?? 200}" height="${state.height ?? 60}"`
    + ` style="max-width:100%;height:auto"><rect x="0" y="0" width="${state.bar}" height="60" fill="${fill}"/></svg>`;
}
"""


def bar_state(bar: int, **traits) -> dict:
    """A stored AnyModel state: the module, anywidget's private traits, and the synced ones."""
    return {"_esm": BAR_MODULE, "_css": "", "_anywidget_id": "tests.Bar", "_model_name": "AnyModel",
            "_view_module": "anywidget", "layout": "IPY_MODEL_layout", "bar": bar, **traits}


def pixels(png_base64: str):
    """The decoded PNG (RGB)."""
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(png_base64))).convert("RGB")


# -- without a browser ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "exported"), [
    ("export function still(state) {}", True),
    ("export async function still (state) {}", True),
    ("export const still = (state) => '';", True),
    ("function still() {}\nexport { render, still };", True),
    ("export { draw as still }", True),
    ("export { still as draw }", False),
    ("export function stillness() {}", False),
    ("function still() {}", False),
    ("export default { render }", False),
    (None, False),
])
def test_a_module_exporting_still_is_told_from_its_text(text, exported):
    assert exports_still(text) is exported


def test_without_chromium_a_still_is_refused_in_one_clear_line():
    missing = PageStills("/nonexistent/chromium")
    with assert_refused(NoBrowser, match=r"Chromium, and there is none at /nonexistent/chromium \(apt-get install chromium\)"):
        missing.render(bar_state(10))
    assert not missing.started
    missing.close()


def test_a_state_without_a_module_is_refused_before_any_browser_starts():
    unused = PageStills("/nonexistent/chromium")
    with assert_refused(StillError, match="no `_esm`"):
        unused.render({"bar": 3})
    assert not unused.started


# -- in the browser -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_still_is_the_svg_on_white_at_its_css_size_drawn_from_the_state(page):
    image = pixels(page.render(bar_state(50)))
    assert image.size == (200, 60)
    assert image.getpixel((0, 0)) == image.getpixel((49, 59)) == (255, 0, 0)  # the bar, red: no "_" key reached it
    assert image.getpixel((50, 30)) == image.getpixel((199, 59)) == (255, 255, 255)  # the white page behind
    wider = pixels(page.render(bar_state(120)))
    assert wider.getpixel((119, 30)) == (255, 0, 0) and wider.getpixel((120, 30)) == (255, 255, 255)


@pytest.mark.slow
def test_an_svg_larger_than_the_window_is_taken_whole_and_unsqueezed(page):
    image = pixels(page.render(bar_state(1100, width=1200, height=900)))
    assert image.size == (1200, 900)
    assert image.getpixel((1099, 30)) == (255, 0, 0) and image.getpixel((1100, 30)) == (255, 255, 255)
    assert pixels(page.render(bar_state(10))).size == (200, 60)  # and the window is back to its size


@pytest.mark.slow
def test_the_same_state_makes_the_same_png_in_another_browser(page):
    first = page.render(bar_state(77))
    assert page.render(bar_state(77)) == first
    with PageStills() as another:
        assert another.render(bar_state(77)) == first


@pytest.mark.slow
def test_the_svg_text_comes_back_whole_non_ascii_included(page):
    module = "export function still(s) { return `<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"80\" height=\"20\"><text y=\"15\">${s.label} → é</text></svg>`; }"
    svg = page.svg({"_esm": module, "label": "2³²"})
    assert svg.startswith("<svg") and "2³² → é" in svg


@pytest.mark.slow
@pytest.mark.parametrize(("module", "match"), [
    ("export function render() {}", r"no page still: the module has no `still` export"),
    ("export function still(state) { throw new RangeError('priority ' + state.bar + ' is past the last tier'); }",
     r"still\(state\) threw RangeError: priority 7 is past the last tier"),
    ("export function still(state) { return null.width; }", r"still\(state\) threw TypeError: Cannot read"),
    ("export function still( {", r"the module does not load: SyntaxError"),
    ("import 'https://example.com/x.js';\nexport function still() { return '<svg/>'; }",
     r"the module does not load: TypeError: Failed to fetch"),  # no network: a still is the module and the state
    ("export function still() { return 'a picture'; }", r'returned "a picture", not SVG text'),
    ("export function still() { return '<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"></svg>'; }",
     r"an SVG of 0x0 px"),
])
def test_a_module_that_cannot_make_a_still_is_refused_in_one_clear_line(page, module, match):
    with assert_refused(StillError, match=match):
        page.render({"_esm": module, "bar": 7})
    assert pixels(page.render(bar_state(5))).size == (200, 60)  # and the browser makes the next one
