"""The live experiments the notebooks run on a real Redis, without any widget.

A :class:`Demo` owns one demo queue and only ever writes and deletes that
queue's keys. The queue belongs to this process (:mod:`echomq_viz.redis_side.owners`):
``Demo("viz-01-score")`` works on ``viz-01-score@<owner>``, so kernels
sharing one Redis never see or delete each other's jobs, and a process's demo
keys go when it ends (:func:`clean_orphans` for one killed without exiting).
Every job goes through the real Lua scripts (:mod:`echomq_viz.redis_side.scripts`);
every score shown is the one Redis stored. The widgets call these methods,
and so can a plain script.
"""

from __future__ import annotations

import functools
import random
import time
from dataclasses import dataclass
from typing import Sequence

from redis.exceptions import RedisError

from echomq_viz.core.checks import check_int, check_str, check_text, describe
from echomq_viz.core.keys import MAX_NAME_LENGTH, Keys, QueueContext
from echomq_viz.core.notation import power_minus
from echomq_viz.redis_side.demo_keys import DEMO_PREFIX, OWNER_MARK
from echomq_viz.redis_side.owners import LeaseLost, OneLineError, check_client, claim, clean_orphans
from echomq_viz.redis_side.redis_errors import one_line
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, split_stored
from echomq_viz.redis_side.scripts import (
    BatchError, Job, Scripts, encode_job_data, validate_priority, validate_priority_counter,
)
from echomq_viz.redis_side.eviction import warn_if_evicting
from echomq_viz.redis_side.server import connect
from echomq_viz.redis_side.functions import ScriptCall
from echomq_viz.redis_side.variants import TEACHING_PRIORITY_CEILING, past_the_limit_source

__all__ = [
    "DEMO_PREFIX", "Entry", "Comparison", "Demo", "LeaseLost", "QueueDamaged", "clean_orphans", "seeded_priorities",
    "past_the_limit_source", "checked_job",
]

MAX_DEMO_NAME = MAX_NAME_LENGTH - 9  # room for "@" and the 8-character token



def _check_counter(counter: object, what: str = "counter") -> int:
    """A counter ``INCR pc`` can hand out, mod 2**32."""
    return check_int(what, counter, 0, COUNTER_MASK, why=power_minus(2, 32, 1))


def checked_job(what: str, job: object, max_priority: int = PRIORITY_LIMIT) -> tuple[int, int]:
    """A ``(priority, counter)`` pair after checking both."""
    if not isinstance(job, (tuple, list)) or len(job) != 2:
        raise TypeError(f"{what} must be a (priority, counter) pair, got {describe(job)}")
    return check_int(f"{what} priority", job[0], 1, max_priority), _check_counter(job[1], f"{what} counter")


class QueueDamaged(OneLineError, RuntimeError):
    """A job id in the demo queue whose job hash is gone (evicted or deleted)."""


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
    rng = random.Random(check_int("seed", seed, 0, 2**64 - 1))
    count = check_int("count", count, 0, 10_000_000)
    choices = [validate_priority(tier) for tier in tiers]
    if not choices:
        raise ValueError("tiers must name at least one priority, got none")
    return [rng.choice(choices) for _ in range(count)]


def _demo_name(queue: object) -> str:
    """A demo queue's base name after checking it."""
    what = "demo queue name"
    check_str(what, queue, max_length=MAX_DEMO_NAME, why=f"the owner's {OWNER_MARK!r} and token take 9 more")
    if not queue.startswith(DEMO_PREFIX) or queue == DEMO_PREFIX:
        raise ValueError(f"{what} must start with {DEMO_PREFIX!r} and go on after it, e.g. 'viz-mine', got {queue!r}")
    if OWNER_MARK in queue:
        raise ValueError(f"{what} must not contain {OWNER_MARK!r} (it marks the owning process, added for you), "
                         f"got {queue!r}")
    QueueContext(queue)  # the key layout's own rules
    return queue


class Demo:
    """One demo queue on a real Redis, owned by this process.

    :param queue: the base name; it starts with ``viz-`` so demo keys can
        never be mistaken for a real queue's. The queue itself is
        ``<queue>@<owner>``: another process's ``Demo`` of the same name
        works on a queue of its own. ``name`` keeps the base name, ``owner``
        the token, ``queue`` and ``ctx`` the full name.

    Every call checks its arguments, then proves this process's lease is
    still its own (one atomic compare-and-renew). If it lapsed (the kernel was paused past
    it, and ``echomq-viz clean`` may have emptied the queue), the call writes
    nothing and raises :class:`LeaseLost`; the Demo then works on a fresh
    queue under the process's new owner token.
    :param client: a redis-py client; :func:`echomq_viz.redis_side.server.connect` by
        default (``REDIS_URL``, else the embedded server).
    """

    def __init__(self, queue: str, client=None) -> None:
        self.name = _demo_name(queue)
        if client is not None:
            check_client(client)
            warn_if_evicting(client, _where(client))
        self.client = client if client is not None else connect()
        self.owner = claim(self.client)
        room = MAX_NAME_LENGTH - len(OWNER_MARK) - len(self.owner)  # a namespaced token is longer
        if len(self.name) > room:
            raise ValueError(f"demo queue name must be 1..{room} characters on this Redis user (the owner's "
                             f"{OWNER_MARK!r} and token {self.owner!r} take {MAX_NAME_LENGTH - room} more), "
                             f"got {len(self.name)}")
        self.ctx = QueueContext(f"{self.name}{OWNER_MARK}{self.owner}")
        self.scripts = Scripts(self.client)
        self._past_the_limit = None  # registered on first teaching use

    @property
    def queue(self) -> str:
        """The queue's full name, ``<name>@<owner>``."""
        return self.ctx.queue

    def _hold(self) -> None:
        """Prove the lease before touching the queue; on a lapse, move to a fresh queue and say so."""
        owner = claim(self.client)
        if owner != self.owner:
            lapsed, self.owner = self.queue, owner
            self.ctx = QueueContext(f"{self.name}{OWNER_MARK}{owner}")
            raise LeaseLost(f"this kernel's lease on Redis is gone (it expired, was evicted or was deleted), so "
                            f"{lapsed} may have been cleaned: nothing was done; this Demo now uses {self.queue}, "
                            "run it again")

    def reset(self) -> int:
        """Delete this demo queue's keys and nothing else; renews the lease
        (never writing it first: a Redis out of memory still deletes)."""
        self._hold()
        return self.scripts.reset(self.ctx)

    # -- adding --------------------------------------------------------------

    def add_at_counter(self, name: str, priority: int, counter: int, data=None) -> tuple[str, float]:
        """Add a job so that ``INCR pc`` hands it ``counter`` (mod 2**32).

        Checks every argument, sets ``pc``, then runs ``addPrioritizedJob-9``.
        :returns: the job id and the score Redis stored for it.
        """
        check_text("job name", name)
        priority = validate_priority(priority)
        data = {} if data is None else data
        encode_job_data(data)
        counter = _check_counter(counter)
        self._hold()
        self._set_pc_for(counter)
        job_id = self.scripts.add_prioritized_job(self.ctx, name, data, priority)
        return job_id, self._stored_score(job_id)

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
        check_text("job name", name)
        priority = check_int("priority", priority, 1, TEACHING_PRIORITY_CEILING, why=power_minus(2, 32, 1))
        if counter is not None:  # checked, like the name and priority, before pc changes
            counter = _check_counter(counter)
        self._hold()
        if counter is not None:
            self._set_pc_for(counter)
        if self._past_the_limit is None:
            source = past_the_limit_source(self.scripts.sources["addPrioritizedJob"].source)
            self._past_the_limit = ScriptCall(self.client, source)  # in the library of a shared Redis
        keys = self.scripts.sources["addPrioritizedJob"].keys(self.ctx)
        job_id = self._past_the_limit(
            keys=keys, args=[Keys.base(self.ctx), "", name, int(time.time() * 1000), "{}", priority]
        )
        return job_id, self._stored_score(job_id)

    def add(self, name: str, priority: int, data=None) -> str:
        """Add a prioritized job the ordinary way: the counter is the next INCR."""
        check_text("job name", name)
        validate_priority(priority)
        encode_job_data({} if data is None else data)
        self._hold()
        return self.scripts.add_prioritized_job(self.ctx, name, {} if data is None else data, priority)

    def add_waiting(self, name: str, data=None) -> str:
        """Add a job without priority: it goes to the wait list."""
        check_text("job name", name)
        encode_job_data({} if data is None else data)
        self._hold()
        return self.scripts.add_standard_job(self.ctx, name, {} if data is None else data)

    def add_batch(self, priorities: Sequence[int], name: str = "job") -> list[str]:
        """Add one job per priority, in order, through the pipelined bulk add."""
        check_text("job name", name)
        jobs = [(f"{name}-{i}", {"i": i}, validate_priority(p)) for i, p in enumerate(priorities)]
        self._hold()
        return self.scripts.add_prioritized_jobs(self.ctx, jobs)

    def _set_pc_for(self, counter: int) -> None:
        """Set ``pc`` so that the next ``INCR pc`` gives ``counter`` (mod 2**32)."""
        # INCR returns pc + 1; counter 0 is what INCR reaching 2**32 gives.
        self.scripts.set_priority_counter(self.ctx, (counter or TIER_SPAN) - 1)

    def set_counter(self, value: int) -> None:
        """Set ``pc`` itself: the next prioritized job gets ``value + 1``."""
        value = validate_priority_counter(value)
        self._hold()
        self.scripts.set_priority_counter(self.ctx, value)

    # -- reading ---------------------------------------------------------------

    def stored_score(self, job_id: str) -> float:
        self._hold()
        return self._stored_score(job_id)

    def _no_ghosts(self, jobs: Sequence[Job]) -> None:
        """Raise :class:`QueueDamaged` for a job the consume script took whose
        hash was gone: it wrote only its own fields there (no name, no data)."""
        gone = [job.id for job in jobs if job.data is None]
        if gone:
            self._damaged(gone, "taken by the consume script")

    def _hashes_present(self, ids: Sequence[str], where: str) -> None:
        """Raise :class:`QueueDamaged` if a job id in ``where`` has no job hash."""
        keys = [Keys.job(self.ctx, job_id) for job_id in ids]
        if not keys or self.client.exists(*keys) == len(keys):  # one command when all is well
            return
        with self.client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.exists(key)
            gone = [job_id for job_id, present in zip(ids, pipe.execute()) if not present]
        if gone:
            self._damaged(gone, where)

    def _damaged(self, gone: list[str], where: str) -> None:
        try:
            policy = self.client.info("memory").get("maxmemory_policy", "unknown")
        except Exception:
            policy = "unknown"
        raise QueueDamaged(
            f"{len(gone)} job id(s) {where} of {self.queue} have no job hash (e.g. job {gone[0]!r}): evicted or "
            f"deleted (this Redis's maxmemory-policy: {policy}); the queue is damaged: reset() it")

    def _stored_score(self, job_id: str) -> float:
        score = self.client.zscore(Keys.prioritized(self.ctx), job_id)
        if score is None:
            raise LookupError(f"job {job_id!r} is not in {Keys.prioritized(self.ctx)}")
        return float(score)

    def entries(self) -> list[Entry]:
        """The prioritized set in pop order, each score split into its two keys."""
        self._hold()
        entries = [Entry(job_id, score, *split_stored(score)) for job_id, score in self.scripts.prioritized(self.ctx)]
        self._hashes_present([entry.job_id for entry in entries], "in the prioritized set")
        return entries

    def waiting(self) -> list[str]:
        """Job ids on the wait list, next to be taken first."""
        self._hold()
        ids = list(reversed(self.client.lrange(Keys.wait(self.ctx), 0, -1)))
        self._hashes_present(ids, "on the wait list")
        return ids

    def priority_counter(self) -> int | None:
        self._hold()
        return self.scripts.priority_counter(self.ctx)

    def counts(self, priorities: Sequence[int]) -> dict[int, int]:
        asked = [validate_priority(p, lowest=0) for p in priorities]
        self._hold()
        return self.scripts.counts_per_priority(self.ctx, asked)

    # -- consuming -------------------------------------------------------------------

    def pop(self, token: str = "viz-worker") -> Job | None:
        """Take the next job through ``moveToActive-11``."""
        check_text("lock token", token)
        self._hold()
        job = self.scripts.move_to_active(self.ctx, token, 60_000)
        self._no_ghosts([] if job is None else [job])
        return job

    def drain(self, token: str = "viz-worker") -> list[Job]:
        """Take every job, in the order the consume script hands them out."""
        check_text("lock token", token)
        self._hold()
        jobs = self.scripts.drain(self.ctx, token, 60_000)
        self._no_ghosts(jobs)
        return jobs

    def compare(self, a: tuple[int, int], b: tuple[int, int]) -> Comparison:
        """Empty the queue, add job A and job B at the given ``(priority,
        counter)`` through the real script, then consume once."""
        a, b = checked_job("job A", a), checked_job("job B", b)
        self.reset()
        job_a, score_a = self.add_at_counter("A", *a)
        job_b, score_b = self.add_at_counter("B", *b)
        first = self.pop()
        if first is None:
            raise RuntimeError(f"the consume script found no job in {self.queue} right after two adds")
        return Comparison(score_a, score_b, "A" if first.id == job_a else "B", job_a, job_b)


def _where(client) -> str:
    """Which Redis a client reaches, for an error line (never a password)."""
    try:
        kwargs = client.connection_pool.connection_kwargs
    except AttributeError:
        return "the Redis Cluster" if client is not None else "the Redis"
    return kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"


def _in_one_line(method):
    """``method`` with a Redis error raised as its one line (see :mod:`echomq_viz.redis_side.redis_errors`)."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except BatchError:  # one line already, with the ids that went in
            raise
        except RedisError as exc:
            if hasattr(exc, "_render_traceback_"):  # said already, by a call inside this one
                raise
            raise one_line(exc, _where(getattr(self, "client", None))) from exc
    return call


for _name, _method in list(vars(Demo).items()):
    if callable(_method) and (_name == "__init__" or not _name.startswith("_")):
        setattr(Demo, _name, _in_one_line(_method))
del _name, _method
