"""The stills: the image each figure shows a reader without a kernel.

A view displays as its widgets plus a still, an ``image/png`` beside the
widget view in the cell's output (see ``View._repr_mimebundle_``); GitHub,
nbviewer and a projector before the kernel is up show only the still. After
a run (:func:`echomq_viz.launcher.export.execute_with_widgets`, which also stores
every figure's current image in the widget state) each still is replaced
with its figure's stored image, so the two can never disagree, and
:func:`stale_stills` finds a notebook stored otherwise.

No later cell may move a view shown above it: every view must show the
state its own cell describes. A view records, in its output's metadata
(``SHOWN``), what each of its controls and texts showed when displayed;
:func:`moved_views` finds the views whose stored widget state differs.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"  # where a notebook keeps its widgets' state

__all__ = ["VIEW", "REFERENCE", "SHOWN", "reach_models", "view_stills", "store_stills", "stale_stills", "moved_views"]

VIEW = "application/vnd.jupyter.widget-view+json"  # the mime type of a widget view in an output
REFERENCE = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")  # how one widget model names another
SHOWN = "echomq_viz"  # the output metadata in which a view records what it showed (widgets.view.SHOWN)


def reach_models(state: dict, model_id: str, order: list[str]) -> list[str]:
    """Append to ``order`` the model ``model_id`` of the widget ``state`` and
    every model it refers to, however deep: depth first, attributes by name,
    each model once. Returns ``order``."""
    if model_id not in state or model_id in order:
        return order
    order.append(model_id)
    attributes = state[model_id].get("state", {})
    for name in sorted(attributes):
        for referenced in REFERENCE.findall(json.dumps(attributes[name], sort_keys=True)):
            reach_models(state, referenced, order)
    return order


def view_stills(nb) -> Iterator[tuple[dict, list[str]]]:
    """Each output showing a widget view beside a still, with the current
    images (base64 PNGs, from the widget state) of the figures the view holds."""
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VIEW in data and "image/png" in data:
                held = reach_models(state, data[VIEW].get("model_id", ""), [])
                yield data, [state[m]["state"]["_data_url"].split(",", 1)[-1] for m in sorted(held)
                             if state[m].get("model_name") == "MPLCanvasModel" and state[m]["state"].get("_data_url")]


def store_stills(nb) -> int:
    """Replace each still with the current image of the one figure its view
    holds. Returns how many were replaced."""
    replaced = 0
    for data, images in view_stills(nb):
        if len(images) == 1:
            data["image/png"] = images[0]
            replaced += 1
    return replaced


def stale_stills(nb) -> list[int]:
    """Which stills (their places, counted in output order) differ from the
    current image of every figure their view holds."""
    return [place for place, (data, images) in enumerate(view_stills(nb))
            if images and "".join(data["image/png"]).replace("\n", "") not in images]


def moved_views(nb) -> list[tuple[str, dict]]:
    """The views whose stored widget state differs from what they showed
    when their own cell displayed them (a later cell moved them), or that
    recorded nothing: (the view's text, {model id: (shown, stored)})."""
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    moved = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            if VIEW not in output.get("data", {}):
                continue
            text = "".join(output["data"].get("text/plain", ""))
            shown = output.get("metadata", {}).get(SHOWN)
            if shown is None:
                moved.append((text, {"": ("recorded nothing", None)}))
                continue
            changed = {}
            for model_id, values in shown["values"].items():
                stored = {key: state.get(model_id, {}).get("state", {}).get(key) for key in values}
                if stored != values:
                    changed[model_id] = (values, stored)
            if changed:
                moved.append((text, changed))
    return moved
