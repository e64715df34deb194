"""The static figure of notebook 10, drawn on axes it is given (no I/O).

Growth draws seconds per operation against the jobs already waiting, both axes
logarithmic. The pop orders are drawn in the page (``widgets/page/orders.js``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from matplotlib.axes import Axes
from matplotlib.ticker import LogLocator, NullFormatter

from echomq_viz.figures import visual
from echomq_viz.core.colours import tier_color

__all__ = ["draw_growth", "LINE_STYLES", "MARKERS"]

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def draw_growth(ax: Axes, series: Mapping[str, Sequence[tuple]], title: str) -> list:
    """``series``: label -> ``(jobs waiting, seconds)`` or ``(jobs waiting, median, lowest,
    highest)`` seconds per operation; log-log, the spread between batches drawn as a bar,
    each line with its own marker and dash so colour is not needed. Axes read as plain numbers."""
    lines = []
    for i, (label, points) in enumerate(series.items()):
        if not points:
            continue
        points = sorted(points)
        xs = [p[0] for p in points]
        ys = [p[1] * 1e6 for p in points]
        style = dict(marker=MARKERS[i % len(MARKERS)], linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                     color=tier_color(i + 1), label=label)
        if len(points[0]) == 4:
            low = [max(y - p[2] * 1e6, 0) for y, p in zip(ys, points)]
            high = [p[3] * 1e6 - y for y, p in zip(ys, points)]
            container = ax.errorbar(xs, ys, yerr=[low, high], capsize=3, markersize=5, linewidth=1.3, **style)
            container.lines[0].set_label(label)  # the legend names the line, not the bars
            lines.append(container.lines[0])
        else:
            (line,) = ax.plot(xs, ys, **style)
            lines.append(line)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers ("200"), never "2 × 10²"
        axis.set_major_formatter(visual.plain_formatter())
        axis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.set_xlabel("jobs already waiting", fontsize=visual.TEXT)
    ax.set_ylabel("µs per operation", fontsize=visual.TEXT)
    ax.tick_params(labelsize=visual.SMALL)
    ax.set_title(title, fontsize=visual.TITLE, loc="left")
    ax.grid(True, which="major", alpha=0.3)
    return lines
