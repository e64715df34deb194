"""The stills and the stored state: what GitHub, nbviewer and a page without a
kernel show of each figure is the state its own cell made, the state the prose
describes; no later cell moved it, and a guess-first view is stored unanswered."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from echomq_viz.launcher._stills import SHOWN, VIEW, moved_views, stale_stills, store_stills, view_stills
from echomq_viz.launcher._stills import WIDGET_STATE

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def _notebook(first_still: str, current: dict[str, str]) -> dict:
    """A view (a box holding a slider and a canvas, a layout between) shown with
    ``first_still``; ``current``: canvas model id -> its current image."""
    state = {"box": {"model_name": "VBoxModel", "state": {
        "children": ["IPY_MODEL_slider", "IPY_MODEL_inner"], "layout": "IPY_MODEL_layout"}},
        "inner": {"model_name": "VBoxModel", "state": {"children": [f"IPY_MODEL_{m}" for m in current]}},
        "slider": {"model_name": "IntSliderModel", "state": {"value": 5}},
        "layout": {"model_name": "LayoutModel", "state": {}}}
    for model_id, image in current.items():
        state[model_id] = {"model_name": "MPLCanvasModel",
                           "state": {"_data_url": f"data:image/png;base64,{image}"}}
    output = {"output_type": "display_data", "metadata": {},
              "data": {VIEW: {"model_id": "box", "version_major": 2}, "image/png": first_still,
                       "text/plain": "HeroView(...)"}}
    return {"cells": [{"cell_type": "code", "outputs": [output]}],
            "metadata": {"widgets": {WIDGET_STATE: {"state": state}}}}


def test_a_still_is_stale_until_it_is_stored_from_the_current_figure():
    nb = _notebook("Rmlyc3Q=", {"canvas": "Tm93"})  # "First", "Now"
    assert [images for _, images in view_stills(nb)] == [["Tm93"]]
    assert stale_stills(nb) == [0]
    assert store_stills(nb) == 1
    assert nb["cells"][0]["outputs"][0]["data"]["image/png"] == "Tm93"
    assert stale_stills(nb) == []


def test_a_still_split_into_lines_as_stored_compares_whole():
    assert stale_stills(_notebook(["Tm", "93\n"], {"canvas": "Tm93"})) == []


def test_a_view_holding_two_figures_is_left_as_shown_and_reported_when_stale():
    nb = _notebook("Rmlyc3Q=", {"left": "TGVmdA==", "right": "UmlnaHQ="})
    before = copy.deepcopy(nb)
    assert store_stills(nb) == 0 and nb == before  # which one it shows, only the view knows
    assert stale_stills(nb) == [0]
    assert stale_stills(_notebook("UmlnaHQ=", {"left": "TGVmdA==", "right": "UmlnaHQ="})) == []


def test_outputs_without_a_still_or_a_view_are_not_stills():
    nb = _notebook("Rmlyc3Q=", {"canvas": "Tm93"})
    del nb["cells"][0]["outputs"][0]["data"]["image/png"]
    nb["cells"][0]["outputs"].append({"output_type": "display_data", "data": {"image/png": "UGxvdA=="}})
    assert list(view_stills(nb)) == [] and store_stills(nb) == 0


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_stored_still_is_its_figures_current_state(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    stills = list(view_stills(nb))
    assert all(len(images) == 1 for _, images in stills), f"{name}: a view without exactly one stored figure"
    assert stale_stills(nb) == [], (
        f"{name}: stills {stale_stills(nb)} (in output order) show another state than their figure's "
        f"current one; re-run: python -m echomq_viz.launcher._refresh notebooks/{name}")


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
    """Description -> value (a choice's index) of every control a view holds, as stored."""
    from echomq_viz.launcher._stills import reach_models

    found = {}
    for held in reach_models(state, model_id, []):
        attributes = state[held].get("state", {})
        if attributes.get("description"):
            found[attributes["description"]] = attributes.get("index", attributes.get("value"))
    return found


def test_a_view_records_what_it_showed_where_the_check_looks():
    from echomq_viz.widgets import HeroView
    from echomq_viz.widgets.view import SHOWN as WRITTEN

    data, metadata = HeroView(None, priority=2, counter=7)._repr_mimebundle_()
    shown = metadata[SHOWN]
    assert WRITTEN == SHOWN and shown["view"] == data["text/plain"] == "HeroView(priority=2, counter=7)"
    assert sorted(values.get("value") for values in shown["values"].values()
                  if isinstance(values.get("value"), int) and not isinstance(values.get("value"), bool)) == [2, 7, 7]


def test_a_view_moved_after_its_cell_is_found_and_one_left_alone_is_not():
    nb = _notebook("Rmlyc3Q=", {"canvas": "Tm93"})
    output = nb["cells"][0]["outputs"][0]
    assert [text for text, _ in moved_views(nb)] == ["HeroView(...)"]  # it recorded nothing
    output["metadata"][SHOWN] = {"view": "HeroView(...)", "values": {"slider": {"value": 5}}}
    assert moved_views(nb) == []
    nb["metadata"]["widgets"][WIDGET_STATE]["state"]["slider"]["state"]["value"] = 6  # a later cell moved it
    assert moved_views(nb) == [("HeroView(...)", {"slider": ({"value": 5}, {"value": 6})})]


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
GUESS_FIRST = {"02-which-pops-first.ipynb": 1, "03-inside-the-consume.ipynb": 1,
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
    assert (hero["priority"], hero["counter"], hero["exact counter"]) == (1, 1, 1)
    assert hero["live on Redis: each change adds a job"] is False
    race = _stored_controls("02-which-pops-first.ipynb", "ComparisonView(")
    assert (race["job A priority"], race["job A counter"]) == (1, 4_000_000_000)
    assert (race["job B priority"], race["job B counter"]) == (2, 1)
    assert race["Your guess:"] is None
    bands = _stored_controls("04-tiers-as-bands.ipynb", "BandsView(tiers=4, jobs=200, start=0)")
    assert (bands["tiers"], bands["jobs"], bands["pc starts at"]) == (4, 200, 0)
