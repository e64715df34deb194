"""The composite priority score: two sort keys packed into one number.

Theory of operation
-------------------
A Redis sorted set orders its members by one number, the score. EchoMQ (a port
of the BullMQ protocol) needs two orders at once: the priority tier first, the
arrival order inside a tier second. The Lua include ``getPriorityScore``
packs both into one score::

    score = priority * 0x100000000 + (INCR pc) % 0x100000000

Multiplying by ``0x100000000`` (2**32, :data:`TIER_SPAN`) shifts the tier into
the high bits; the arrival counter, reduced modulo 2**32, fills the low 32
bits. Tier ``p`` therefore spans ``[p * 2**32, p * 2**32 + 2**32 - 1]`` and its
largest score is one below the smallest score of tier ``p + 1``: comparing two
scores compares tiers first and counters only on a tie. ``ZPOPMIN`` takes the
smallest score, so a *lower* priority number runs first.

Lua numbers and Redis scores are IEEE-754 doubles, which hold every integer up
to 2**53 (:data:`EXACT_LIMIT`) exactly. The largest score of tier ``p`` is
``p * 2**32 + 2**32 - 1``; it stays below 2**53 while ``p <= 2**21 - 1``, so
:data:`PRIORITY_LIMIT` is ``2**21 - 1 = 2_097_151``. At priority 2**21 the
score is ``2**53 + c`` and odd counters round to an even neighbour: jobs share
scores and first-in-first-out order inside the tier breaks (BullMQ #4249).

This module is the pure core: integers in, integers out, no I/O.
:func:`priority_score` and :func:`split_score` are the exact maths and refuse
anything outside the exact range; :func:`stored_score` reproduces, step by
step in doubles, what the Lua script computes and Redis stores, for any
priority, so the rounding past the limit can be shown; the ``*_array``
functions do the same exact maths on numpy arrays without a float detour.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

from echomq_viz.core.checks import check_int, check_whole
from echomq_viz.core.notation import power, power_minus, thousands

if TYPE_CHECKING:
    import numpy as np
# numpy is imported by the array functions alone: a kernel whose views draw in the page
# (notebook 01's) never needs it, and leaves its 15 MB out

__all__ = [
    "TIER_SPAN",
    "COUNTER_MASK",
    "PRIORITY_LIMIT",
    "EXACT_LIMIT",
    "MAX_SCORE",
    "PRIORITY_LIMIT_TEXT",
    "MAX_SCORE_TEXT",
    "MAX_PRIORITY_COUNTER",
    "priority_score",
    "split_score",
    "split_stored",
    "stored_score",
    "is_exact",
    "tier_bounds",
    "priority_scores_array",
    "split_scores_array",
    "equal_score_groups",
]

TIER_SPAN = 0x100000000  # 2**32: one priority step, the width of one tier
COUNTER_MASK = TIER_SPAN - 1  # the low 32 bits that hold the arrival counter
EXACT_LIMIT = 2**53  # doubles hold every integer up to here exactly
PRIORITY_LIMIT = 2**21 - 1  # largest priority whose whole tier is exact
MAX_SCORE = PRIORITY_LIMIT * TIER_SPAN + COUNTER_MASK  # == 2**53 - 1
PRIORITY_LIMIT_TEXT = power_minus(2, 21, 1)  # "2²¹ − 1": PRIORITY_LIMIT as refusals write it
MAX_SCORE_TEXT = power_minus(2, 53, 1)  # "2⁵³ − 1": MAX_SCORE as refusals write it
# Lua sees INCR pc as a double: up to 2**53 - 1 it is exact, and so is the
# counter part INCR pc % 2**32. checkPriorityCounter.lua holds the same bound.
MAX_PRIORITY_COUNTER = EXACT_LIMIT - 2  # the largest pc whose next INCR stays exact
INCR_LIMIT = 2**63 - 1  # the largest value INCR returns
FINITE_PRIORITY_LIMIT = int(sys.float_info.max) // TIER_SPAN  # past it, priority * 2**32 is no finite double


def _check_priority(priority: object, limit: int | None = PRIORITY_LIMIT) -> int:
    return check_int("priority", priority, 0, limit, why=PRIORITY_LIMIT_TEXT if limit == PRIORITY_LIMIT else "")


def _check_counter(counter: object) -> int:
    return check_int("counter", counter, 0, why="an INCR value")


def priority_score(priority: int, counter: int) -> int:
    """Return the exact composite score of a job.

    :param priority: the tier, an int in ``0..PRIORITY_LIMIT``; lower runs first.
    :param counter: the value ``INCR pc`` returned, an int ``>= 0``; only
        ``counter % 2**32`` enters the score, exactly as in the Lua.
    :returns: ``priority * 2**32 + counter % 2**32`` as an exact int.
    :raises TypeError: for anything but an int (bools and floats included).
    :raises ValueError: for a value outside the valid range.
    """
    p = _check_priority(priority)
    c = _check_counter(counter)
    return p * TIER_SPAN + c % TIER_SPAN


def split_score(score: int | float) -> tuple[int, int]:
    """Return ``(priority, counter)`` for a composite score: the inverse of
    :func:`priority_score` (the counter comes back reduced mod 2**32).

    :param score: an int, or a float holding an integer (what Redis returns),
        in ``0..MAX_SCORE``.
    :raises TypeError: for a bool or a non-number.
    :raises ValueError: for a negative, fractional, non-finite or out-of-range
        score.
    """
    s = check_whole("score", score, 0, MAX_SCORE, why=MAX_SCORE_TEXT)
    return s // TIER_SPAN, s % TIER_SPAN


def split_stored(score: float) -> tuple[int, int]:
    """Split any stored score, also one past 2**53, into ``(tier, low bits)``.

    Unlike :func:`split_score` this accepts rounded scores from priorities
    above :data:`PRIORITY_LIMIT`; their low part is then the *rounded*
    counter, not necessarily the one ``INCR pc`` gave.

    :param score: a whole, finite, non-negative int or float.
    """
    s = check_whole("score", score, 0)
    return s // TIER_SPAN, s % TIER_SPAN


def stored_score(priority: int, counter: int) -> float:
    """Return the double that the Lua script computes and Redis stores.

    Lua 5.1 does all arithmetic in doubles: the priority arrives as a number,
    ``%`` is ``a - floor(a / b) * b``, and the final ``+`` rounds to the
    nearest double (ties to even). Every step is reproduced here, so the
    result equals the Redis score bit for bit, also for priorities above
    :data:`PRIORITY_LIMIT` where scores stop being exact.

    :param priority: an int ``>= 0`` whose tier is a finite double
        (``FINITE_PRIORITY_LIMIT``, about 4.2e298).
    :param counter: an int ``>= 0``, at most what INCR returns.
    """
    p = check_int("priority", _check_priority(priority, limit=None), high=FINITE_PRIORITY_LIMIT,
                  why=f"priority × {power(2, 32)} must be a finite double")
    c = check_int("counter", _check_counter(counter), high=INCR_LIMIT, why="an INCR value")
    p, c = float(p), float(c)
    span = float(TIER_SPAN)
    return p * span + (c - math.floor(c / span) * span)


def is_exact(priority: int, counter: int) -> bool:
    """Return True when the stored double equals the exact composite score."""
    p = _check_priority(priority, limit=None)
    c = _check_counter(counter)
    return stored_score(p, c) == p * TIER_SPAN + c % TIER_SPAN


def tier_bounds(priority: int) -> tuple[int, int]:
    """Return the smallest and largest score of one tier (both inclusive)."""
    p = _check_priority(priority)
    return p * TIER_SPAN, p * TIER_SPAN + COUNTER_MASK


def _integer_array(name: str, values: object) -> np.ndarray:
    import numpy as np
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr


def _as_uint64(arr: np.ndarray) -> np.ndarray:
    """A non-negative integer array as uint64, without a copy when it is
    already 64 bits wide (callers check the sign first)."""
    import numpy as np
    if arr.dtype.itemsize == 8:
        return arr.view(np.uint64)
    return arr.astype(np.uint64)


def priority_scores_array(priorities: object, counters: object) -> np.ndarray:
    """Vectorised :func:`priority_score`: exact ``uint64`` scores, no float detour.

    :param priorities: integer array-like in ``0..PRIORITY_LIMIT``.
    :param counters: integer array-like ``>= 0``, broadcastable to priorities.
    :returns: a ``uint64`` array of scores.
    """
    import numpy as np
    p = _integer_array("priorities", priorities)
    c = _integer_array("counters", counters)
    if p.size and (p.min() < 0 or p.max() > PRIORITY_LIMIT):
        raise ValueError(
            f"priorities must be in 0..{thousands(PRIORITY_LIMIT)} ({PRIORITY_LIMIT_TEXT}), "
            f"got {thousands(p.min())}..{thousands(p.max())}"
        )
    if c.size and c.min() < 0:
        raise ValueError(f"counters must be 0 or more (INCR values), got {thousands(c.min())}")
    high = np.left_shift(_as_uint64(p), np.uint64(32))
    low = np.bitwise_and(_as_uint64(c), np.uint64(COUNTER_MASK))
    if isinstance(high, np.ndarray) and high.shape == np.broadcast(high, low).shape:
        high |= low  # in place: no third array of the full size
        return high
    return np.asarray(high | low)


def split_scores_array(scores: object) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`split_score`: ``(priorities, counters)`` as ``uint64``.

    :param scores: integer or float array-like; floats must hold whole
        numbers in ``0..MAX_SCORE`` (they then convert exactly).
    """
    import numpy as np
    arr = np.asarray(scores)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"scores must be a numeric array, got dtype {arr.dtype}")
    if arr.size:
        if np.issubdtype(arr.dtype, np.floating):
            with np.errstate(invalid="ignore"):
                broken = ~np.isfinite(arr) | (arr != np.floor(arr))
            if broken.any():
                raise ValueError(f"scores must be whole numbers, got {float(arr[broken].flat[0])!r}")
        if arr.min() < 0 or arr.max() > MAX_SCORE:
            raise ValueError(f"scores must be in 0..{thousands(MAX_SCORE)} ({MAX_SCORE_TEXT}), "
                             f"got {thousands(arr.min())}..{thousands(arr.max())}")
    s = arr.astype(np.uint64)
    return s >> np.uint64(32), s & np.uint64(COUNTER_MASK)


def equal_score_groups(scores: object) -> list[np.ndarray]:
    """Indices of the scores that share one value: an index array for each
    value held two or more times, by ascending score, indices ascending.

    Redis orders equal scores by member bytes, not by arrival, so these are
    the jobs whose order the score alone does not fix.
    """
    import numpy as np
    s = np.asarray(scores, dtype=np.float64).ravel()
    order = np.argsort(s, kind="stable")  # sorted input (a read set): linear time
    ordered = s[order]
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return []
    edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) + 1
    return [order[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
