"""Figures of the composite score, drawn on a matplotlib ``ax`` you give.

Each ``draw_*`` function draws once and returns its artists; the matching
``update_*`` function changes those artists in place (``set_data``,
``set_text``, ...) and never adds new ones, so a figure that follows a
control only needs ``fig.canvas.draw_idle()`` afterwards. Nothing here talks
to Redis: plots draw the numbers they are given.

Colours: :func:`tier_color` (from :mod:`echomq_viz.core.colours`) gives every
tier one colour, used by every notebook; the 64-bit strip shows tier bits in
blue and counter bits in orange.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from echomq_viz.core.checks import check_int
from echomq_viz.core.colours import band_style, tier_color, tier_colors
from echomq_viz.figures.fast_artists import CellImage, SlidingArrow
from echomq_viz.figures.visual import SMALL, TEXT, TITLE, power
from echomq_viz.core.score import (
    COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, priority_score, split_scores_array, stored_score,
)

__all__ = [
    "TIER_BITS_COLOR", "COUNTER_BITS_COLOR", "tier_color", "tier_colors", "band_style", "format_hex",
    "BitStrip", "draw_bit_strip", "update_bit_strip", "strip_artists",
    "Staircase", "draw_staircase", "update_staircase", "staircase_artists", "staircase_moving_artists",
    "ScorePair", "draw_score_pair", "update_score_pair",
    "Bands", "draw_bands", "update_bands",
    "Frontier", "draw_frontier", "update_frontier",
    "draw_tier_boundary",
]

TIER_BITS_COLOR = "#1f5fa8"  # blue: the high 32 bits, the tier
COUNTER_BITS_COLOR = "#b35900"  # orange: the low 32 bits, the counter (4.8:1 on white, as text too)


def format_hex(score: int) -> str:
    """A score as 16 hex digits with the tier and counter halves apart."""
    return f"0x{score >> 32:08X}_{score & COUNTER_MASK:08X}"


# -- the 64-bit strip -------------------------------------------------------------

# Strip cell codes: tier bit 0/1, counter bit 0/1, bits a double cannot reach.
_STRIP_CMAP = ListedColormap(
    ["#c9d9ee", TIER_BITS_COLOR, "#fbe0c3", COUNTER_BITS_COLOR, "#eeeeee", "white"])
_CELL = 8  # image columns per bit: 7 of colour and a white gap, so cells stay apart


@dataclass
class BitStrip:
    image: object


def _strip_codes(score: int) -> np.ndarray:
    bits = np.array([(score >> (63 - i)) & 1 for i in range(64)])
    codes = np.where(np.arange(64) < 32, bits, bits + 2)
    beyond = np.arange(64) < 64 - 53  # positions of bits 63..53
    cells = np.repeat(np.where(beyond & (bits == 0), 4, codes), _CELL)
    cells[_CELL - 1::_CELL] = 5
    return cells[np.newaxis, :]


def draw_bit_strip(ax: Axes, priority: int, counter: int) -> BitStrip:
    """Draw the score's 64 bits as cells, dark for 1 and light for 0: the tier
    half in blue, the counter half in orange, bits 63..53 (past a double's
    exact range) in grey. One image, so an update is one ``set_data``."""
    # ax.imshow(codes, ...), drawn by lookup: the strip is redrawn on every slider move
    image = CellImage(ax, cmap=_STRIP_CMAP, interpolation="nearest")
    image.set_data(_strip_codes(priority_score(priority, counter)))
    image.set_clim(0, 5)
    image.set_extent((-0.5, 63.5, 0, 1))
    ax.add_image(image)
    ax.set_aspect("auto")
    ax.axvline(31.5, color="black", lw=2)
    ax.axvline(10.5, color="#888888", lw=1, ls=":")  # bits 63..53: past a double's 53 exact bits
    ax.set_xlim(-0.5, 63.5)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xticks([0, 10, 31, 32, 63], ["63", "53", "32 ", " 31", "0"], fontsize=SMALL)
    for label, align in zip(ax.get_xticklabels()[2:4], ("right", "left")):
        label.set_horizontalalignment(align)
    ax.text(5, -0.7, f"beyond {power(2, 53)}", ha="center", va="top", fontsize=SMALL, color="#555555")
    ax.text(21, 1.08, "high 32 bits: priority (tier)", ha="center", va="bottom",
            color=TIER_BITS_COLOR, fontsize=TEXT)
    ax.text(47.5, 1.08, "low 32 bits: arrival counter", ha="center", va="bottom",
            color=COUNTER_BITS_COLOR, fontsize=TEXT)
    return BitStrip(image)


def update_bit_strip(strip: BitStrip, priority: int, counter: int) -> None:
    strip.image.set_data(_strip_codes(priority_score(priority, counter)))


def strip_artists(strip: BitStrip) -> list:
    """The artists an update changes (for blitting)."""
    return [strip.image]


# -- the staircase (hero figure) ------------------------------------------------------


@dataclass
class Staircase:
    bars: list
    marker: object
    jump: object
    priorities: range


def draw_staircase(ax: Axes, priorities: range, priority: int, counter: int) -> Staircase:
    """Each tier's whole counter range as a bar, stacked one 0x100000000 step
    above the previous tier; the job is a dot inside its tier's bar.

    The y axis is the score in units of 0x100000000, so tier ``p`` occupies
    ``[p, p + 1)``: a counter move slides the dot inside one bar, a priority
    step lifts it into the next.
    """
    bars = []
    for p in priorities:
        bar = Rectangle((p - 0.32, p), 0.64, COUNTER_MASK / TIER_SPAN, facecolor=tier_color(p),
                        alpha=0.35, edgecolor=tier_color(p), lw=1)
        ax.add_patch(bar)
        bars.append(bar)
    (marker,) = ax.plot([], [], "o", ms=11, mfc="white", mec="black", mew=2, zorder=5)
    # What ax.annotate("", ...) with these arrowprops draws (its mutation scale is
    # the empty text's size), unclipped as an annotation is, above the bars.
    jump = SlidingArrow((0, 0), (0, 0), arrowstyle="->", lw=1.6, color=TIER_BITS_COLOR, shrinkA=7,
                        mutation_scale=10, zorder=3)
    ax.add_patch(jump)
    jump.set_clip_on(False)
    ax.text(0.01, 0.97, f"arrow: the same counter one priority up, + {power(2, 32)}", transform=ax.transAxes,
            color=TIER_BITS_COLOR, fontsize=TEXT, va="top")
    ax.set_xlim(priorities.start - 0.8, priorities.stop - 0.2)
    ax.set_ylim(priorities.start - 0.15, priorities.stop + 0.35)
    ax.set_xticks(list(priorities))
    ax.set_xlabel("priority (lower runs first)")
    ax.set_ylabel(f"score / {power(2, 32)}")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("each bar: one tier's whole counter range; the dot: this job", fontsize=TITLE)
    stairs = Staircase(bars, marker, jump, priorities)
    update_staircase(stairs, priority, counter)
    return stairs


def update_staircase(stairs: Staircase, priority: int, counter: int) -> None:
    y = priority_score(priority, counter) / TIER_SPAN
    stairs.marker.set_data([priority], [y])
    for p, bar in zip(stairs.priorities, stairs.bars):
        alpha = 0.8 if p == priority else 0.3
        if bar.get_alpha() != alpha:  # a counter move leaves the bars as they are (set_alpha is dear)
            bar.set_alpha(alpha)
    nxt = priority + 1
    stairs.jump.set_visible(nxt < stairs.priorities.stop)
    stairs.jump.set_positions((priority, y), (nxt, y + 1))  # from the dot to the same counter one tier up


def staircase_artists(stairs: Staircase) -> list:
    """The artists an update changes (for blitting)."""
    return [*stairs.bars, *staircase_moving_artists(stairs)]


def staircase_moving_artists(stairs: Staircase) -> list:
    """The artists a counter change moves; the bars change with the priority only."""
    return [stairs.jump, stairs.marker]


# -- two scores side by side (comparison) ------------------------------------------


@dataclass
class ScorePair:
    tier_bars: object
    counter_bars: object
    labels: list
    verdict: object


def draw_score_pair(ax: Axes, a: tuple[int, int], b: tuple[int, int]) -> ScorePair:
    """Two jobs' scores as stacked bars: the tier part (priority * 0x100000000)
    and the counter part on top. ``a`` and ``b`` are ``(priority, counter)``."""
    tier_bars = ax.bar([0, 1], [0, 0], width=0.55, color=TIER_BITS_COLOR, label=f"priority × {power(2, 32)}")
    counter_bars = ax.bar([0, 1], [0, 0], width=0.55, color=COUNTER_BITS_COLOR,
                          label=f"counter mod {power(2, 32)}")
    labels = [ax.text(x, 0, "", ha="center", va="bottom", fontsize=SMALL, family="monospace")
              for x in (0, 1)]
    ax.set_xticks([0, 1], ["job A", "job B"])
    ax.set_ylabel(f"score / {power(2, 32)}")
    ax.legend(loc="upper left", fontsize=SMALL)
    ax.grid(axis="y", alpha=0.3)
    verdict = ax.set_title("", fontsize=TITLE)
    pair = ScorePair(tier_bars, counter_bars, labels, verdict)
    update_score_pair(pair, a, b)
    return pair


def update_score_pair(pair: ScorePair, a: tuple[int, int], b: tuple[int, int]) -> None:
    scores = [priority_score(*a), priority_score(*b)]
    tops = []
    for i, (priority, counter) in enumerate((a, b)):
        tier_part = priority
        counter_part = (counter % TIER_SPAN) / TIER_SPAN
        pair.tier_bars[i].set_height(tier_part)
        pair.counter_bars[i].set_y(tier_part)
        pair.counter_bars[i].set_height(counter_part)
        tops.append(tier_part + counter_part)
        pair.labels[i].set_position((i, tier_part + counter_part))
        pair.labels[i].set_text(f"{scores[i]:,}")
    ax = pair.tier_bars[0].axes
    ax.set_ylim(0, max(tops) * 1.25 + 0.5)
    if scores[0] == scores[1]:
        pair.verdict.set_text("equal scores: Redis falls back to member order")
    else:
        first = "A" if scores[0] < scores[1] else "B"
        pair.verdict.set_text(f"job {first} has the smaller score: ZPOPMIN takes it first")


# -- tiers as bands (bands notebook) ---------------------------------------------------
@dataclass
class Bands:
    spans: list
    lines: list
    points: object
    density: object
    note: object
    zoomed: bool


# Above this many jobs, points become pixels of one image: a million marker
# paths take Agg tens of seconds, a million pixels a few milliseconds.
SCATTER_LIMIT = 20_000


def draw_bands(ax: Axes, tiers: int, *, zoomed: bool = False) -> Bands:
    """Tiers ``1..tiers`` as bands of the score axis against the counter.

    At full scale the y axis is ``score / 2**32``, to scale: tier ``p`` is
    the band ``[p, p + 1)`` and inside it the score climbs with the counter
    along a diagonal that never reaches the next band; the x axis is the
    whole counter range 0..2**32 - 1. ``zoomed`` narrows the x axis to the
    counters in use and stretches their climb to fill each band: a schematic,
    and its axes say so (the y axis names tiers, not scores).
    Fill it with :func:`update_bands`.
    """
    tiers = check_int("tiers", tiers, 1)
    spans, lines = [], []
    for p in range(1, tiers + 1):
        spans.append(ax.axhspan(p, p + 1, lw=0, **band_style(p)))
        (line,) = ax.plot([], [], color=tier_color(p), lw=1, alpha=0.9)
        lines.append(line)
    points = ax.scatter(np.empty(0), np.empty(0), s=16, facecolors=np.empty((0, 4)),
                        edgecolors="black", linewidths=0.3, zorder=3)
    density = ax.imshow(np.zeros((1, 1, 4)), origin="lower", aspect="auto", zorder=3,
                        interpolation="nearest", extent=(0, 1, 1, 2), visible=False)
    note = ax.text(0.01, 0.99, "", transform=ax.transAxes, va="top", fontsize=SMALL,
                   bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    ax.set_xlabel("arrival counter: the low 32 bits")
    if zoomed:  # whole counters with separators, never an offset like "+3e9"
        ax.set_ylabel("tier (schematic: each band stretched)")
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    else:
        ax.set_ylabel(f"score / {power(2, 32)}")
        ax.set_xticks([0, 2**31, 2**32], ["0", power(2, 31), power(2, 32)])
    bands = Bands(spans, lines, points, density, note, zoomed)
    update_bands(bands, np.empty(0), tiers)
    return bands


def update_bands(bands: Bands, scores: Sequence[float] | np.ndarray, tiers: int) -> None:
    """Show ``tiers`` bands and place the jobs of ``scores``."""
    arr = np.asarray(scores, dtype=np.float64)
    tiers_of, counters = split_scores_array(arr) if arr.size else (np.empty(0), np.empty(0))
    if not bands.zoomed:
        lo, hi = 0, COUNTER_MASK
    elif arr.size:
        lo, hi = int(counters.min()), max(int(counters.max()), int(counters.min()) + 1)
    else:
        lo, hi = 0, 1
    width = float(hi - lo + 1)
    for p, (span, line) in enumerate(zip(bands.spans, bands.lines), start=1):
        span.set_visible(p <= tiers)
        line.set_visible(p <= tiers)
        line.set_data([lo, hi], [p, p + (hi - lo) / width])
    ax = bands.points.axes
    top = max(tiers, int(tiers_of.max()) if arr.size else 0)
    pad = 0.02 * width
    ax.set_ylim(1, top + 1)
    ax.set_xlim(lo - pad, hi + pad)
    if bands.zoomed:  # band names, not score values: inside a band the climb is not to scale
        ax.set_yticks([p + 0.5 for p in range(1, top + 1)], [f"tier {p:,}" for p in range(1, top + 1)])
    x = counters.astype(np.float64)
    y = tiers_of.astype(np.float64) + (x - lo) / width
    dense = arr.size > SCATTER_LIMIT
    bands.points.set_visible(not dense)
    bands.density.set_visible(dense)
    if dense:
        _paint_density(bands.density, x, y, tier_colors(tiers_of), (lo - pad, hi + pad, 1, top + 1))
        bands.points.set_offsets(np.empty((0, 2)))
    else:
        bands.points.set_offsets(np.column_stack([x, y]))
        bands.points.set_facecolor(tier_colors(tiers_of))
    bands.note.set_text(f"counters {lo:,}..{hi:,}, stretched across each band" if bands.zoomed else f"{arr.size:,} jobs")


def _paint_density(image, x: np.ndarray, y: np.ndarray, colors: np.ndarray,
                   extent: tuple[float, float, float, float]) -> None:
    """Paint points as pixels of an image covering ``extent`` (x0, x1, y0, y1)
    at the axes' own resolution, each pixel in the colour of a job on it."""
    bbox = image.axes.bbox
    cols, rows = max(int(bbox.width), 1), max(int(bbox.height), 1)
    x0, x1, y0, y1 = extent
    ix = np.clip(((x - x0) / (x1 - x0) * cols).astype(np.int64), 0, cols - 1)
    iy = np.clip(((y - y0) / (y1 - y0) * rows).astype(np.int64), 0, rows - 1)
    pixels = np.zeros((rows, cols, 4))
    pixels[iy, ix] = colors
    image.set_data(pixels)
    image.set_extent(extent)


# -- the precision frontier (notebook 05) ----------------------------------------------


@dataclass
class Frontier:
    exact_line: object
    exact_points: object
    rounded_points: object
    title: object


def draw_frontier(ax: Axes, priority: int, counters: Sequence[int]) -> Frontier:
    """Counters against the low part of the score Redis stores for them.

    Exact scores lie on the diagonal ``y = counter``; past 2**53 the stored
    double rounds and the points fall onto a staircase: several counters,
    one score.
    """
    (exact_line,) = ax.plot([], [], color="#999999", lw=1, ls="--", label=f"exact: score = p × {power(2, 32)} + counter")
    exact_points = ax.scatter(np.empty(0), np.empty(0), s=36, color="#1b7f3b", zorder=3,
                              label="stored exactly")
    rounded_points = ax.scatter(np.empty(0), np.empty(0), s=36, color="#b00020", marker="s",
                                zorder=3, label="rounded by the double")
    ax.set_xlabel("arrival counter (INCR pc)")
    ax.set_ylabel(f"stored score − priority × {power(2, 32)}")
    ax.legend(loc="upper left", fontsize=SMALL)
    ax.grid(alpha=0.3)
    title = ax.set_title("", fontsize=TITLE)
    frontier = Frontier(exact_line, exact_points, rounded_points, title)
    update_frontier(frontier, priority, counters)
    return frontier


def update_frontier(frontier: Frontier, priority: int, counters: Sequence[int]) -> None:
    cs = np.asarray(counters, dtype=np.int64)
    base = priority * TIER_SPAN
    low = np.array([int(stored_score(priority, int(c))) - base for c in cs], dtype=np.int64)
    exact = low == cs % TIER_SPAN
    frontier.exact_line.set_data([cs.min(), cs.max()], [cs.min(), cs.max()])
    frontier.exact_points.set_offsets(np.column_stack([cs[exact], low[exact]]))
    frontier.rounded_points.set_offsets(np.column_stack([cs[~exact], low[~exact]]))
    ax = frontier.exact_line.axes
    lo, hi = int(min(cs.min(), low.min())), int(max(cs.max(), low.max()))
    ax.set_xlim(cs.min() - 0.5, cs.max() + 0.5)
    ax.set_ylim(lo - 1, hi + 1)
    frontier.title.set_text(f"priority {priority:,}: {int((~exact).sum())} of {len(cs)} scores rounded")


def draw_tier_boundary(ax: Axes, priority: int, reach: int = 4) -> list:
    """Zoom on the edge between tier ``priority`` and the next: the last
    ``reach`` scores of one and the first ``reach`` of the other, on an axis
    offset to ``(priority + 1) * 0x100000000`` so single units show; both
    tiers are exact, so ``priority`` is at most ``PRIORITY_LIMIT - 1``."""
    priority = check_int("priority", priority, 0, PRIORITY_LIMIT - 1, why="the next tier is exact too")
    reach = check_int("reach", reach, 1, 64)
    offsets = np.arange(-reach, reach)
    artists = [
        ax.scatter(offsets[offsets < 0], np.zeros(reach), color=tier_color(priority), s=60,
                   edgecolors="black", zorder=3),
        ax.scatter(offsets[offsets >= 0], np.zeros(reach), color=tier_color(priority + 1), s=60,
                   edgecolors="black", zorder=3),
        ax.axvline(-0.5, color="black", lw=1, ls="--"),
    ]
    # direct labels above each group, clear of the frame and of the dashed edge
    top = power(2, 32)
    ax.text(0, 1.06, f"tier {priority:,}: counters\n{top} − {reach} … {top} − 1", transform=ax.transAxes,
            ha="left", va="bottom", fontsize=SMALL)
    ax.text(1, 1.06, f"tier {priority + 1:,}: counters\n0 … {reach - 1}", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=SMALL)
    ax.set_yticks([])
    ax.set_xticks(list(offsets))
    ax.set_xlabel(f"score − {priority + 1:,} × {top}", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    ax.set_xlim(-reach - 0.5, reach - 0.5)
    return artists
