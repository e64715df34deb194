"""Notebook 03's consume dive: a seeded batch popped one by one through the real consume script."""

from __future__ import annotations

from typing import Sequence

import ipywidgets as w

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_int
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.scripts import Job, validate_priority
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import View, pre_html, require_demo

__all__ = ["ConsumeView", "fill_queue", "queue_table", "expected_order"]


def _job_label(job_id: str, priority: int) -> str:
    return f"job {job_id} ({'wait list' if not priority else f'priority {priority:,}'})"


def _checked_batch(priorities: Sequence[int], waiting: int) -> tuple[list[int], int]:
    batch = [validate_priority(p) for p in priorities]
    if not 1 <= len(batch) <= 40:
        raise ValueError(f"the batch must hold 1..40 jobs, got {len(batch)}")
    return batch, check_int("waiting", waiting, 0, 10)


def fill_queue(demo: Demo, priorities: Sequence[int], waiting: int = 1) -> None:
    """Empty the demo queue, add the batch in order, then ``waiting`` jobs
    without priority: what the view's **Fresh batch** does."""
    demo = require_demo(demo)
    batch, waiting = _checked_batch(priorities, waiting)  # checked before the queue is emptied
    demo.reset()
    demo.add_batch(batch)
    for n in range(waiting):
        demo.add_waiting(f"no-priority-{n}")


def _table_text(demo: Demo, waiting: Sequence[str], entries: Sequence) -> str:
    rows = [f"{'job':>5}  {'score':>15}  {'tier':>4}  {'counter':>7}  where"]
    rows += [f"{job_id:>5}  {'-':>15}  {'-':>4}  {'-':>7}  wait list" for job_id in waiting]
    rows += [f"{e.job_id:>5}  {int(e.score):>15,}  {e.priority:>4}  {e.counter:>7}  prioritized"
             for e in entries]
    pc = demo.priority_counter()
    rows.append(f"pc = {pc}" if pc is not None else "pc: deleted (the last consume found the set empty)")
    return "\n".join(rows)


def queue_table(demo: Demo) -> str:
    """The wait list and the sorted set as Redis holds them, in pop order, and ``pc``."""
    demo = require_demo(demo)
    return _table_text(demo, demo.waiting(), demo.entries())


def expected_order(priorities: Sequence[int], waiting: int = 1) -> list[str]:
    """Job ids sorted by (priority, arrival), the wait-list jobs first."""
    batch, waiting = _checked_batch(priorities, waiting)
    prioritized = sorted(range(len(batch)), key=lambda i: (batch[i], i))
    return [str(len(batch) + n + 1) for n in range(waiting)] + [str(i + 1) for i in prioritized]


class ConsumeView(View):
    """A seeded batch in the real sorted set, popped one by one through the
    real consume script.

    :param priorities: the batch, in arrival order.
    :param waiting: how many jobs without priority to add after the batch.
    """

    def __init__(self, demo: Demo, *, priorities: Sequence[int], waiting: int = 1) -> None:
        demo = require_demo(demo)
        # Checked before anything touches Redis: a bad batch must not empty the queue.
        batch, waiting = _checked_batch(priorities, waiting)
        super().__init__()
        self.demo, self.batch, self.waiting = demo, batch, waiting
        self.popped: list[Job] = []
        self.queued: list[tuple[str, int]] = []  # (job id, priority or 0 for the wait list), next out first
        capacity = len(batch) + waiting
        self.fig = figure(8.4, 2.1)
        self.queue_strip = plots.draw_queue_strip(
            self.fig.add_axes((0.02, 0.56, 0.96, 0.3)), capacity,
            "queued, next out at the left: the wait list, then the sorted set by score")
        self.popped_strip = plots.draw_queue_strip(
            self.fig.add_axes((0.02, 0.07, 0.96, 0.3)), capacity, "popped by moveToActive-11, in order")
        self.refill_button = w.Button(description="Fresh batch", icon="refresh")
        self.step_button = w.Button(description="Pop one", icon="step-forward", button_style="primary")
        self.drain_button = w.Button(description="Drain", icon="fast-forward")
        self._buttons = (self.refill_button, self.step_button, self.drain_button)
        self.table = w.HTML()
        self.log = w.HTML()
        self.widget = w.VBox([
            # the reader's first act leads; a fresh batch, which only undoes it, comes last
            w.HBox([self.step_button, self.drain_button, self.refill_button]),
            self.fig.canvas, self.caption, self.log, self.table, self.status.widget,
        ])
        for button, action in zip(self._buttons, (self.refill, self.step, self.drain)):
            self._on_click(button, action, also_busy=self._buttons)  # one Redis round trip at a time
        self.refill()

    guess_first = True  # "which comes out first?": nothing popped until the reader pops

    def answered(self) -> bool:
        return bool(self.popped)

    def __repr__(self) -> str:
        return f"ConsumeView(queue={self.demo.queue!r}, batch={len(self.batch)}, popped={len(self.popped)})"

    def refill(self) -> None:
        """Empty the demo queue and add the batch, then the wait-list jobs."""
        fill_queue(self.demo, self.batch, self.waiting)
        self.popped = []
        self._show()

    def step(self) -> Job | None:
        """Pop one job through the consume script."""
        job = self.demo.pop()
        if job is None:
            self.status.note("the consume script found no job; it deleted pc")
        else:
            self.popped.append(job)
        self._show()
        return job

    def drain(self) -> list[Job]:
        """Pop until the consume script finds nothing."""
        taken = self.demo.drain()
        self.popped.extend(taken)
        self._show()
        return taken

    def expected_order(self) -> list[str]:
        """Job ids sorted by (priority, arrival), the wait-list jobs first."""
        return expected_order(self.batch, self.waiting)

    def table_text(self) -> str:
        """The wait list and the sorted set as Redis holds them, in pop order."""
        return queue_table(self.demo)

    def popped_text(self) -> str:
        return " ".join(f"{job.id}({'wait' if job.score is None else 'p' + str(job.priority)})"
                        for job in self.popped) or "(nothing popped yet)"

    def describe(self) -> str:
        if self.queued:
            left = f"{len(self.queued)} jobs left, next out {_job_label(*self.queued[0])}"
        else:
            left = "empty"
        if self.popped:
            last = self.popped[-1]
            popped = f"{len(self.popped)} popped, the last {_job_label(last.id, 0 if last.score is None else last.priority)}"
        else:
            popped = "nothing popped yet"
        return f"Queue strip: {left}. Popped strip: {popped}."

    def _show(self) -> None:
        waiting, entries = self.demo.waiting(), self.demo.entries()  # one read for strip, table and caption
        self.queued = [(job_id, 0) for job_id in waiting] + [(e.job_id, e.priority) for e in entries]
        plots.update_queue_strip(self.queue_strip, self.queued)
        plots.update_queue_strip(self.popped_strip, [(j.id, j.priority) for j in self.popped])
        self.table.value = pre_html(_table_text(self.demo, waiting, entries))
        self.log.value = pre_html(f"popped: {self.popped_text()}")
        self._redraw_figure()
