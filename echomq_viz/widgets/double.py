"""Notebook 05's view of the double itself: the 64 bits of a stored score and
the spacing between neighbouring doubles as the score crosses 2**53.

:class:`DoubleView` shows the stored double of ``priority * 2**32 + counter``
as sign, exponent and mantissa, the exact score's bits that fall off past
the mantissa, and the gap to the next double; :func:`half_even_table` tells,
counter by counter, which way a score rounds and why a tie goes to the even
mantissa. With a demo, :meth:`DoubleView.check_on_redis` stores the job on
Redis and compares the bits.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Iterable

import ipywidgets as w

from . import double_plots
from .checks import check_int
from .live import Demo
from .score import COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, stored_score
# The widgets internals this view shares, imported in this one place.
from .widgets import (_PRE, _SLIDER_STYLE, _WIDE, FRONTIER_PRIORITIES, FrontierView, _busy, _figure, _guarded,
                      _require, _Status, _View)

__all__ = ["DoubleView", "Rounding", "round_score", "half_even_table", "double_text"]


def double_text(priority: int, counter: int) -> str:
    """The exact score, the stored double's three fields and its spacing, as text."""
    priority = check_int("priority", priority, 0)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    exact = priority * TIER_SPAN + counter
    stored = stored_score(priority, counter)
    exponent = double_plots.double_fields(stored)[1]
    bits = double_plots.double_bits(stored)
    kept, fallen = double_plots.exact_bits(exact)
    change = int(stored) - exact
    return "\n".join([
        f"exact score   {exact:,} = {priority:,} × 2^32 + {counter:,}",
        f"stored double {int(stored):,}" + (" (exact)" if change == 0 else f" ({change:+d})"),
        f"sign {bits[0]} | exponent {bits[1:12]} = {exponent} − {double_plots.EXPONENT_BIAS} = "
        f"{exponent - double_plots.EXPONENT_BIAS} | mantissa {bits[12:]}",
        f"exact bits after the lead 1: {kept}" + (f" | fall off: {fallen}" if fallen else ""),
        f"gap to the next double: {double_plots.spacing(stored):g}",
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
    return double_plots.double_fields(value)[2] & 1


def half_even_table(priority: int = 2**21, counters: Iterable[int] = range(1, 8)) -> str:
    """Which way each score of a tier rounds, and why: a score between two
    doubles goes to the nearer one; exactly halfway (a tie), to the one whose
    mantissa ends in 0, the even one. Low parts are ``stored - priority * 2**32``."""
    priority = check_int("priority", priority, 1)
    base = priority * TIER_SPAN
    rows = [f"priority {priority:,}: doubles near {base:,} are {double_plots.spacing(float(base)):g} apart",
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


def _frontier_priority(priority: object) -> int:
    """``priority`` after checking it is one of the FrontierView's stops."""
    priority = check_int("priority", priority, 1)
    allowed = [value for _, value in FRONTIER_PRIORITIES]
    if priority not in allowed:
        raise ValueError(f"priority must be one of {', '.join(f'{v:_}' for v in allowed)}, got {priority:_}")
    return priority


class DoubleView(_View):
    """A priority slider (the FrontierView's stops across 2**21 - 1) and a
    counter slider (type an exact value into its readout); the figure shows
    the stored double's 64 bits, the bits that fall off, and the gap to the
    next double on its staircase.

    :param demo: for :meth:`check_on_redis`; None disables it.
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, counter: int = 1) -> None:
        priority = _frontier_priority(priority)
        counter = check_int("counter", counter, 0, COUNTER_MASK)
        self.demo = None if demo is None else _require(demo)
        self.status = _Status()
        self.priority = w.SelectionSlider(options=FRONTIER_PRIORITIES, value=priority, description="priority",
                                          style=_SLIDER_STYLE, layout=_WIDE)
        exact, stored = priority * TIER_SPAN + counter, stored_score(priority, counter)
        self.fig = _figure(8.4, 3.9)
        self.bits = double_plots.draw_double_bits(self.fig.add_axes((0.14, 0.68, 0.84, 0.18)), exact, stored)
        self.gaps = double_plots.draw_spacing(self.fig.add_axes((0.14, 0.12, 0.84, 0.4)), stored)
        self.counter = w.IntSlider(value=counter, min=0, max=COUNTER_MASK, description="counter",
                                   readout_format=",d", style=_SLIDER_STYLE, layout=_WIDE)
        self.readout = w.HTML()
        self.check_button = w.Button(description="Store it on Redis", icon="play", disabled=demo is None,
                                     layout=w.Layout(width="200px"))
        self.redis_result = w.HTML()
        self.redis_text = ""
        for slider in (self.priority, self.counter):
            slider.observe(self._on_change, "value")
        self.check_button.on_click(self._on_check)
        self._on_change()
        self.widget = w.VBox([self.priority, self.counter, self.fig.canvas,
                              self.readout, w.HBox([self.check_button, self.redis_result]),
                              self.status.widget])

    def __repr__(self) -> str:
        return f"DoubleView(priority={self.priority.value}, counter={self.counter.value})"

    def follow(self, frontier: FrontierView) -> "DoubleView":
        """Tie this view's priority to a FrontierView's: either slider moves both."""
        if not isinstance(frontier, FrontierView):
            raise TypeError(f"frontier must be a FrontierView, got {type(frontier).__name__}")
        w.link((frontier.priority, "value"), (self.priority, "value"))
        return self

    def set(self, priority: int | None = None, counter: int | None = None) -> "DoubleView":
        """Move the sliders from code, as a drag would; a value no slider can
        show is refused, and then neither moves."""
        moves = []
        if priority is not None:
            moves.append((self.priority, _frontier_priority(priority)))
        if counter is not None:
            moves.append((self.counter, check_int("counter", counter, 0, COUNTER_MASK)))
        for slider, value in moves:  # every value checked before the first slider moves
            slider.value = value
        return self

    @property
    def stored(self) -> float:
        return stored_score(self.priority.value, self.counter.value)

    def readout_text(self) -> str:
        return double_text(self.priority.value, self.counter.value)

    @_guarded
    def _on_change(self, change=None) -> None:
        self.status.clear()
        exact, stored = self.priority.value * TIER_SPAN + self.counter.value, self.stored
        double_plots.update_double_bits(self.bits, exact, stored)
        double_plots.update_spacing(self.gaps, stored)
        self.readout.value = f"<pre style='{_PRE}'>{html.escape(self.readout_text())}</pre>"
        self.fig.canvas.draw_idle()

    def check_on_redis(self) -> float:
        """Empty the demo queue, add one job at the sliders' priority and
        counter through the real script (its limit lifted past 2**21 - 1, for
        teaching), and compare the 64 bits Redis stored with the view's."""
        demo = self._require_demo()
        p, c = self.priority.value, self.counter.value
        with _busy(self.check_button):
            demo.reset()
            if p <= PRIORITY_LIMIT:
                stored = demo.add_at_counter("double", p, c)[1]
            else:
                stored = demo.add_past_the_limit_for_teaching("double", p, c)[1]
        same = double_plots.double_bits(stored) == double_plots.double_bits(self.stored)
        verdict = "the same 64 bits" if same else f"DIFFERENT bits from {int(self.stored):,}"
        self.redis_text = f"Redis stored {int(stored):,}: {verdict}"
        colour = "#1b7f3b" if same else "#b00020"
        self.redis_result.value = f"<span style='color:{colour}'>{html.escape(self.redis_text)}</span>"
        return stored

    @_guarded
    def _on_check(self, button=None) -> None:
        self.status.clear()
        self.check_on_redis()
