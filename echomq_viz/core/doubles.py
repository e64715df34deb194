"""The IEEE-754 double that holds a score: its bits, its spacing, and which
way a score past 2**53 rounds.

A double is 64 bits: one sign bit, eleven exponent bits (biased by 1023) and
52 mantissa bits that follow an implicit leading 1, so it keeps 53
significant bits. A whole number of more bits loses its last ones: it is
rounded to the nearest double (a tie to the one whose mantissa ends in 0),
and the spacing between neighbouring doubles (1 below 2**53, then 2, 4, ...)
says how coarse that is.

Pure: bits in, bits out; :mod:`echomq_viz.figures.double_plots` draws them.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Iterable

from echomq_viz.core.checks import check_int
from echomq_viz.core.notation import power, thousands
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, stored_score

__all__ = [
    "MANTISSA_BITS", "EXPONENT_BIAS", "EXACT_BITS", "double_fields", "double_bits", "exact_bits", "spacing", "gap_text",
    "Rounding", "round_score", "half_even_table", "double_text",
]

MANTISSA_BITS = 52
EXPONENT_BIAS = 1023
EXACT_BITS = MANTISSA_BITS + 1  # with the implicit leading 1


def double_fields(value: float) -> tuple[int, int, int]:
    """``(sign, biased exponent, mantissa)`` of a double, read from its 64 bits."""
    (word,) = struct.unpack(">Q", struct.pack(">d", float(value)))
    return word >> 63, (word >> MANTISSA_BITS) & 0x7FF, word & ((1 << MANTISSA_BITS) - 1)


def double_bits(value: float) -> str:
    """The 64 bits of a double, sign first, as ``struct.pack('>d', x)`` lays them out."""
    (word,) = struct.unpack(">Q", struct.pack(">d", float(value)))
    return format(word, "064b")


def exact_bits(number: int) -> tuple[str, str]:
    """A positive whole number's bits after its leading 1, cut where a
    double's mantissa ends: ``(the 52 bits it has room for, the bits that
    fall off)``; a short number is padded with zeros, and nothing falls off."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"number must be a whole number >= 1, got {number!r}")
    after_lead = format(number, "b")[1:]
    return after_lead[:MANTISSA_BITS].ljust(MANTISSA_BITS, "0"), after_lead[MANTISSA_BITS:]


def spacing(value: float) -> float:
    """The gap from a double to the next larger one (``math.ulp``)."""
    return math.ulp(float(value))


def gap_text(gap: float) -> str:
    """A gap between neighbouring doubles (always a power of two) as printed:
    ``"4,096"`` from 1 up, ``"2⁻²⁰"`` below 1, never ``9.53674e-07``."""
    if gap >= 1:
        return thousands(gap)
    return power(2, math.frexp(gap)[1] - 1)


def double_text(priority: int, counter: int) -> str:
    """The exact score, the stored double's three fields and its spacing, as text."""
    priority = check_int("priority", priority, 0)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    exact = priority * TIER_SPAN + counter
    stored = stored_score(priority, counter)
    exponent = double_fields(stored)[1]
    bits = double_bits(stored)
    kept, fallen = exact_bits(exact)
    change = int(stored) - exact
    return "\n".join([
        f"exact score   {exact:,} = {priority:,} × {power(2, 32)} + {counter:,}",
        f"stored double {int(stored):,}" + (" (exact)" if change == 0 else f" ({change:+d})"),
        f"sign {bits[0]} | exponent {bits[1:12]} = {exponent} − {EXPONENT_BIAS} = "
        f"{exponent - EXPONENT_BIAS} | mantissa {bits[12:]}",
        f"exact bits after the lead 1: {kept}" + (f" | fall off: {fallen}" if fallen else ""),
        f"gap to the next double: {gap_text(spacing(stored))}",
    ])


@dataclass(frozen=True)
class Rounding:
    """Where one score of a tier lands, as low parts (``score - priority * 2**32``)."""

    counter: int
    below: int  # the nearest double at or under the exact score
    above: int  # the nearest double at or over it
    stored: int
    tie: bool  # exactly halfway: the mantissa that ends in 0 wins

    @property
    def way(self) -> str:
        return "exact" if self.below == self.above else ("up" if self.stored > self.counter else "down")


def round_score(priority: int, counter: int) -> Rounding:
    """The two doubles around ``priority * 2**32 + counter`` and the one the
    Lua arithmetic (and so Redis) stores."""
    priority = check_int("priority", priority, 1)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    base, stored = priority * TIER_SPAN, stored_score(priority, counter)
    exact = base + counter
    if int(stored) == exact:
        return Rounding(counter, counter, counter, counter, False)
    below = math.nextafter(stored, 0.0) if stored > exact else stored
    above = stored if stored > exact else math.nextafter(stored, math.inf)
    tie = exact - int(below) == int(above) - exact
    return Rounding(counter, int(below) - base, int(above) - base, int(stored) - base, tie)


def _mantissa_end(value: float) -> int:
    return double_fields(value)[2] & 1


def half_even_table(priority: int = 2**21, counters: Iterable[int] = range(1, 8)) -> str:
    """Which way each score of a tier rounds, and why: a score between two
    doubles goes to the nearer one; exactly halfway (a tie), to the one whose
    mantissa ends in 0, the even one. Low parts are ``stored - priority * 2**32``."""
    priority = check_int("priority", priority, 1)
    base = priority * TIER_SPAN
    rows = [f"priority {priority:,}: doubles near {base:,} are {gap_text(spacing(float(base)))} apart",
            f"{'counter':>7}  {'below':>12}  {'above':>12}  {'stored':>6}  rounds"]
    for counter in counters:
        r = round_score(priority, counter)
        if r.way == "exact":
            rows.append(f"{r.counter:>7}  {'':>12}  {'':>12}  {r.stored:>6}  exact: a double")
            continue
        cells = [f"{low:>5} (…{_mantissa_end(float(base + low))})" for low in (r.below, r.above)]
        why = "a tie: to the even mantissa (…0)" if r.tie else "to the nearer double"
        rows.append(f"{r.counter:>7}  {cells[0]:>12}  {cells[1]:>12}  {r.stored:>6}  {r.way}, {why}")
    return "\n".join(rows)
