"""The stills: the image each figure shows a reader without a kernel.

A view displays as its widgets plus a still, an ``image/png`` beside the
widget view in the cell's output; GitHub, nbviewer and a projector before the
kernel is up show only the still.

A figure drawn on the page (an anywidget, ``AnyModel``, whose ``_esm``
exports ``still(state)``) gets its still when the notebook is stored: the
kernel shows none, as it cannot run JavaScript; headless Chromium runs that
module's ``still`` on the stored traits and screenshots the SVG
(:mod:`echomq_viz.launcher.page_stills`), and the PNG becomes the still (the
``image/png`` added where there was none). So a still is made by the code
that draws the live view, from the stored state, and the two can never
disagree; :func:`stale_stills` finds a notebook stored otherwise.

A view that holds no page figure (notebook 10's growth plots, a static
matplotlib image no control moves) keeps the still its kernel showed with it
(``View._repr_mimebundle_``): there is no other state it could show.

No later cell may move a view shown above it: every view must show the
state its own cell describes. A view records, in its output's metadata
(``SHOWN``), what each of its controls and texts showed when displayed;
:func:`moved_views` finds the views whose stored widget state differs.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
from contextlib import contextmanager
from typing import Iterator

from echomq_viz.launcher.page_stills import PageStills, exports_still

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"  # where a notebook keeps its widgets' state

__all__ = ["VIEW", "REFERENCE", "SHOWN", "reach_models", "page_models", "has_page_stills", "view_stills", "store_stills",
           "stale_stills", "moved_views"]

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


def page_models(state: dict, held: list[str]) -> list[str]:
    """Of the models ``held`` (ids in the widget ``state``), the figures drawn
    on the page: anywidget models whose module exports ``still``, sorted."""
    return [m for m in sorted(held) if state[m].get("model_module") == "anywidget"
            and state[m].get("model_name") == "AnyModel" and exports_still(state[m].get("state", {}).get("_esm"))]


def _widget_state(nb) -> dict:
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _views(nb) -> Iterator[tuple[dict, list[str]]]:
    """Each output showing a widget view that holds figures drawn on the page,
    with those figures (model ids, sorted)."""
    state = _widget_state(nb)
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VIEW in data:
                drawn = page_models(state, reach_models(state, data[VIEW].get("model_id", ""), []))
                if drawn:
                    yield data, drawn


def has_page_stills(nb) -> bool:
    """Whether any view of the notebook holds a figure drawn on the page (whose
    still needs a browser: :class:`~echomq_viz.launcher.page_stills.PageStills`)."""
    return any(True for _ in _views(nb))


@contextmanager
def _browser(page: PageStills | None) -> Iterator[PageStills]:
    """``page``, or a browser of our own (started on its first still, closed at the end)."""
    if page is not None:
        yield page
        return
    own = PageStills()
    try:
        yield own
    finally:
        own.close()


def view_stills(nb, page: PageStills | None = None) -> Iterator[tuple[dict, list[str]]]:
    """Each output showing a widget view that holds figures drawn on the page
    (beside a still or not), with their current images (base64 PNGs), drawn
    now by ``page`` (by a browser of this call's own when None: consume the
    iterator whole, which closes it). Any other view is left out: its still
    is the one its kernel showed."""
    state = _widget_state(nb)
    with _browser(page) as browser:
        for data, drawn in _views(nb):
            yield data, [browser.render(state[m]["state"]) for m in drawn]


def store_stills(nb, page: PageStills | None = None, *, page_views: bool = True) -> int:
    """Replace each still of a view holding one figure drawn on the page with
    that figure's still, made by ``page`` (a browser of this call's own when
    None, started only if needed), added where the output had none; with
    ``page_views`` False every still is left as it is. A view holding no page
    figure keeps its own. Returns how many were replaced or added."""
    if not page_views:
        return 0
    replaced = 0
    for data, images in view_stills(nb, page):
        if len(images) == 1:
            data["image/png"] = images[0]
            replaced += 1
    return replaced


def _png(text) -> str:
    return "".join(text).replace("\n", "")


def _same_pixels(stored: str, fresh: str) -> bool:
    """Whether two base64 PNGs hold the same pixels (encoded differently)."""
    try:
        from PIL import Image

        a, b = (Image.open(io.BytesIO(base64.b64decode(text))) for text in (stored, fresh))
        return a.size == b.size and a.convert("RGBA").tobytes() == b.convert("RGBA").tobytes()
    except (ImportError, OSError, ValueError, binascii.Error):
        return False


def stale_stills(nb, page: PageStills | None = None) -> list[int]:
    """Which views holding figures drawn on the page (their places, counted in
    output order among those) have a still that differs, by its pixels, from
    the still of every figure they hold, made now by ``page`` (a browser of
    this call's own when None, started only if needed); a missing still
    counts as stale."""
    stale = []
    for place, (data, images) in enumerate(view_stills(nb, page)):
        still = _png(data.get("image/png", ""))
        if still not in images and not any(_same_pixels(still, image) for image in images):
            stale.append(place)
    return stale


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
