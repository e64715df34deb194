"""The live experiments the notebooks run on a real Redis, without any widget.

A :class:`Demo` owns one demo queue (its name starts with ``viz-``) and only
ever writes and deletes that queue's keys. Every job goes through the real
Lua scripts (:mod:`echomq_viz.scripts`); every score shown is the one Redis
stored. The widgets call these methods, and so can a plain script.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Sequence

from .keys import Keys, QueueContext
from .score import TIER_SPAN, split_stored
from .scripts import Job, Scripts
from .server import connect

__all__ = ["DEMO_PREFIX", "Entry", "Comparison", "Demo", "seeded_priorities", "past_the_limit_source"]

DEMO_PREFIX = "viz-"

# The one call in addPrioritizedJob-9.lua that enforces the priority limit.
_LIMIT_CHECK = "checkPriority(ARGV[6], 1)"
TEACHING_PRIORITY_CEILING = 2**32 - 1


def past_the_limit_source(real_source: str) -> str:
    """addPrioritizedJob-9's assembled source with only its priority limit
    raised to 2**32 - 1: everything else is the real script, byte for byte.

    For teaching what happens past 2**21 - 1; the normal API never uses it.
    """
    if real_source.count(_LIMIT_CHECK) != 1:
        raise RuntimeError(f"addPrioritizedJob-9 no longer calls {_LIMIT_CHECK} exactly once")
    return real_source.replace(
        _LIMIT_CHECK, f"checkPriority(ARGV[6], 1, {TEACHING_PRIORITY_CEILING})"
    )


@dataclass(frozen=True)
class Entry:
    """One member of the prioritized set as Redis holds it."""

    job_id: str
    score: float
    priority: int
    counter: int


@dataclass(frozen=True)
class Comparison:
    """Two jobs added through the real script, then one ZPOPMIN-based consume."""

    score_a: float
    score_b: float
    popped: str  # "A" or "B": whose job the consume script took first
    job_a: str
    job_b: str


def seeded_priorities(seed: int, count: int, tiers: Sequence[int]) -> list[int]:
    """A reproducible mix of priorities drawn from ``tiers``."""
    rng = random.Random(seed)
    return [rng.choice(list(tiers)) for _ in range(count)]


class Demo:
    """One demo queue on a real Redis.

    :param queue: the queue name; must start with ``viz-`` so demo keys can
        never be mistaken for a real queue's.
    :param client: a redis-py client; :func:`echomq_viz.server.connect` by
        default (``REDIS_URL``, else the embedded server).
    """

    def __init__(self, queue: str, client=None) -> None:
        if not isinstance(queue, str):
            raise TypeError(f"queue must be a str, got {type(queue).__name__} {queue!r}")
        if not queue.startswith(DEMO_PREFIX):
            raise ValueError(f"demo queue names start with {DEMO_PREFIX!r}, got {queue!r}")
        self.ctx = QueueContext(queue)
        self.client = client if client is not None else connect()
        self.scripts = Scripts(self.client)
        self._past_the_limit = None  # registered on first teaching use

    @property
    def queue(self) -> str:
        return self.ctx.queue

    def reset(self) -> int:
        """Delete this demo queue's keys (``emq:{viz-...}:*``) and nothing else."""
        return self.scripts.reset(self.ctx)

    # -- adding --------------------------------------------------------------

    def add_at_counter(self, name: str, priority: int, counter: int, data=None) -> tuple[str, float]:
        """Add a job so that ``INCR pc`` hands it ``counter`` (mod 2**32).

        Sets ``pc`` first, then runs ``addPrioritizedJob-9``.
        :returns: the job id and the score Redis stored for it.
        """
        self._set_counter_for(counter)
        job_id = self.scripts.add_prioritized_job(self.ctx, name, data or {}, priority)
        return job_id, self.stored_score(job_id)

    def add_past_the_limit_for_teaching(
        self, name: str, priority: int, counter: int | None = None
    ) -> tuple[str, float]:
        """TEACHING ONLY: add a job with a priority above 2**21 - 1.

        Runs :func:`past_the_limit_source`, the real script with its limit
        lifted, so the rounding that follows is the real Lua and Redis
        arithmetic. ``counter`` sets ``pc`` first, as :meth:`add_at_counter`
        does; None takes the next INCR.
        :returns: the job id and the score Redis stored.
        """
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"priority must be an int, got {type(priority).__name__} {priority!r}")
        if not 1 <= priority <= TEACHING_PRIORITY_CEILING:
            raise ValueError(f"priority must be in 1..{TEACHING_PRIORITY_CEILING:_} (2**32 - 1), got {priority:_}")
        if self._past_the_limit is None:
            source = past_the_limit_source(self.scripts.sources["addPrioritizedJob"].source)
            self._past_the_limit = self.client.register_script(source)
        if counter is not None:
            self._set_counter_for(counter)
        keys = self.scripts.sources["addPrioritizedJob"].keys(self.ctx)
        job_id = self._past_the_limit(
            keys=keys, args=[Keys.base(self.ctx), "", name, int(time.time() * 1000), "{}", priority]
        )
        return job_id, self.stored_score(job_id)

    def add(self, name: str, priority: int, data=None) -> str:
        """Add a prioritized job the ordinary way: the counter is the next INCR."""
        return self.scripts.add_prioritized_job(self.ctx, name, data or {}, priority)

    def add_waiting(self, name: str, data=None) -> str:
        """Add a job without priority: it goes to the wait list."""
        return self.scripts.add_standard_job(self.ctx, name, data or {})

    def add_batch(self, priorities: Sequence[int], name: str = "job") -> list[str]:
        """Add one job per priority, in order, through the pipelined bulk add."""
        return self.scripts.add_prioritized_jobs(
            self.ctx, [(f"{name}-{i}", {"i": i}, p) for i, p in enumerate(priorities)]
        )

    def _set_counter_for(self, counter: int) -> None:
        """Set ``pc`` so that the next ``INCR pc`` gives ``counter`` (mod 2**32)."""
        if isinstance(counter, bool) or not isinstance(counter, int):
            raise TypeError(f"counter must be an int, got {type(counter).__name__} {counter!r}")
        if not 0 <= counter < TIER_SPAN:
            raise ValueError(f"counter must be in 0..{TIER_SPAN - 1:_} (2**32 - 1), got {counter:_}")
        # INCR returns pc + 1; counter 0 is what INCR reaching 2**32 gives.
        self.scripts.set_priority_counter(self.ctx, (counter or TIER_SPAN) - 1)

    def set_counter(self, value: int) -> None:
        """Set ``pc`` itself: the next prioritized job gets ``value + 1``."""
        self.scripts.set_priority_counter(self.ctx, value)

    # -- reading ---------------------------------------------------------------

    def stored_score(self, job_id: str) -> float:
        score = self.client.zscore(Keys.prioritized(self.ctx), job_id)
        if score is None:
            raise LookupError(f"job {job_id!r} is not in {Keys.prioritized(self.ctx)}")
        return float(score)

    def entries(self) -> list[Entry]:
        """The prioritized set in pop order, each score split into its two keys."""
        return [Entry(job_id, score, *split_stored(score)) for job_id, score in self.scripts.prioritized(self.ctx)]

    def waiting(self) -> list[str]:
        """Job ids on the wait list, next to be taken first."""
        return list(reversed(self.client.lrange(Keys.wait(self.ctx), 0, -1)))

    def priority_counter(self) -> int | None:
        return self.scripts.priority_counter(self.ctx)

    def counts(self, priorities: Sequence[int]) -> dict[int, int]:
        return self.scripts.counts_per_priority(self.ctx, priorities)

    # -- consuming -------------------------------------------------------------------

    def pop(self, token: str = "viz-worker") -> Job | None:
        """Take the next job through ``moveToActive-11``."""
        return self.scripts.move_to_active(self.ctx, token, 60_000)

    def drain(self, token: str = "viz-worker") -> list[Job]:
        """Take every job, in the order the consume script hands them out."""
        return self.scripts.drain(self.ctx, token, 60_000)

    def compare(self, a: tuple[int, int], b: tuple[int, int]) -> Comparison:
        """Empty the queue, add job A and job B at the given ``(priority,
        counter)`` through the real script, then consume once."""
        self.reset()
        job_a, score_a = self.add_at_counter("A", *a)
        job_b, score_b = self.add_at_counter("B", *b)
        first = self.pop()
        assert first is not None
        return Comparison(score_a, score_b, "A" if first.id == job_a else "B", job_a, job_b)

