"""Notebook 05's view of the double itself: the 64 bits of a stored score, the
two doubles around it, and the spacing between neighbouring doubles as the
score crosses 2**53.

The page draws it (``page/double.js``) and computes every double there
(``doubles.js``, held to :mod:`echomq_viz.core.doubles`); only its button
sends the kernel the values it shows, to store the job on Redis and send back
the 64 bits Redis keeps, which the page compares with its own.
"""

from __future__ import annotations

import uuid

import traitlets

from echomq_viz.core.checks import check_int
from echomq_viz.core.doubles import EXPONENT_BIAS, double_bits, double_fields, double_text, exact_bits, gap_text, \
    round_score, spacing
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, stored_score
from echomq_viz.experiments.live import Demo
from echomq_viz.widgets.frontier import FRONTIER_PRIORITIES, FrontierView, RedisAnswerFigure
from echomq_viz.widgets.page_view import PageView
from echomq_viz.widgets.view import require_demo

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


def double_describe(priority: int, counter: int) -> str:
    """The double figure's text alternative (page/double.js describe says the same)."""
    exact, stored = priority * TIER_SPAN + counter, stored_score(priority, counter)
    fallen, change = len(exact_bits(exact)[1]), int(stored) - exact
    lost = f"{fallen} bit{'s' * (fallen != 1)} of it fall{'s' * (fallen == 1)} off past the mantissa" \
        if fallen else "every bit of it fits the mantissa"
    way = round_score(priority, counter)
    how = "" if change == 0 else (": it lay halfway between two doubles and went to the one whose mantissa ends in 0"
                                  if way.tie else ": it went to the nearer of two doubles")
    return (f"The 64 bits of the double stored for the score {exact:,} (priority {priority:,}, "
            f"counter {counter:,}): exponent {double_fields(stored)[1] - EXPONENT_BIAS}, "
            f"{lost}, stored {'exactly' if change == 0 else f'{change:+d} from it'}{how}. "
            f"Below, the gap to the next double against the score, doubling at every power of two "
            f"from 2⁵³: here {gap_text(spacing(stored))}.")


class DoubleFigure(RedisAnswerFigure):
    """The double's page model: a priority among the frontier's stops, a counter,
    and the 64 bits Redis stored for the last job the button added."""

    module = "double"

    page_writes = ("priority", "counter")  # what its page's controls move
    stops = traitlets.List([list(stop) for stop in FRONTIER_PRIORITIES]).tag(sync=True)
    priority = traitlets.Int(2**21).tag(sync=True)
    counter = traitlets.Int(1).tag(sync=True)
    link = traitlets.Unicode("").tag(sync=True)  # a FrontierView's key: the page moves both priorities

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"counter": (0, COUNTER_MASK)}

    @traitlets.validate("counter")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate("priority")
    def _a_stop(self, proposal: dict) -> int:
        return self._chosen(proposal)


class DoubleView(PageView):
    """A priority slider (the FrontierView's stops across 2**21 - 1) and a
    counter slider with an exact counter box; the figure shows the stored
    double's 64 bits, the bits that fall off, the two doubles around the exact
    score and the gap to the next double on its staircase.

    :param demo: for :meth:`check_on_redis`; None disables it.
    """

    shown_traits = ("priority", "counter")

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, counter: int = 1) -> None:
        priority = _frontier_priority(priority)
        counter = check_int("counter", counter, 0, COUNTER_MASK)
        self.demo = None if demo is None else require_demo(demo)
        super().__init__(DoubleFigure(priority=priority, counter=counter, redis_enabled=demo is not None))
        self.redis_text = ""
        self.figure.on_msg(self._message)

    def __repr__(self) -> str:
        return f"DoubleView(priority={self.figure.priority}, counter={self.figure.counter})"

    def _message(self, _widget: object, content: object, _buffers: object) -> None:
        if isinstance(content, dict) and content.get("kind") == "run":
            self._callback(lambda: self.figure.take(content, ("priority", "counter")) and self.check_on_redis(), ())()

    def follow(self, frontier: FrontierView) -> "DoubleView":
        """Tie this view's priority to a FrontierView's: either slider moves both,
        in the page and in the kernel."""
        if not isinstance(frontier, FrontierView):
            raise TypeError(f"frontier must be a FrontierView, got {type(frontier).__name__}")
        if not frontier.figure.link:
            frontier.figure.link = f"emq-priority-{uuid.uuid4().hex}"
        self.figure.link = frontier.figure.link
        traitlets.link((frontier.figure, "priority"), (self.figure, "priority"))
        return self

    def set(self, priority: int | None = None, counter: int | None = None) -> "DoubleView":
        """Move the sliders from code, as a drag would; a value no slider can
        show is refused, and then neither moves."""
        p = self.figure.priority if priority is None else _frontier_priority(priority)
        c = self.figure.counter if counter is None else check_int("counter", counter, 0, COUNTER_MASK)
        with self.figure.hold_sync():  # every value checked before the first one moves
            self.figure.priority, self.figure.counter = p, c
        return self

    @property
    def priority(self) -> int:
        return self.figure.priority

    @property
    def counter(self) -> int:
        return self.figure.counter

    @property
    def exact(self) -> int:
        return self.figure.priority * TIER_SPAN + self.figure.counter

    @property
    def stored(self) -> float:
        return stored_score(self.figure.priority, self.figure.counter)

    def readout_text(self) -> str:
        return double_text(self.figure.priority, self.figure.counter)

    def describe(self) -> str:
        return double_describe(self.figure.priority, self.figure.counter)

    def check_on_redis(self) -> float:
        """Empty the demo queue, add one job at the sliders' priority and
        counter through the real script (its limit lifted past 2**21 - 1, for
        teaching), and compare the 64 bits Redis stored with the view's."""
        demo = self._require_demo()
        p, c = self.figure.priority, self.figure.counter
        stored, self.redis_text, _ = _store(demo, p, c)
        with self.figure.kernel_writes():
            self.figure.answer = {"priority": p, "counter": c, "stored": str(int(stored)), "bits": double_bits(stored)}
        return stored
