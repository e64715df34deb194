"""Where the app's Voila template lives: the one place the app, the hub,
the offline pages and the front page find it.

:data:`TEMPLATE_ROOT` is a Jupyter data folder holding
``voila/templates/echomq-viz/`` (the page, its style and scripts, the cards'
summaries) and ``kernels/python3/``, the kernel spec of the app's kernels
(see :mod:`echomq_viz.launcher._app_kernel`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TEMPLATE", "TEMPLATE_ROOT"]

TEMPLATE = "echomq-viz"
TEMPLATE_ROOT = Path(__file__).resolve().parent / "voila_template"
