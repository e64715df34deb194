"""Notebook 05: where exactness ends (past 2**21 - 1) and where the counter wraps (past 2**32)."""

from __future__ import annotations

import html

import ipywidgets as w

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_int
from echomq_viz.experiments.live import Demo
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, equal_score_groups, is_exact, stored_score
from echomq_viz.redis_side.scripts import validate_priority
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, pre_html, require_demo

__all__ = ["FrontierView", "WrapView", "FRONTIER_PRIORITIES", "frontier_summary", "frontier_on_redis", "wrap_on_redis"]

FRONTIER_PRIORITIES = (
    ("2²¹ − 2", 2**21 - 2), ("2²¹ − 1 (the limit)", 2**21 - 1), ("2²¹", 2**21),
    ("2²¹ + 1", 2**21 + 1), ("2²²", 2**22), ("2²³", 2**23), ("2²⁴", 2**24),
)


def _coloured(text: str, good: bool) -> str:
    return f"<span style='color:{'#1b7f3b' if good else '#b00020'}'>{html.escape(text)}</span>"


def _frontier_args(priority: object, first_counter: object, width: object) -> tuple[int, int, int]:
    allowed = [value for _, value in FRONTIER_PRIORITIES]
    priority = check_int("priority", priority)
    if priority not in allowed:
        raise ValueError(f"priority must be one of {', '.join(f'{v:,}' for v in allowed)}, got {priority!r}")
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


def _frontier_run(demo: Demo, p: int, first: int, width: int) -> tuple[list[str], str, bool]:
    demo.reset()
    demo.set_counter(first - 1 if first else COUNTER_MASK)
    added = [demo.add_past_the_limit_for_teaching(f"arrival-{n}", p)[0] for n in range(width)]
    order = [job.id for job in demo.drain()]
    fifo = order == added
    return order, (f"added {' '.join(added)}; Redis popped {' '.join(order)}: "
                   f"{'first in, first out' if fifo else 'FIFO BROKEN'}"), fifo


def frontier_on_redis(demo: Demo, priority: int, first_counter: int = 4, width: int = 16) -> str:
    """The view's button for those sliders, no view touched: empty the demo
    queue, add the jobs through the real script (limit lifted, for
    teaching), drain it, and say whether the pop order was first in, first out."""
    demo = require_demo(demo)
    return _frontier_run(demo, *_frontier_args(priority, first_counter, width))[1]


def _wrap_run(demo: Demo, start: int, jobs: int, priority: int) -> tuple[list[str], list[str], str]:
    demo.reset()
    demo.set_counter(start)
    added = [demo.add(f"arrival-{n}", priority) for n in range(jobs)]
    entries = {e.job_id: e for e in demo.entries()}
    popped = [job.id for job in demo.drain()]
    rows = [f"{'job':>4}  {'INCR pc':>13}  {'counter part':>12}  {'score':>14}"]
    for n, job_id in enumerate(added):
        e = entries[job_id]
        rows.append(f"{job_id:>4}  {start + n + 1:>13,}  {e.counter:>12,}  {int(e.score):>14,}")
    rows.append(f"added:  {' '.join(added)}")
    rows.append(f"popped: {' '.join(popped)}" + ("" if popped == added else "  <- newer jobs jumped ahead"))
    return added, popped, "\n".join(rows)


def _wrap_args(start: object, jobs: object, priority: object) -> tuple[int, int, int]:
    return (check_int("start", start, TIER_SPAN - 10, TIER_SPAN + 2), check_int("jobs", jobs, 1, 12),
            validate_priority(priority))


def wrap_on_redis(demo: Demo, start: int = TIER_SPAN - 3, jobs: int = 6, priority: int = 3) -> str:
    """The WrapView's button for those settings, no view touched: set ``pc``,
    add the jobs one after another, drain; the table of both orders."""
    demo = require_demo(demo)
    return _wrap_run(demo, *_wrap_args(start, jobs, priority))[2]


class FrontierView(View):
    """A priority slider across the 2**21 - 1 line that marks which of 16
    consecutive counters keep an exact score; with a demo, the same 16 jobs
    go through the real script (limit lifted, for teaching) and Redis pops them.
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, first_counter: int = 4,
                 width: int = 16) -> None:
        priority, first_counter, width = _frontier_args(priority, first_counter, width)
        super().__init__()
        self.demo = None if demo is None else require_demo(demo)
        self.width = width
        self.fig = figure(7.2, 3.6)
        self.frontier = plots.draw_frontier(self.fig.add_axes((0.11, 0.14, 0.86, 0.76)), priority,
                                            range(first_counter, first_counter + width))
        self.priority = w.SelectionSlider(options=FRONTIER_PRIORITIES, value=priority,
                                          description="priority", style=SLIDER_STYLE, layout=WIDE)
        self.first_counter = w.IntSlider(value=first_counter, min=0, max=COUNTER_MASK - width,
                                         description="first counter", readout_format=",d",
                                         style=SLIDER_STYLE, layout=WIDE)
        self.summary = w.HTML()
        self.run_button = w.Button(description="Add these 16 jobs on Redis", icon="play",
                                   disabled=demo is None, button_style="danger",  # white on warning's orange read at 2.7:1
                                   layout=w.Layout(width="260px"))
        self.redis_result = w.HTML()
        self.redis_text = ""
        self.widget = w.VBox([self.priority, self.first_counter, self.fig.canvas, self.caption,
                              self.summary, w.HBox([self.run_button, self.redis_result]),
                              self.status.widget])
        self._on_change([self.priority, self.first_counter], self._redraw)
        self._on_click(self.run_button, self.run_on_redis)
        self._redraw()

    def __repr__(self) -> str:
        return f"FrontierView(priority={self.priority.value}, first_counter={self.first_counter.value})"

    @property
    def counters(self) -> range:
        return range(self.first_counter.value, self.first_counter.value + self.width)

    def summary_text(self) -> str:
        """Which counters round and which share a stored score."""
        return frontier_summary(self.priority.value, self.first_counter.value, self.width)

    def describe(self) -> str:
        p, counters = self.priority.value, self.counters
        rounded = sum(not is_exact(p, c) for c in counters)
        shared = len(equal_score_groups([stored_score(p, c) for c in counters]))
        return (f"Stored score against arrival counter for counters {counters.start:,}-{counters.stop - 1:,} "
                f"at priority {p:,}: {rounded} of {len(counters)} rounded off the exact diagonal"
                + (f", {shared} groups of counters sharing one score." if shared else "."))

    def _redraw(self) -> None:
        plots.update_frontier(self.frontier, self.priority.value, self.counters)
        self.summary.value = pre_html(self.summary_text())
        self._redraw_figure()

    def run_on_redis(self) -> list[str]:
        """Empty the demo queue, add the 16 jobs through the real script with
        its limit lifted (teaching only), drain it, and report the pop order.

        :returns: the job ids in the order the consume script handed them out.
        """
        demo = self._require_demo()
        order, self.redis_text, fifo = _frontier_run(demo, self.priority.value, self.first_counter.value,
                                                     self.width)
        self.redis_result.value = _coloured(self.redis_text, fifo)
        return order


class WrapView(View):
    """A queue that never empties: ``pc`` passes 2**32 and the counter part of
    the score wraps to 0, so newer jobs jump ahead inside their tier."""

    def __init__(self, demo: Demo, *, start: int = TIER_SPAN - 3, jobs: int = 6,
                 priority: int = 3) -> None:
        demo = require_demo(demo)
        start, jobs, priority = _wrap_args(start, jobs, priority)
        super().__init__()
        self.demo, self.jobs, self.job_priority = demo, jobs, priority
        self.added: list[str] = []
        self.popped: list[str] = []
        self.fig = figure(7.2, 1.6)
        self.arrivals = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.55, 0.96, 0.3)), jobs,
                                               "arrival order")
        self.pops = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.05, 0.96, 0.3)), jobs,
                                           "pop order (moveToActive-11)")
        self.start = w.IntSlider(value=start, min=TIER_SPAN - 10, max=TIER_SPAN + 2,
                                 description="pc starts at", readout_format=",d",
                                 style=SLIDER_STYLE, layout=WIDE)
        self.run_button = w.Button(description=f"Add {jobs} jobs, then drain", icon="play",
                                   button_style="primary", layout=w.Layout(width="220px"))
        self.table = w.HTML()
        self.text = ""
        self.widget = w.VBox([self.start, self.run_button, self.fig.canvas, self.caption, self.table,
                              self.status.widget])
        self._on_click(self.run_button, self.run)
        self._redraw_figure()

    def __repr__(self) -> str:
        return f"WrapView(start={self.start.value}, jobs={self.jobs})"

    def describe(self) -> str:
        if not self.added:
            return f"Two empty strips, arrival order and pop order of {self.jobs} jobs: not run yet."
        jumped = "newer jobs jumped ahead" if self.popped != self.added else "first in, first out"
        return (f"Two strips of {len(self.added)} jobs at priority {self.job_priority:,}, pc from "
                f"{self.start.value:,}: arrival order {' '.join(self.added)}; "
                f"pop order {' '.join(self.popped)}: {jumped}.")

    def run(self) -> list[str]:
        """Set ``pc``, add the jobs one after another, drain; show both orders."""
        added, popped, self.text = _wrap_run(self.demo, self.start.value, self.jobs, self.job_priority)
        self.table.value = pre_html(self.text)
        self.added, self.popped = added, popped
        plots.update_queue_strip(self.arrivals, [(j, self.job_priority) for j in added])
        plots.update_queue_strip(self.pops, [(j, self.job_priority) for j in popped])
        self._redraw_figure()
        return popped
