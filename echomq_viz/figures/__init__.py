"""The figures: each drawn on a matplotlib ``ax`` it is given, from data it is given.

The one visual system (:mod:`.visual`: type sizes, text on fills, widths),
the notebooks' figures updated in place (:mod:`.plots`), artists drawn for
less on every slider move (:mod:`.fast_artists`), the double's bits and
spacing (:mod:`.double_plots`) and a real queue as read (:mod:`.queue_plots`).
A figure never reads Redis: it draws what it is handed.

May import: :mod:`echomq_viz.core` (and matplotlib, numpy).
"""
