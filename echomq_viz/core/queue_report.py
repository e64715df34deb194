"""What a read prioritized set means: :class:`QueueReport` and its findings.

Pure, no I/O: :func:`echomq_viz.experiments.inspection.inspect_queue` reads a queue and
builds the report; this module decodes scores into (tier, counter) exactly,
groups equal scores, and runs the rules that turn the numbers into
:class:`Finding` records (one per kind of problem, evaluated once when the
report is made).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from echomq_viz.core.score import (
    COUNTER_MASK, MAX_PRIORITY_COUNTER, MAX_SCORE, PRIORITY_LIMIT, TIER_SPAN, equal_score_groups,
    split_scores_array,
)

__all__ = ["WRAP_WARNING", "Collision", "Finding", "PriorityMismatch", "QueueReport", "decode_scores",
           "find_collisions"]

WRAP_WARNING = 1_000_000  # adds left before the counter wraps: this many or fewer is a finding
EXAMPLES = 3  # ids quoted per finding

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_AUTO_ID = re.compile(r"[0-9]+")


# -- the report ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One kind of problem in a queue.

    :param code: what it is, stable for programs: ``wrong-name``,
        ``non-utf8-id``, ``irregular-score``, ``above-limit``,
        ``equal-scores``, ``fifo-broken``, ``priority-mismatch``,
        ``missing-hash``, ``missing-priority``, ``negative-priority``, ``tier-zero``,
        ``pc-out-of-range``, ``counter-ahead-of-pc``, ``wrap-ahead``.
    :param severity: ``"error"`` (the pop order is already wrong),
        ``"warning"`` (data that will or may go wrong), ``"note"``.
    :param count: how many jobs (groups for the equal-score codes, adds left
        for ``wrap-ahead``) it concerns.
    :param message: one line for people.
    :param examples: a few job ids.
    """

    code: str
    severity: str
    count: int
    message: str
    examples: tuple[str, ...] = ()


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
    """What :func:`~echomq_viz.experiments.inspection.inspect_queue` read, decoded. Arrays are read-only and in
    pop order (score, then member bytes), index ``i`` describing one job:
    ``job_ids`` (str, ``\\x`` escapes for bytes that are not UTF-8),
    ``scores`` (float64), ``tiers`` and ``counters`` (int64, exact).

    ``keys`` maps ``prioritized``, ``pc``, ``wait`` and ``job`` (the job-hash
    pattern) to key names; ``pc`` is None when that key does not exist;
    ``collisions`` are the groups of two or more members sharing a score;
    ``priority_mismatches`` and ``missing_priority`` stay empty unless
    ``checked_jobs``; ``undecodable`` lists the ids that are not UTF-8;
    ``hint`` is a note when nothing exists under this name but the EchoMQ
    layout does. ``findings`` are evaluated once, at construction, most
    serious kind first.
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
    undecodable: tuple[str, ...] = ()
    missing_hash: tuple[str, ...] = ()  # ids whose job hash is gone (evicted or deleted); checked_jobs only
    findings: tuple[Finding, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "findings", tuple(f for rule in RULES if (f := rule(self)) is not None))

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
        """Mask of the jobs :func:`echomq_viz.figures.plots.update_bands` accepts:
        whole scores in ``0..MAX_SCORE``; cap the tier to what you draw too."""
        return ~self.irregular & (self.scores >= 0) & (self.scores <= MAX_SCORE)

    @property
    def pc_counter(self) -> int | None:
        """``pc mod 2**32``: the counter the last add received."""
        return None if self.pc is None else self.pc % TIER_SPAN

    @property
    def adds_until_wrap(self) -> int:
        """Adds until one receives counter 0; with no ``pc`` the next add gets 1."""
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
        with np.errstate(invalid="ignore"):
            return ~np.isfinite(self.scores) | (self.scores != np.floor(self.scores))

    @property
    def ahead_of_pc(self) -> np.ndarray:
        """Mask of jobs whose counter exceeds ``pc mod 2**32`` (0 without pc):
        added before ``pc`` wrapped or was reset, so newer adds overtake them."""
        return self.counters > (self.pc_counter or 0)

    @property
    def clean(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        """A few deterministic lines for a notebook cell or a terminal."""
        tiers = "  ".join(f"{t:,}={n:,}" for t, n in list(self.tier_counts.items())[:8])
        if len(self.tier_counts) > 8:
            tiers += f"  ... ({_count(len(self.tier_counts) - 8, 'more tier')})"
        pc_line = "pc: not set (the next add gets counter 1)"
        if self.pc is not None:
            wrapped = f"; wrapped {self.wraps:,}x" if self.wraps else ""
            pc_line = (f"pc: {self.pc:,} (counter {self.pc_counter:,}; {self.adds_until_wrap:,} adds "
                       f"until it wraps to 0{wrapped})")
        lines = [f"queue {self.base}  prioritized: {self.total:,} jobs in {len(self.tier_counts):,} "
                 f"tiers  wait: {self.wait_length:,} jobs (served first)",
                 "jobs per priority: " + (tiers or "none"), pc_line]
        if not self.checked_jobs:
            lines.append("job hashes: not read (check_jobs=False)")
        lines.append(f"findings: {len(self.findings)}" if self.findings else "findings: none")
        lines.extend(f"  - {f.message}" for f in self.findings)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<QueueReport {self.base} {self.total:,} prioritized, {self.wait_length:,} waiting, "
                f"pc={self.pc}, {len(self.findings)} findings>")


# -- the rules: each looks at a report and returns one Finding or None ---------------------


def _count(n: int | np.integer, noun: str) -> str:
    return f"{int(n):,} {noun}" + ("" if int(n) == 1 else "s")


def _num(score: float) -> str:
    return f"{int(score):,}" if math.isfinite(score) and score == math.floor(score) else repr(score)


def _examples(ids: Sequence[str] | np.ndarray) -> str:
    shown = ", ".join(repr(str(i)) for i in list(ids[:EXAMPLES]))
    return shown + (f" and {len(ids) - EXAMPLES:,} more" if len(ids) > EXAMPLES else "")


def _jobs(code: str, severity: str, ids: Sequence[str] | np.ndarray, what: str,
          detail: str = "") -> Finding | None:
    """A finding about some jobs, ``"<what>: <n> jobs[<detail>:], e.g. ..."``; None without any."""
    if not len(ids):
        return None
    message = f"{what}: {_count(len(ids), 'job')}{detail + ':' if detail else ','} e.g. {_examples(ids)}"
    return Finding(code, severity, len(ids), message, tuple(str(i) for i in ids[:EXAMPLES]))


def _wrong_name(r: QueueReport) -> Finding | None:
    return Finding("wrong-name", "note", 0, r.hint) if r.hint else None


def _non_utf8(r: QueueReport) -> Finding | None:
    return _jobs("non-utf8-id", "warning", r.undecodable,
                 "job ids that are not UTF-8 (shown with \\x escapes; clients that decode may not find them)")


def _irregular(r: QueueReport) -> Finding | None:
    return _jobs("irregular-score", "error", r.job_ids[r.irregular],
                 "fractional or infinite scores (no getPriorityScore call writes them)")


def _above_limit(r: QueueReport) -> Finding | None:
    over = r.over_limit & ~r.irregular
    if not over.any():
        return None
    lo, hi = int(r.tiers[over].min()), int(r.tiers[over].max())
    where = f"tier {lo:,}" if lo == hi else f"tiers {lo:,}..{hi:,}"
    return _jobs("above-limit", "error", r.job_ids[over], f"priority above {PRIORITY_LIMIT:,} (2²¹ − 1)",
                 f" in {where}; their scores pass 2⁵³, where a double skips whole numbers: their counters "
                 f"can round, and with them the arrival order")


def _equal_scores(r: QueueReport) -> Finding | None:
    if not r.collisions:
        return None
    first = r.collisions[0]
    members = sum(len(c.job_ids) for c in r.collisions)
    return Finding("equal-scores", "warning", len(r.collisions),
                   f"equal scores: {_count(len(r.collisions), 'score')} shared by {_count(members, 'job')}; "
                   f"Redis orders them by member bytes, not arrival: e.g. score {_num(first.score)} holds "
                   f"{_examples(first.job_ids)}", first.job_ids[:EXAMPLES])


def _fifo_broken(r: QueueReport) -> Finding | None:
    broken = [c for c in r.collisions if c.fifo_broken]
    if not broken:
        return None
    ids = broken[0].job_ids  # the first auto id that pops before a smaller (earlier) one
    late, early = next((a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if int(b) < int(a))
    return Finding("fifo-broken", "error", len(broken),
                   f"FIFO broken: auto ids leave out of arrival order in "
                   f"{_count(len(broken), 'equal-score group')}: e.g. job {late!r} pops before job "
                   f"{early!r} at score {_num(broken[0].score)}", (late, early))


def _priority_mismatch(r: QueueReport) -> Finding | None:
    if not r.priority_mismatches:
        return None
    m = r.priority_mismatches[0]
    return Finding("priority-mismatch", "warning", len(r.priority_mismatches),
                   f"job priority field disagrees with the score's tier: "
                   f"{_count(len(r.priority_mismatches), 'job')}, e.g. job {m.job_id!r} stores "
                   f"{m.stored!r}, score tier {m.tier:,}", (m.job_id,))


def _missing_hash(r: QueueReport) -> Finding | None:
    return _jobs("missing-hash", "error", r.missing_hash,
                 "job id in the prioritized set without its job hash (evicted or deleted: a Redis whose "
                 "maxmemory-policy is not noeviction drops keys when full); a worker cannot run these jobs")


def _missing_priority(r: QueueReport) -> Finding | None:
    return _jobs("missing-priority", "warning", r.missing_priority, "job hash or its priority field missing")


def _negative(r: QueueReport) -> Finding | None:
    return _jobs("negative-priority", "note", r.job_ids[r.negative & ~r.irregular],
                 "negative priority (BullMQ accepts it; such jobs run before every positive tier)")


def _tier_zero(r: QueueReport) -> Finding | None:
    return _jobs("tier-zero", "warning", r.job_ids[(r.tiers == 0) & ~r.irregular],
                 "tier 0 in the prioritized set (priority 0 belongs on the wait list)")


def _pc_out_of_range(r: QueueReport) -> Finding | None:
    if r.pc is None or 0 <= r.pc <= MAX_PRIORITY_COUNTER:
        return None
    return Finding("pc-out-of-range", "error", 1,
                   f"pc = {r.pc:,} is outside 0..{MAX_PRIORITY_COUNTER:,} (2⁵³ − 2): the scripts refuse every "
                   "prioritized add and priority change until it is set back")


def _ahead_of_pc(r: QueueReport) -> Finding | None:
    if r.pc is None:
        cause = "pc is missing (reset) while they wait"
    elif r.pc >= TIER_SPAN:
        cause = f"pc = {r.pc:,} wrapped past 2³² ({r.wraps:,}x) while they wait"
    else:
        cause = f"pc = {r.pc:,} was reset or lowered while they wait"
    return _jobs("counter-ahead-of-pc", "error", r.job_ids[r.ahead_of_pc & ~r.irregular],
                 f"counters above pc mod 2³² = {r.pc_counter or 0:,}",
                 f"; {cause}; newer jobs get smaller counters and overtake them in their tier")


def _wrap_ahead(r: QueueReport) -> Finding | None:
    if r.pc is None or r.adds_until_wrap > r.wrap_warning:
        return None
    return Finding("wrap-ahead", "warning", r.adds_until_wrap,
                   f"counter wrap ahead: pc = {r.pc:,}, {_count(r.adds_until_wrap, 'add')} until the counter "
                   "wraps to 0; jobs still queued then are overtaken by newer ones in their tier")


RULES: tuple[Callable[[QueueReport], Finding | None], ...] = (
    _wrong_name, _non_utf8, _irregular, _above_limit, _equal_scores, _fifo_broken, _priority_mismatch,
    _missing_hash, _missing_priority, _negative, _tier_zero, _pc_out_of_range, _ahead_of_pc, _wrap_ahead,
)


# -- decoding ----------------------------------------------------------------------------


def decode_scores(scores: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split stored scores into ``(tiers, counters)`` as ``int64``, exactly.

    Scores in ``0..MAX_SCORE`` go through :func:`~echomq_viz.core.score.split_scores_array`.
    Every other whole double is an exact integer too, split as ``tier =
    floor(s / 2**32)``, ``counter = s mod 2**32``, also when negative. A
    fractional score is split after ``floor``; an infinite one, or a tier past
    int64, is clamped to the int64 bounds. :attr:`QueueReport.irregular`
    reports those.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    tiers = np.zeros(s.size, dtype=np.int64)
    counters = np.zeros(s.size, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        exact = (s >= 0) & (s <= MAX_SCORE) & (s == np.floor(s))
        if exact.any():
            t, c = split_scores_array(s[exact])
            tiers[exact], counters[exact] = t.astype(np.int64), c.astype(np.int64)
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
            tiers[i] = min(max(int(value) >> 32, _INT64_MIN), _INT64_MAX)
            counters[i] = int(value) & COUNTER_MASK
        else:
            tiers[i] = _INT64_MAX if value > 0 else _INT64_MIN
    return tiers, counters



def find_collisions(ids: Sequence[str], scores: np.ndarray) -> tuple[Collision, ...]:
    """Every group of two or more jobs sharing a score, by ascending score."""
    groups = []
    for where in equal_score_groups(scores):
        group = tuple(ids[i] for i in where.tolist())
        fifo_broken = None
        if all(_AUTO_ID.fullmatch(i) for i in group):
            numbers = [int(i) for i in group]
            fifo_broken = numbers != sorted(numbers)
        groups.append(Collision(float(scores[where[0]]), group, fifo_broken))
    return tuple(groups)

