"""A read-only inspector for a real queue's prioritized set.

:func:`inspect_queue` points at any Redis that holds an EchoMQ or stock
BullMQ queue, reads the sorted set ``<prefix>:<queue>:prioritized`` in
chunks, splits every score into its two sort keys (tier, counter) exactly,
and returns a :class:`QueueReport`: the decoded numbers for plotting (see
:attr:`QueueReport.plottable` for :func:`echomq_viz.plots.update_bands`) and
findings about what breaks the priority order.

Read-only by construction
-------------------------
It sends only read commands: ``TYPE``, ``EXISTS``, ``ZCARD``,
``ZRANGEBYSCORE ... WITHSCORES LIMIT``, ``GET``, ``LLEN`` and ``HGET``
(pipelined without MULTI). No write, no EVAL, no MULTI: a Redis ACL user
limited to ``+@read`` may run it (the tests prove this on a real server).

Queue names
-----------
BullMQ builds keys as ``<prefix>:<queue>:<type>`` from whatever queue name it
was given, so the inspector takes the name *as it appears in the keys*:

- an EchoMQ queue ``Q`` is ``queue="{Q}"`` (prefix ``emq``), or pass
  ``QueueContext("Q")`` and the inspector builds ``emq:{Q}:`` with
  :meth:`Keys.base`;
- a stock BullMQ queue ``orders`` with prefix ``bull`` is
  ``queue="orders", prefix="bull"``.

:class:`~echomq_viz.keys.QueueContext` refuses braces and ``:`` because a
queue *we write to* must keep its keys in one cluster slot and must not
collide with another queue's keys. The inspector writes nothing, so it
accepts any name a real deployment may already use and only refuses what
cannot be a key part here: a non-str, an empty string, whitespace or
control characters. When no key exists under the given name but the
EchoMQ layout ``<prefix>:{<queue>}:`` does, a finding says so.

Reading a live queue
--------------------
Chunks follow a score cursor (the last score read, plus how many members
at that score were already read), not index ranges: when a worker pops jobs
from the front between two chunks, index ranges would skip jobs, the cursor
does not. ``pc`` and the wait list are read after the set, so every counter
read was handed out by an INCR that ``pc`` already reflects. The report is
still a chunk-by-chunk snapshot: a job re-scored mid-read may be missed or
seen twice.

Errors
------
Bad arguments raise :class:`TypeError` / :class:`ValueError` before any
command is sent. An unreachable server raises redis-py's own
``redis.exceptions.ConnectionError`` (or ``TimeoutError``), re-raised with
the key base in the message: the caller owns the client and already catches
redis-py's errors, so no new exception type is introduced (this module does
not depend on :mod:`echomq_viz.server`). A key of the wrong type (e.g. a
hash at ``...:prioritized``) raises :class:`ValueError`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import redis

from .keys import Keys, QueueContext
from .score import COUNTER_MASK, MAX_SCORE, PRIORITY_LIMIT, TIER_SPAN, split_scores_array

__all__ = [
    "WRAP_WARNING",
    "Collision",
    "PriorityMismatch",
    "QueueReport",
    "decode_scores",
    "inspect_queue",
]

WRAP_WARNING = 1_000_000  # adds left before the counter wraps: fewer is a finding
EXAMPLES = 3  # ids quoted per finding line

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_BAD_NAME = re.compile(r"[\s\x00-\x1f\x7f]")
_AUTO_ID = re.compile(r"[0-9]+")


# -- the report ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Collision:
    """Members sharing one score, in the order Redis keeps them (member bytes).

    :param fifo_broken: True when every id is an auto id (digits) and that
        byte order is not their numeric (arrival) order, e.g. ``"10"`` before
        ``"9"``; False when it is; None for custom ids (arrival unknown).
    """

    score: float
    job_ids: tuple[str, ...]
    fifo_broken: bool | None


@dataclass(frozen=True)
class PriorityMismatch:
    """A job whose hash field ``priority`` disagrees with its score's tier."""

    job_id: str
    stored: str  # the raw field value
    tier: int


@dataclass(frozen=True, eq=False)
class QueueReport:
    """What :func:`inspect_queue` read, decoded. Arrays are read-only and in
    pop order (score, then member bytes), index ``i`` describing one job.

    :param prefix: the key prefix, e.g. ``"emq"``.
    :param queue: the queue name as it appears in the keys, e.g. ``"{Q}"``.
    :param keys: the keys read, by type: ``prioritized``, ``pc``, ``wait``,
        and ``job`` (the job-hash pattern ``<base><id>``).
    :param total: jobs read from the prioritized set.
    :param wait_length: jobs on the wait list (they run before all of these).
    :param pc: the priority counter, or None when the key does not exist.
    :param job_ids: ``str`` ids (object array).
    :param scores: the stored scores, ``float64``.
    :param tiers: ``int64``, ``floor(score / 2**32)``, exact.
    :param counters: ``int64``, ``score mod 2**32``, exact.
    :param tier_counts: jobs per tier, tiers ascending.
    :param collisions: every group of two or more members sharing a score.
    :param priority_mismatches: jobs whose hash ``priority`` disagrees with
        the score's tier (empty when ``checked_jobs`` is False).
    :param missing_priority: ids whose job hash or ``priority`` field is
        missing (empty when ``checked_jobs`` is False).
    :param checked_jobs: whether job hashes were read.
    :param wrap_warning: fewer adds than this before the counter wraps is a
        finding.
    :param hint: a note when nothing exists under this name but the EchoMQ
        layout does, else None.
    """

    prefix: str
    queue: str
    keys: Mapping[str, str]
    total: int
    wait_length: int
    pc: int | None
    job_ids: np.ndarray
    scores: np.ndarray
    tiers: np.ndarray
    counters: np.ndarray
    tier_counts: Mapping[int, int]
    collisions: tuple[Collision, ...]
    priority_mismatches: tuple[PriorityMismatch, ...]
    missing_priority: tuple[str, ...]
    checked_jobs: bool
    wrap_warning: int = WRAP_WARNING
    hint: str | None = None

    # -- derived numbers ---------------------------------------------------------------

    @property
    def base(self) -> str:
        """The key base, ``<prefix>:<queue>:``."""
        return f"{self.prefix}:{self.queue}:"

    @property
    def max_tier(self) -> int:
        """The highest tier present (0 when empty)."""
        return int(self.tiers.max()) if self.total else 0

    @property
    def plottable(self) -> np.ndarray:
        """Mask of the jobs :func:`echomq_viz.plots.update_bands` accepts:
        whole scores in ``0..MAX_SCORE``. The bands figure draws one band per
        tier from 1, so also cap the tier to what you want to see::

            shown = report.plottable & (report.tiers <= 10)
            update_bands(bands, report.scores[shown], int(report.tiers[shown].max()))
        """
        return ~self.irregular & (self.scores >= 0) & (self.scores <= MAX_SCORE)

    @property
    def pc_counter(self) -> int | None:
        """``pc mod 2**32``: the counter the last add received."""
        return None if self.pc is None else self.pc % TIER_SPAN

    @property
    def adds_until_wrap(self) -> int:
        """How many more adds until one receives counter 0 (the wrap).

        With no ``pc`` the next add gets counter 1, as after a reset.
        """
        return TIER_SPAN - (self.pc_counter or 0)

    @property
    def wraps(self) -> int:
        """How often the counter has wrapped since ``pc`` was last reset."""
        return 0 if self.pc is None else max(self.pc, 0) // TIER_SPAN

    @property
    def over_limit(self) -> np.ndarray:
        """Mask of jobs whose tier exceeds PRIORITY_LIMIT (inexact scores)."""
        return self.tiers > PRIORITY_LIMIT

    @property
    def negative(self) -> np.ndarray:
        """Mask of jobs with a negative tier (BullMQ accepts negative priorities)."""
        return self.tiers < 0

    @property
    def irregular(self) -> np.ndarray:
        """Mask of scores no getPriorityScore call yields: fractional or infinite."""
        s = self.scores
        with np.errstate(invalid="ignore"):
            return ~np.isfinite(s) | (s != np.floor(s))

    @property
    def ahead_of_pc(self) -> np.ndarray:
        """Mask of jobs whose counter exceeds ``pc mod 2**32`` (0 without pc).

        Without a wrap or reset every counter is at most the last INCR value,
        so each such job was added before ``pc`` wrapped past 2**32 or was
        reset; the next adds get smaller counters and overtake it in its tier.
        """
        return self.counters > (self.pc_counter or 0)

    @property
    def clean(self) -> bool:
        return not self.findings

    # -- text -------------------------------------------------------------------------------

    @property
    def findings(self) -> list[str]:
        """One line per kind of problem, ``"<what>: <how many>, e.g. ..."``,
        most serious first; empty when the queue is clean."""
        lines: list[str] = []
        if self.hint:
            lines.append(self.hint)
        irregular = self.irregular
        if irregular.any():
            lines.append(
                f"fractional or infinite scores (no getPriorityScore call writes them): "
                f"{_count(irregular.sum(), 'job')}, e.g. {_examples(self.job_ids[irregular])}"
            )
        over = self.over_limit & ~irregular
        if over.any():
            lo, hi = int(self.tiers[over].min()), int(self.tiers[over].max())
            where = f"tier {lo:,}" if lo == hi else f"tiers {lo:,}..{hi:,}"
            lines.append(
                f"priority above {PRIORITY_LIMIT:,} (2**21 - 1): {_count(over.sum(), 'job')} in "
                f"{where}; their scores pass 2**53 and are rounded, so arrival order is lost: "
                f"e.g. {_examples(self.job_ids[over])}"
            )
        if self.collisions:
            members = sum(len(c.job_ids) for c in self.collisions)
            first = self.collisions[0]
            lines.append(
                f"equal scores: {_count(len(self.collisions), 'score')} shared by "
                f"{_count(members, 'job')}; Redis orders them by member bytes, not arrival: "
                f"e.g. score {_num(first.score)} holds {_examples(first.job_ids)}"
            )
            broken = [c for c in self.collisions if c.fifo_broken]
            if broken:
                c = broken[0]
                late, early = _first_inversion(c.job_ids)
                lines.append(
                    f"FIFO broken: auto ids leave out of arrival order in "
                    f"{_count(len(broken), 'equal-score group')}: e.g. job {late!r} pops before "
                    f"job {early!r} at score {_num(c.score)}"
                )
        if self.priority_mismatches:
            m = self.priority_mismatches[0]
            lines.append(
                f"job priority field disagrees with the score's tier: "
                f"{_count(len(self.priority_mismatches), 'job')}, e.g. job {m.job_id!r} stores "
                f"{m.stored!r}, score tier {m.tier:,}"
            )
        if self.missing_priority:
            lines.append(
                f"job hash or its priority field missing: {_count(len(self.missing_priority), 'job')}, "
                f"e.g. {_examples(self.missing_priority)}"
            )
        negative = self.negative & ~irregular
        if negative.any():
            lines.append(
                f"negative priority (BullMQ accepts it; such jobs run before every positive tier): "
                f"{_count(negative.sum(), 'job')}, e.g. {_examples(self.job_ids[negative])}"
            )
        zero = (self.tiers == 0) & ~irregular
        if zero.any():
            lines.append(
                f"tier 0 in the prioritized set (priority 0 belongs on the wait list): "
                f"{_count(zero.sum(), 'job')}, e.g. {_examples(self.job_ids[zero])}"
            )
        ahead = self.ahead_of_pc & ~irregular
        if ahead.any():
            if self.pc is None:
                cause = "pc is missing (reset) while they wait"
            elif self.pc >= TIER_SPAN:
                cause = f"pc = {self.pc:,} wrapped past 2**32 ({self.wraps:,}x) while they wait"
            else:
                cause = f"pc = {self.pc:,} was reset or lowered while they wait"
            lines.append(
                f"counters above pc mod 2**32 = {self.pc_counter or 0:,}: {_count(ahead.sum(), 'job')}; "
                f"{cause}; newer jobs get smaller counters and overtake them in their tier: "
                f"e.g. {_examples(self.job_ids[ahead])}"
            )
        if self.pc is not None and self.adds_until_wrap <= self.wrap_warning:
            lines.append(
                f"counter wrap ahead: pc = {self.pc:,}, {_count(self.adds_until_wrap, 'add')} until "
                f"the counter wraps to 0; jobs still queued then are overtaken by newer ones in their tier"
            )
        return lines

    def summary(self) -> str:
        """A few deterministic lines for a notebook cell or a terminal."""
        tiers = "  ".join(f"{t:,}={n:,}" for t, n in list(self.tier_counts.items())[:8])
        more = len(self.tier_counts) - 8
        if more > 0:
            tiers += f"  ... ({more:,} more tiers)"
        if self.pc is None:
            pc_line = "pc: not set (the next add gets counter 1)"
        else:
            pc_line = (
                f"pc: {self.pc:,} (counter {self.pc_counter:,}; {self.adds_until_wrap:,} adds "
                f"until it wraps to 0"
                + (f"; wrapped {self.wraps:,}x" if self.wraps else "")
                + ")"
            )
        lines = [
            f"queue {self.base}  prioritized: {self.total:,} jobs in {len(self.tier_counts):,} "
            f"tiers  wait: {self.wait_length:,} jobs (served first)",
            "jobs per priority: " + (tiers or "none"),
            pc_line,
        ]
        findings = self.findings
        if not self.checked_jobs:
            lines.append("job hashes: not read (check_jobs=False)")
        lines.append(f"findings: {len(findings)}" if findings else "findings: none")
        lines.extend(f"  - {line}" for line in findings)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<QueueReport {self.base} {self.total:,} prioritized, {self.wait_length:,} waiting, "
            f"pc={self.pc}, {len(self.findings)} findings>"
        )


def _count(n: int | np.integer, noun: str) -> str:
    n = int(n)
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _num(score: float) -> str:
    return f"{int(score):,}" if math.isfinite(score) and score == math.floor(score) else repr(score)


def _examples(ids: Sequence[str] | np.ndarray, k: int = EXAMPLES) -> str:
    shown = ", ".join(repr(str(i)) for i in list(ids[:k]))
    return shown + (f" and {len(ids) - k:,} more" if len(ids) > k else "")


def _first_inversion(ids: Sequence[str]) -> tuple[str, str]:
    # The first auto id that pops before a numerically smaller (earlier) one.
    for i, later in enumerate(ids):
        for earlier in ids[i + 1:]:
            if int(earlier) < int(later):
                return later, earlier
    raise ValueError("no inversion")  # pragma: no cover - only called on broken groups


# -- decoding ----------------------------------------------------------------------------


def decode_scores(scores: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split stored scores into ``(tiers, counters)`` as ``int64``, exactly.

    Scores in ``0..MAX_SCORE`` go through :func:`~echomq_viz.score.split_scores_array`.
    Every other whole double is still an exact integer (all doubles from
    2**53 up are), so it is split as an integer too: ``tier = floor(s /
    2**32)`` and ``counter = s mod 2**32``, also for negative scores. A
    fractional score is split after ``floor``; an infinite one, or a tier past
    int64, is clamped to the int64 bounds with counter 0. Those cases are
    reported by :attr:`QueueReport.irregular`.

    :param scores: float array-like (what Redis returns).
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    tiers = np.zeros(s.size, dtype=np.int64)
    counters = np.zeros(s.size, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        exact = (s >= 0) & (s <= MAX_SCORE) & (s == np.floor(s))
        if exact.any():
            t, c = split_scores_array(s[exact])
            tiers[exact] = t.astype(np.int64)
            counters[exact] = c.astype(np.int64)
        floored = np.floor(s)
        # Every double in [-2**63, 2**63) converts to int64 exactly once floored.
        wide = ~exact & np.isfinite(floored) & (floored >= -(2.0**63)) & (floored < 2.0**63)
    if wide.any():
        whole = floored[wide].astype(np.int64)
        tiers[wide] = whole >> np.int64(32)  # arithmetic shift: floor division
        counters[wide] = whole & np.int64(COUNTER_MASK)
    for i in np.flatnonzero(~exact & ~wide):  # huge or infinite: rare, done one by one
        value = float(s[i])
        if math.isfinite(value):
            whole = int(value)  # exact: such a double is an integer
            tiers[i] = min(max(whole >> 32, _INT64_MIN), _INT64_MAX)
            counters[i] = whole & COUNTER_MASK
        else:
            tiers[i] = _INT64_MAX if value > 0 else _INT64_MIN
    return tiers, counters


# -- reading -----------------------------------------------------------------------------


def _check_name(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    bad = _BAD_NAME.search(value)
    if bad:
        raise ValueError(f"{what} {value!r} contains {bad.group()!r}: no whitespace or control characters")
    return value


def _resolve_queue(queue: object, prefix: object) -> tuple[str, str, str]:
    """Return ``(prefix, queue name as in the keys, key base)``."""
    if isinstance(queue, QueueContext):
        # A context carries its own prefix; "emq" here is the default, i.e. not given.
        if prefix not in ("emq", queue.prefix):
            raise ValueError(
                f"prefix {prefix!r} disagrees with the QueueContext's prefix {queue.prefix!r}"
            )
        base = Keys.base(queue)
        return queue.prefix, base[len(queue.prefix) + 1:-1], base
    _check_name("key prefix", prefix)
    _check_name("queue name", queue)
    return prefix, queue, f"{prefix}:{queue}:"  # BullMQ's own layout, name used verbatim


def _check_args(client: object, chunk_size: object, progress: object, wrap_warning: object) -> None:
    if not all(hasattr(client, name) for name in ("pipeline", "zrangebyscore", "zcard")):
        raise TypeError(f"client must be a redis-py client (redis.Redis), got {type(client).__name__}")
    for what, value, lowest in (("chunk_size", chunk_size, 1), ("wrap_warning", wrap_warning, 0)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
        if value < lowest:
            raise ValueError(f"{what} must be >= {lowest}, got {value}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, got {progress!r}")


def _text(value: Any) -> str:
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value)


_EXPECTED_TYPES = {"prioritized": "zset", "wait": "list", "pc": "string"}


def _check_types(client: Any, keys: Mapping[str, str]) -> dict[str, str]:
    with client.pipeline(transaction=False) as pipe:
        for name in _EXPECTED_TYPES:
            pipe.type(keys[name])
        found = dict(zip(_EXPECTED_TYPES, (_text(t) for t in pipe.execute())))
    for name, expected in _EXPECTED_TYPES.items():
        if found[name] not in ("none", expected):
            raise ValueError(
                f"{keys[name]} is a {found[name]}, not a {expected}: is {keys[name].rsplit(':', 1)[0]!r} "
                "really a queue?"
            )
    return found


def _layout_hint(client: Any, prefix: str, queue: str) -> str | None:
    # Nothing under "emq:Q:"; maybe the EchoMQ queue Q, whose keys are "emq:{Q}:".
    if "{" in queue:
        return None
    tagged = f"{prefix}:{{{queue}}}:"
    if client.exists(tagged + "prioritized", tagged + "wait", tagged + "id", tagged + "meta"):
        braced = "{" + queue + "}"
        return (
            f"wrong name? no keys under {prefix}:{queue}: but the EchoMQ layout {tagged} exists: inspect "
            f"queue {braced!r} or QueueContext({queue!r})"
        )
    return None


def _read_set(
    client: Any, key: str, chunk_size: int, total: int,
    progress: Callable[[int, int], object] | None,
) -> tuple[list[Any], np.ndarray]:
    """Every (member, score) of the set, in score order, by score cursor."""
    members: list[Any] = []
    chunks: list[np.ndarray] = []
    low, cursor, offset = "-inf", None, 0
    while True:
        rows = client.zrangebyscore(key, low, "+inf", start=offset, num=chunk_size, withscores=True)
        if not rows:
            break
        members.extend(m for m, _ in rows)
        scores = np.fromiter((s for _, s in rows), dtype=np.float64, count=len(rows))
        chunks.append(scores)
        last = float(scores[-1])
        if cursor is not None and last == cursor:
            offset += len(rows)  # the whole chunk sat at the cursor score
        else:
            # repr() round-trips a double exactly; Redis parses it back with strtod.
            cursor, low, offset = last, repr(last), int(np.count_nonzero(scores == last))
        if progress is not None:
            progress(len(members), max(total, len(members)))
        if len(rows) < chunk_size:
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


def _read_job_priorities(
    client: Any, base: str, members: list[Any], ids: list[str], tiers: np.ndarray, chunk_size: int,
) -> tuple[tuple[PriorityMismatch, ...], tuple[str, ...]]:
    mismatches: list[PriorityMismatch] = []
    missing: list[str] = []
    raw_base = base.encode()
    for start in range(0, len(members), chunk_size):
        with client.pipeline(transaction=False) as pipe:
            for member in members[start:start + chunk_size]:
                # A client without decode_responses hands back bytes members.
                pipe.hget(raw_base + member if isinstance(member, bytes) else base + member, "priority")
            values = pipe.execute()
        for i, value in enumerate(values, start=start):
            if value is None:
                missing.append(ids[i])
                continue
            stored = _text(value)
            if _parse_priority(stored) != int(tiers[i]):
                mismatches.append(PriorityMismatch(ids[i], stored, int(tiers[i])))
    return tuple(mismatches), tuple(missing)


def _collisions(ids: list[str], scores: np.ndarray) -> tuple[Collision, ...]:
    if scores.size < 2:
        return ()
    same = scores[1:] == scores[:-1]  # the set comes sorted: equal scores are adjacent
    if not same.any():
        return ()
    edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) + 1
    groups = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        group = tuple(ids[a:b])
        if all(_AUTO_ID.fullmatch(i) for i in group):
            numbers = [int(i) for i in group]
            fifo_broken: bool | None = numbers != sorted(numbers)
        else:
            fifo_broken = None
        groups.append(Collision(float(scores[a]), group, fifo_broken))
    return tuple(groups)


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


def inspect_queue(
    client: Any,
    queue: str | QueueContext,
    prefix: str = "emq",
    *,
    chunk_size: int = 10_000,
    progress: Callable[[int, int], object] | None = None,
    check_jobs: bool = True,
    wrap_warning: int = WRAP_WARNING,
) -> QueueReport:
    """Read a queue's prioritized set, decode it and look for trouble. Read-only.

    :param client: a redis-py client (``redis.Redis``), decoding replies or not.
    :param queue: the queue name as it appears in the keys (``"{Q}"`` for the
        EchoMQ queue ``Q``, ``"orders"`` for a BullMQ queue ``orders``), or a
        :class:`~echomq_viz.keys.QueueContext`, which carries its own prefix.
    :param prefix: the key prefix: ``"emq"`` for EchoMQ, ``"bull"`` is
        BullMQ's default. With a QueueContext leave it at its default.
    :param chunk_size: members per ``ZRANGEBYSCORE`` (and job hashes per
        pipeline); an int ``>= 1``.
    :param progress: called as ``progress(done, total)`` after each chunk,
        ``done`` increasing up to ``total``; once with ``(0, 0)`` for an
        empty set.
    :param check_jobs: read each job hash's ``priority`` field (one pipelined
        ``HGET`` per job) to compare it with the score's tier.
    :param wrap_warning: report when fewer adds than this are left before
        the arrival counter wraps to 0.
    :raises TypeError: for an argument of the wrong type.
    :raises ValueError: for a bad name or chunk size, or a key of the wrong type.
    :raises redis.exceptions.ConnectionError: when the server cannot be reached.
    """
    _check_args(client, chunk_size, progress, wrap_warning)
    if not isinstance(check_jobs, bool):
        raise TypeError(f"check_jobs must be a bool, got {type(check_jobs).__name__}")
    prefix, queue_name, base = _resolve_queue(queue, prefix)
    keys = {"prioritized": base + "prioritized", "pc": base + "pc", "wait": base + "wait", "job": base + "<id>"}
    try:
        found = _check_types(client, keys)
        hint = None
        if set(found.values()) == {"none"}:
            hint = _layout_hint(client, prefix, queue_name)
        total = int(client.zcard(keys["prioritized"]))
        members, scores = _read_set(client, keys["prioritized"], chunk_size, total, progress)
        if progress is not None and not members:
            progress(0, 0)
        # Read after the set: every counter read above came from an INCR that pc includes.
        with client.pipeline(transaction=False) as pipe:
            pipe.get(keys["pc"])
            pipe.llen(keys["wait"])
            raw_pc, wait_length = pipe.execute()
        ids = [_text(m) for m in members]
        tiers, counters = decode_scores(scores)
        mismatches: tuple[PriorityMismatch, ...] = ()
        missing: tuple[str, ...] = ()
        if check_jobs and members:
            mismatches, missing = _read_job_priorities(client, base, members, ids, tiers, chunk_size)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise type(exc)(f"cannot inspect {base}: {exc}") from exc
    pc = None
    if raw_pc is not None:
        try:
            pc = int(_text(raw_pc))
        except ValueError:
            raise ValueError(f"{keys['pc']} holds {_text(raw_pc)!r}, not an integer counter") from None
    levels, counts = np.unique(tiers, return_counts=True)
    return QueueReport(
        prefix=prefix,
        queue=queue_name,
        keys=MappingProxyType(keys),
        total=len(ids),
        wait_length=int(wait_length),
        pc=pc,
        job_ids=_frozen(np.array(ids, dtype=object)),
        scores=_frozen(scores),
        tiers=_frozen(tiers),
        counters=_frozen(counters),
        tier_counts=MappingProxyType(dict(zip(levels.tolist(), counts.tolist()))),
        collisions=_collisions(ids, scores),
        priority_mismatches=mismatches,
        missing_priority=missing,
        checked_jobs=check_jobs,
        wrap_warning=wrap_warning,
        hint=hint,
    )
