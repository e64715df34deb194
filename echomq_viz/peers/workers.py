"""Each library through its own worker, as its users deploy it (I/O).

Every library gets a private, throwaway ``redis-server`` of its own (a unix
socket in a 0700 folder), so it runs with its default key names, exactly as
deployed, and ``MONITOR`` and ``INFO commandstats`` there see that library
and nothing else. The producer adds the jobs with the library's own API
while no worker runs; then the library's worker process starts (``celery
worker``, ``rq worker high mid low``, ``huey_consumer``, Bull's
``queue.process``, BullMQ's ``Worker``) and runs them, each job appending
its name to ``viz10:done``. Once the queue is empty and the worker waits on
it, one more job is added, to see how the worker takes a job after an empty
queue (not for ``rq worker --burst``, which exits once the queue is empty).
The specs of each library are in :mod:`.deployments`.
"""

from __future__ import annotations

import secrets
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from echomq_viz.redis_side.server import RedisServer

__all__ = ["Sent", "WorkerRun", "Deployment", "run_deployment", "run_all", "DONE", "command_stats",
           "take_commands", "before_each_record"]

DONE = "viz10:done"
OURS = "viz10:"  # the keys of this process's own bookkeeping (DONE, and a gated task's "started")
BLOCKING = {"BRPOP", "BLPOP", "BRPOPLPUSH", "BLMOVE", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "BLMPOP", "XREAD",
            "XREADGROUP"}


@dataclass(frozen=True)
class Sent:
    """One job the producer added: its name, the priority passed (None: none), the library's answer."""

    name: str
    priority: Any
    outcome: str = "ok"


class Deployment:
    """One library as deployed: subclasses (in :mod:`.deployments`) set the
    names and implement :meth:`open_producer`, :meth:`add`, :meth:`start_worker`."""

    key = ""
    label = ""
    how = ""  # the worker as its users start it
    settings: tuple = ()  # (setting, value, where the library documents it)

    def version(self) -> str:
        raise NotImplementedError

    def open_producer(self, socket: str) -> None:
        raise NotImplementedError

    def add(self, jobs: Sequence[tuple[str, Any]]) -> list[str]:
        """Add ``(name, priority)`` pairs in turn; "ok" or the library's own refusal
        (its first line, as the library says it), for each."""
        outcomes = []
        for name, priority in jobs:
            try:
                self.add_one(name, priority)
                outcomes.append("ok")
            except Exception as error:
                outcomes.append(next((line for line in str(error).splitlines() if line.strip()), type(error).__name__))
        return outcomes

    def add_one(self, name: str, priority: Any) -> None:
        """Add one job through the library's own producer API."""
        raise NotImplementedError

    def start_worker(self, socket: str) -> None:
        raise NotImplementedError

    def inspect(self, client: Any) -> dict:
        """What the run left in Redis that the notebook reads (e.g. where a job that never ran
        waits), read before the worker stops; nothing by default."""
        return {}

    def stop(self) -> None:
        """Stop the worker and close the producer."""


@dataclass
class WorkerRun:
    """What one library's worker did, every field read from its Redis."""

    key: str
    label: str
    version: str
    how: str
    settings: tuple
    sent: tuple  # Sent, in the order added
    order: tuple  # names, in the order the worker ran them
    steady: tuple  # MONITOR lines between two jobs in the middle of the run (the median gap)
    late: tuple  # MONITOR lines of the take after an empty queue, the producer's add left out
    keys: dict  # every key the library wrote -> its Redis type
    add: tuple = ()  # MONITOR lines of one add (the second), no worker running
    stats: dict = field(default_factory=dict)  # command -> (calls, µs per call), Redis's own timing
    seconds: float = 0.0
    worker: tuple = ()  # every MONITOR line after the worker started, this process's own checks left out
    notes: dict = field(default_factory=dict)  # what the deployment read after the run (Deployment.inspect)

    def ran(self, name: str) -> int:
        """1-based position at which ``name`` ran (0: never)."""
        return self.order.index(name) + 1 if name in self.order else 0


class _Monitor:
    """``MONITOR`` on one server, every line kept (the server is the library's alone)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.word = f"viz10-mark-{secrets.token_hex(4)}"
        self.lines: list[tuple[str, bool]] = []  # (command text, ran inside Lua)
        self._monitor = client.monitor()
        self._monitor.__enter__()
        self._thread = threading.Thread(target=self._listen, daemon=True, name="echomq-viz-monitor")
        self._thread.start()

    def _listen(self) -> None:
        try:
            while True:
                line = self._monitor.next_command()
                self.lines.append((line["command"], line.get("client_type") == "lua"))
                if line["command"] == f"ECHO {self.word} stop":
                    return
        except Exception:  # the server went away: what was seen is kept
            return

    def mark(self, what: str) -> None:
        self.client.echo(f"{self.word} {what}")

    def close(self) -> list[tuple[str, bool]]:
        self.mark("stop")
        self._thread.join(10)
        try:
            self._monitor.__exit__(None, None, None)
        except Exception:
            pass
        return self.lines


def _is_record(text: str) -> bool:
    parts = text.split(" ", 2)
    return parts[0].upper() == "RPUSH" and len(parts) > 1 and parts[1] == DONE


def _between(lines: Sequence[tuple[str, bool]], word: str, first: str, last: str | None) -> list[tuple[str, bool]]:
    marks = {text.split(" ", 2)[2]: i for i, (text, _) in enumerate(lines) if text.startswith(f"ECHO {word} ")}
    return list(lines[marks[first] + 1:marks[last] if last else len(lines)])


def _worker_lines(lines: Sequence[tuple[str, bool]], word: str) -> list[tuple[str, bool]]:
    """The lines after the worker started, this process's own checks (``LLEN viz10:done``) left out."""
    return [line for line in _between(lines, word, "worker", None)
            if _is_record(line[0]) or (OURS not in line[0] and not line[0].startswith(f"ECHO {word} "))
            or line[0].startswith(f"ECHO {word} late")]


def take_commands(lines: Sequence[tuple[str, bool]], word: str, add: Sequence[tuple[str, bool]]) -> tuple[tuple, tuple]:
    """From all MONITOR lines: the worker's lines in the median gap between two
    jobs' records in the middle of the run, and those of the take after an
    empty queue: from the worker's last command before the late add through
    the late job's record, the producer's add (``add``: one add's lines, as
    seen with no worker running) taken out once. Pure."""
    seen = _worker_lines(lines, word)
    late_at = next(i for i, (text, _) in enumerate(seen) if text.startswith(f"ECHO {word} late"))
    records = [i for i, (text, _) in enumerate(seen[:late_at]) if _is_record(text)]
    gaps = [seen[a + 1:b] for a, b in zip(records, records[1:])]
    gaps = gaps[len(gaps) // 4: max(len(gaps) * 3 // 4, len(gaps) // 4 + 1)]  # the middle of the run
    steady = tuple(sorted(gaps, key=len)[len(gaps) // 2]) if gaps else ()
    # Redis 7.0 logs a blocking command when it is called: the one that takes the late job
    # was sent before the mark, while the worker waited on the empty queue
    # Redis 7.0 logs a blocking command when it is called: the one that took the late job was
    # sent while the worker waited on the empty queue (or, prefetching, before its last job ran)
    last = next((i for i in range(late_at - 1, -1, -1) if not seen[i][1]
                 and seen[i][0].split(" ", 1)[0].upper() in BLOCKING), None)
    record = next((i for i in range(late_at + 1, len(seen)) if _is_record(seen[i][0])), len(seen))
    window = ([seen[last]] if last is not None else []) + \
        [line for line in seen[late_at + 1:record] if not line[0].startswith(f"ECHO {word} ")]
    _take_out(window, add)
    return steady, tuple(window)


def before_each_record(lines: Sequence[tuple[str, bool]]) -> list[tuple[tuple[str, bool], ...]]:
    """The worker's lines split at each job's record (``RPUSH viz10:done``): what it sent before
    the first job's record, between each two, and after the last (one more entry than records). Pure."""
    parts, current = [], []
    for line in lines:
        if _is_record(line[0]):
            parts.append(tuple(current))
            current = []
        else:
            current.append(line)
    parts.append(tuple(current))
    return parts


def _take_out(window: list, add: Sequence[tuple[str, bool]]) -> None:
    """Remove the producer's add from ``window`` once: each command it sent by its name, a
    script call with the Lua lines that follow it."""
    for text, lua in add:
        if lua:
            continue
        verb = text.split(" ", 1)[0].upper()
        hit = next((i for i, (seen, in_lua) in enumerate(window)
                    if not in_lua and seen.split(" ", 1)[0].upper() == verb), None)
        if hit is None:
            continue
        end = hit + 1
        if verb in ("EVAL", "EVALSHA", "FCALL"):
            while end < len(window) and window[end][1]:
                end += 1
        del window[hit:end]


def command_stats(client: Any) -> dict[str, tuple[int, float]]:
    """``INFO commandstats``: command -> (calls, µs per call), Redis's own timing."""
    stats = {}
    for name, entry in client.info("commandstats").items():
        stats[name.removeprefix("cmdstat_").upper()] = (int(entry["calls"]), float(entry["usec_per_call"]))
    return stats


def _wait_for(client: Any, count: int, timeout: float, what: str, patience: float | None = None) -> None:
    """Until ``count`` jobs ran; with ``patience``, also stop (without error) once
    none more ran for that many seconds after the first (a job the worker never takes)."""
    deadline = time.monotonic() + timeout
    seen, since = -1, time.monotonic()
    while (done := client.llen(DONE)) < count:
        if done != seen:
            seen, since = done, time.monotonic()
        elif patience is not None and done and time.monotonic() - since > patience:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: {client.llen(DONE)} of {count} jobs ran within {timeout:.0f} s")
        time.sleep(0.02)


def run_deployment(deployment: Deployment, jobs: Sequence[tuple[str, Any]], *, late: str | None = "late",
                   expect: int | None = None, timeout: float = 60.0, patience: float | None = None,
                   between: Callable[[Any, Deployment], None] | None = None) -> WorkerRun:
    """Add ``jobs`` with no worker running, start the worker, wait until
    ``expect`` jobs (default: those the library accepted) ran, then add
    ``late`` to the idle worker. ``between(client, deployment)`` runs once the
    worker started (it waits for what it needs, e.g. to send an urgent job behind the queued ones)."""
    server = RedisServer().start()
    started = time.perf_counter()
    try:
        client = server.client()
        deployment.open_producer(server.socket_path)
        monitor = _Monitor(client)
        try:
            jobs = list(jobs)
            outcomes = deployment.add(jobs[:1])
            monitor.mark("one")  # the second add, alone: what one add sends
            outcomes += deployment.add(jobs[1:2])
            monitor.mark("rest")
            outcomes += deployment.add(jobs[2:])
            sent = tuple(Sent(name, priority, outcome) for (name, priority), outcome in zip(jobs, outcomes))
            expect = sum(s.outcome == "ok" for s in sent) if expect is None else expect
            written = set(client.scan_iter(count=1000))  # before the worker empties (and so deletes) lists
            monitor.mark("worker")
            deployment.start_worker(server.socket_path)
            if between is not None:
                between(client, deployment)
            _wait_for(client, expect, timeout, deployment.label, patience)
            if late is not None:
                time.sleep(0.3)  # the worker now waits on an empty queue
                monitor.mark("late")
                deployment.add([(late, jobs[1][1])])  # as the add measured alone
                _wait_for(client, expect + 1, timeout, deployment.label)
        finally:
            lines = monitor.close()
        one_add = tuple(_between(lines, monitor.word, "one", "rest"))
        steady, late_lines = take_commands(lines, monitor.word, one_add) if late is not None else ((), ())
        order = tuple(client.lrange(DONE, 0, -1))
        keys = {key: client.type(key) for key in sorted(written | set(client.scan_iter(count=1000)))
                if not key.startswith(OURS)}
        stats = command_stats(client)
        notes = deployment.inspect(client)
        return WorkerRun(deployment.key, deployment.label, deployment.version(), deployment.how,
                         tuple(deployment.settings), sent, order, steady, late_lines, keys, one_add, stats,
                         time.perf_counter() - started, tuple(_worker_lines(lines, monitor.word)),
                         {**getattr(deployment, "notes", {}), **notes})
    finally:
        try:
            deployment.stop()
        finally:
            server.stop()


def run_all(plans: Sequence[tuple[Callable[[], Deployment], Sequence[tuple[str, Any]], dict]],
            workers: int = 4) -> list[WorkerRun]:
    """:func:`run_deployment` for each ``(make, jobs, options)``, several at once
    (each on its own server); the results in the order given."""
    def one(plan):
        make, jobs, options = plan
        return run_deployment(make(), jobs, **options)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, plans))


def gap_counts(lines: Sequence[tuple[str, bool]]) -> tuple[int, int]:
    """(commands a client sent, commands Lua ran) in ``lines``."""
    return sum(not lua for _, lua in lines), sum(lua for _, lua in lines)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
