"""Notebook 05's view of the double itself: the 64 bits of a stored score and
the spacing between neighbouring doubles as the score crosses 2**53.

The arithmetic (fields, bits that fall off, rounding) lives in
:mod:`echomq_viz.core.doubles`; the figures in :mod:`echomq_viz.figures.double_plots`.
"""

from __future__ import annotations

import html

import ipywidgets as w

from echomq_viz.figures import double_plots
from echomq_viz.core.checks import check_int
from echomq_viz.core.doubles import EXPONENT_BIAS, double_bits, double_fields, double_text, exact_bits, spacing
from echomq_viz.experiments.live import Demo
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, stored_score
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.frontier import FRONTIER_PRIORITIES, FrontierView
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, pre_html, require_demo

__all__ = ["DoubleView", "store_double"]


def _frontier_priority(priority: object) -> int:
    """``priority`` after checking it is one of the FrontierView's stops."""
    priority = check_int("priority", priority, 1)
    allowed = [value for _, value in FRONTIER_PRIORITIES]
    if priority not in allowed:
        raise ValueError(f"priority must be one of {', '.join(thousands(v) for v in allowed)}, "
                         f"got {thousands(priority)}")
    return priority


def _store(demo: Demo, p: int, c: int) -> tuple[float, str, bool]:
    demo.reset()
    if p <= PRIORITY_LIMIT:
        stored = demo.add_at_counter("double", p, c)[1]
    else:
        stored = demo.add_past_the_limit_for_teaching("double", p, c)[1]
    expected = stored_score(p, c)
    same = double_bits(stored) == double_bits(expected)
    verdict = "the same 64 bits" if same else f"DIFFERENT bits from {int(expected):,}"
    return stored, f"Redis stored {int(stored):,}: {verdict}", same


def store_double(demo: Demo, priority: int, counter: int) -> str:
    """The view's **Store it on Redis** for those sliders, no view touched:
    empty the demo queue, add one job at that priority and counter through
    the real script (limit lifted past 2**21 - 1, for teaching), and compare
    the 64 bits Redis stored with Python's double."""
    demo = require_demo(demo)
    return _store(demo, _frontier_priority(priority), check_int("counter", counter, 0, COUNTER_MASK))[1]


class DoubleView(View):
    """A priority slider (the FrontierView's stops across 2**21 - 1) and a
    counter slider (type an exact value into its readout); the figure shows
    the stored double's 64 bits, the bits that fall off, and the gap to the
    next double on its staircase.

    :param demo: for :meth:`check_on_redis`; None disables it.
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, counter: int = 1) -> None:
        priority = _frontier_priority(priority)
        counter = check_int("counter", counter, 0, COUNTER_MASK)
        super().__init__()
        self.demo = None if demo is None else require_demo(demo)
        exact, stored = priority * TIER_SPAN + counter, stored_score(priority, counter)
        self.fig = figure(8.4, 3.9)
        self.bits = double_plots.draw_double_bits(self.fig.add_axes((0.14, 0.68, 0.84, 0.18)), exact, stored)
        self.gaps = double_plots.draw_spacing(self.fig.add_axes((0.14, 0.12, 0.84, 0.4)), stored)
        self.priority = w.SelectionSlider(options=FRONTIER_PRIORITIES, value=priority, description="priority",
                                          style=SLIDER_STYLE, layout=WIDE)
        self.counter = w.IntSlider(value=counter, min=0, max=COUNTER_MASK, description="counter",
                                   readout_format=",d", style=SLIDER_STYLE, layout=WIDE)
        self.readout = w.HTML()
        self.check_button = w.Button(description="Store it on Redis", icon="play", disabled=demo is None,
                                     layout=w.Layout(width="200px"))
        self.redis_result = w.HTML()
        self.redis_text = ""
        self.widget = w.VBox([self.priority, self.counter, self.fig.canvas, self.caption, self.readout,
                              w.HBox([self.check_button, self.redis_result]), self.status.widget])
        self._on_change([self.priority, self.counter], self._redraw)
        self._on_click(self.check_button, self.check_on_redis)
        self._redraw()

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
    def exact(self) -> int:
        return self.priority.value * TIER_SPAN + self.counter.value

    @property
    def stored(self) -> float:
        return stored_score(self.priority.value, self.counter.value)

    def readout_text(self) -> str:
        return double_text(self.priority.value, self.counter.value)

    def describe(self) -> str:
        exact, stored = self.exact, self.stored
        fallen, change = len(exact_bits(exact)[1]), int(stored) - exact
        lost = f"{fallen} bit{'s' * (fallen != 1)} of it fall{'s' * (fallen == 1)} off past the mantissa" \
            if fallen else "every bit of it fits the mantissa"
        return (f"The 64 bits of the double stored for the score {exact:,} (priority {self.priority.value:,}, "
                f"counter {self.counter.value:,}): exponent {double_fields(stored)[1] - EXPONENT_BIAS}, "
                f"{lost}, stored {'exactly' if change == 0 else f'{change:+d} from it'}. "
                f"Below, the gap to the next double against the score, doubling at every power of two "
                f"from 2⁵³: here {spacing(stored):g}.")

    def _redraw(self) -> None:
        exact, stored = self.exact, self.stored
        double_plots.update_double_bits(self.bits, exact, stored)
        double_plots.update_spacing(self.gaps, stored)
        self.readout.value = pre_html(self.readout_text())
        self._redraw_figure()

    def check_on_redis(self) -> float:
        """Empty the demo queue, add one job at the sliders' priority and
        counter through the real script (its limit lifted past 2**21 - 1, for
        teaching), and compare the 64 bits Redis stored with the view's."""
        demo = self._require_demo()
        stored, self.redis_text, same = _store(demo, self.priority.value, self.counter.value)
        colour = "#1b7f3b" if same else "#b00020"
        self.redis_result.value = f"<span style='color:{colour}'>{html.escape(self.redis_text)}</span>"
        return stored
