"""Cost as the queue grows: seconds per add and per pop with n jobs waiting (I/O).

Every library is measured the same way on the same Redis: fill its queue to
``n`` jobs with its own add, then time ``per_size`` adds, then as many pops,
each operation timed alone around the library's call (in Node.js for the
Node libraries, so the pipe to the runner is not counted), the median kept.
The stored run (:data:`STORED`, written by ``benchmarks/peers.py``) holds the
large sizes; a notebook runs only the small ones live.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..checks import check_int
from .base import Peer
from .workload import TIERS, WorkJob

__all__ = ["LIVE_SIZES", "FULL_SIZES", "STORED", "BENCH_COMMAND", "growth_jobs", "measure_growth",
           "measure_all", "load_growth", "save_growth", "series"]

LIVE_SIZES = (100, 1000)
FULL_SIZES = (100, 1_000, 10_000, 100_000)
STORED = Path(__file__).with_name("growth.json")
BENCH_COMMAND = "python benchmarks/run.py --only peers"


def growth_jobs(count: int, start: int, seed: int = 10) -> list[WorkJob]:
    """``count`` jobs of random tiers (the workload's), named from ``start`` on."""
    count = check_int("count", count, 0, 10_000_000)
    rng = random.Random(seed * 1_000_003 + start)
    return [WorkJob(f"g{start + i}", rng.choice(TIERS), start + i + 1) for i in range(count)]


def measure_growth(peer: Peer, sizes: Sequence[int], per_size: int = 30) -> list[tuple[int, float, float]]:
    """``(n, seconds per add, seconds per pop)`` for each ``n`` in ``sizes`` (increasing)."""
    sizes = [check_int("size", n, 1, 10_000_000) for n in sizes]
    if sizes != sorted(set(sizes)):
        raise ValueError(f"sizes must increase, got {sizes}")
    per_size = check_int("per_size", per_size, 1, 10_000)
    peer.reset()
    points, waiting, named = [], 0, 0
    try:
        for n in sizes:
            peer.fill(growth_jobs(n - waiting, named))
            named, waiting = named + n - waiting, n
            add, pop = peer.timed(growth_jobs(per_size, named))
            named += per_size
            points.append((n, add, pop))
    finally:
        peer.reset()
    return points


def measure_all(makers: Sequence[Callable[[], Peer]], sizes: Sequence[int], per_size: int = 30,
                log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """:func:`measure_growth` for every peer; the record :func:`save_growth` stores."""
    libraries = {}
    redis_version = None
    for make in makers:
        with make() as peer:
            redis_version = redis_version or str(peer.client.info("server")["redis_version"])
            started = time.perf_counter()
            points = measure_growth(peer, sizes, per_size)
            log(f"{peer.label}: {time.perf_counter() - started:.1f} s")
            libraries[peer.key] = {"label": peer.label, "library": peer.library, "points": points}
    return {"command": BENCH_COMMAND, "sizes": list(sizes), "per_size": per_size, "redis": redis_version,
            "when": time.strftime("%Y-%m-%d", time.gmtime()), "libraries": libraries}


def save_growth(record: dict, path: Path = STORED) -> None:
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def load_growth(path: Path = STORED) -> dict[str, Any]:
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    for key in ("command", "sizes", "per_size", "libraries"):
        if key not in record:
            raise ValueError(f"{path} is no growth record: it lacks {key!r}")
    return record


def series(record: dict, which: str) -> dict[str, list[tuple[int, float]]]:
    """label -> ``(n, seconds)`` of ``which`` (``"add"`` or ``"pop"``) from a record."""
    if which not in ("add", "pop"):
        raise ValueError(f"which must be 'add' or 'pop', got {which!r}")
    column = 1 if which == "add" else 2
    return {entry["label"]: [(int(p[0]), float(p[column])) for p in entry["points"]]
            for entry in record["libraries"].values()}
