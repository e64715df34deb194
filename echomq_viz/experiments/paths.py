"""Every path that scores a prioritized job, live on a demo queue.

``getPriorityScore`` is included, verbatim, by every script that puts a job
with a priority into the prioritized set, so every such path packs the tier
and the counter the same way. This module runs each path through its real
script on a :class:`~echomq_viz.experiments.live.Demo` queue and reports where the job
landed, its score split into (tier, counter):

- ``changePriority-7``: the same tier again, a better tier, lifo, priority 0;
- a delayed job becoming due, promoted by the consume ``moveToActive-11``;
- a delayed job promoted early by ``promote-9``;
- a job whose attempt failed, retried by ``retryJob-10``.

It also draws the include graph as a text tree. The calls themselves are
:class:`~echomq_viz.redis_side.scripts.Scripts` methods; stock BullMQ's
``Job.changePriority`` is :func:`echomq_viz.experiments.interop.bullmq_change_priority`.
No widgets: :mod:`echomq_viz.widgets.paths` shows these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.lua_loader import LUA_DIR, include_graph, includers_of
from echomq_viz.redis_side.scripts import Scripts

__all__ = [
    "CLOCK_START", "SCORER", "LANDINGS", "SCENE", "PATHS", "scoring_scripts", "include_tree",
    "Place", "PathRun", "ScoringPaths", "landing",
]

CLOCK_START = 2_000_000_000_000  # ms (May 2033): the experiments' clock, never the wall clock
SCORER = "includes/getPriorityScore"


# -- the include graph -------------------------------------------------------------------------


def scoring_scripts(graph: dict[str, set[str]] | None = None, target: str = SCORER) -> list[str]:
    """The scripts (not includes) that reach ``target``, directly or through includes."""
    return sorted(n for n in includers_of(target, graph) if not n.startswith("includes/"))


def include_tree(target: str = SCORER, graph: dict[str, set[str]] | None = None) -> str:
    """``target`` and, below it, every file that includes it, then every file
    that includes those, down to the scripts: a text tree read from ``lua/``."""
    graph = include_graph(LUA_DIR) if graph is None else graph
    includers_of(target, graph)  # checks the name

    def branch(name: str, trail: tuple[str, ...], indent: str) -> list[str]:
        parents = sorted(n for n, targets in graph.items() if name in targets and n not in trail)
        lines = []
        for i, parent in enumerate(parents):
            last = i == len(parents) - 1
            lines.append(f"{indent}{'└── ' if last else '├── '}{parent}")
            lines += branch(parent, (*trail, parent), indent + ("    " if last else "│   "))
        return lines

    return "\n".join([target, *branch(target, (target,), "")])


# -- where a job is ------------------------------------------------------------------------------

LANDINGS = ("where it was", "front of its tier", "back of its tier", "the wait list")


@dataclass(frozen=True)
class Place:
    """Where a job sits: its container and, in the prioritized set, its
    score split into (tier, counter) and its rank in its tier (1 = next out);
    on the wait list its rank there; in ``delayed`` its due time."""

    job_id: str
    container: str  # "prioritized", "wait", "delayed", "active" or "nowhere"
    score: float | None = None
    tier: int | None = None
    counter: int | None = None
    rank: int | None = None
    peers: int | None = None  # how many jobs share the tier (or the wait list)
    due: int | None = None

    def text(self) -> str:
        if self.container == "prioritized":
            end = "front" if self.rank == 1 else "back" if self.rank == self.peers else f"#{self.rank}"
            return (f"score {int(self.score):,} = (tier {self.tier}, counter {self.counter}): "
                    f"{end} of tier {self.tier} ({self.rank} of {self.peers})")
        if self.container == "wait":
            return f"wait list, {self.rank} of {self.peers} (1 = next out)"
        if self.container == "delayed":
            return f"delayed, due at clock + {self.due - CLOCK_START:,} ms"
        return self.container


def landing(before: Place, after: Place) -> str:
    """Which of :data:`LANDINGS` describes ``after`` (or "middle of its tier",
    or another container's name)."""
    if after.container == "wait":
        return "the wait list"
    if after.container != "prioritized":
        return after.container
    if before.container == "prioritized" and after.score == before.score:
        return "where it was"
    if after.rank == after.peers and after.peers > 1:
        return "back of its tier"
    return "front of its tier" if after.rank == 1 else "middle of its tier"


@dataclass(frozen=True)
class PathRun:
    """One path, run on Redis: the job before and after, ``pc`` before and
    after, and the queue in pop order as ``(job id, priority)`` both times."""

    path: str
    job_id: str
    before: Place
    after: Place
    pc_before: int | None
    pc_after: int | None
    queue_before: tuple[tuple[str, int], ...]
    queue_after: tuple[tuple[str, int], ...]
    note: str = ""

    @property
    def landing(self) -> str:
        return landing(self.before, self.after)

    def text(self) -> str:
        title, script, _ = PATHS[self.path]
        incr = "none" if self.pc_before == self.pc_after else f"{(self.pc_after or 0) - (self.pc_before or 0)}"
        lines = [f"{script}: {title}",
                 f"job {self.job_id} before: {self.before.text()}",
                 f"job {self.job_id} after:  {self.after.text()}",
                 f"pc: {self.pc_before} -> {self.pc_after} (INCRs: {incr})",
                 f"landed: {self.landing}"]
        return "\n".join(lines + ([self.note] if self.note else []))


# -- the experiments -------------------------------------------------------------------------------

SCENE = (1, 1, 2, 2, 3, 3, 3)  # arrival order: jobs 1..7, counters 1..7
_DELAY_MS = 5_000
_TOKEN = "viz-08-worker"

# key: (what happens, the script that scores it, the question)
PATHS: dict[str, tuple[str, str, str]] = {
    "same tier": ("job 5, at the front of tier 3, changed to priority 3 again", "changePriority-7",
                  "Job 5 is already in tier 3, first in line. Change it to priority 3: where does it land?"),
    "better tier": ("job 5, at the front of tier 3, changed to priority 1", "changePriority-7",
                    "Job 5 moves up from tier 3 to tier 1: where in tier 1 does it land?"),
    "lifo": ("job 5, at the front of tier 3, changed to priority 1 with lifo", "changePriority-7",
             "The same change with lifo=True: where in tier 1 now?"),
    "no priority": ("job 5, at the front of tier 3, changed to priority 0", "changePriority-7",
                    "Priority 0 means no priority: where does job 5 go?"),
    "due": ("a delayed priority-2 job becomes due; the consume promotes it", "moveToActive-11",
            "A priority-2 job waited 5 s in 'delayed' and is now due. A worker asks for a job: "
            "where does the delayed job land?"),
    "promote": ("a delayed priority-2 job promoted before it is due", "promote-9",
                "The same delayed job, promoted by hand before it is due: where does it land?"),
    "retry": ("job 1, at the front of tier 1, taken by a worker, fails and is retried", "retryJob-10",
              "A worker takes job 1, the front of tier 1; its attempt fails and it is retried: "
              "where does it land?"),
}


class ScoringPaths:
    """The paths of :data:`PATHS` on one demo queue, each from a fresh scene:
    the queue emptied, then :data:`SCENE` added in arrival order."""

    def __init__(self, demo: Demo) -> None:
        if not isinstance(demo, Demo):
            raise TypeError(f"demo must be a Demo, e.g. Demo('viz-08-paths'), got {type(demo).__name__}")
        self.demo = demo
        # Each takes the job's id and returns a note for the report ("" for none).
        self._runs: dict[str, Callable[[str], str]] = {
            "same tier": lambda job_id: self._change(job_id, 3),
            "better tier": lambda job_id: self._change(job_id, 1),
            "lifo": lambda job_id: self._change(job_id, 1, lifo=True),
            "no priority": lambda job_id: self._change(job_id, 0),
            "due": self._due, "promote": self._promote, "retry": self._retry,
        }

    @property
    def scripts(self) -> Scripts:
        return self.demo.scripts

    @property
    def ctx(self) -> QueueContext:
        return self.demo.ctx

    def scene(self) -> list[str]:
        """Empty the queue and add :data:`SCENE` through ``addPrioritizedJob-9``."""
        self.demo.reset()
        return self.demo.add_batch(SCENE)

    def queue(self) -> tuple[tuple[str, int], ...]:
        """The queue in pop order: the wait list (priority 0), then the prioritized set."""
        return (*((job_id, 0) for job_id in self.demo.waiting()),
                *((e.job_id, e.priority) for e in self.demo.entries()))

    def locate(self, job_id: str) -> Place:
        """Where ``job_id`` is now, read from Redis."""
        entries = self.demo.entries()
        for entry in entries:
            if entry.job_id == job_id:
                tier = [e.job_id for e in entries if e.priority == entry.priority]
                return Place(job_id, "prioritized", entry.score, entry.priority, entry.counter,
                             tier.index(job_id) + 1, len(tier))
        waiting = self.demo.waiting()
        if job_id in waiting:
            return Place(job_id, "wait", rank=waiting.index(job_id) + 1, peers=len(waiting))
        for delayed_id, due, _ in self.scripts.delayed_jobs(self.ctx):
            if delayed_id == job_id:
                return Place(job_id, "delayed", due=due)
        active = self.scripts.client.lrange(Keys.active(self.ctx), 0, -1)
        return Place(job_id, "active" if job_id in active else "nowhere")

    def run(self, path: str) -> PathRun:
        """Set the scene, run one path of :data:`PATHS` through its script, and
        report where the job landed."""
        if not isinstance(path, str):
            raise TypeError(f"path must be a str, one of {', '.join(map(repr, PATHS))}, got {type(path).__name__}")
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(map(repr, PATHS))}, got {path!r}")
        ids = self.scene()
        if path in ("due", "promote"):
            job_id = self.scripts.add_delayed_job(self.ctx, "delayed", {}, 2, _DELAY_MS, timestamp=CLOCK_START)
        else:
            job_id = ids[0] if path == "retry" else ids[SCENE.index(3)]  # the front of tier 1 or of tier 3
        before, queue_before, pc_before = self.locate(job_id), self.queue(), self.demo.priority_counter()
        note = self._runs[path](job_id)
        return PathRun(path, job_id, before, self.locate(job_id), pc_before, self.demo.priority_counter(),
                       queue_before, self.queue(), note)

    # -- the paths ------------------------------------------------------------------------------

    def _change(self, job_id: str, priority: int, lifo: bool = False) -> str:
        if not self.scripts.change_priority(self.ctx, job_id, priority, lifo=lifo):
            raise LookupError(f"changePriority-7 found no job {job_id} in {self.demo.queue}")
        return ""

    def _due(self, job_id: str) -> str:
        job = self.scripts.move_to_active(self.ctx, _TOKEN, 60_000, timestamp=CLOCK_START + _DELAY_MS)
        return f"the consume then took job {job.id}, the smallest score" if job else ""

    def _promote(self, job_id: str) -> str:
        if not self.scripts.promote(self.ctx, job_id):
            raise LookupError(f"promote-9 found no delayed job {job_id} in {self.demo.queue}")
        return ""

    def _retry(self, job_id: str) -> str:
        job = self.scripts.move_to_active(self.ctx, _TOKEN, 60_000, timestamp=CLOCK_START)
        if job is None or job.id != job_id:
            raise LookupError(f"the consume did not take job {job_id} first in {self.demo.queue}")
        self.scripts.retry_job(self.ctx, job.id, _TOKEN, reason="boom", timestamp=CLOCK_START)
        return f"attempts made (atm): {self.scripts.client.hget(Keys.job(self.ctx, job.id), 'atm')}"
