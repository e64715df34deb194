"""What an offline page says about its figures, and the controls it switches off.

An offline page has no kernel. An anywidget view draws its figure and its controls in
the page and moves there; any other control would move without effect, so it is
switched off (:func:`freeze_controls`), and the notice at the top of the page says
which figures move (:func:`notice_html`). :mod:`.export` writes the pages.
"""

from __future__ import annotations

import json
import re

from echomq_viz.launcher._stills import VIEW, WIDGET_STATE

__all__ = ["SNAPSHOT_NOTICE_HTML", "MOVING_NOTICE_HTML", "LIVE_NOTICE_HTML", "ANYWIDGET", "freeze_controls",
           "notice_html", "anywidget_versions", "same_minor"]

# The notice at the top of a page (notice_html): a page of stills only; a page where some figures
# move (anywidget views, which draw their own controls) and the rest are stills; a page where
# every figure moves (a button that needs the kernel says so in its own view).
SNAPSHOT_NOTICE_HTML = "This page is a snapshot: run <code>echomq-viz lab</code> to move the sliders."
MOVING_NOTICE_HTML = ("The figures with their own controls move here; the rest are stills: "
                      "run <code>echomq-viz lab</code> to move those.")
LIVE_NOTICE_HTML = ("Every figure on this page moves here, with no kernel: "
                    "run <code>echomq-viz lab</code> for anything that says it needs one.")

ANYWIDGET = "anywidget"  # the model module of an anywidget view, and its front end's require.js name


def _widget_state(nb) -> dict:
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _is_anywidget(model: dict) -> bool:
    return model.get("model_module") == ANYWIDGET


def freeze_controls(nb) -> int:
    """Switch off every control in the notebook's stored widget state: on a
    page without a kernel it would move without effect. An anywidget view is
    left as it is: it draws its figure and its controls in the page, and they
    move there. Returns how many controls it switched off."""
    frozen = 0
    for model in _widget_state(nb).values():
        if _is_anywidget(model):
            continue
        attributes = model.get("state", {})
        if "disabled" in attributes:
            attributes["disabled"] = True
            frozen += 1
    return frozen


_SHOWN_MODEL = re.compile(r'IPY_MODEL_([0-9A-Za-z_-]+)|"model_id": "([0-9A-Za-z_-]+)"')


def _shown_models(nb) -> list[dict]:
    """The stored models the page shows: each view in a cell's output, and
    every model it refers to however deep (an Output widget's views too)."""
    state = _widget_state(nb)
    todo = [output.get("data", {}).get(VIEW, {}).get("model_id", "")
            for cell in nb.get("cells", []) for output in cell.get("outputs", [])]
    seen: dict[str, dict] = {}
    while todo:
        model_id = todo.pop()
        if model_id not in state or model_id in seen:
            continue
        seen[model_id] = state[model_id]
        for found in _SHOWN_MODEL.findall(json.dumps(state[model_id].get("state", {}), sort_keys=True)):
            todo.extend(found)
    return list(seen.values())


def notice_html(nb) -> str:
    """The notice at the top of the notebook's page: whether its figures are
    stills (:data:`SNAPSHOT_NOTICE_HTML`), some move (anywidget views, with
    their own controls) and the rest are stills (:data:`MOVING_NOTICE_HTML`),
    or every one moves (:data:`LIVE_NOTICE_HTML`). Read before or after
    :func:`freeze_controls`."""
    shown = _shown_models(nb)
    moving = any(_is_anywidget(model) for model in shown)
    still = any(not _is_anywidget(model) and "disabled" in model.get("state", {}) for model in shown)
    if not moving:
        return SNAPSHOT_NOTICE_HTML
    return MOVING_NOTICE_HTML if still else LIVE_NOTICE_HTML


def anywidget_versions(nb) -> set[str]:
    """The front-end versions the notebook's anywidget views were stored for (``~0.11.*``)."""
    return {model.get("model_module_version", "") for model in _widget_state(nb).values() if _is_anywidget(model)}


def same_minor(stored: str, installed: str) -> bool:
    """Whether a stored ``~0.11.*`` (anywidget's own semver, or a pre-release
    written out) names the installed front end's major.minor."""
    wanted = re.search(r"(\d+)\.(\d+)", stored)
    have = re.match(r"(\d+)\.(\d+)", installed)
    return bool(wanted and have and wanted.groups() == have.groups())
