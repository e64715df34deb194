"""Notebook 01's hero: one score, two keys, on a staircase of tiers and a 64-bit strip.

The page draws it (``page/hero.js``): a drag redraws the staircase, the strip
and the readout there, and the kernel hears nothing of it unless "live on
Redis" is on. Live, the page sends the position at most four times a second
(the last one always), the kernel adds a job at exactly that counter through
``addPrioritizedJob-9`` and sends back what Redis stored, and the page marks
it against its own computation.
"""

from __future__ import annotations

import traitlets

from echomq_viz.core.checks import check_int
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, PRIORITY_LIMIT_TEXT, TIER_SPAN, priority_score
from echomq_viz.experiments.live import Demo
from echomq_viz.widgets.page_view import PageFigure, PageView
from echomq_viz.widgets.view import require_demo, tiers_text

__all__ = ["HeroView", "HeroFigure", "score_text", "add_and_compare"]


def format_hex(score: int) -> str:
    """A score as 16 hex digits with the tier and counter halves apart."""
    return f"0x{score >> 32:08X}_{score & COUNTER_MASK:08X}"


def score_text(priority: int, counter: int) -> str:
    """The hero's readout as text: the score in decimal, hex and 64 bits."""
    priority = check_int("priority", priority, 1, PRIORITY_LIMIT, why=PRIORITY_LIMIT_TEXT)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    score = priority_score(priority, counter)
    bits = format(score, "064b")
    return (f"score = {thousands(priority)} × 0x100000000 + {thousands(counter % TIER_SPAN)}\n"
            f"      = {score:,}\n"
            f"      = {format_hex(score)}\n"
            f"      = {bits[:32]} {bits[32:]}")


class HeroFigure(PageFigure):
    """The hero's page model: the job's priority and counter, the tiers shown,
    and the live switch with Redis's last answer."""

    module = "hero"

    page_writes = ("priority", "counter", "live")  # what its page's controls move
    priority = traitlets.Int(1).tag(sync=True)
    counter = traitlets.Int(1).tag(sync=True)
    tiers = traitlets.Int(6).tag(sync=True)
    live = traitlets.Bool(False).tag(sync=True)
    live_enabled = traitlets.Bool(False).tag(sync=True)
    # {job_id, priority, counter, stored}: stored as decimal text, a double's exact integer
    live_answer = traitlets.Dict().tag(sync=True)

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"priority": (1, self.tiers), "counter": (0, COUNTER_MASK)}

    @traitlets.validate("priority", "counter")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)


class HeroView(PageView):
    """Priority and counter sliders, the score in decimal, hex and bits, the
    staircase of tiers and the 64-bit strip, all drawn in the page. With the
    live switch on, each position the page sends adds a job through
    ``addPrioritizedJob-9`` and shows what Redis stored.

    :param demo: the demo queue for the live switch; None disables it.
    :param tiers: how many tiers the staircase shows (priorities 1..tiers).
    """

    shown_traits = ("priority", "counter", "live")

    def __init__(self, demo: Demo | None = None, *, priority: int = 1, counter: int = 1,
                 tiers: int = 6) -> None:
        tiers = check_int("tiers", tiers, 1, 20)
        priority = check_int("priority", priority, 1, tiers)
        counter = check_int("counter", counter, 0, COUNTER_MASK)
        self.demo = None if demo is None else require_demo(demo)
        super().__init__(HeroFigure(priority=priority, counter=counter, tiers=tiers, live_enabled=demo is not None))
        self.live_text = ""
        self._added_at: tuple[int, int] | None = None  # the position live last added a job at
        self._on_figure_change(["priority", "counter", "live"], self._follow)

    def __repr__(self) -> str:
        return f"HeroView(priority={self.figure.priority}, counter={self.figure.counter})"

    def set(self, priority: int | None = None, counter: int | None = None) -> "HeroView":
        """Move the job from code, exactly as a drag would; a value no slider
        can show is refused, and then neither value moves."""
        if priority is not None:
            priority = check_int("priority", priority, 1, self.figure.tiers)
        if counter is not None:
            counter = check_int("counter", counter, 0, COUNTER_MASK)
        with self.figure.hold_sync():
            if priority is not None:
                self.figure.priority = priority
            if counter is not None:
                self.figure.counter = counter
        return self

    def switch_live(self, on: bool = True) -> "HeroView":
        """Turn "live on Redis" on or off, as the checkbox does."""
        if on and self.demo is None:
            raise RuntimeError("this view was made without a Demo: pass demo=Demo('viz-...')")
        self.figure.live = bool(on)
        return self

    def readout_text(self) -> str:
        return score_text(self.figure.priority, self.figure.counter)

    def describe(self) -> str:
        p, c = self.figure.priority, self.figure.counter
        return (f"Staircase of {tiers_text(self.figure.tiers)}; the current job (priority {p:,}, counter {c:,}) "
                f"sits in tier {p:,} at score {priority_score(p, c):,}; "
                "bits 32-52 hold the tier, bits 0-31 the counter.")

    def _follow(self) -> None:
        # One message from the page may change several values (switching live on after a drag
        # sends both positions and the switch): each is reported, but the job is tried once, so
        # a refusal ("LeaseLost: nothing was done") is not followed by an add on the same message
        if self.figure.live:
            position = (self.figure.priority, self.figure.counter)
            if position != self._added_at:
                self._added_at = position
                self.add_on_redis()
        else:  # the last live line spoke of another score: it goes with it
            self.live_text = ""
            self._added_at = None

    def add_on_redis(self) -> tuple[str, float]:
        """Add the view's job through the real script; show both scores."""
        demo = self._require_demo()
        priority, counter = self.figure.priority, self.figure.counter
        job_id, stored, self.live_text = _add(demo, priority, counter)
        self._added_at = (priority, counter)
        self.figure.live_answer = {"job_id": job_id, "priority": priority, "counter": counter,
                                   "stored": str(int(stored))}
        return job_id, stored


def _add(demo: Demo, priority: int, counter: int) -> tuple[str, float, str]:
    job_id, stored = demo.add_at_counter(f"hero-p{priority}-c{counter}", priority, counter)
    computed = priority_score(priority, counter)
    return job_id, stored, (f"job {job_id} via addPrioritizedJob-9: Redis stored {int(stored):,}, "
                            f"Python computed {computed:,}: {'equal' if stored == computed else 'DIFFERENT'}")


def add_and_compare(demo: Demo, priority: int, counter: int) -> str:
    """What the live switch does for one position, without a view: add a job
    at exactly this counter through ``addPrioritizedJob-9`` and compare the
    score Redis stored with Python's. Returns the view's line."""
    demo = require_demo(demo)
    priority = check_int("priority", priority, 1, PRIORITY_LIMIT, why=PRIORITY_LIMIT_TEXT)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    return _add(demo, priority, counter)[2]
