"""Interactive views for the notebooks: ipywidgets controls around ipympl figures.

Every view builds its figure once and, on each slider move, updates the
artists from :mod:`echomq_viz.plots` in place and redraws: ``draw_idle``, or,
for the hero figure, blitting only the artists that moved. Redis
round trips (through :class:`echomq_viz.live.Demo`) happen on a button or on
slider release, with the control disabled while busy. Any error inside a
callback becomes one red line in the view's status, never a traceback. Under
each figure a caption describes what it shows now, its text alternative.

Each view displays itself (``display(view)`` or a cell ending in ``view``)
and offers plain-text methods (``readout_text``, ``describe`` and the like)
that checked notebook cells print.

Modules: :mod:`.canvas` (the ipympl canvas, figures, blitting), :mod:`.view`
(what every view shares), one module per notebook's view, :mod:`.lua_source`.
"""

from __future__ import annotations

from .bands import BandsView
from .comparison import ComparisonView
from .consume import ConsumeView
from .designs import DesignsView, PackingView
from .double import DoubleView
from .frontier import FrontierView, WrapView
from .hero import HeroView, hero_figure
from .inspector import InspectorView
from .lua_source import show_lua
from .paths import IncludeGraphView, PathView
from .view import one_line

__all__ = [
    "HeroView", "ComparisonView", "ConsumeView", "BandsView", "FrontierView", "WrapView", "DoubleView",
    "InspectorView", "IncludeGraphView", "PathView", "DesignsView", "PackingView",
    "show_lua", "one_line", "hero_figure",
]
