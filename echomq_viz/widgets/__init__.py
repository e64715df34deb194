"""Interactive views for the notebooks, drawn in the page.

Every view is an anywidget whose ES module, ``page/<view>.js``, draws its
figure, controls, caption and readouts in the browser: a drag redraws there
and the kernel hears nothing of it. Python holds the state, checks every
value the page sends against bounds it keeps (:mod:`.page_view`), and makes
every Redis call (through :class:`echomq_viz.experiments.live.Demo`),
coalesced to about four a second while a view is live. Notebook 10's pop
orders are drawn in the page too (``page/orders.js``; the view is
:mod:`echomq_viz.peers.view`'s); its growth plots are a static matplotlib
image no control moves (:func:`.view.static_image`). Any error inside a
callback becomes one red line in the view's status, never a traceback.

Each view displays itself (``display(view)`` or a cell ending in ``view``)
and offers plain-text methods (``readout_text``, ``describe`` and the like)
that checked notebook cells print.

Modules: :mod:`.page_modules` and :mod:`.page_view` (the page side every
view shares), :mod:`.view` (what every view shares, and the static image),
:mod:`.answer` (an answer shown beside a view, never through it), one module per
notebook's view: :mod:`.hero` (01), :mod:`.comparison` (02), :mod:`.consume`
(03), :mod:`.bands` (04), :mod:`.frontier` and :mod:`.double` (05),
:mod:`.inspector` (06), :mod:`.paths` (08), :mod:`.designs` (09); and
:mod:`.lua_source` (a script's source, shown); :mod:`.colab` (Colab's widget manager on,
the one call every notebook makes for Colab).

May import: :mod:`echomq_viz.core`, :mod:`echomq_viz.redis_side`,
:mod:`echomq_viz.experiments`, :mod:`echomq_viz.figures`.
"""

from __future__ import annotations

import importlib

# name -> the module that defines it, imported on first use (PEP 562): a
# notebook loads only its own view's module, not every view's (and theirs).
_WHERE = {
    "HeroView": ".hero", "HeroFigure": ".hero", "ComparisonView": ".comparison", "ConsumeView": ".consume",
    "BandsView": ".bands", "FrontierView": ".frontier", "WrapView": ".frontier", "DoubleView": ".double",
    "InspectorView": ".inspector", "IncludeGraphView": ".paths", "PathView": ".paths",
    "DesignsView": ".designs", "PackingView": ".designs", "show_lua": ".lua_source", "one_line": ".view",
    # the answers and steps a notebook shows beside a view, never through it
    "Answer": ".answer", "score_text": ".hero", "add_and_compare": ".hero", "compare_on_redis": ".comparison",
    "comparison_answer": ".comparison", "fill_queue": ".consume", "queue_table": ".consume",
    "expected_order": ".consume", "frontier_summary": ".frontier", "frontier_on_redis": ".frontier",
    "wrap_on_redis": ".frontier", "store_double": ".double", "path_answer": ".paths",
    "run_scenario": ".designs", "packing_text": ".designs", "packing_answer": ".designs",
    "colab_setup": ".colab",
}

__all__ = [
    "HeroView", "ComparisonView", "ConsumeView", "BandsView", "FrontierView", "WrapView", "DoubleView",
    "InspectorView", "IncludeGraphView", "PathView", "DesignsView", "PackingView",
    "show_lua", "one_line", "HeroFigure",
    "Answer", "score_text", "add_and_compare", "compare_on_redis", "comparison_answer", "fill_queue",
    "queue_table", "expected_order", "frontier_summary", "frontier_on_redis", "wrap_on_redis", "store_double",
    "path_answer", "run_scenario", "packing_text", "packing_answer", "colab_setup",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
