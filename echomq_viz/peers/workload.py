"""The one workload every queue library gets, and what a pop order says (pure).

Three tiers of eight jobs each, arrivals interleaved by a fixed seed. Tier 1
is the most urgent; each library receives the tier in its own terms (a
priority number, a queue name, a priority step). A correct priority queue
hands the jobs out by (tier, arrival): that is :func:`correct_order`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from echomq_viz.core.checks import check_int

__all__ = ["WorkJob", "TIERS", "JOBS_PER_TIER", "SEED", "workload", "correct_order", "fifo_breaks",
           "tier_breaks", "key_shape", "is_job_key", "slot_count", "order_difference"]

TIERS = (1, 2, 3)
JOBS_PER_TIER = 8
SEED = 1018


@dataclass(frozen=True)
class WorkJob:
    """One job of the workload: its name says its arrival (``j01`` came first)."""

    name: str
    tier: int
    arrival: int


def workload(seed: int = SEED, per_tier: int = JOBS_PER_TIER, tiers: Sequence[int] = TIERS) -> list[WorkJob]:
    """``per_tier`` jobs of each tier, shuffled by ``seed``, in arrival order."""
    seed = check_int("seed", seed, 0, 2**64 - 1)
    per_tier = check_int("per_tier", per_tier, 1, 100_000)
    tiers = [check_int("tier", tier, 1, 9) for tier in tiers]
    if not tiers or len(set(tiers)) != len(tiers):
        raise ValueError(f"tiers must be distinct numbers in 1..9, got {list(tiers)}")
    mix = [tier for tier in tiers for _ in range(per_tier)]
    random.Random(seed).shuffle(mix)
    width = len(str(len(mix)))
    return [WorkJob(f"j{i + 1:0{width}d}", tier, i + 1) for i, tier in enumerate(mix)]


def correct_order(jobs: Iterable[WorkJob]) -> list[str]:
    """The names in the order a correct priority queue pops them: tier, then arrival."""
    return [job.name for job in sorted(jobs, key=lambda job: (job.tier, job.arrival))]


def order_difference(order: Sequence[str], right: Sequence[str]) -> str:
    """``order`` against ``right``, place by place: ``·`` where it has the right job, the
    job's name where it has another, ``-`` where it has none."""
    width = max(len(name) for name in right)
    cells = [("·" if i < len(order) and order[i] == name else (order[i] if i < len(order) else "-"))
             for i, name in enumerate(right)]
    return " ".join(f"{cell:<{width}}" for cell in cells).rstrip()


def _by_name(jobs: Iterable[WorkJob]) -> dict[str, WorkJob]:
    return {job.name: job for job in jobs}


def fifo_breaks(jobs: Iterable[WorkJob], order: Sequence[str]) -> int:
    """How many popped jobs came out before an earlier job of their own tier."""
    known = _by_name(jobs)
    last: dict[int, int] = {}
    breaks = 0
    for name in order:
        job = known[name]
        if job.arrival < last.get(job.tier, 0):
            breaks += 1
        last[job.tier] = max(last.get(job.tier, 0), job.arrival)
    return breaks


def tier_breaks(jobs: Iterable[WorkJob], order: Sequence[str]) -> int:
    """How many popped jobs came out while a job of a better tier still waited."""
    known = _by_name(jobs)
    tiers = [known[name].tier for name in order]
    return sum(1 for i, tier in enumerate(tiers) if any(later < tier for later in tiers[i + 1:]))


_ID_PART = re.compile(r"^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def key_shape(key: str, prefix: str) -> str:
    """``key`` with ``prefix`` cut and job ids (numbers, UUIDs) written ``<id>``:
    the same shape for every job's key."""
    rest = key[len(prefix):] if key.startswith(prefix) else key
    return ":".join("<id>" if _ID_PART.match(part) else part for part in rest.split(":"))


def is_job_key(key: str) -> bool:
    """Whether ``key`` is one job's own key, named by the job's id."""
    return "<id>" in key_shape(key, "").split(":")


def slot_count(keys: Iterable[str]) -> int:
    """How many Redis Cluster hash slots ``keys`` fall in."""
    from redis.crc import key_slot

    return len({key_slot(key.encode("utf-8", "surrogateescape")) for key in keys})
