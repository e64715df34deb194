"""``python -m echomq_viz.launcher._refresh``: notebooks re-run in place keep their
outputs, widget state and figure images, and carry nothing that changes on
every run (execution timestamps, random widget ids), so diffs stay quiet."""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from echomq_viz.launcher._refresh import quieten
from echomq_viz.launcher._stills import VIEW, WIDGET_STATE, stale_stills

ROOT = Path(__file__).resolve().parents[2]
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

WIDGET_NOTEBOOK = nbformat.v4.new_notebook(cells=[
    nbformat.v4.new_markdown_cell("# A view drawn in the page, and an ipywidgets slider"),
    nbformat.v4.new_code_cell(
        "import ipywidgets as w\n"
        "from echomq_viz.redis_side.server import connect\n"
        "from echomq_viz.widgets import HeroView\n"
        "print('redis answers', connect().ping())\n"
        "HeroView(None, priority=2, counter=7)"),
    nbformat.v4.new_code_cell("w.IntSlider(value=3, min=1, max=9, description='tier')"),
], metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}})


def _refresh(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "echomq_viz.launcher._refresh", *map(str, paths)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


VIEW_NOTEBOOK = nbformat.v4.new_notebook(cells=[
    nbformat.v4.new_code_cell("from echomq_viz.widgets import HeroView\nhero = HeroView(None, priority=1, counter=1)\nhero"),
    nbformat.v4.new_code_cell("hero.set(priority=5, counter=2**32 - 1)"),
], metadata=WIDGET_NOTEBOOK.metadata)


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> dict:
    """Two refreshes of two notebooks (each refresh starts a kernel, a Redis and a browser for the
    stills: seconds, so one serves both notebooks): WIDGET_NOTEBOOK refreshed, then refreshed
    again unchanged; VIEW_NOTEBOOK refreshed, then again without its last cell (the move)."""
    folder = tmp_path_factory.mktemp("refresh")
    widgets, view = folder / "widgets.ipynb", folder / "view.ipynb"
    nbformat.write(WIDGET_NOTEBOOK, widgets)
    nbformat.write(VIEW_NOTEBOOK, view)
    first = _refresh(widgets, view)
    assert first.returncode == 0, first.stderr[-3000:]
    found = {"widgets": widgets.read_bytes(), "view": view.read_bytes()}
    unmoved = nbformat.read(view, as_version=4)  # the same notebook without the move
    unmoved.cells.pop()
    nbformat.write(unmoved, view)
    again = _refresh(widgets, view)
    assert again.returncode == 0, again.stderr[-3000:]
    return {**found, "widgets again": widgets.read_bytes(), "view unmoved": view.read_bytes()}


@pytest.mark.slow
def test_refresh_stores_outputs_widgets_and_stills_and_nothing_volatile(refreshed):
    """A page view (the hero) and an ipywidgets slider: the outputs, the widget state with the
    view's anywidget model and the slider, the view's still drawn by its page module, widget ids
    renumbered, no timestamps; a second run writes the same bytes."""
    first = refreshed["widgets"]
    nb = json.loads(first)
    hero, slider = nb["cells"][1], nb["cells"][2]
    assert (hero["execution_count"], slider["execution_count"]) == (1, 2)
    assert "execution" not in hero["metadata"] and "execution" not in slider["metadata"]
    assert any("redis answers True" in "".join(out.get("text", "")) for out in hero["outputs"])
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    assert all(re.fullmatch(r"0{20}[0-9a-f]{12}", model_id) for model_id in state), sorted(state)
    (shown,) = [out["data"] for out in hero["outputs"] if VIEW in out.get("data", {})]
    figure = state[shown[VIEW]["model_id"]]  # the view is its page model
    assert (figure["model_module"], figure["model_name"]) == ("anywidget", "AnyModel")
    assert (figure["state"]["priority"], figure["state"]["counter"]) == (2, 7)
    assert "export function still" in figure["state"]["_esm"]
    assert "".join(shown["text/plain"]) == "HeroView(priority=2, counter=7)"
    assert stale_stills(nb) == []  # its still, drawn by the page module from that state
    assert Image.open(io.BytesIO(base64.b64decode("".join(shown["image/png"])))).format == "PNG"
    (control,) = [out["data"] for out in slider["outputs"] if VIEW in out.get("data", {})]
    assert state[control[VIEW]["model_id"]]["model_name"] == "IntSliderModel"
    assert state[control[VIEW]["model_id"]]["state"]["value"] == 3
    assert not [m for m in state.values() if m["model_module"] not in
                ("anywidget", "@jupyter-widgets/controls", "@jupyter-widgets/base")], "a model of another module"
    assert not TIMESTAMP.search(first.decode())
    assert refreshed["widgets again"] == first  # an unchanged notebook, run again: the same bytes


@pytest.mark.slow
def test_refresh_stores_each_views_still_from_its_figures_state_at_the_end(refreshed):
    """A view is shown at priority 1, then a later cell moves it to 5: the
    still beside it (what GitHub shows) is priority 5's, the figure's state,
    drawn by the view's own page module."""
    nb = json.loads(refreshed["view"])
    (shown,) = [out["data"] for out in nb["cells"][0]["outputs"] if "image/png" in out.get("data", {})]
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    (figure,) = [m["state"] for m in state.values() if m["model_module"] == "anywidget"]
    assert (figure["priority"], figure["counter"]) == (5, 2**32 - 1)
    assert stale_stills(nb) == []  # the still is what the module draws of that state

    (at_one,) = [out["data"]["image/png"] for out in json.loads(refreshed["view unmoved"])["cells"][0]["outputs"]
                 if "image/png" in out.get("data", {})]  # the same notebook without the move: another still
    assert at_one != shown["image/png"]


def test_quieten_renumbers_every_reference_to_a_widget():
    a, b = "ab" * 16, "cd" * 16
    nb = {"cells": [{"cell_type": "code", "metadata": {"execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"}},
                     "outputs": [{"data": {"application/vnd.jupyter.widget-view+json": {"model_id": b}}}]}],
          "metadata": {"widgets": {WIDGET_STATE: {"state": {
              a: {"state": {"text": "x" + a + "y"}},  # inside a longer word: not an id
              b: {"state": {"layout": f"IPY_MODEL_{a}"}}}}}}}
    quiet = quieten(nb)
    one, two = f"{1:032x}", f"{2:032x}"
    assert quiet["cells"][0]["metadata"] == {}
    assert quiet["cells"][0]["outputs"][0]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] == one
    state = quiet["metadata"]["widgets"][WIDGET_STATE]["state"]
    assert state[one] == {"state": {"layout": f"IPY_MODEL_{two}"}}
    assert state[two] == {"state": {"text": "x" + a + "y"}}


def test_refresh_refuses_a_missing_notebook(tmp_path):
    result = _refresh(tmp_path / "nope.ipynb")
    assert result.returncode == 2
    assert f"no such notebook: {tmp_path / 'nope.ipynb'}" in result.stderr


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_stored_notebook_carries_no_execution_timestamps(name):
    """Refreshed with ``python -m echomq_viz.launcher._refresh``, a notebook stores none."""
    text = (ROOT / "notebooks" / name).read_text(encoding="utf-8")
    nb = json.loads(text)
    timed = [cell.get("id") for cell in nb["cells"] if "execution" in cell.get("metadata", {})]
    assert not timed, f"{name}: cells with execution timestamps: {timed} (run python -m echomq_viz.launcher._refresh)"
    assert not TIMESTAMP.search(text), f"{name}: a timestamp {TIMESTAMP.search(text).group(0)} is stored"
