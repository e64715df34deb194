"""The figures of notebook 10, drawn on axes they are given (no I/O).

Pop orders reuse notebook 02's strips (:func:`echomq_viz.plots.draw_queue_strip`):
one strip per library, the right order on top. Growth draws seconds per
operation against the jobs already waiting, both axes logarithmic.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, NullFormatter

from .. import plots
from ..colours import tier_color

__all__ = ["draw_order_strip", "draw_growth", "LINE_STYLES", "MARKERS"]

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def draw_order_strip(ax: Axes, title: str, order: Sequence[str], tiers: Mapping[str, int], *,
                     right: Sequence[str] | None = None) -> plots.QueueStrip:
    """One pop order as a strip of tier-coloured boxes; with ``right``, the
    boxes where the order differs from it are outlined thick."""
    strip = plots.draw_queue_strip(ax, max(len(order), 1), title)
    plots.update_queue_strip(strip, [(name, tiers[name]) for name in order])
    for i, box in enumerate(strip.boxes[:len(order)]):
        wrong = right is not None and (i >= len(right) or right[i] != order[i])
        box.set_linewidth(2.5 if wrong else 0.8)
        box.set_linestyle("--" if wrong else "-")
    ax.title.set_horizontalalignment("left")
    ax.title.set_x(0)
    return strip


def draw_growth(ax: Axes, series: Mapping[str, Sequence[tuple[int, float]]], title: str) -> list:
    """``series``: label -> ``(jobs waiting, seconds per operation)``; log-log,
    each line with its own marker and dash so colour is not needed."""
    lines = []
    for i, (label, points) in enumerate(series.items()):
        if not points:
            continue
        xs, ys = zip(*sorted(points))
        (line,) = ax.plot(xs, [y * 1e6 for y in ys], marker=MARKERS[i % len(MARKERS)],
                          linestyle=LINE_STYLES[i % len(LINE_STYLES)], color=tier_color(i + 1), label=label)
        lines.append(line)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:,.0f}" if value >= 1 else f"{value:g}")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers ("200"), never "2 × 10²"
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("jobs already waiting")
    ax.set_ylabel("µs per operation")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    return lines
