"""An anywidget view on an offline page (``echomq-viz export``): its ES module
runs in the page and the controls it draws move there, with no kernel and no
network, while ipywidgets controls stay switched off; the notice at the top
says which figures move.

The browser test runs a tiny notebook through the export's own path
(:func:`echomq_viz.launcher.export.export_notebooks`, which runs it with
:func:`~echomq_viz.launcher.export.execute_with_widgets`), opens its page from
disk in Chromium with every request that is not for a file refused, and moves
the anywidget's range from the keyboard. Chromium and npm are handled as in
``test_browser.py`` (skip without them, fail under ``ECHOMQ_VIZ_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import nbformat
import pytest

from conftest import assert_refused, tiny_notebooks
from echomq_viz.launcher import export
from echomq_viz.launcher._stills import VIEW, WIDGET_STATE
from page_checks import Watch
from test_browser import _need_npm_once, browser, wait_until  # noqa: F401 (browser: the module's Chromium fixture)

# A view that draws its own control and text: the text follows the range through the model.
TINY_ESM = """\
function render({ model, el }) {
  const range = Object.assign(document.createElement("input"), { type: "range", min: 0, max: 10, step: 1 });
  range.setAttribute("aria-label", "n");
  const text = document.createElement("output");
  text.className = "tiny-double";
  const show = () => { range.value = String(model.get("n")); text.textContent = `n * 2 = ${model.get("n") * 2}`; };
  range.addEventListener("input", () => { model.set("n", Number(range.value)); model.save_changes(); });
  model.on("change:n", show);
  show();
  el.append(range, text);
  return () => model.off("change:n", show);
}
export default { render };
"""

# One cell: the anywidget view, then an ipywidgets slider (a still on the page).
TINY_CELL = f"""\
import anywidget, ipywidgets, traitlets
from IPython.display import display

class Tiny(anywidget.AnyWidget):
    _esm = {TINY_ESM!r}
    n = traitlets.Int(3).tag(sync=True)

display(Tiny())
display(ipywidgets.IntSlider(5, description="m"))
"""


# -- the notice and the freezing, on stored state alone ------------------------------------------


def _notebook(*models: tuple[str, str, str, dict]) -> nbformat.NotebookNode:
    """A notebook showing each (model id, module, name, state) as a view of its own cell."""
    nb = nbformat.v4.new_notebook()
    state = {}
    for model_id, module, name, attributes in models:
        state[model_id] = {"model_module": module, "model_name": name, "model_module_version": "*",
                           "state": dict(attributes)}
        nb.cells.append(nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
            "display_data", data={VIEW: {"version_major": 2, "version_minor": 0, "model_id": model_id}})]))
    nb.metadata["widgets"] = {WIDGET_STATE: {"version_major": 2, "version_minor": 0, "state": state}}
    return nb


ANY = ("a", "anywidget", "AnyModel", {"_esm": "export default {}", "n": 1, "disabled": False})
SLIDER = ("s", "@jupyter-widgets/controls", "IntSliderModel", {"value": 1, "disabled": False})
IMAGE = ("i", "@jupyter-widgets/controls", "ImageModel", {"format": "png"})  # a figure no control moves
CAPTION = ("h", "@jupyter-widgets/controls", "HTMLModel", {"value": "a caption"})


@pytest.mark.parametrize("shown, notice", [
    pytest.param((SLIDER, IMAGE), export.SNAPSHOT_NOTICE_HTML, id="stills"),
    pytest.param((), export.SNAPSHOT_NOTICE_HTML, id="no-views"),
    pytest.param((ANY, SLIDER), export.MOVING_NOTICE_HTML, id="anywidget-and-slider"),
    # a static image has nothing to move in the lab either: the page's figures all move that can
    pytest.param((ANY, IMAGE), export.LIVE_NOTICE_HTML, id="anywidget-and-static-image"),
    pytest.param((ANY, CAPTION), export.LIVE_NOTICE_HTML, id="anywidget-and-caption"),
    pytest.param((ANY,), export.LIVE_NOTICE_HTML, id="anywidget"),
])
def test_the_notice_says_which_figures_move(shown, notice):
    nb = _notebook(*shown)
    assert export.notice_html(nb) == notice
    export.freeze_controls(nb)
    assert export.notice_html(nb) == notice, "the notice changed once the controls were switched off"


def test_a_model_no_output_shows_does_not_change_the_notice():
    nb = _notebook(ANY)
    nb.metadata["widgets"][WIDGET_STATE]["state"]["s"] = {
        "model_module": SLIDER[1], "model_name": SLIDER[2], "state": dict(SLIDER[3])}
    assert export.notice_html(nb) == export.LIVE_NOTICE_HTML


def test_an_anywidget_view_shown_inside_a_box_counts_as_moving():
    nb = _notebook(("b", "@jupyter-widgets/controls", "VBoxModel", {"children": ["IPY_MODEL_a", "IPY_MODEL_s"]}))
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    for model_id, module, name, attributes in (ANY, SLIDER):
        state[model_id] = {"model_module": module, "model_name": name, "state": dict(attributes)}
    assert export.notice_html(nb) == export.MOVING_NOTICE_HTML


def test_freezing_leaves_anywidget_views_alone():
    nb = _notebook(ANY, SLIDER, IMAGE)
    assert export.freeze_controls(nb) == 1
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    assert state["s"]["state"]["disabled"] is True
    assert state["a"]["state"] == ANY[3], "an anywidget's own traitlets were changed"
    assert state["i"]["state"] == IMAGE[3], "a static image was changed"


def test_the_offline_pages_ship_no_ipympl():
    """Every figure is a page view or a static image: no page loads ipympl's front end."""
    assert "jupyter-matplotlib" not in export._TEMPLATE and "ipympl" not in export._TEMPLATE


def test_anywidgets_front_end_is_the_wheels_amd_module():
    path = export.anywidget_frontend()
    assert path.as_posix().endswith("share/jupyter/nbextensions/anywidget/index.js")
    text = path.read_text(encoding="utf-8")
    assert 'define(["@jupyter-widgets/base"]' in text  # embed-amd.js defines that module
    assert 'static model_name = "AnyModel"' in text
    assert '"anywidget": "static/anywidget/index"' in export._TEMPLATE


def test_a_page_with_anywidget_views_fails_in_one_line_without_anywidget(tmp_path, monkeypatch):
    """No anywidget installed: a page that needs it says what to do; the others are written."""
    def missing():
        raise export.ExportError("anywidget is not installed: pip install anywidget")

    monkeypatch.setattr(export, "anywidget_frontend", missing)
    monkeypatch.setattr(export, "fetch_js_assets", lambda *a, **k: {})
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(_notebook(SLIDER), folder / "plain.ipynb")
    nbformat.write(_notebook(ANY), folder / "moving.ipynb")
    assert export.export_notebooks(folder, tmp_path / "html", names=["plain.ipynb"], execute=False)
    with assert_refused(export.ExportError, match=r"^moving\.ipynb has anywidget views: .*pip install anywidget"):
        export.export_notebooks(folder, tmp_path / "html", names=["moving.ipynb"], execute=False)


# -- in the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_page(browser, tmp_path_factory) -> Path:  # noqa: F811 (browser: imported fixture)
    """The tiny notebook run and exported as the export does it: its page."""
    _need_npm_once("the widget JavaScript")
    folder = tiny_notebooks(tmp_path_factory.mktemp("anywidget") / "notebooks", TINY_CELL)
    out = folder.parent / "html"
    notes: list[str] = []
    started = time.monotonic()
    pages = export.export_notebooks(folder, out, names=["tiny.ipynb"], timeout=120, log=notes.append)
    print(f"export of the tiny notebook: {time.monotonic() - started:.1f} s")  # shown with -rA
    assert [page.name for page in pages] == ["tiny.html"]
    assert (out / "static/anywidget/index.js").read_bytes() == export.anywidget_frontend().read_bytes()
    assert not [note for note in notes if note.startswith("note:")], notes  # stored for the installed version
    return pages[0]


@pytest.mark.slow  # a kernel run and a real browser: seconds
def test_an_anywidget_view_moves_on_the_offline_page(browser, tiny_page):  # noqa: F811
    state = json.loads(re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>',
                                 tiny_page.read_text(encoding="utf-8"), re.S).group(1))["state"]
    tiny = [model for model in state.values() if model["model_module"] == "anywidget"]
    assert len(tiny) == 1 and tiny[0]["model_name"] == "AnyModel" and tiny[0]["state"]["n"] == 3
    assert "export default { render }" in tiny[0]["state"]["_esm"]

    context = browser.new_context(viewport={"width": 1024, "height": 768})
    refused: list[str] = []

    def only_files(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    watch = Watch(tab)
    missing: list[str] = []
    tab.on("requestfailed", lambda request: request.url.startswith("file:") and missing.append(request.url))
    try:
        tab.goto(tiny_page.as_uri())
        notice = tab.locator("main > .echomq-viz-snapshot")
        assert notice.count() == 1 and notice.inner_html() == export.MOVING_NOTICE_HTML
        assert notice.inner_text() == ("The figures with their own controls move here; the rest are stills: "
                                       "run echomq-viz lab to move those.")

        range_ = tab.get_by_role("slider", name="n")
        wait_until(lambda: range_.count() or tab.get_by_text("Error displaying widget").count(), 20,
                   lambda: f"the anywidget view never rendered; refused {refused}; {watch.problems()}")
        assert tab.get_by_text("Error displaying widget").count() == 0, f"{refused}; {watch.problems()}"
        text = tab.locator("output.tiny-double")
        assert text.inner_text() == "n * 2 = 6"
        assert range_.is_enabled(), "the anywidget's own control was switched off"
        range_.focus()
        tab.keyboard.press("ArrowRight")
        wait_until(lambda: text.inner_text() == "n * 2 = 8", 5, lambda: f"after ArrowRight: {text.inner_text()!r}")
        tab.keyboard.press("End")
        wait_until(lambda: text.inner_text() == "n * 2 = 20", 5, lambda: f"after End: {text.inner_text()!r}")
        tab.keyboard.press("Home")
        wait_until(lambda: text.inner_text() == "n * 2 = 0", 5, lambda: f"after Home: {text.inner_text()!r}")

        # the ipywidgets slider beside it is a still, as on every offline page
        slider = tab.locator(".widget-slider")
        assert slider.count() == 1
        wait_until(lambda: slider.locator(".noUi-target[disabled]").count() == 1, 10, "the ipywidgets slider is usable")
        readout = slider.locator(".widget-readout").inner_text()
        slider.locator(".noUi-handle").focus()
        tab.keyboard.press("ArrowRight")
        time.sleep(0.2)
        assert slider.locator(".widget-readout").inner_text() == readout, "a switched-off slider moved"

        assert tab.get_by_text("Error displaying widget").count() == 0
        assert not watch.problems(), "\n".join(watch.problems())
        assert not refused, f"the page asked the network for {refused}"
        assert not missing, f"the page looked for files the export did not write: {missing}"
    finally:
        context.close()
