"""The stills: what GitHub, nbviewer and a page without a kernel show of each
figure is its current state, the state the prose describes, never the first."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from echomq_viz._stills import VIEW, stale_stills, store_stills, view_stills
from echomq_viz.export import WIDGET_STATE

ROOT = Path(__file__).resolve().parents[1]
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
        f"current one; re-run: python -m echomq_viz._refresh notebooks/{name}")
