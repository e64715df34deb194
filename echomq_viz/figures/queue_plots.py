"""A real queue as read, drawn on axes you give: every job the inspector
read, findings included. Notebook 06's view draws the same map in the page
(``widgets/page/inspector.js``) and takes its names and its broken axis from
here: :func:`tier_name`, :func:`counter_name`, :func:`split_counters`.

One row per tier present, lowest (served first) at the top, named by its
value; across, the arrival counter. Counters of a real queue cluster (1..40
beside 2**32 - 500 after a wrap), so when the largest gap between them is
wider than the rest of their span the counter axis breaks there into two
panels, each scaled to its own counters. Marker shapes carry the findings:
a square for a priority past 2**21 - 1 (its score rounded), a triangle for a
counter above ``pc``'s (added before a wrap, overtaken by newer adds).

As in :mod:`echomq_viz.figures.plots`, ``draw_queue_map`` draws once and
``update_queue_map`` changes the artists in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from echomq_viz.core.colours import tier_colors
from echomq_viz.core.score import PRIORITY_LIMIT, TIER_SPAN
from echomq_viz.figures.visual import SMALL, TEXT, power

__all__ = ["QueueMap", "draw_queue_map", "update_queue_map", "tier_name", "counter_name", "split_counters"]

PC_COLOR = "#b00020"  # the pc line and its label: 7.3:1 on white
FIRST_SHARE = 0.62  # of the width, for the first panel when the counter axis breaks
GAP = 0.02  # figure fraction between the two panels
KINDS = (("o", "job"), ("s", f"priority past {power(2, 21)} − 1: score rounded"),
         ("^", "counter above pc's: overtaken after the wrap"))


def tier_name(tier: int) -> str:
    """A tier as a row label: ``"tier 3"``, ``"tier 2²¹"``, ``"tier 2²¹ + 5"``, ``"tier 70,000"``."""
    tier = int(tier)
    high = 1 << (max(tier, 1).bit_length() - 1)
    if tier >= 2**16 and tier - high < 1000:
        return f"tier {power(2, high.bit_length() - 1)}" + (f" + {tier - high:,}" if tier > high else "")
    return f"tier {tier:,}"


def counter_name(counter: float) -> str:
    """A counter tick: ``"40"``, or near the top of the range ``"2³² − 500"``."""
    counter = int(round(counter))
    if TIER_SPAN - counter <= 10**6:
        return f"{power(2, 32)} − {TIER_SPAN - counter:,}"
    return f"{counter:,}"


def split_counters(counters: np.ndarray) -> list[tuple[int, int]]:
    """The counter ranges to draw: one, or two when the largest gap between
    counters is wider than the rest of their span (the axis breaks there)."""
    values = np.unique(np.asarray(counters, dtype=np.int64))
    if values.size == 0:
        return [(0, 1)]
    if values.size == 1:
        return [(int(values[0]), int(values[0]))]
    gaps = np.diff(values)
    at = int(np.argmax(gaps))
    if gaps[at] > (values[-1] - values[0]) - gaps[at]:
        return [(int(values[0]), int(values[at])), (int(values[at + 1]), int(values[-1]))]
    return [(int(values[0]), int(values[-1]))]


@dataclass
class QueueMap:
    panels: list  # two axes; the second shows only when the counter axis breaks
    points: list  # per panel, one scatter per marker kind
    pc_lines: list
    breaks: list  # the diagonal marks of a break, two per panel
    note: object


def draw_queue_map(fig: Figure, rect: tuple[float, float, float, float]) -> QueueMap:
    """Room for a queue's jobs in ``rect`` (figure fraction) of ``fig``; fill it
    with :func:`update_queue_map`."""
    left, bottom, width, height = rect
    second = width * (1 - FIRST_SHARE) - GAP
    panels = [fig.add_axes((left, bottom, width, height)),
              fig.add_axes((left + width - second, bottom, second, height))]
    panels[1].sharey(panels[0])
    points, pc_lines, breaks = [], [], []
    for ax in panels:
        points.append([ax.scatter(np.empty(0), np.empty(0), s=42 if marker == "o" else 60, marker=marker,
                                  facecolors=np.empty((0, 4)), edgecolors="black", linewidths=0.8, zorder=3,
                                  label=label)
                       for marker, label in KINDS])
        pc_lines.append(ax.axvline(0, color=PC_COLOR, lw=1.2, ls="--", visible=False))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: counter_name(value)))
        ax.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        ax.tick_params(labelsize=SMALL)
        ax.grid(axis="x", alpha=0.3)
        kw = {"transform": ax.transAxes, "color": "black", "lw": 1, "clip_on": False, "visible": False}
        breaks.append([ax.plot([x - 0.012, x + 0.012], [-0.03, 0.03], **kw)[0] for x in (0, 1)])
    panels[1].tick_params(labelleft=False, left=False)
    panels[0].set_xlabel("arrival counter (the low 32 bits)", fontsize=TEXT)
    panels[0].legend(handles=points[0], loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, frameon=False,
                     fontsize=SMALL, handletextpad=0.2, columnspacing=1.0, borderaxespad=0.2)
    note = panels[0].text(0, -0.22, "", transform=panels[0].transAxes, fontsize=SMALL, va="top")
    result = QueueMap(panels, points, pc_lines, breaks, note)
    update_queue_map(result, np.empty(0), np.empty(0))
    return result


def update_queue_map(queue: QueueMap, tiers: np.ndarray, counters: np.ndarray, *,
                     ahead: np.ndarray | None = None, pc_counter: int | None = None, left_out: int = 0) -> None:
    """Draw every job: ``tiers`` and ``counters`` (int arrays, one entry a job),
    ``ahead`` the mask of jobs whose counter is above pc's, ``pc_counter``
    where the next add lands, ``left_out`` the jobs with no whole score to
    place (said under the figure)."""
    tiers = np.asarray(tiers, dtype=np.int64)
    counters = np.asarray(counters, dtype=np.int64)
    ahead = np.zeros(tiers.size, bool) if ahead is None else np.asarray(ahead, bool)
    rows = np.unique(tiers)
    row_of = np.searchsorted(rows, tiers).astype(np.float64)
    kinds = [~(tiers > PRIORITY_LIMIT) & ~ahead, tiers > PRIORITY_LIMIT, ahead & ~(tiers > PRIORITY_LIMIT)]
    ranges = split_counters(counters)
    broken = len(ranges) == 2
    first, second = queue.panels
    full = first.get_position()
    right = queue.panels[1].get_position().x1
    width = (right - full.x0) * FIRST_SHARE if broken else right - full.x0
    first.set_position((full.x0, full.y0, width, full.height))
    second.set_visible(broken)
    for ax, (lo, hi), points, pc_line, marks in zip(queue.panels, ranges + [(0, 1)] * (2 - len(ranges)),
                                                    queue.points, queue.pc_lines, queue.breaks):
        inside = (counters >= lo) & (counters <= hi) & (ax is first or broken)  # a hidden panel draws none
        for scatter, kind in zip(points, kinds):
            chosen = inside & kind
            scatter.set_offsets(np.column_stack([counters[chosen], row_of[chosen]]))
            scatter.set_facecolor(tier_colors(tiers[chosen]))
        pad = max((hi - lo) * 0.06, 1)
        ax.set_xlim(lo - pad, hi + pad)
        values = np.unique(counters[inside])
        if values.size <= 2:  # ticks on the counters themselves, never at the padding
            ax.set_xticks(values)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(3 if ax is first else 2, integer=True))
        pc_line.set_visible(pc_counter is not None and lo - pad <= pc_counter <= hi + pad)
        if pc_counter is not None:
            pc_line.set_xdata([pc_counter, pc_counter])
        for mark in marks:
            mark.set_visible(broken)
    first.spines["right"].set_visible(not broken)
    second.spines["left"].set_visible(False)
    queue.breaks[0][0].set_visible(False)  # a break shows only where the axis is cut
    queue.breaks[1][1].set_visible(False)
    first.set_ylim(len(rows) - 0.5 if rows.size else 0.5, -0.5)  # the first served at the top
    first.set_yticks(range(rows.size), [tier_name(t) for t in rows], fontsize=SMALL)
    places = np.unique(np.column_stack([tiers, counters]), axis=0).shape[0] if tiers.size else 0
    shown = f"{tiers.size:,} jobs in {rows.size:,} tier{'s' * (rows.size != 1)}, all drawn"
    if places < tiers.size:
        shown += f" ({tiers.size - places:,} on top of another: equal scores)"
    if left_out:
        shown += f"; {left_out:,} with an infinite score not placed"
    more = ["the counter axis breaks between its two clusters"] if broken else []
    if pc_counter is not None:
        more.append(f"dashed: pc's counter, {counter_name(pc_counter)}")
    queue.note.set_text(shown + ("\n" + "; ".join(more) if more else ""))
