"""Figures of the IEEE-754 double that holds a score (see
:mod:`echomq_viz.core.doubles`), drawn on a matplotlib ``ax`` you give.

As in :mod:`echomq_viz.figures.plots`, each ``draw_*`` function draws once and
returns its artists, and the matching ``update_*`` changes them in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap

from echomq_viz.core.doubles import (
    EXACT_BITS, EXPONENT_BIAS, MANTISSA_BITS, double_bits, double_fields, exact_bits, spacing,
)
from echomq_viz.figures.plots import COUNTER_BITS_COLOR, TIER_BITS_COLOR
from echomq_viz.figures.visual import SMALL, TEXT, TITLE, power

__all__ = [
    "DoubleBits", "draw_double_bits", "update_double_bits", "Spacing", "draw_spacing", "update_spacing",
    "BitBudget", "draw_bit_budget", "update_bit_budget",
]

FALL_OFF_COLUMNS = 5  # room right of the mantissa for bits that fall off: numbers up to 2**58


# -- the 64 bits, and the bits that fall off ------------------------------------------------

SIGN_COLOR, EXPONENT_COLOR, MANTISSA_COLOR, FALLEN_COLOR = "#6b6b6b", "#24804d", "#7b4fa6", "#b00020"  # 4.5:1 or more on white, as text
# Cell codes: 0 empty; pairs (bit 0, bit 1) for sign, exponent, mantissa and the fallen bits; 9 gap.
_BITS_CMAP = ListedColormap(["white", "#dddddd", SIGN_COLOR, "#cfe8d9", EXPONENT_COLOR,
                             "#e3d6ef", MANTISSA_COLOR, "#f6c9d0", FALLEN_COLOR, "white"])
_CELL = 6  # image columns per bit: five of colour and a white gap
_COLUMNS = 64 + FALL_OFF_COLUMNS


@dataclass
class DoubleBits:
    image: object
    title: object


def _bit_codes(exact: int, stored: float) -> np.ndarray:
    stored_row = np.zeros(_COLUMNS, dtype=np.int64)
    bits = np.array([int(b) for b in double_bits(stored)])
    stored_row[:64] = bits + np.where(np.arange(64) == 0, 1, np.where(np.arange(64) <= 11, 3, 5))
    kept, fallen = exact_bits(exact)
    exact_row = np.zeros(_COLUMNS, dtype=np.int64)
    exact_row[12:64] = np.array([int(b) for b in kept]) + 5
    shown = fallen[:FALL_OFF_COLUMNS]
    exact_row[64:64 + len(shown)] = np.array([int(b) for b in shown], dtype=np.int64) + 7
    cells = np.repeat(np.vstack([exact_row, stored_row]), _CELL, axis=1)
    cells[:, _CELL - 1::_CELL] = 9
    return cells


def _bits_title(exact: int, stored: float) -> str:
    fallen = exact_bits(exact)[1]
    lost = f"{len(fallen)} bit{'s' * (len(fallen) != 1)} fall{'s' * (len(fallen) == 1)} off" if fallen \
        else "nothing falls off"
    change = int(stored) - exact
    return (f"exponent {double_fields(stored)[1] - EXPONENT_BIAS}: {lost}; "
            f"stored {'exactly' if change == 0 else f'{change:+,d} from the exact score'.replace('-', '−')}")


def draw_double_bits(ax: Axes, exact: int, stored: float) -> DoubleBits:
    """Two rows of cells, dark for 1 and light for 0. Top: the 64 bits of the
    stored double (sign grey, exponent green, mantissa purple). Bottom: the
    exact score's bits after its leading 1, lined up under the mantissa; the
    ones a mantissa has no room for stand in red past its end."""
    image = ax.imshow(_bit_codes(exact, stored), cmap=_BITS_CMAP, vmin=0, vmax=9, aspect="auto",
                      extent=(-0.5, _COLUMNS - 0.5, 0, 2), interpolation="nearest", origin="lower")
    ax.axvline(63.5, color=FALLEN_COLOR, lw=1.5, ls="--")
    ax.set_xlim(-0.5, _COLUMNS - 0.5)
    ax.set_ylim(0, 2)
    ax.set_yticks([0.5, 1.5], ["exact score\nafter its lead 1", "stored double"], fontsize=SMALL)
    ax.set_xticks([0, 12, 63], ["bit 63", "51", "0"], fontsize=SMALL)
    for x, label, color, align in ((0.1, "sign", SIGN_COLOR, "right"),  # a space apart at the sign bit
                                   (0.9, "exponent (11 bits)", EXPONENT_COLOR, "left"),
                                   (38, "mantissa (52 bits, after an implicit 1)", MANTISSA_COLOR, "center"),
                                   (64 + FALL_OFF_COLUMNS / 2 - 0.5, "fall off", FALLEN_COLOR, "center")):
        ax.text(x, 2.08, label, ha=align, va="bottom", fontsize=SMALL, color=color)
    title = ax.set_title("", fontsize=TITLE, pad=18)
    bits = DoubleBits(image, title)
    update_double_bits(bits, exact, stored)
    return bits


def update_double_bits(bits: DoubleBits, exact: int, stored: float) -> None:
    bits.image.set_data(_bit_codes(exact, stored))
    bits.title.set_text(_bits_title(exact, stored))


# -- the spacing between neighbouring doubles ----------------------------------------------------


@dataclass
class Spacing:
    marker: object
    note: object


def draw_spacing(ax: Axes, stored: float, low: int = 51, high: int = 58) -> Spacing:
    """The gap to the next double against the number, both in powers of two,
    for numbers from ``2**low`` to ``2**high``: a staircase that doubles at
    every power of two; the dot is ``stored``."""
    edges = np.arange(low, high + 1)
    ax.step(edges, edges - MANTISSA_BITS, where="post", color="#555555", lw=1.5)
    ax.axvline(EXACT_BITS, color=FALLEN_COLOR, lw=1, ls="--")
    ax.text(EXACT_BITS + 0.05, high - MANTISSA_BITS - 0.3, f"{power(2, 53)}: whole numbers\nstop being 1 apart",
            fontsize=TEXT, color=FALLEN_COLOR, va="top")
    (marker,) = ax.plot([], [], "o", ms=9, mfc="white", mec="black", mew=2, zorder=5)
    note = ax.text(0.01, 0.97, "", transform=ax.transAxes, va="top", fontsize=SMALL)
    ax.set_xticks(list(edges), [power(2, e) for e in edges], fontsize=SMALL)
    steps = list(range(low - MANTISSA_BITS, high - MANTISSA_BITS + 1))
    ax.set_yticks(steps, [f"{2 ** s:g}" if s < 0 else f"{2 ** s:,}" for s in steps], fontsize=SMALL)
    ax.set_xlim(low, high)
    ax.set_ylim(low - MANTISSA_BITS - 0.5, high - MANTISSA_BITS + 0.5)
    ax.set_xlabel("the stored score", fontsize=SMALL)
    ax.set_ylabel("gap to the next double", fontsize=SMALL)
    ax.grid(alpha=0.3)
    result = Spacing(marker, note)
    update_spacing(result, stored)
    return result


def update_spacing(result: Spacing, stored: float) -> None:
    gap = spacing(stored)
    result.marker.set_data([math.log2(stored)], [math.log2(gap)])
    result.note.set_text(f"gap to the next double: {gap:g}")


# -- a budget of bits (the three-key exercise) ----------------------------------------------------

FIELD_COLORS = ("#6b6b6b", TIER_BITS_COLOR, COUNTER_BITS_COLOR)  # tenant, priority, arrival: as the bit strip
_BUDGET_CMAP = ListedColormap(["#f2f2f2", *FIELD_COLORS, FALLEN_COLOR, "white"])
_BUDGET_CELL = 8


@dataclass
class BitBudget:
    image: object
    labels: list
    title: object


def _budget_codes(widths: tuple[int, int, int]) -> np.ndarray:
    bit_codes = np.zeros(64, dtype=np.int64)  # indexed by bit number, bit 0 the lowest
    low = 0
    for code, width in zip((3, 2, 1), reversed(widths)):  # the arrival takes the lowest bits
        bit_codes[low:low + width] = code
        low += width
    bit_codes[EXACT_BITS:low] = 4  # used, but past a double's exact bits
    cells = np.repeat(bit_codes[::-1], _BUDGET_CELL)  # bit 63 at the left
    cells[_BUDGET_CELL - 1::_BUDGET_CELL] = 5
    return cells[np.newaxis, :]


def draw_bit_budget(ax: Axes, widths: tuple[int, int, int]) -> BitBudget:
    """64 cells, bit 63 at the left: the tenant's bits (blue), the priority's
    (green), the arrival's (orange, lowest); a used bit above bit 52, past a
    double's 53 exact bits, is red."""
    image = ax.imshow(_budget_codes(widths), cmap=_BUDGET_CMAP, vmin=0, vmax=5, aspect="auto",
                      extent=(-0.5, 63.5, 0, 1), interpolation="nearest")
    ax.axvline(64 - EXACT_BITS - 0.5, color="black", lw=1.5, ls="--")
    ax.set_xlim(-0.5, 63.5)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xticks([0, 63 - EXACT_BITS, 63], ["bit 63", "53", "0"], fontsize=SMALL)
    labels = [ax.text(0, 1.1, "", ha="center", va="bottom", fontsize=SMALL, color=c) for c in FIELD_COLORS]
    title = ax.set_title("", fontsize=TITLE, pad=20)
    budget = BitBudget(image, labels, title)
    update_bit_budget(budget, widths)
    return budget


def update_bit_budget(budget: BitBudget, widths: tuple[int, int, int]) -> None:
    budget.image.set_data(_budget_codes(widths))
    total = sum(widths)
    left = 64 - total  # the column of the highest used bit
    for label, name, width in zip(budget.labels, ("tenant", "priority", "arrival"), widths):
        label.set_visible(width > 0)
        label.set_x(left + (width - 1) / 2)
        label.set_text(f"{name} {width}")
        left += width
    over = total - EXACT_BITS
    budget.title.set_text(f"{total} bits: exact" if over <= 0
                          else f"{total} bits: {over} past the {EXACT_BITS} a double keeps exact")
