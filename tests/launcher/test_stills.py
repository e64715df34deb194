"""The stills and the stored state: what GitHub, nbviewer and a page without a
kernel show of each figure is the state its own cell made, the state the prose
describes; no later cell moved it, and a guess-first view is stored unanswered."""

from __future__ import annotations

import base64
import copy
import io
import json
from pathlib import Path

import pytest

from conftest import assert_refused
from test_page_stills import bar_state, need_browser, page, pixels  # noqa: F401 (page: a fixture)

from echomq_viz.launcher import page_stills
from echomq_viz.launcher._stills import SHOWN, VIEW, has_page_stills, moved_views, stale_stills, store_stills, view_stills
from echomq_viz.launcher._stills import WIDGET_STATE
from echomq_viz.launcher.page_stills import NoBrowser, PageStills, StillError

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def _stored_notebooks():
    """Each notebook's name; marked slow where a view is drawn on the page (its stills need a browser)."""
    for name in NOTEBOOKS:
        if has_page_stills(json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))):
            yield pytest.param(name, marks=pytest.mark.slow)
        else:
            yield name


@pytest.fixture(scope="module")
def browser_if_needed():
    """A browser for the stored notebooks' page stills, started by the first one that has any."""
    browser = PageStills()
    yield browser
    browser.close()


def _static_view(still: str, ids: str = "") -> tuple[dict, dict]:
    """A view holding no page figure (a box of a slider, a static image and its caption, a layout
    between, as notebook 10's growth plots; the image's PNG a stored buffer) shown with the still
    its kernel showed: (its output, its models, their ids starting with ``ids``)."""
    controls = "@jupyter-widgets/controls"
    state = {f"{ids}box": {"model_module": controls, "model_name": "VBoxModel", "state": {
        "children": [f"IPY_MODEL_{ids}slider", f"IPY_MODEL_{ids}image", f"IPY_MODEL_{ids}caption"],
        "layout": f"IPY_MODEL_{ids}layout"}},
        f"{ids}slider": {"model_module": controls, "model_name": "IntSliderModel", "state": {"value": 5}},
        f"{ids}image": {"model_module": controls, "model_name": "ImageModel", "state": {"format": "png"},
                        "buffers": [{"encoding": "base64", "path": ["value"], "data": "Tm93"}]},
        f"{ids}caption": {"model_module": controls, "model_name": "HTMLModel", "state": {"value": "Figure: a plot"}},
        f"{ids}layout": {"model_module": "@jupyter-widgets/base", "model_name": "LayoutModel", "state": {}}}
    output = {"output_type": "display_data", "metadata": {},
              "data": {VIEW: {"model_id": f"{ids}box", "version_major": 2}, "image/png": still,
                       "text/plain": "GrowthView(...)"}}
    return output, state


def _notebook(still: str) -> dict:
    """A notebook of one cell showing :func:`_static_view`."""
    output, state = _static_view(still)
    return {"cells": [{"cell_type": "code", "outputs": [output]}],
            "metadata": {"widgets": {WIDGET_STATE: {"state": state}}}}


def _no_browser(self):
    raise AssertionError("a browser started for a notebook without page stills")


def test_a_view_holding_no_page_figure_keeps_the_still_its_kernel_showed(monkeypatch):
    """Its figure is a static image no control moves: the still shown with it is its picture,
    left as stored; nothing is made for it, and no browser starts."""
    monkeypatch.setattr(page_stills.PageStills, "start", _no_browser)
    nb = _notebook("Rmlyc3Q=")  # "First"; the image holds "Now"
    before = copy.deepcopy(nb)
    assert not has_page_stills(nb)
    assert list(view_stills(nb)) == [] and store_stills(nb) == 0 and stale_stills(nb) == [] and nb == before


def test_outputs_without_a_view_are_not_stills(monkeypatch):
    monkeypatch.setattr(page_stills.PageStills, "start", _no_browser)
    nb = _notebook("Rmlyc3Q=")
    del nb["cells"][0]["outputs"][0]["data"]["image/png"]
    nb["cells"][0]["outputs"].append({"output_type": "display_data", "data": {"image/png": "UGxvdA=="}})
    before = copy.deepcopy(nb)
    assert list(view_stills(nb)) == [] and store_stills(nb) == 0 and stale_stills(nb) == [] and nb == before


@pytest.mark.parametrize("name", list(_stored_notebooks()))
def test_every_stored_still_is_its_figures_current_state(name, browser_if_needed):
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    if has_page_stills(nb):
        need_browser()
    stills = list(view_stills(nb, browser_if_needed))
    assert all(len(images) == 1 for _, images in stills), f"{name}: a view without exactly one stored figure"
    assert stale_stills(nb, browser_if_needed) == [], (
        f"{name}: stills {stale_stills(nb)} (in output order) show another state than their figure's "
        f"current one; re-run: python -m echomq_viz.launcher._refresh notebooks/{name}")


# -- figures drawn on the page ---------------------------------------------------------------------
#
# A view drawn on the page is an anywidget whose module exports still(state); the kernel shows no
# still for it, and storing the notebook makes one in Chromium (echomq_viz.launcher.page_stills).


def _page_notebook(*figures: dict, still: str | None = None) -> dict:
    """A view (a box holding a slider and the ``figures``, stored AnyModel states) shown by a
    kernel: no still, unless ``still``."""
    state = {"box": {"model_module": "@jupyter-widgets/controls", "model_name": "VBoxModel", "state": {
        "children": ["IPY_MODEL_slider"] + [f"IPY_MODEL_figure{n}" for n in range(len(figures))]}},
        "slider": {"model_module": "@jupyter-widgets/controls", "model_name": "IntSliderModel", "state": {"value": 5}}}
    for n, figure in enumerate(figures):
        state[f"figure{n}"] = {"model_module": "anywidget", "model_module_version": "~0.9.*",
                               "model_name": "AnyModel", "state": figure}
    data = {VIEW: {"model_id": "box", "version_major": 2}, "text/plain": "BarView(...)"}
    if still is not None:
        data["image/png"] = still
    return {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "metadata": {}, "data": data}]}],
            "metadata": {"widgets": {WIDGET_STATE: {"state": state}}}}


def _figure(nb: dict, n: int = 0) -> dict:
    return nb["metadata"]["widgets"][WIDGET_STATE]["state"][f"figure{n}"]["state"]


@pytest.mark.slow
def test_a_figure_drawn_on_the_page_gets_its_still_from_its_own_module_and_state(page):
    nb = _page_notebook(bar_state(50))
    assert has_page_stills(nb) and stale_stills(nb, page) == [0]  # the kernel showed none
    assert store_stills(nb, page) == 1
    image = pixels(nb["cells"][0]["outputs"][0]["data"]["image/png"])
    assert image.size == (200, 60)
    assert image.getpixel((49, 30)) == (255, 0, 0) and image.getpixel((50, 30)) == (255, 255, 255)
    assert stale_stills(nb, page) == []
    _figure(nb)["bar"] = 120  # the stored state moved: the still no longer shows it
    assert stale_stills(nb, page) == [0]
    assert store_stills(nb, page) == 1 and stale_stills(nb, page) == []
    assert pixels(nb["cells"][0]["outputs"][0]["data"]["image/png"]).getpixel((119, 30)) == (255, 0, 0)


@pytest.mark.slow
def test_a_page_still_split_into_lines_as_stored_compares_whole(page):
    nb = _page_notebook(bar_state(30))
    store_stills(nb, page)
    data = nb["cells"][0]["outputs"][0]["data"]
    text = data["image/png"]
    data["image/png"] = [text[i:i + 76] + "\n" for i in range(0, len(text), 76)]
    assert stale_stills(nb, page) == []


@pytest.mark.slow
def test_a_page_still_encoded_otherwise_is_fresh_while_its_pixels_are_the_same(page):
    from PIL import Image

    nb = _page_notebook(bar_state(30))
    store_stills(nb, page)
    data = nb["cells"][0]["outputs"][0]["data"]
    recoded = io.BytesIO()
    pixels(data["image/png"]).save(recoded, format="PNG", compress_level=1)
    data["image/png"] = base64.b64encode(recoded.getvalue()).decode()
    assert stale_stills(nb, page) == []
    Image.new("RGB", (200, 60), "white").save(recoded := io.BytesIO(), format="PNG")
    data["image/png"] = base64.b64encode(recoded.getvalue()).decode()
    assert stale_stills(nb, page) == [0]


@pytest.mark.slow
def test_a_view_holding_two_page_figures_is_left_as_shown_and_reported_when_stale(page):
    nb = _page_notebook(bar_state(20), bar_state(40), still="Rmlyc3Q=")
    before = copy.deepcopy(nb)
    assert store_stills(nb, page) == 0 and nb == before  # which one it shows, only the view knows
    assert stale_stills(nb, page) == [0]
    nb["cells"][0]["outputs"][0]["data"]["image/png"] = page.render(bar_state(40))
    assert stale_stills(nb, page) == []


def test_a_module_without_still_is_left_alone_and_starts_no_browser(monkeypatch):
    monkeypatch.setattr(page_stills.PageStills, "start", _no_browser)
    nb = _page_notebook({"_esm": "export function render({ el }) { el.textContent = 'hi'; }", "bar": 5})
    before = copy.deepcopy(nb)
    assert not has_page_stills(nb)
    assert list(view_stills(nb)) == [] and store_stills(nb) == 0 and stale_stills(nb) == [] and nb == before


@pytest.mark.slow
def test_beside_a_static_view_only_the_page_views_stills_are_made_and_counted(page):
    """A static view's still before a page view's: the page view's is made and is place 0 of the
    stale ones; the static one is left as its kernel showed it."""
    nb = _page_notebook(bar_state(50))
    output, state = _static_view("Rmlyc3Q=", ids="static-")
    nb["cells"].insert(0, {"cell_type": "code", "outputs": [output]})
    nb["metadata"]["widgets"][WIDGET_STATE]["state"].update(state)
    assert [len(images) for _, images in view_stills(nb, page)] == [1]
    assert stale_stills(nb, page) == [0]  # the page view's, which the kernel showed without a still
    assert store_stills(nb, page) == 1 and stale_stills(nb, page) == []
    assert nb["cells"][0]["outputs"][0]["data"]["image/png"] == "Rmlyc3Q="
    assert pixels(nb["cells"][1]["outputs"][0]["data"]["image/png"]).getpixel((49, 30)) == (255, 0, 0)


@pytest.mark.slow
def test_a_still_that_throws_is_refused_in_one_clear_line_by_a_browser_of_its_own():
    need_browser()
    nb = _page_notebook(bar_state(3, _esm="export function still(state) { throw new Error(`no bar ${state.bar}`); }"))
    before = copy.deepcopy(nb)
    with assert_refused(StillError, match=r"still\(state\) threw Error: no bar 3"):
        store_stills(nb)  # no browser handed in: one of its own, started and closed
    assert nb == before


def test_without_a_browser_a_page_still_is_refused_in_one_clear_line(monkeypatch):
    monkeypatch.setattr(page_stills, "CHROMIUM", "/nonexistent/chromium")
    with assert_refused(NoBrowser, match=r"/nonexistent/chromium"):
        store_stills(_page_notebook(bar_state(3)))


# -- every view as its own cell showed it ---------------------------------------------------------
#
# A view's output keeps, in its metadata (echomq_viz.widgets.view.SHOWN), what every control and
# text of the view showed when its cell displayed it. The widget state is stored at the end of the
# run; if a later cell moved the view (a slider set, a guess made, a button pressed from code), the
# two differ, and the view above no longer shows the state its own cell describes.

def _state(nb: dict) -> dict:
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _views(nb: dict):
    """(output data, output metadata) of every output displaying a widget view,
    its text/plain joined into one string."""
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            if VIEW in output.get("data", {}):
                data = dict(output["data"], **{"text/plain": "".join(output["data"].get("text/plain", ""))})
                yield data, output.get("metadata", {})


def _controls(state: dict, model_id: str) -> dict[str, object]:
    """Description -> value (a choice's index) of every control a view holds, as stored;
    for a view drawn in the page, each value of its model by name."""
    from echomq_viz.launcher._stills import reach_models

    found = {}
    for held in reach_models(state, model_id, []):
        attributes = state[held].get("state", {})
        if state[held].get("model_module") == "anywidget":
            found.update({name: value for name, value in attributes.items() if not name.startswith("_")})
        elif attributes.get("description"):
            found[attributes["description"]] = attributes.get("index", attributes.get("value"))
    return found


def test_a_view_records_what_it_showed_where_the_check_looks():
    from echomq_viz.widgets import HeroView
    from echomq_viz.widgets.view import SHOWN as WRITTEN

    data, metadata = HeroView(None, priority=2, counter=7)._repr_mimebundle_()
    shown = metadata[SHOWN]
    assert WRITTEN == SHOWN and shown["view"] == data["text/plain"] == "HeroView(priority=2, counter=7)"
    # the numbers it recorded are the ones it shows: ipywidgets controls record {"value": n} each (the
    # priority, the counter and its exact text box), a view drawn on the page its figure's traits
    numbers = {number for values in shown["values"].values() for number in values.values()
               if isinstance(number, int) and not isinstance(number, bool)}
    assert numbers == {2, 7}


def test_a_view_moved_after_its_cell_is_found_and_one_left_alone_is_not():
    nb = _notebook("Rmlyc3Q=")
    output = nb["cells"][0]["outputs"][0]
    assert [text for text, _ in moved_views(nb)] == ["GrowthView(...)"]  # it recorded nothing
    output["metadata"][SHOWN] = {"view": "GrowthView(...)", "values": {"slider": {"value": 5}}}
    assert moved_views(nb) == []
    nb["metadata"]["widgets"][WIDGET_STATE]["state"]["slider"]["state"]["value"] = 6  # a later cell moved it
    assert moved_views(nb) == [("GrowthView(...)", {"slider": ({"value": 5}, {"value": 6})})]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_view_is_stored_as_its_own_cell_showed_it(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    moved = moved_views(nb)
    assert not moved, (f"{name}: views stored in another state than their own cell showed "
                       f"(model: shown, stored): {moved[:2]}; a later cell must not move a view shown above "
                       f"it; then re-run python -m echomq_viz.launcher._refresh notebooks/{name}")
    for data, metadata in _views(nb):
        assert metadata[SHOWN]["view"] == data["text/plain"]


# Guess-first views, as many as each notebook shows: each must be stored unanswered.
GUESS_FIRST = {"02-which-pops-first.ipynb": 1, "03-inside-the-consume.ipynb": 1, "06-inspect-a-real-queue.ipynb": 1,
               "08-every-path-scores-the-same-way.ipynb": 7, "09-designs-that-fail.ipynb": 1}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_guess_first_view_is_stored_unanswered(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    state = _state(nb)
    for data, _ in _views(nb):  # straight from the stored widget state, whatever the records say
        controls = _controls(state, data[VIEW]["model_id"])
        assert controls.get("Your guess:") is None, f"{name}: {data['text/plain']} stored with a guess made"
    records = [metadata.get(SHOWN, {}) for _, metadata in _views(nb)]
    asked = [record for record in records if record.get("guess_first")]
    assert len(asked) == GUESS_FIRST.get(name, 0), f"{name}: {len(asked)} guess-first views"
    assert [record["view"] for record in asked if record["answered"]] == [], f"{name}: shown answered"


def _stored_controls(name: str, view: str) -> dict[str, object]:
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    [data] = [data for data, _ in _views(nb) if data["text/plain"].startswith(view)]
    return _controls(_state(nb), data[VIEW]["model_id"])


def test_the_views_the_prose_describes_are_stored_as_described():
    hero = _stored_controls("01-one-score-two-keys.ipynb", "HeroView(priority=1, counter=1)")
    assert (hero["priority"], hero["counter"], hero["tiers"]) == (1, 1, 6)
    assert hero["live"] is False and hero["live_enabled"] is True
    race = _stored_controls("02-which-pops-first.ipynb", "ComparisonView(")
    assert (race["a_priority"], race["a_counter"]) == (1, 4_000_000_000)
    assert (race["b_priority"], race["b_counter"]) == (2, 1)
    assert race["guess"] == "" and race["redis_answer"] == {} and race["run_enabled"] is True
    bands = _stored_controls("04-tiers-as-bands.ipynb", "BandsView(tiers=4, jobs=200, start=0)")
    assert (bands["tiers"], bands["jobs"], bands["start"], bands["edge"]) == (4, 200, 0, 1)
    assert bands["ran"] == {"tiers": 4, "jobs": 200, "start": 0} and len(bands["points"]) == 200
    inspector = _stored_controls("06-inspect-a-real-queue.ipynb", "InspectorView(")
    assert inspector["queue"].startswith("{viz-06-inspect@") and inspector["prefix"] == "emq"
    assert inspector["queue_map"] == {} and inspector["progress"] == [0, 0] and inspector["status"] == ""  # unread
    graph = _stored_controls("08-every-path-scores-the-same-way.ipynb", "IncludeGraphView(")
    assert graph["target"] == "includes/getPriorityScore" and graph["status"] == ""
    paths = [_controls(_state(nb), data[VIEW]["model_id"]) for nb in [json.loads(
        (ROOT / "notebooks" / "08-every-path-scores-the-same-way.ipynb").read_text(encoding="utf-8"))]
        for data, _ in _views(nb) if data["text/plain"].startswith("PathView(")]
    assert len(paths) == 7 and all(p["guess"] is None and p["result"] == {} for p in paths)  # unanswered
    orders = _stored_controls("10-the-queues-people-run.ipynb", "OrdersView(")
    assert orders["library"] == 0 and orders["status"] == ""  # as first shown: the first library, no refusal
    assert [lib["key"] for lib in orders["libraries"]] == ["packed", "bullmq", "bull", "kombu", "kombu10", "rq", "huey"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_stored_page_view_carries_the_module_the_package_ships(name):
    """A stored view runs its stored module text when the notebook is opened
    before any cell runs, and its still was drawn by it: it must be today's
    module, or the stored notebook shows what the package no longer draws."""
    from echomq_viz.widgets.page_modules import PAGE, page_module

    shipped = {page_module(path.stem) for path in PAGE.glob("*.js") if "export default" in path.read_text()}
    stored = [model["state"]["_esm"] for model in _state(json.loads((ROOT / "notebooks" / name).read_text()))
              .values() if model.get("model_module") == "anywidget"]
    stale = [esm.split("\n", 1)[0] for esm in stored if esm not in shipped]
    assert not stale, (f"{name} stores page modules the package no longer ships ({len(stale)}): re-run "
                       f"python -m echomq_viz.launcher._refresh notebooks/{name}")
