"""Notebook 04's bands: tiers as bands of the score axis, with real jobs inside them.

The page draws it (``page/bands.js``): the bands of each tier up close and at
full scale, the jobs as points, and the edge between two tiers on the number
line. Python fills the demo queue on Redis and sends the page what Redis then
holds: every job as ``[priority, counter]``, its stored score split in two
(``ZRANGE ... WITHSCORES``, in pop order; at most :data:`JOBS_MAX` of them, so
the page gets every job, never a sample), and the counts
``getCountsPerPriority-2`` returns. The edge slider moves in the page alone;
tiers, jobs and "pc starts at" reach the kernel when let go, are checked
against the bounds it holds, and refill the queue.
"""

from __future__ import annotations

import traitlets

from echomq_viz.core.checks import check_int
from echomq_viz.core.score import COUNTER_MASK, priority_score, split_score
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.widgets.page_view import PageFigure, PageView
from echomq_viz.widgets.view import require_demo, tiers_text

__all__ = ["BandsView", "BandsFigure", "TIERS_MAX", "JOBS_MIN", "JOBS_MAX", "START_MAX"]

TIERS_MAX = 8
JOBS_MIN, JOBS_MAX = 10, 5000
START_MAX = COUNTER_MASK - JOBS_MAX  # the batch's counters never wrap past 2³² − 1
_KERNEL_ONLY = ("points", "counts", "ran")  # what Redis holds: the page never writes it


class BandsFigure(PageFigure):
    """The bands' page model: the three values a refill reads, the edge the
    page shows, and what Redis held after the last refill."""

    module = "bands"

    page_writes = ("tiers", "jobs", "start", "edge")  # what its page's controls move
    kernel_source = ", from what Redis holds"
    tiers = traitlets.Int(4).tag(sync=True)
    jobs = traitlets.Int(200).tag(sync=True)
    start = traitlets.Int(0).tag(sync=True)
    edge = traitlets.Int(1).tag(sync=True)  # the page's alone: the edge after this tier
    points = traitlets.List().tag(sync=True)  # [[priority, counter], ...] of every job, in pop order
    counts = traitlets.List().tag(sync=True)  # [[tier, jobs], ...] from getCountsPerPriority-2
    ran = traitlets.Dict().tag(sync=True)  # {tiers, jobs, start}: what points and counts were read for

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"tiers": (1, TIERS_MAX), "jobs": (JOBS_MIN, JOBS_MAX), "start": (0, START_MAX),
                "edge": (1, TIERS_MAX - 1)}

    @traitlets.validate("tiers", "jobs", "start", "edge")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate(*_KERNEL_ONLY)
    def _from_redis(self, proposal: dict) -> object:
        """What Redis holds is written by the kernel alone; the page sending it is refused."""
        return self._kernel_only(proposal)


class BandsView(PageView):
    """Tiers as bands of the score axis, with real jobs from the demo queue
    as points inside them, up close and at full scale, and the edge between
    two tiers, all drawn in the page.

    Tiers, jobs and "pc starts at" act when let go: each change refills the
    demo queue on Redis. The edge slider only changes what is drawn.
    """

    shown_traits = ("tiers", "jobs", "start", "edge")

    def __init__(self, demo: Demo, *, tiers: int = 4, jobs: int = 200, start: int = 0, seed: int = 4,
                 edge: int = 1) -> None:
        demo = require_demo(demo)
        tiers = check_int("tiers", tiers, 1, TIERS_MAX)
        jobs = check_int("jobs", jobs, JOBS_MIN, JOBS_MAX)
        start = check_int("start", start, 0, START_MAX)
        seed = check_int("seed", seed, 0, 2**32)
        edge = check_int("edge", edge, 1, TIERS_MAX - 1)
        self.demo, self.seed = demo, seed
        super().__init__(BandsFigure(tiers=tiers, jobs=jobs, start=start, edge=edge))
        self._on_figure_change(["tiers", "jobs", "start"], self._follow)
        self.refresh()

    def __repr__(self) -> str:
        f = self.figure
        return f"BandsView(tiers={f.tiers}, jobs={f.jobs}, start={f.start})"

    @property
    def counts(self) -> dict[int, int]:
        """Jobs per tier, as ``getCountsPerPriority-2`` counted them after the last refill."""
        return {int(p): int(n) for p, n in self.figure.counts}

    def set(self, *, tiers: int | None = None, jobs: int | None = None, start: int | None = None,
            edge: int | None = None) -> "BandsView":
        """Move the sliders from code, as the page does: every value is checked
        first (none moves if one is refused), then one refill on Redis if
        tiers, jobs or start changed."""
        moves = {name: check_int(name, value, *self.figure.bounds()[name])
                 for name, value in (("tiers", tiers), ("jobs", jobs), ("start", start), ("edge", edge))
                 if value is not None}
        with self._quietly(), self.figure.hold_sync():
            for name, value in moves.items():
                setattr(self.figure, name, value)
        if self._stale():
            self.refresh()
        return self

    def _stale(self) -> bool:
        f = self.figure
        return f.ran != {"tiers": f.tiers, "jobs": f.jobs, "start": f.start}

    def _follow(self) -> None:
        if self._stale():  # the page may send two values at once: the first refill reads both
            self.refresh()

    def refresh(self) -> dict[int, int]:
        """Refill the demo queue on Redis and send the page what it then holds."""
        f = self.figure
        tiers, jobs, start = f.tiers, f.jobs, f.start
        self.demo.reset()
        self.demo.set_counter(start)
        self.demo.add_batch(seeded_priorities(self.seed, jobs, range(1, tiers + 1)))
        points = [[entry.priority, entry.counter] for entry in self.demo.entries()]
        counts = self.demo.counts(range(1, tiers + 1))
        with f.kernel_writes():
            f.points = points
            f.counts = [[p, n] for p, n in counts.items()]
            f.ran = {"tiers": tiers, "jobs": jobs, "start": start}
        return counts

    def counts_text(self) -> str:
        parts = ", ".join(f"tier {p}: {n}" for p, n in self.counts.items())
        return f"getCountsPerPriority-2 on Redis: {parts}"

    def edge_text(self, priority: int = 1) -> str:
        """The largest score of a tier against the smallest of the next (pure:
        ``BandsView.edge_text(None, 3)`` needs no view)."""
        top = priority_score(priority, COUNTER_MASK)
        bottom = priority_score(priority + 1, 0)
        assert split_score(top)[0] == priority and split_score(bottom)[0] == priority + 1
        return (f"largest tier-{priority} score   {top:,}\n"
                f"smallest tier-{priority + 1} score  {bottom:,}\n"
                f"gap: {bottom - top}")

    def describe(self) -> str:
        counts = self.counts
        tiers = len(counts) or self.figure.tiers
        edge = self.figure.edge
        parts = ", ".join(f"tier {p}: {n:,}" for p, n in counts.items())
        counters = [counter for _, counter in self.figure.points]
        held = f" (counters {min(counters):,} to {max(counters):,})" if counters else ""
        return (f"{tiers_text(tiers).capitalize()} as bands of the score axis with {sum(counts.values()):,} jobs as "
                f"points{held}, each inside its tier's band ({parts}), up close and at full scale; below them, the "
                f"largest tier-{edge} score and the smallest tier-{edge + 1} score, one apart.")
