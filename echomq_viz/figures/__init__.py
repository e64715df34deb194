"""The figures: each drawn on a matplotlib ``ax`` it is given, from data it is given.

The one visual system (:mod:`.visual`: type sizes, text on fills, widths;
the views drawn in the page hold to the same in ``widgets/page/visual.js``),
the score's figures updated in place (:mod:`.plots`), artists that draw
matplotlib's own pixels for less (:mod:`.fast_artists`), the double's bits
and spacing (:mod:`.double_plots`) and a real queue as read
(:mod:`.queue_plots`). These are static matplotlib figures: every
interactive view is drawn in the page (:mod:`echomq_viz.widgets`). A figure
never reads Redis: it draws what it is handed.

May import: :mod:`echomq_viz.core` (and matplotlib, numpy).
"""
