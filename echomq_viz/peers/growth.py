"""Cost as the queue grows: time per add and per pop with n jobs waiting, repeated (I/O).

Every library is measured the same way: fill its queue to ``n`` jobs of random
tiers with its own add, then, ``batches`` times over, time ``per_size`` adds
of the most urgent tier, as many pops, ``per_size`` adds of the least urgent
tier and as many pops, each operation alone around the library's call (in
Node.js for Bull, so the pipe to the runner is not counted). A batch keeps
the median of its operations; the record keeps every batch's median, so the
spread between batches is there to draw. On a server of its own
(:func:`slowlog_on`), Redis's own time per operation is kept beside the
client's: the ``SLOWLOG`` durations of the top-level commands (a script's inner
commands are inside its own duration) over the operations. The stored run
(:data:`STORED`, written by ``benchmarks/peers.py``) holds the large sizes.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from echomq_viz.core.checks import check_int
from echomq_viz.peers.base import Peer
from echomq_viz.peers.workload import TIERS, WorkJob
from echomq_viz.redis_side.replies import reply_text

__all__ = ["FULL_SIZES", "STORED", "BENCH_COMMAND", "BATCHES", "growth_jobs",
           "measure_growth", "measure_all", "load_growth", "save_growth", "series", "slowlog_on", "KINDS",
           "measure_list_walk", "WALK_SIZE"]

FULL_SIZES = (100, 1_000, 10_000, 100_000)
BATCHES = 5
STORED = Path(__file__).with_name("growth.json")
BENCH_COMMAND = "python benchmarks/run.py --only peers"
KINDS = ("add", "add_least", "pop")  # the most urgent add, the least urgent add, the pop
SLOWLOG_ARGS = ("--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000")


def growth_jobs(count: int, start: int, seed: int = 10, tier: int | None = None) -> list[WorkJob]:
    """``count`` jobs of random tiers (the workload's), or all of ``tier``, named from ``start`` on."""
    count = check_int("count", count, 0, 10_000_000)
    rng = random.Random(seed * 1_000_003 + start)
    return [WorkJob(f"g{start + i}", tier if tier is not None else rng.choice(TIERS), start + i + 1)
            for i in range(count)]


def slowlog_on(client: Any) -> bool:
    """Whether ``client``'s server logs every command in its SLOWLOG (a server started with
    :data:`SLOWLOG_ARGS`): only then is Redis's own time per operation read."""
    try:
        return int(client.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]) == 0
    except Exception:  # CONFIG refused (a managed Redis): no server timing
        return False


# The address SLOWLOG gives a command a script called (EVALSHA, FCALL): Redis 6.2 and 7 log those
# too, from the script's client, and their time is already inside the script's own duration.
SCRIPT_CLIENT_ADDRESS = "?:0"


def _server_seconds(client: Any, operations: int) -> float:
    """Seconds Redis spent per operation since the last SLOWLOG RESET: the top-level commands' own
    durations (the log's own commands and what a script called left out)."""
    spent = 0
    for entry in client.slowlog_get(-1):
        command, address = (reply_text(entry.get(field, b"")) for field in ("command", "client_address"))
        if address != SCRIPT_CLIENT_ADDRESS and not command.upper().startswith(("SLOWLOG", "CONFIG")):
            spent += int(entry["duration"])
    return spent / 1e6 / max(operations, 1)


def measure_growth(peer: Peer, sizes: Sequence[int], per_size: int = 30, batches: int = BATCHES,
                   server: bool = False) -> list[dict]:
    """One point per ``n`` in ``sizes`` (increasing): ``{"n", "add", "add_least", "pop"}``
    each a list of ``batches`` medians in seconds, and with ``server`` the same from
    Redis's SLOWLOG as ``"server_add"``, ``"server_add_least"``, ``"server_pop"``."""
    sizes = [check_int("size", n, 1, 10_000_000) for n in sizes]
    if sizes != sorted(set(sizes)):
        raise ValueError(f"sizes must increase, got {sizes}")
    per_size = check_int("per_size", per_size, 1, 10_000)
    batches = check_int("batches", batches, 1, 100)
    client = peer.client
    peer.reset()
    points, waiting, named = [], 0, 0
    try:
        for n in sizes:
            peer.fill(growth_jobs(n - waiting, named))
            named, waiting = named + n - waiting, n
            point = {"n": n, **{kind: [] for kind in KINDS}}
            if server:
                point.update({f"server_{kind}": [] for kind in KINDS})
            for _ in range(batches):
                pops, server_pops = [], []
                for kind, tier in (("add", TIERS[0]), ("add_least", TIERS[-1])):
                    if server:
                        client.slowlog_reset()
                    point[kind].append(statistics.median(peer.time_adds(growth_jobs(per_size, named, tier=tier))))
                    named += per_size
                    if server:
                        point[f"server_{kind}"].append(_server_seconds(client, per_size))
                        client.slowlog_reset()
                    pops.extend(peer.time_pops(per_size))
                    if server:
                        server_pops.append(_server_seconds(client, per_size))
                point["pop"].append(statistics.median(pops))
                if server:
                    point["server_pop"].append(statistics.mean(server_pops))
            points.append(point)
    finally:
        peer.reset()
    return points


def measure_all(makers: Sequence[Callable[[], Peer]], sizes: Sequence[int], per_size: int = 30,
                batches: int = BATCHES, log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """:func:`measure_growth` for every peer; the record :func:`save_growth` stores."""
    libraries = {}
    redis_version = None
    server = False
    for make in makers:
        with make() as peer:
            redis_version = redis_version or str(peer.client.info("server")["redis_version"])
            server = slowlog_on(peer.client)
            started = time.perf_counter()
            points = measure_growth(peer, sizes, per_size, batches, server=server)
            log(f"{peer.label}: {time.perf_counter() - started:.1f} s")
            libraries[peer.key] = {"label": peer.label, "library": peer.library, "points": points}
    return {"command": BENCH_COMMAND, "sizes": list(sizes), "per_size": per_size, "batches": batches,
            "server_timing": "SLOWLOG durations of top-level commands" if server else None,
            "redis": redis_version, "when": time.strftime("%Y-%m-%d", time.gmtime()), "libraries": libraries}


WALK_SIZE = 100_000


def measure_list_walk(client: Any, size: int = WALK_SIZE, repeats: int = 21) -> dict[str, Any]:
    """What Bull's add costs Redis, command by command, on a list of ``size`` elements (a
    server with :data:`SLOWLOG_ARGS`): ``LINDEX`` at the head, the middle and the tail, and
    ``LINSERT`` before an element there (found by comparing every element from the head); the
    median of ``repeats`` SLOWLOG durations each, in µs. The list is deleted afterwards."""
    size = check_int("size", size, 3, 10_000_000)
    repeats = check_int("repeats", repeats, 1, 1000)
    if not slowlog_on(client):
        raise ValueError("the server must log every command (start it with SLOWLOG_ARGS)")
    key = "viz-10-list-walk"
    client.delete(key)
    with client.pipeline(transaction=False) as pipe:
        for start in range(0, size, 1000):
            pipe.rpush(key, *[f"e{i}" for i in range(start, min(start + 1000, size))])
        pipe.execute()
    places = {"head": 1, "middle": size // 2, "tail": size - 2}

    def timed(command: tuple, undo: tuple | None = None) -> float:
        durations = []
        for _ in range(repeats):
            client.slowlog_reset()
            client.execute_command(*command)
            durations += [int(entry["duration"]) for entry in client.slowlog_get(10)
                          if reply_text(entry.get("command", b"")).upper().startswith(command[0])]
            if undo:
                client.execute_command(*undo)
        return float(statistics.median(durations))

    try:
        return {"size": size, "repeats": repeats,
                "lindex_us": {place: timed(("LINDEX", key, index)) for place, index in places.items()},
                "linsert_us": {place: timed(("LINSERT", key, "BEFORE", f"e{index}", "new"), ("LREM", key, 1, "new"))
                               for place, index in places.items()}}
    finally:
        client.delete(key)


def save_growth(record: dict, path: Path = STORED) -> None:
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def load_growth(path: Path = STORED) -> dict[str, Any]:
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    for key in ("command", "sizes", "per_size", "batches", "libraries"):
        if key not in record:
            raise ValueError(f"{path} is no growth record: it lacks {key!r}")
    return record


def series(record: dict, which: str) -> dict[str, list[tuple[int, float, float, float]]]:
    """label -> ``(n, median, lowest, highest)`` over the batches, in seconds, of
    ``which``: ``"add"``, ``"add_least"``, ``"pop"``, or one of them prefixed ``server_``."""
    if which.removeprefix("server_") not in KINDS:
        raise ValueError(f"which must be one of {', '.join(KINDS)}, alone or after 'server_', got {which!r}")
    out = {}
    for entry in record["libraries"].values():
        points = [(int(p["n"]), statistics.median(p[which]), min(p[which]), max(p[which]))
                  for p in entry["points"] if p.get(which)]
        if points:
            out[entry["label"]] = points
    return out
