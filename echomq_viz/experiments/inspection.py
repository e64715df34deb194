"""A read-only inspector for a real queue's prioritized set.

:func:`inspect_queue` reads the sorted set ``<prefix>:<queue>:prioritized`` of
any EchoMQ or stock BullMQ queue in chunks, splits every score exactly into
(tier, counter) and returns a frozen :class:`QueueReport` with the numbers to
plot and the :class:`Finding` records about what breaks the priority order
(both from :mod:`echomq_viz.core.queue_report`, the pure half).

Gentle on a production server: only read commands (``TYPE``, ``EXISTS``,
``ZCARD``, ``ZRANGEBYSCORE ... LIMIT``, ``GET``, ``LLEN``, ``HGET``),
pipelined without MULTI, so an ACL user limited to ``+@read`` may run it;
each ``ZRANGEBYSCORE`` asks for at most ``chunk_size`` members. Replies stay
bytes, since a member need not be UTF-8 (such ids are shown with ``\\x``
escapes and are a finding).

The name is taken as it appears in the keys: ``queue="{Q}"`` (or
``QueueContext("Q")``) for the EchoMQ queue ``Q``, ``queue="orders",
prefix="bull"`` for a BullMQ one. Chunks follow a score cursor rather than
index ranges, so a worker popping jobs meanwhile makes it skip none; ``pc``
and the wait list are read after the set, so every counter read came from an
INCR that ``pc`` already reflects.
"""

from __future__ import annotations

import functools
import math
import re
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np
import redis
from redis.client import NEVER_DECODE

from echomq_viz.core.checks import check_bool, check_int, check_str, describe
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.core.queue_report import (
    WRAP_WARNING, Collision, Finding, PriorityMismatch, QueueReport, decode_scores, find_collisions,
)
from echomq_viz.redis_side.replies import reply_text

__all__ = [
    "CHUNK_SIZE", "WRAP_WARNING", "Collision", "Finding", "PriorityMismatch", "QueueReport",
    "check_names", "decode_scores", "inspect_queue",
]

CHUNK_SIZE = 1_000  # members per ZRANGEBYSCORE: ~0.3 ms of server time each on a 1M-member set
_BAD_NAME = re.compile(r"[\s\x00-\x1f\x7f]")
_RAW = {NEVER_DECODE: []}  # redis-py option: this reply stays bytes


# -- reading -----------------------------------------------------------------------------


def _decode_ids(members: list[bytes]) -> tuple[list[str], tuple[str, ...]]:
    """Member bytes as str ids, and the ids of the members that are not UTF-8."""
    joined = b"\n".join(members)
    if members and joined.count(b"\n") == len(members) - 1:  # one decode for all: fast
        try:
            return joined.decode().split("\n"), ()
        except UnicodeDecodeError:
            pass
    ids, undecodable = [], []
    for member in members:
        try:
            ids.append(member.decode())
        except UnicodeDecodeError:
            ids.append(member.decode("utf-8", "backslashreplace"))
            undecodable.append(ids[-1])
    return ids, tuple(undecodable)


_text = functools.partial(reply_text, errors="backslashreplace")  # a stray byte stays readable in a report


def _check_name(what: str, value: object) -> str:
    check_str(what, value)
    bad = _BAD_NAME.search(value)
    if bad:
        raise ValueError(f"{what} must not contain whitespace or control characters, got {bad.group()!r} in {value!r}")
    return value


def _resolve_queue(queue: object, prefix: object) -> tuple[str, str, str]:
    """Return ``(prefix, queue name as in the keys, key base)``."""
    if isinstance(queue, QueueContext):
        if prefix not in ("emq", queue.prefix):  # "emq" is the default: not given
            raise ValueError(f"prefix must be the QueueContext's {queue.prefix!r} (or left out), got {prefix!r}")
        base = Keys.base(queue)
        return queue.prefix, base[len(queue.prefix) + 1:-1], base
    _check_name("key prefix", prefix)
    _check_name("queue name", queue)
    return prefix, queue, f"{prefix}:{queue}:"  # BullMQ's own layout, name used verbatim


def check_names(queue: object, prefix: object = "emq") -> str:
    """The key base ``<prefix>:<queue>:`` :func:`inspect_queue` would read, after
    the checks it makes of both names first (a view checks a typed name with it
    before it connects)."""
    return _resolve_queue(queue, prefix)[2]


def _check_args(client: object, chunk_size: object, progress: object, wrap_warning: object,
                check_jobs: object) -> tuple[int, int]:
    """``(chunk_size, wrap_warning)`` as ints, after checking every argument."""
    if not all(hasattr(client, name) for name in ("pipeline", "execute_command")):
        # the type only: a URL passed by mistake may hold a password
        raise TypeError(f"client must be a redis-py client (redis.Redis), got {type(client).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, got {describe(progress)}")
    check_bool("check_jobs", check_jobs)
    return check_int("chunk_size", chunk_size, 1), check_int("wrap_warning", wrap_warning, 0)


_EXPECTED_TYPES = {"prioritized": "zset", "wait": "list", "pc": "string"}


def _check_types(client: Any, keys: Mapping[str, str]) -> dict[str, str]:
    with client.pipeline(transaction=False) as pipe:
        for name in _EXPECTED_TYPES:
            pipe.execute_command("TYPE", keys[name], **_RAW)
        found = dict(zip(_EXPECTED_TYPES, (_text(t) for t in pipe.execute())))
    for name, expected in _EXPECTED_TYPES.items():
        if found[name] not in ("none", expected):
            raise ValueError(f"{keys[name]} is a {found[name]}, not a {expected}: is "
                             f"{keys[name].rsplit(':', 1)[0]!r} really a queue?")
    return found


def _layout_hint(client: Any, prefix: str, queue: str) -> str | None:
    # Nothing under "emq:Q:"; maybe the EchoMQ queue Q, whose keys are "emq:{Q}:".
    tagged = f"{prefix}:{{{queue}}}:"
    if "{" in queue or not client.exists(*(tagged + t for t in ("prioritized", "wait", "id", "meta"))):
        return None
    return (f"wrong name? no keys under {prefix}:{queue}: but the EchoMQ layout {tagged} exists: inspect "
            f"queue {'{' + queue + '}'!r} or QueueContext({queue!r})")


def _score_pairs(rows: list) -> tuple[list[bytes], np.ndarray]:
    """A ``WITHSCORES`` reply as (members, scores): RESP3 pairs or a RESP2 flat list."""
    if rows and isinstance(rows[0], (list, tuple)):  # RESP3: [[member, double], ...]
        return [m for m, _ in rows], np.array([s for _, s in rows], dtype=np.float64)
    return rows[0::2], np.array(rows[1::2], dtype=bytes).astype(np.float64)  # b"4294967297", b"inf"


def _read_set(client: Any, key: str, chunk_size: int, total: int,
              progress: Callable[[int, int], object] | None) -> tuple[list[bytes], np.ndarray]:
    """Every (member, score) of the set, in score order, by score cursor."""
    members: list[bytes] = []
    chunks: list[np.ndarray] = []
    low, cursor, offset = "-inf", None, 0
    while True:
        rows = client.execute_command("ZRANGEBYSCORE", key, low, "+inf", "WITHSCORES", "LIMIT", offset,
                                      chunk_size, **_RAW)
        got, scores = _score_pairs(rows)
        if not got:
            break
        members.extend(got)
        chunks.append(scores)
        last = float(scores[-1])
        if cursor is not None and last == cursor:
            offset += len(got)  # the whole chunk sat at the cursor score
        else:  # repr() round-trips a double exactly; Redis parses it back with strtod
            cursor, low, offset = last, repr(last), int(np.count_nonzero(scores == last))
        if progress is not None:
            progress(len(members), max(total, len(members)))
        if len(got) < chunk_size:
            break
    return members, (np.concatenate(chunks) if chunks else np.empty(0, dtype=np.float64))


def _parse_priority(raw: str) -> int | None:
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        value = float(raw)
    except ValueError:
        return None
    return int(value) if math.isfinite(value) and value == math.floor(value) else None


def _read_job_priorities(client: Any, base: str, members: list[bytes], ids: list[str], tiers: np.ndarray,
                         chunk_size: int) -> tuple[tuple[PriorityMismatch, ...], tuple[str, ...], tuple[str, ...]]:
    """Mismatched priorities, ids whose hash lacks ``priority``, and ids whose hash is gone."""
    mismatches: list[PriorityMismatch] = []
    missing: list[str] = []
    gone: list[str] = []
    raw_base = base.encode()
    for start in range(0, len(members), chunk_size):
        with client.pipeline(transaction=False) as pipe:
            for member in members[start:start + chunk_size]:
                pipe.execute_command("HGET", raw_base + member, "priority", **_RAW)
                pipe.exists(raw_base + member)
            replies = pipe.execute()
        for i, (value, exists) in enumerate(zip(replies[::2], replies[1::2]), start=start):
            if not exists:
                gone.append(ids[i])
            elif value is None:
                missing.append(ids[i])
            elif _parse_priority(_text(value)) != int(tiers[i]):
                mismatches.append(PriorityMismatch(ids[i], _text(value), int(tiers[i])))
    return tuple(mismatches), tuple(missing), tuple(gone)


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


def inspect_queue(client: Any, queue: str | QueueContext, prefix: str = "emq", *, chunk_size: int = CHUNK_SIZE,
                  progress: Callable[[int, int], object] | None = None, check_jobs: bool = True,
                  wrap_warning: int = WRAP_WARNING) -> QueueReport:
    """Read a queue's prioritized set, decode it and look for trouble. Read-only.

    :param client: a redis-py client (``redis.Redis``), decoding replies or not.
    :param queue: the queue name as it appears in the keys (``"{Q}"`` for the
        EchoMQ queue ``Q``, ``"orders"`` for a BullMQ queue ``orders``), or a
        :class:`~echomq_viz.core.keys.QueueContext`, which carries its own prefix.
    :param prefix: the key prefix: ``"emq"`` for EchoMQ, ``"bull"`` is
        BullMQ's default. With a QueueContext leave it at its default.
    :param chunk_size: members per ``ZRANGEBYSCORE`` (and ``HGET`` per
        pipeline), an int ``>= 1``; larger chunks are faster to read but each
        command holds the server longer.
    :param progress: called as ``progress(done, total)`` after each chunk;
        once with ``(0, 0)`` for an empty set.
    :param check_jobs: read each job hash's ``priority`` field to compare it
        with the score's tier.
    :param wrap_warning: report when fewer adds than this are left before
        the arrival counter wraps to 0.
    :raises TypeError: for an argument of the wrong type.
    :raises ValueError: for a bad name or chunk size, or a key of the wrong type.
    :raises redis.exceptions.ConnectionError: when the server cannot be reached.
    """
    chunk_size, wrap_warning = _check_args(client, chunk_size, progress, wrap_warning, check_jobs)
    prefix, queue_name, base = _resolve_queue(queue, prefix)
    keys = {"prioritized": base + "prioritized", "pc": base + "pc", "wait": base + "wait", "job": base + "<id>"}
    try:
        found = _check_types(client, keys)
        hint = _layout_hint(client, prefix, queue_name) if set(found.values()) == {"none"} else None
        total = int(client.zcard(keys["prioritized"]))
        members, scores = _read_set(client, keys["prioritized"], chunk_size, total, progress)
        if progress is not None and not members:
            progress(0, 0)
        # Read after the set: every counter read above came from an INCR that pc includes.
        with client.pipeline(transaction=False) as pipe:
            pipe.execute_command("GET", keys["pc"], **_RAW)
            pipe.llen(keys["wait"])
            raw_pc, wait_length = pipe.execute()
        ids, undecodable = _decode_ids(members)
        tiers, counters = decode_scores(scores)
        mismatches, missing, gone = (), (), ()
        if check_jobs and members:
            mismatches, missing, gone = _read_job_priorities(client, base, members, ids, tiers, chunk_size)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise type(exc)(f"cannot inspect {base}: {exc}") from exc
    try:
        pc = None if raw_pc is None else int(_text(raw_pc))
    except ValueError:
        raise ValueError(f"{keys['pc']} holds {_text(raw_pc)!r}, not an integer counter") from None
    levels, counts = np.unique(tiers, return_counts=True)
    return QueueReport(
        prefix=prefix, queue=queue_name, keys=MappingProxyType(keys), total=len(ids),
        wait_length=int(wait_length), pc=pc, job_ids=_frozen(np.array(ids, dtype=object)),
        scores=_frozen(scores), tiers=_frozen(tiers), counters=_frozen(counters),
        tier_counts=MappingProxyType(dict(zip(levels.tolist(), counts.tolist()))),
        collisions=find_collisions(ids, scores), priority_mismatches=mismatches, missing_priority=missing,
        checked_jobs=check_jobs, wrap_warning=wrap_warning, hint=hint, undecodable=undecodable,
        missing_hash=gone,
    )
