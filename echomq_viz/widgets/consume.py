"""Notebook 03's consume dive: a seeded batch popped one by one through the real consume script.

The page draws it (``page/consume.js``): the queue as Redis holds it, the jobs
popped so far, the reader's guess and the buttons. The view asks "which job
comes out first?", so until the first pop nothing it shows gives the answer
away: the queue is drawn, listed and described in arrival order (by job id),
never in pop order. **Pop one**, **Drain** and **Fresh batch** ask the kernel,
which runs the real scripts on Redis and sends back the queue and what came
out, with why. The page sends no value but the guess, which must name a job of
the batch; every other value is the kernel's, and one the page sends is refused.
"""

from __future__ import annotations

from typing import Sequence

import traitlets

from echomq_viz.core.checks import check_int
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.scripts import Job, validate_priority
from echomq_viz.widgets.page_view import PageFigure, PageView, sent
from echomq_viz.widgets.view import require_demo

__all__ = ["ConsumeView", "ConsumeFigure", "fill_queue", "queue_table", "expected_order", "why_text"]

ACTIONS = ("pop", "drain", "refill")  # what the page's buttons ask the kernel to do
KERNEL_OWNED = ("capacity", "ids", "queued", "popped", "pc", "status")  # the page draws these, never sets them


def _job_label(job_id: str, priority: int) -> str:
    return f"job {job_id} ({'wait list' if not priority else f'priority {priority:,}'})"


def _by_id(job_id: str) -> tuple:
    """Arrival order: the demo's ids count up (``"9"`` before ``"10"``)."""
    return (0, int(job_id), "") if job_id.isdigit() else (1, 0, job_id)


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


def _pc_line(pc: int | None) -> str:
    """``pc`` as the table and the readout show it (page/consume.js readout says the same)."""
    return f"pc = {pc}" if pc is not None else "pc: deleted (the last consume found the wait list and the set empty)"


def _table_text(demo: Demo, waiting: Sequence[str], entries: Sequence) -> str:
    rows = {job_id: f"{job_id:>5}  {'-':>15}  {'-':>4}  {'-':>7}  wait list" for job_id in waiting}
    rows.update({e.job_id: f"{e.job_id:>5}  {int(e.score):>15,}  {e.priority:>4}  {e.counter:>7}  prioritized"
                 for e in entries})
    lines = [f"{'job':>5}  {'score':>15}  {'tier':>4}  {'counter':>7}  where"]
    lines += [rows[job_id] for job_id in sorted(rows, key=_by_id)]
    pc = demo.priority_counter()
    lines.append(_pc_line(pc))
    return "\n".join(lines)


def queue_table(demo: Demo) -> str:
    """The wait list and the sorted set as Redis holds them, in arrival order
    (by job id, not the order they come out), and ``pc``."""
    demo = require_demo(demo)
    return _table_text(demo, demo.waiting(), demo.entries())


def expected_order(priorities: Sequence[int], waiting: int = 1) -> list[str]:
    """Job ids sorted by (priority, arrival), the wait-list jobs first."""
    batch, waiting = _checked_batch(priorities, waiting)
    prioritized = sorted(range(len(batch)), key=lambda i: (batch[i], i))
    return [str(len(batch) + n + 1) for n in range(waiting)] + [str(i + 1) for i in prioritized]


def why_text(job: Job) -> str:
    """Why the consume script took ``job`` when it did."""
    if job.score is None:
        return "from the wait list, which the script reads before the sorted set"
    return (f"the smallest score left, {int(job.score):,} (tier {job.priority:,}, counter {job.counter:,}), "
            "the wait list being empty")


def popped_text(popped: Sequence[Sequence]) -> str:
    """``13(wait) 1(p1)``: the jobs popped, in order (``[id, priority, why]`` each)."""
    return " ".join(f"{job_id}({'wait' if not p else f'p{p}'})" for job_id, p, *_ in popped) or "(nothing popped yet)"


def describe_state(queued: Sequence[Sequence], popped: Sequence[Sequence]) -> str:
    """The figure's text alternative (page/consume.js describe says the same)."""
    if not popped:
        waiting = sum(not p for _, p in queued)
        return (f"Queue strip: {len(queued)} jobs in arrival order (by job id), not the order they come out: "
                f"{len(queued) - waiting} in the sorted set, {waiting} on the wait list. "
                "Popped strip: nothing popped yet.")
    left = f"{len(queued)} jobs left, in arrival order" if queued else "empty"
    job_id, priority, why = popped[-1]
    return f"Queue strip: {left}. Popped strip: {len(popped)} popped, the last {_job_label(job_id, priority)}, {why}."


def verdict_text(guess: str, popped: Sequence[Sequence]) -> str:
    """The guess judged against the first job out ("" before the first pop)."""
    if not popped:
        return ""
    first, priority, why = popped[0]
    out = f"job {first} came out first, {why}."
    if not guess:
        return f"No guess made: {out}"
    return f"You guessed job {guess}: {'right' if guess == first else 'not first'}. {out[0].upper()}{out[1:]}"


class ConsumeFigure(PageFigure):
    """The consume dive's page model: the batch's job ids, the queue in
    arrival order, the jobs popped (with why), ``pc`` and the reader's guess."""

    module = "consume"

    page_writes = ("guess",)  # what its page's controls move
    capacity = traitlets.Int(1).tag(sync=True)
    ids = traitlets.List().tag(sync=True)  # every job id of the batch, in arrival order: what a guess may name
    queued = traitlets.List().tag(sync=True)  # [[id, priority or 0], ...] by job id, never in pop order
    popped = traitlets.List().tag(sync=True)  # [[id, priority or 0, why], ...] in pop order
    pc = traitlets.Int(None, allow_none=True).tag(sync=True)
    guess = traitlets.Unicode("").tag(sync=True)  # "" or a job id

    def set_state(self, sync_data: dict) -> None:
        """The page sets only the guess: what Redis holds is the kernel's to say."""
        owned = [name for name in sync_data if name in KERNEL_OWNED]
        super().set_state({name: value for name, value in sync_data.items() if name not in KERNEL_OWNED})
        if owned:  # after the rest: a message starts by ending the last one's refusal
            self.status = f"refused {', '.join(owned)}: the kernel reads it from Redis, the page cannot set it"

    @traitlets.validate("guess")
    def _a_job(self, proposal: dict) -> str:
        good = self.__dict__.setdefault("_good_values", {})  # as PageFigure._checked keeps them
        value = proposal["value"]
        if value != "" and value not in self.ids:
            self.status = f"refused guess {sent(value)}: it must be a job of the batch, 1..{len(self.ids)}"
            return good.get("guess", "")
        good["guess"] = value
        return value


class ConsumeView(PageView):
    """A seeded batch in the real sorted set, popped one by one through the
    real consume script.

    :param priorities: the batch, in arrival order.
    :param waiting: how many jobs without priority to add after the batch.
    """

    guess_first = True  # "which comes out first?": nothing popped, nothing told, until the reader pops
    shown_traits = ("queued", "popped", "guess")

    def __init__(self, demo: Demo, *, priorities: Sequence[int], waiting: int = 1) -> None:
        demo = require_demo(demo)
        # Checked before anything touches Redis: a bad batch must not empty the queue.
        batch, waiting = _checked_batch(priorities, waiting)
        capacity = len(batch) + waiting
        super().__init__(ConsumeFigure(capacity=capacity, ids=[str(n) for n in range(1, capacity + 1)]))
        self.demo, self.batch, self.waiting = demo, batch, waiting
        self.popped: list[Job] = []
        self.queued: list[tuple[str, int]] = []  # (job id, priority or 0 for the wait list), by job id
        actions = dict(zip(ACTIONS, (self.step, self.drain, self.refill)))
        self._actions = {kind: self._callback(action, ()) for kind, action in actions.items()}  # errors: one line
        self.figure.on_msg(self._heard)
        self.refill()

    def answered(self) -> bool:
        return bool(self.popped)

    def __repr__(self) -> str:
        return f"ConsumeView(queue={self.demo.queue!r}, batch={len(self.batch)}, popped={len(self.popped)})"

    @property
    def guess(self) -> str:
        """The reader's guess, a job id, or "" before one."""
        return self.figure.guess

    def predict(self, job_id: str) -> "ConsumeView":
        """Guess from code which job comes out first, as the page's menu does."""
        if not isinstance(job_id, str) or job_id not in self.figure.ids:
            raise ValueError(f"the guess must be a job id of the batch, '1'..'{len(self.figure.ids)}', got {job_id!r}")
        self.figure.guess = job_id
        return self

    def refill(self) -> None:
        """Empty the demo queue and add the batch, then the wait-list jobs."""
        fill_queue(self.demo, self.batch, self.waiting)
        self.popped = []
        self.figure.guess = ""  # a fresh batch asks again
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
        """The wait list and the sorted set as Redis holds them, in arrival order (by job id)."""
        return queue_table(self.demo)

    def popped_text(self) -> str:
        return popped_text(self.figure.popped)

    def readout_text(self) -> str:
        """What the page shows under the figure: the jobs popped, and ``pc``."""
        pc = self.figure.pc
        return (f"popped: {self.popped_text()}\n"
                + _pc_line(pc))

    def verdict_text(self) -> str:
        return verdict_text(self.figure.guess, self.figure.popped)

    def describe(self) -> str:
        return describe_state(self.figure.queued, self.figure.popped)

    def _heard(self, _widget: object, content: object, _buffers: object) -> None:
        """A button of the page: one of :data:`ACTIONS`; anything else is refused, nothing run."""
        if not isinstance(content, dict) or content.get("kind") == "ping":  # ping: PageFigure answers it
            return
        action = self._actions.get(content.get("kind")) if isinstance(content.get("kind"), str) else None
        if action is None:
            self.status.note(f"refused the page's message {sent(content)}: its kind must be one of "
                             + ", ".join(ACTIONS))
        else:
            action()
        self.figure.send({"kind": "done"})  # the page stops waiting

    def _show(self) -> None:
        waiting, entries = self.demo.waiting(), self.demo.entries()  # one read for strip, readout and caption
        queued = {job_id: 0 for job_id in waiting} | {e.job_id: e.priority for e in entries}
        self.queued = [(job_id, queued[job_id]) for job_id in sorted(queued, key=_by_id)]
        with self.figure.hold_sync():
            self.figure.queued = [list(job) for job in self.queued]
            self.figure.popped = [[job.id, 0 if job.score is None else job.priority, why_text(job)]
                                  for job in self.popped]
            self.figure.pc = self.demo.priority_counter()
