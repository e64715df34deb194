"""Notebook 05: where exactness ends (past 2**21 - 1) and where the counter wraps (past 2**32).

Both views are drawn in the page. The frontier (``page/frontier.js``) is pure: a
drag recomputes every stored double there (``score.js``), and only its button
sends the kernel the values it shows, to add the jobs on Redis and send back
the pop order, which the page marks against its own. The wrap
(``page/wrap.js``) is Redis-bound: its button files the jobs on Redis and the
kernel sends the page what Redis stored and popped.
"""

from __future__ import annotations

import traitlets

from echomq_viz.core.checks import check_int
from echomq_viz.core.doubles import gap_text, spacing
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, equal_score_groups, is_exact, stored_score
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.scripts import validate_priority
from echomq_viz.widgets.page_view import PageFigure, PageView, sent
from echomq_viz.widgets.view import require_demo

__all__ = ["FrontierView", "WrapView", "FRONTIER_PRIORITIES", "frontier_summary", "frontier_on_redis",
           "wrap_on_redis", "RedisAnswerFigure"]

FRONTIER_PRIORITIES = (
    ("2²¹ − 2", 2**21 - 2), ("2²¹ − 1 (the limit)", 2**21 - 1), ("2²¹", 2**21),
    ("2²¹ + 1", 2**21 + 1), ("2²²", 2**22), ("2²³", 2**23), ("2²⁴", 2**24),
)
_STOPS = [value for _, value in FRONTIER_PRIORITIES]


def priority_refusal(value: object) -> str | None:
    """Why ``value`` is no frontier stop, in one line; None if it is one."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in _STOPS:
        return f"priority must be one of {', '.join(thousands(v) for v in _STOPS)}, got {sent(value)}"
    return None


def _frontier_args(priority: object, first_counter: object, width: object) -> tuple[int, int, int]:
    priority = check_int("priority", priority)
    if priority not in _STOPS:
        raise ValueError(f"priority must be one of {', '.join(thousands(v) for v in _STOPS)}, "
                         f"got {thousands(priority)}")
    width = check_int("width", width, 2, 64)
    return priority, check_int("first_counter", first_counter, 0, COUNTER_MASK - width), width


def frontier_summary(priority: int, first_counter: int = 4, width: int = 16) -> str:
    """Which of ``width`` counters from ``first_counter`` round at ``priority``
    and which share a stored score: the view's summary for those sliders."""
    p, first, width = _frontier_args(priority, first_counter, width)
    counters = range(first, first + width)
    stored = [stored_score(p, c) for c in counters]
    rounded = [c for c in counters if not is_exact(p, c)]
    groups = [[counters[i] for i in group] for group in equal_score_groups(stored)]
    lines = [f"priority {p:,}: scores {'exact' if not rounded else 'ROUNDED for counters ' + ', '.join(map(str, rounded))}"]
    lines += [f"counters {', '.join(map(str, g))} share the score {int(stored_score(p, g[0])):,}"
              for g in groups]
    return "\n".join(lines)


def frontier_describe(priority: int, first_counter: int, width: int) -> str:
    """The frontier figure's text alternative (page/frontier.js describe says the same)."""
    p, first, width = _frontier_args(priority, first_counter, width)
    counters = range(first, first + width)
    stored = [stored_score(p, c) for c in counters]
    rounded = sum(int(s) != p * TIER_SPAN + c for s, c in zip(stored, counters))
    shared = len(equal_score_groups(stored))
    gap = int(spacing(float(p * TIER_SPAN)))
    text = (f"Stored score against arrival counter for counters {first:,}-{first + width - 1:,} at priority {p:,}, "
            f"where neighbouring doubles are {gap_text(gap)} apart: {rounded} of {width} rounded off the exact diagonal")
    if not shared:
        return text + "."
    return (text + f", {shared} groups of counters sharing one score; a double whose mantissa ends in 0 "
            f"takes {gap + 1} counters (it wins both ties), one ending in 1 takes {gap - 1}.")


def _frontier_run(demo: Demo, p: int, first: int, width: int) -> tuple[list[str], list[str], str, bool]:
    demo.reset()
    demo.set_counter(first - 1 if first else COUNTER_MASK)
    added = [demo.add_past_the_limit_for_teaching(f"arrival-{n}", p)[0] for n in range(width)]
    order = [job.id for job in demo.drain()]
    fifo = order == added
    return added, order, (f"added {' '.join(added)}; Redis popped {' '.join(order)}: "
                          f"{'first in, first out' if fifo else 'FIFO BROKEN'}"), fifo


def frontier_on_redis(demo: Demo, priority: int, first_counter: int = 4, width: int = 16) -> str:
    """The view's button for those sliders, no view touched: empty the demo
    queue, add the jobs through the real script (limit lifted, for
    teaching), drain it, and say whether the pop order was first in, first out."""
    demo = require_demo(demo)
    return _frontier_run(demo, *_frontier_args(priority, first_counter, width))[2]


def _wrap_run(demo: Demo, start: int, jobs: int, priority: int) -> tuple[list[dict], list[str], str]:
    demo.reset()
    demo.set_counter(start)
    added = [demo.add(f"arrival-{n}", priority) for n in range(jobs)]
    entries = {e.job_id: e for e in demo.entries()}
    popped = [job.id for job in demo.drain()]
    rows = [{"job_id": job_id, "incr": start + n + 1, "counter": entries[job_id].counter,
             "score": str(int(entries[job_id].score))} for n, job_id in enumerate(added)]
    lines = [f"{'job':>4}  {'INCR pc':>13}  {'counter part':>12}  {'score':>14}"]
    lines += [f"{r['job_id']:>4}  {r['incr']:>13,}  {r['counter']:>12,}  {int(r['score']):>14,}" for r in rows]
    lines.append(f"added:  {' '.join(added)}")
    lines.append(f"popped: {' '.join(popped)}" + ("" if popped == added else "  <- newer jobs jumped ahead"))
    return rows, popped, "\n".join(lines)


WRAP_START = (TIER_SPAN - 10, TIER_SPAN + 2)


def _wrap_args(start: object, jobs: object, priority: object) -> tuple[int, int, int]:
    return (check_int("start", start, *WRAP_START), check_int("jobs", jobs, 1, 12), validate_priority(priority))


def wrap_on_redis(demo: Demo, start: int = TIER_SPAN - 3, jobs: int = 6, priority: int = 3) -> str:
    """The WrapView's button for those settings, no view touched: set ``pc``,
    add the jobs one after another, drain; the table of both orders."""
    demo = require_demo(demo)
    return _wrap_run(demo, *_wrap_args(start, jobs, priority))[2]


class RedisAnswerFigure(PageFigure):
    """A page figure with a button for Redis: the page sends ``{kind: "run", ...}``
    with the values it shows, and only the kernel writes ``answer``, from
    what Redis did (a page sending it is refused)."""

    kernel_source = ", from what Redis did"

    redis_enabled = traitlets.Bool(False).tag(sync=True)
    answer = traitlets.Dict().tag(sync=True)

    def refusal(self, name: str, value: object) -> str | None:
        """Why the page's ``value`` for ``name`` is refused, in one line; None if it is good."""
        if name == "priority" and "stops" in self.trait_names():
            why = priority_refusal(value)
            return None if why is None else f"refused {why}"
        low, high = self.bounds()[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"refused {name} {sent(value)}: it must be a whole number in {thousands(low)}..{thousands(high)}"
        return None

    def _chosen(self, proposal: dict) -> object:
        """As :meth:`PageFigure._checked`, for a value this figure's :meth:`refusal` judges
        (a priority among the frontier's stops)."""
        name, value = proposal["trait"].name, proposal["value"]
        good = self.__dict__.setdefault("_good_values", {})
        why = self.refusal(name, value)
        if why:
            self.status = why
            return good.get(name, proposal["trait"].default())
        if self.status.startswith("refused "):
            self.status = ""
        good[name] = value
        return value

    def take(self, content: dict, names: tuple[str, ...]) -> bool:
        """Set the values a run request carries, all checked first: a refused one
        sets nothing, says why in the status line and returns False."""
        for name in names:
            why = self.refusal(name, content.get(name))
            if why:
                self.status = why
                return False
        with self.hold_sync():
            for name in names:
                setattr(self, name, content[name])
        return True

    @traitlets.validate("answer")
    def _from_redis(self, proposal: dict) -> dict:
        return self._kernel_only(proposal)


class FrontierFigure(RedisAnswerFigure):
    """The frontier's page model: a priority among the stops, the first of
    ``width`` counters, and Redis's last pop order."""

    module = "frontier"

    page_writes = ("priority", "first_counter")  # what its page's controls move
    stops = traitlets.List([list(stop) for stop in FRONTIER_PRIORITIES]).tag(sync=True)
    priority = traitlets.Int(2**21).tag(sync=True)
    first_counter = traitlets.Int(4).tag(sync=True)
    width = traitlets.Int(16).tag(sync=True)
    link = traitlets.Unicode("").tag(sync=True)  # a DoubleView following it shares this key in the page

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"first_counter": (0, COUNTER_MASK - self.width)}

    @traitlets.validate("first_counter")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate("priority")
    def _a_stop(self, proposal: dict) -> int:
        return self._chosen(proposal)


class FrontierView(PageView):
    """A priority slider across the 2**21 - 1 line that marks which of 16
    consecutive counters keep an exact score, drawn in the page; with a demo,
    its button adds the same 16 jobs through the real script (limit lifted,
    for teaching) and Redis pops them.
    """

    shown_traits = ("priority", "first_counter")

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, first_counter: int = 4,
                 width: int = 16) -> None:
        priority, first_counter, width = _frontier_args(priority, first_counter, width)
        self.demo = None if demo is None else require_demo(demo)
        super().__init__(FrontierFigure(width=width, priority=priority, first_counter=first_counter,
                                        redis_enabled=demo is not None))
        self.width = width
        self.redis_text = ""
        self.figure.on_msg(self._message)

    def __repr__(self) -> str:
        return f"FrontierView(priority={self.figure.priority}, first_counter={self.figure.first_counter})"

    def _message(self, _widget: object, content: object, _buffers: object) -> None:
        if isinstance(content, dict) and content.get("kind") == "run":
            self._callback(lambda: self._run_from_page(content), ())()

    def _run_from_page(self, content: dict) -> None:
        if self.figure.take(content, ("priority", "first_counter")):
            self.run_on_redis()

    def set(self, priority: int | None = None, first_counter: int | None = None) -> "FrontierView":
        """Move the view from code, as a drag would; a value no slider can show
        is refused, and then neither moves."""
        p, first, _ = _frontier_args(self.figure.priority if priority is None else priority,
                                     self.figure.first_counter if first_counter is None else first_counter,
                                     self.width)
        with self.figure.hold_sync():
            self.figure.priority, self.figure.first_counter = p, first
        return self

    @property
    def priority(self) -> int:
        return self.figure.priority

    @property
    def counters(self) -> range:
        return range(self.figure.first_counter, self.figure.first_counter + self.width)

    def summary_text(self) -> str:
        """Which counters round and which share a stored score."""
        return frontier_summary(self.figure.priority, self.figure.first_counter, self.width)

    def describe(self) -> str:
        return frontier_describe(self.figure.priority, self.figure.first_counter, self.width)

    def run_on_redis(self) -> list[str]:
        """Empty the demo queue, add the 16 jobs through the real script with
        its limit lifted (teaching only), drain it, and report the pop order.

        :returns: the job ids in the order the consume script handed them out.
        """
        demo = self._require_demo()
        p, first = self.figure.priority, self.figure.first_counter
        added, order, self.redis_text, _ = _frontier_run(demo, p, first, self.width)
        with self.figure.kernel_writes():
            self.figure.answer = {"priority": p, "first_counter": first, "added": added, "popped": order}
        return order


class WrapFigure(RedisAnswerFigure):
    """The wrap's page model: where ``pc`` starts, and what Redis stored and popped."""

    module = "wrap"

    page_writes = ("start",)  # what its page's controls move
    start = traitlets.Int(TIER_SPAN - 3).tag(sync=True)
    jobs = traitlets.Int(6).tag(sync=True)
    job_priority = traitlets.Int(3).tag(sync=True)

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"start": WRAP_START}

    @traitlets.validate("start")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)


class WrapView(PageView):
    """A queue that never empties: ``pc`` passes 2**32 and the counter part of
    the score wraps to 0, so newer jobs jump ahead inside their tier. The page
    shows the counter parts the arithmetic predicts; the button files the
    jobs on Redis and draws what it stored and popped."""

    shown_traits = ("start",)

    def __init__(self, demo: Demo, *, start: int = TIER_SPAN - 3, jobs: int = 6, priority: int = 3) -> None:
        demo = require_demo(demo)
        start, jobs, priority = _wrap_args(start, jobs, priority)
        self.demo, self.jobs, self.job_priority = demo, jobs, priority
        super().__init__(WrapFigure(start=start, jobs=jobs, job_priority=priority, redis_enabled=True))
        self.added: list[str] = []
        self.popped: list[str] = []
        self.text = ""
        self.figure.on_msg(self._message)

    def __repr__(self) -> str:
        return f"WrapView(start={self.figure.start}, jobs={self.jobs})"

    def _message(self, _widget: object, content: object, _buffers: object) -> None:
        if isinstance(content, dict) and content.get("kind") == "run":
            self._callback(lambda: self.figure.take(content, ("start",)) and self.run(), ())()

    def set(self, start: int) -> "WrapView":
        """Move ``pc``'s start from code, as a drag would."""
        self.figure.start = check_int("start", start, *WRAP_START)
        return self

    def _current(self) -> dict:
        answer = self.figure.answer
        return answer if answer.get("start") == self.figure.start else {}

    def describe(self) -> str:
        start, jobs = self.figure.start, self.jobs
        parts = " ".join(thousands((start + n + 1) % TIER_SPAN) for n in range(jobs))
        answer = self._current()
        if not answer:
            return (f"Arrival order and pop order of {jobs} jobs at priority {self.job_priority:,}, pc from "
                    f"{start:,}: their counter parts will be {parts}; not filed yet, the pop order empty.")
        added = [row["job_id"] for row in answer["rows"]]
        jumped = "newer jobs jumped ahead" if answer["popped"] != added else "first in, first out"
        return (f"Two strips of {jobs} jobs at priority {self.job_priority:,}, pc from {start:,}: "
                f"arrival order {' '.join(added)} with counter parts {parts}; "
                f"pop order {' '.join(answer['popped'])}: {jumped}.")

    def run(self) -> list[str]:
        """Set ``pc``, add the jobs one after another, drain; show both orders."""
        start = self.figure.start
        rows, popped, self.text = _wrap_run(self.demo, start, self.jobs, self.job_priority)
        self.added, self.popped = [row["job_id"] for row in rows], popped
        with self.figure.kernel_writes():
            self.figure.answer = {"start": start, "rows": rows, "popped": popped}
        return popped
