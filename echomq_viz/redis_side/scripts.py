"""The real EchoMQ Lua scripts, run from Python.

:class:`Scripts` calls every script :mod:`echomq_viz.redis_side.lua_loader`
assembles from ``lua/`` (as a function of the server's library with FCALL,
:mod:`echomq_viz.redis_side.functions`, else with EVALSHA, loading the script
again on NOSCRIPT) and exposes them under EchoMQ's names; bulk adds and drains stream
pipelined chunks down one connection (:mod:`echomq_viz.redis_side.script_stream`). Each
method checks its arguments in Python first; the scripts check them again, so
a call that bypasses Python is refused as well, before anything is written.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from redis.exceptions import ResponseError

from echomq_viz.core.checks import check_bool, check_int, check_text, describe
from echomq_viz.core.keys import Keys, QueueContext, validate_job_id
from echomq_viz.redis_side.functions import ScriptCall
from echomq_viz.redis_side.lua_loader import LuaScript, load_scripts
from echomq_viz.core.notation import power_minus
from echomq_viz.core.score import MAX_PRIORITY_COUNTER, PRIORITY_LIMIT, PRIORITY_LIMIT_TEXT, split_score
from echomq_viz.redis_side.script_stream import ScriptStream

__all__ = [
    "Job",
    "DrainError",
    "BatchError",
    "Scripts",
    "validate_priority",
    "validate_priority_counter",
    "encode_job_data",
    "MAX_LOCK_MS",
    "MAX_TIMESTAMP_MS",
    "MAX_DUE_TIME",
]

MAX_LOCK_MS = 2**31 - 1  # about 24.8 days; far past any lock, far from PX overflow
MAX_TIMESTAMP_MS = 2**53 - 1  # whole milliseconds a double (and JavaScript) keeps exact
MAX_DUE_TIME = 2**41 - 1  # ms: (due + 1) * 0x1000 - 1, a delayed job's top score, stays below 2**53
DELAYED_SEQUENCE = 0x1000  # a delayed score is due time * 0x1000 + a sequence number below it
RETRY_REFUSALS = {  # retryJob-10's negative replies
    -1: "the job does not exist",
    -2: "its lock is missing",
    -6: "its lock holds another token",
    -3: "it is not in 'active'",
}


@dataclass(frozen=True)
class Job:
    """A job as the consume script handed it out."""

    id: str
    name: str
    data: Any
    priority: int
    score: float | None  # the stored score; None for a job from the wait list
    fields: Mapping[str, str] = field(repr=False)

    @property
    def source(self) -> str:
        return "wait" if self.score is None else "prioritized"

    @property
    def counter(self) -> int | None:
        """The arrival counter packed in the score (None for a wait-list job)."""
        return None if self.score is None else split_score(self.score)[1]


def _job_from_reply(reply: Sequence[Any]) -> Job:
    """A Job from moveToActive-11's reply ``{id, score or nil, flat hash}``."""
    job_id, score, flat = reply
    fields = dict(zip(flat[::2], flat[1::2]))
    return Job(
        id=job_id,
        name=fields.get("name", ""),
        data=json.loads(fields.get("data", "null")),
        priority=int(fields.get("priority", 0)),
        score=None if score is None else float(score),
        fields=fields,
    )


def validate_priority(priority: object, lowest: int = 1) -> int:
    """Return ``priority`` as an int after checking it is one in
    ``lowest..PRIORITY_LIMIT``; numpy integers are accepted, bools are not."""
    try:
        return check_int("priority", priority, lowest, PRIORITY_LIMIT, why=PRIORITY_LIMIT_TEXT)
    except ValueError as exc:
        if priority == 0:
            raise ValueError(f"{exc} (0 means no priority: use add_standard_job)") from None
        raise


def validate_priority_counter(value: object) -> int:
    """A value ``pc`` may be set to: ``0..MAX_PRIORITY_COUNTER``, so INCR stays exact."""
    return check_int("counter", value, 0, MAX_PRIORITY_COUNTER, why=f"{power_minus(2, 53, 2)}, so INCR pc stays exact")


def _check_timestamp(timestamp: int | None) -> int:
    if timestamp is None:
        return _now_ms()
    return check_int("timestamp", timestamp, 1, MAX_TIMESTAMP_MS)


def encode_job_data(data: object) -> str:
    """Job data as the compact JSON text the scripts store, after checking it
    has a JSON form (no NaN or infinity) that UTF-8 can encode."""
    try:
        text = json.dumps(data, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except TypeError as exc:
        raise TypeError(f"job data must be JSON-serialisable (no NaN/inf), got {describe(data)}: {exc}") from None
    except ValueError as exc:  # NaN, infinity, a container holding itself
        raise ValueError(f"job data must be JSON-serialisable (no NaN/inf), got {describe(data)}: {exc}") from None
    return check_text("job data", text)


class DrainError(ResponseError):
    """Redis refused a call of a drain; ``jobs`` holds every job the drain
    took (active and locked) before and after it."""

    def __init__(self, message: str, jobs: list["Job"]) -> None:
        super().__init__(message)
        self.jobs = jobs


class BatchError(ResponseError):
    """Redis refused a job of a bulk add (e.g. out of memory); ``ids``
    holds the jobs that went in all the same, in order."""

    def __init__(self, message: str, ids: list[str]) -> None:
        super().__init__(message)
        self.ids = ids


def _now_ms() -> int:
    return int(time.time() * 1000)


class Scripts:
    """The EchoMQ scripts bound to one redis-py client.

    The client should decode responses (``decode_responses=True``), as the
    clients made by :mod:`echomq_viz.redis_side.server` do.
    """

    def __init__(self, client: Any, scripts: Mapping[str, LuaScript] | None = None) -> None:
        self.client = client
        self.sources = dict(scripts) if scripts is not None else load_scripts()
        self._registered = {name: ScriptCall(client, script.source) for name, script in self.sources.items()}

    def run(self, command: str, ctx: QueueContext, args: Sequence[Any]) -> Any:
        """Run a script by command name with its queue's KEYS and raw ARGV.

        No Python validation: for showing and testing what the Lua itself
        accepts or refuses.
        """
        script = self.sources.get(command)
        if script is None:
            raise KeyError(f"no script {command!r}; known: {', '.join(sorted(self.sources))}")
        return self._registered[command](keys=script.keys(ctx), args=list(args))

    # -- adding ---------------------------------------------------------------

    def _add_prioritized_args(
        self, ctx: QueueContext, name: object, data: object, priority: object,
        job_id: object, timestamp: int | None,
    ) -> list[Any]:
        """The checked ARGV of addPrioritizedJob-9."""
        check_text("job name", name)
        priority = validate_priority(priority)
        custom = "" if job_id is None else validate_job_id(job_id)
        ts = _check_timestamp(timestamp)
        return [Keys.base(ctx), custom, name, ts, encode_job_data(data), priority]

    def _stream(self, command: str, ctx: QueueContext) -> ScriptStream:
        script = self.sources[command]
        keys = script.keys(ctx)
        client = self.client
        if hasattr(client, "get_node_from_key"):
            # A cluster pipeline refuses EVALSHA; every key of a queue lives in
            # one slot, so the node that owns them takes the calls directly.
            client = client.get_node_from_key(keys[0]).redis_connection
        return ScriptStream(client, script.source, keys, function=ScriptCall(client, script.source).function())

    def add_prioritized_job(
        self, ctx: QueueContext, name: str, data: Any, priority: int,
        job_id: str | None = None, *, timestamp: int | None = None,
    ) -> str:
        """Run ``addPrioritizedJob-9``; return the job id.

        :param priority: an int in ``1..PRIORITY_LIMIT``; lower runs first.
        :param job_id: a custom id, or None for the next auto id. A custom id
            that exists already is not added again; its id comes back.
        """
        args = self._add_prioritized_args(ctx, name, data, priority, job_id, timestamp)
        return self._registered["addPrioritizedJob"](keys=self.sources["addPrioritizedJob"].keys(ctx), args=args)

    def add_prioritized_jobs(
        self, ctx: QueueContext, jobs: Iterable[tuple], *, chunk_size: int = 1000,
    ) -> list[str]:
        """Add many prioritized jobs through ``addPrioritizedJob-9``, pipelined.

        :param jobs: ``(name, data, priority)`` or ``(name, data, priority,
            job_id)`` tuples, added in order (so arrival order is kept).
        :returns: the job ids, in the same order.
        :raises BatchError: when Redis refused a job (out of memory, say):
            no chunk is sent after it, and its ``ids`` are the jobs that went in.

        Every job is validated before the first is sent.
        """
        chunk_size = check_int("chunk_size", chunk_size, 1)
        prepared = []
        for job in jobs:
            if not isinstance(job, (tuple, list)):
                raise TypeError(f"each job must be a (name, data, priority[, job_id]) tuple, got {describe(job)}")
            if not 3 <= len(job) <= 4:
                raise ValueError(f"each job must be a (name, data, priority[, job_id]) tuple, got {describe(job)}")
            name, data, priority, *custom = job
            prepared.append(self._add_prioritized_args(
                ctx, name, data, priority, custom[0] if custom else None, None))
        if not prepared:
            return []
        ids: list[str] = []
        refused: list[ResponseError] = []

        def take(replies: list[Any]) -> None:
            for reply in replies:
                (refused if isinstance(reply, ResponseError) else ids).append(reply)

        with self._stream("addPrioritizedJob", ctx) as stream:
            for start in range(0, len(prepared), chunk_size):
                if refused:
                    break
                stream.send([stream.call(args) for args in prepared[start:start + chunk_size]])
                if stream.in_flight > 1:
                    take(stream.receive())
            while stream.in_flight:
                take(stream.receive())
        if refused:
            raise BatchError(f"Redis refused a job: {refused[0]} ({len(ids)} of {len(prepared)} jobs "
                             f"went in: see .ids)", ids)
        return ids

    def add_standard_job(
        self, ctx: QueueContext, name: str, data: Any, job_id: str | None = None,
        *, timestamp: int | None = None,
    ) -> str:
        """Run ``addStandardJob-9``: a job without priority, on the wait list."""
        check_text("job name", name)
        custom = "" if job_id is None else validate_job_id(job_id)
        ts = _check_timestamp(timestamp)
        keys = self.sources["addStandardJob"].keys(ctx)
        args = [Keys.base(ctx), custom, name, ts, encode_job_data(data)]
        return self._registered["addStandardJob"](keys=keys, args=args)

    # -- consuming ------------------------------------------------------------

    def move_to_active(
        self, ctx: QueueContext, token: str, lock_ms: int = 30_000, *, timestamp: int | None = None,
    ) -> Job | None:
        """Run ``moveToActive-11``: take the next job (wait list first, then the
        smallest score), lock it, and return it; None when there is none."""
        token = check_text("lock token", token)
        lock_ms = check_int("lock_ms", lock_ms, 1, MAX_LOCK_MS)
        ts = _check_timestamp(timestamp)
        keys = self.sources["moveToActive"].keys(ctx)
        reply = self._registered["moveToActive"](keys=keys, args=[Keys.base(ctx), ts, token, lock_ms])
        return _job_from_reply(reply) if reply else None

    def drain(self, ctx: QueueContext, token: str, lock_ms: int = 30_000, *,
              batch_size: int = 250) -> list[Job]:
        """Run ``moveToActive-11`` until a call finds nothing; return every job
        taken, in the order handed out.

        Calls go in pipelined batches of ``batch_size``, the next batch sent
        before the last one's replies are read (250 calls, about 130 kB, fit
        a socket's buffer, so that send seldom waits for Redis). With
        producers adding meanwhile, a call after an empty one may take a job
        again: that job is returned too, as is every job of a batch in flight.

        :raises DrainError: when Redis refused a call; its ``jobs`` are the
            jobs taken (active and locked) all the same.
        """
        token = check_text("lock token", token)
        lock_ms = check_int("lock_ms", lock_ms, 1, MAX_LOCK_MS)
        batch_size = check_int("batch_size", batch_size, 1)
        base = Keys.base(ctx)
        taken: list[Job] = []
        refused: ResponseError | None = None
        found_nothing = False
        with self._stream("moveToActive", ctx) as stream:
            while stream.in_flight or not (found_nothing or refused):
                if not (found_nothing or refused):
                    stream.send([stream.call([base, _now_ms(), token, lock_ms])] * batch_size)
                if stream.in_flight > 1 or found_nothing or refused:
                    for reply in stream.receive():
                        if isinstance(reply, ResponseError):
                            refused = refused or reply
                        elif reply:
                            taken.append(_job_from_reply(reply))
                        else:
                            found_nothing = True
        if refused:
            raise DrainError(f"{refused} ({len(taken)} jobs taken all the same: see .jobs)", taken)
        return taken

    # -- changing and counting --------------------------------------------------

    def change_priority(
        self, ctx: QueueContext, job_id: str, priority: int, *, lifo: bool = False,
    ) -> bool:
        """Run ``changePriority-7``; return False when the job does not exist.

        A queued job is re-scored: with a fresh counter (back of the new tier),
        or with ``lifo`` at ``priority * 2**32`` (front of the new tier);
        priority 0 puts it on the wait list (with ``lifo`` at its front).
        """
        validate_job_id(job_id, existing=True)
        priority = validate_priority(priority, lowest=0)
        check_bool("lifo", lifo)
        keys = self.sources["changePriority"].keys(ctx)
        args = [priority, Keys.base(ctx), job_id, "1" if lifo else "0"]
        return self._registered["changePriority"](keys=keys, args=args) == 0

    # -- delayed jobs and retries ----------------------------------------------------

    def add_delayed_job(
        self, ctx: QueueContext, name: str, data: Any, priority: int, delay: int,
        job_id: str | None = None, *, timestamp: int | None = None,
    ) -> str:
        """Run ``addDelayedJob-6``: the job waits in ``delayed`` until
        ``timestamp + delay``; its priority (0 = none) scores it only then."""
        check_text("job name", name)
        priority = validate_priority(priority, lowest=0)
        custom = "" if job_id is None else validate_job_id(job_id)
        ts = _now_ms() if timestamp is None else check_int("timestamp", timestamp, 0, MAX_DUE_TIME - 1)
        delay = check_int("delay", delay, 1, MAX_DUE_TIME - ts)
        return self.run("addDelayedJob", ctx,
                        [Keys.base(ctx), custom, name, ts, encode_job_data(data), priority, delay])

    def promote(self, ctx: QueueContext, job_id: str) -> bool:
        """Run ``promote-9``: queue a delayed job now; False when it is not delayed."""
        validate_job_id(job_id, existing=True)
        return self.run("promote", ctx, [Keys.base(ctx), job_id]) == 0

    def retry_job(self, ctx: QueueContext, job_id: str, token: str, *, reason: str = "",
                  lifo: bool = False, timestamp: int | None = None) -> None:
        """Run ``retryJob-10``: an active job whose attempt failed goes back to
        its queue (the back of its tier), due delayed jobs promoted first.

        :param token: the lock token the job was taken with; ``"0"`` skips the check.
        :raises LookupError: when the script refused, naming why (nothing changed).
        """
        validate_job_id(job_id, existing=True)
        check_text("lock token", token)
        check_text("failure reason", reason, empty=True)
        check_bool("lifo", lifo)
        ts = _check_timestamp(timestamp)
        reply = self.run("retryJob", ctx, [Keys.base(ctx), ts, "RPUSH" if lifo else "LPUSH", job_id, token, reason])
        if reply != 0:
            raise LookupError(f"retryJob-10 did not retry job {job_id!r}: "
                              f"{RETRY_REFUSALS.get(reply, 'unknown reply')} (reply {reply})")

    def delayed_jobs(self, ctx: QueueContext) -> list[tuple[str, int, int]]:
        """The ``delayed`` set, next due first: ``(job id, due time ms, sequence)``."""
        members = self.client.zrange(Keys.delayed(ctx), 0, -1, withscores=True)
        return [(job_id, *divmod(int(score), DELAYED_SEQUENCE)) for job_id, score in members]

    def counts_per_priority(self, ctx: QueueContext, priorities: Iterable[int]) -> dict[int, int]:
        """Run ``getCountsPerPriority-2``: jobs per tier (0 = the wait list)."""
        asked = [validate_priority(p, lowest=0) for p in priorities]
        if not asked:
            return {}
        counts = self._registered["getCountsPerPriority"](
            keys=self.sources["getCountsPerPriority"].keys(ctx), args=asked
        )
        return dict(zip(asked, (int(c) for c in counts)))

    # -- plain reads and demo housekeeping ------------------------------------

    def prioritized(self, ctx: QueueContext) -> list[tuple[str, float]]:
        """The prioritized set in pop order: ``(job id, stored score)`` pairs."""
        return [(m, float(s)) for m, s in self.client.zrange(Keys.prioritized(ctx), 0, -1, withscores=True)]

    def priority_counter(self, ctx: QueueContext) -> int | None:
        """The current value of ``pc``; None when it does not exist (reset)."""
        value = self.client.get(Keys.pc(ctx))
        return None if value is None else int(value)

    def set_priority_counter(self, ctx: QueueContext, value: int) -> None:
        """Set ``pc`` so that the next prioritized job gets counter ``value + 1``."""
        value = validate_priority_counter(value)
        self.client.set(Keys.pc(ctx), value)

    def reset(self, ctx: QueueContext) -> int:
        """Delete every key of this one queue, ``emq:{Q}:*``, and nothing else.

        :returns: how many keys were deleted.
        """
        deleted = 0
        batch: list[str] = []
        for key in self.client.scan_iter(match=Keys.pattern(ctx), count=1000):
            batch.append(key)
            if len(batch) >= 500:
                deleted += self.client.unlink(*batch)
                batch.clear()
        if batch:
            deleted += self.client.unlink(*batch)
        return deleted
