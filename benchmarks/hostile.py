"""One hostile student against the others on a course's shared Redis 7.

    python benchmarks/hostile.py [--seconds 8] [--rounds 2] [--others 3] [--quick]
                                 [--json OUT]

A real redis-server 7 as an operator runs it (a password, ``maxmemory`` 256 MB,
``noeviction``), a Redis user per student made by ``acl add``'s code (the
function library loaded, the default caps). The other students are processes
each holding a ``Demo`` and working it as a notebook does: add a job, take one,
now and then reset, every call timed. In alternate phases of SECONDS:

- ``baseline``: nobody else;
- ``cpu``: the control: the hostile process as busy in Python, sending Redis
  nothing (on a small machine the others wait for a core, not for Redis);
- ``script``: the hostile student, in a process of its own, sends everything a
  student once could to stop a course, as fast as it can, round after round: ``EVAL`` of a
  busy loop, ``FUNCTION FLUSH``, ``SCRIPT FLUSH``, ``SELECT``, a lease without
  expiry, a flood through ``Demo.add_batch`` and through the library called by
  hand (both stop at the caps), odd keys by hand;
- then once, ``raw``: a flood of 1 MB values by hand into its own keys with the
  write commands it keeps, until ``maxmemory`` refuses it, then the operator's
  ``clean`` takes it back.

Reported (part ``hostile`` of ``benchmarks/run.py``, or ``--json``):
``hostile_baseline_p95_ms``, ``hostile_cpu_only_p95_ms`` and
``hostile_script_p95_ms`` (the others' calls), ``hostile_p95_ratio`` (script
to baseline) and ``hostile_p95_ratio_to_cpu_only``, Redis's own
CPU in each phase (``hostile_redis_cpu_*_pct``), ``hostile_others_lost`` (jobs an other
student added that are gone, checked before each of its resets and at the end, so a
job lost mid-attack counts; outside the raw phase; goal 0), ``hostile_others_errors`` in the script
phase (goal 0), ``hostile_not_refused`` (hostile commands Redis ran; goal 0),
``hostile_flood_jobs_in`` (the jobs the package's flood got in: the caps), and
for the raw flood ``hostile_raw_mb`` written before ``maxmemory`` refused,
``hostile_raw_p95_ms``, ``hostile_raw_others_refused`` (others' adds refused
while the server was full), ``hostile_raw_lost`` (the same in the raw phase; goal 0) and
``hostile_raw_clean_s`` (the operator's ``clean`` taking it back).

The whole run is made twice: first every student straight on Redis (the figures
above, what a course without the gate gets: ``hostile_p95_ratio`` has no goal
there, as Redis runs each client's pipeline whole before the next), then every
student through ``echomq-viz gate`` with its defaults (the same figures as
``hostile_gated_*``; ``hostile_gated_p95_ratio``: goal <= 1.2).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from echomq_viz.redis_side.acl import add_student  # noqa: E402
from echomq_viz.redis_side.demo_keys import namespace_of  # noqa: E402
from echomq_viz.redis_side.owners import clean_orphans  # noqa: E402
from echomq_viz.redis_side.server import RedisServer  # noqa: E402

GOALS = {"hostile_gated_p95_ratio": ("<=", 1.2), "hostile_gated_others_lost": ("<=", 0),
         "hostile_gated_others_errors": ("<=", 0), "hostile_gated_not_refused": ("<=", 0),
         "hostile_gated_raw_lost": ("<=", 0),
         "hostile_others_lost": ("<=", 0), "hostile_others_errors": ("<=", 0), "hostile_not_refused": ("<=", 0),
         "hostile_raw_lost": ("<=", 0)}
MAXMEMORY_MB = 256
# An other student's pause between calls: a hundred times quicker than a person at a notebook, yet
# not a loop at the machine's full speed, which would leave the hostile no core to take from anyone
# and make any extra process on a small machine show as a wait.
THINK_S = 0.005
BUSY = "while true do end"


def _other(url: str, schedule: list[tuple[float, float, str]], results) -> None:
    """An other student: add one job, take one, a reset every 100 calls, THINK_S between calls; each
    call timed by phase."""
    from echomq_viz.experiments.live import Demo
    from echomq_viz.redis_side.server import connect

    demo = Demo("viz-01-score", client=connect(url))
    times: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    refused: dict[str, int] = {}
    held: set[str] = set()  # jobs added and not yet taken or reset: they must all be there
    lost: dict[str, int] = {}  # per phase: held jobs found gone, counted before each reset and at the end

    def count_lost(phase: str) -> None:  # untimed: a read of at most 50 jobs
        try:
            waiting = set(demo.waiting()) | {entry.job_id for entry in demo.entries()}
        except Exception:  # noqa: BLE001 (counted as the phase's error, as a call's)
            errors[phase] = errors.get(phase, 0) + 1
            return
        lost[phase] = lost.get(phase, 0) + len(held - waiting)

    calls = 0
    phase = ""
    for start, end, phase in schedule:
        while time.time() < start:
            time.sleep(0.005)
        while time.time() < end:
            if calls % 100 == 99:
                count_lost(phase)  # before the reset forgets what was held
            began = time.perf_counter()
            try:
                if calls % 100 == 99:
                    demo.reset()
                    held.clear()
                elif calls % 2 == 0:
                    held.add(demo.add("job", 1 + calls % 3))
                else:
                    job = demo.pop()
                    held.discard(job.id if job else "")
            except Exception as exc:  # one line each; a full server's refusal counted apart
                kind = refused if "OutOfMemory" in type(exc).__name__ or "OOM" in str(exc) else errors
                kind[phase] = kind.get(phase, 0) + 1
            times.setdefault(phase, []).append((time.perf_counter() - began) * 1000)
            calls += 1
            time.sleep(THINK_S)
    count_lost(phase)
    results.put({"times": times, "errors": errors, "refused": refused, "lost": lost})


def _hostile(url: str, space: str, schedule: list[tuple[float, float, str]], results) -> None:
    """The hostile student: everything of cases 1 and 2, round after round, in the 'script' phases;
    the raw flood in the 'raw' phase."""
    import redis

    from echomq_viz.core.keys import Keys, QueueContext
    from echomq_viz.experiments.live import Demo
    from echomq_viz.redis_side.functions import function_name
    from echomq_viz.redis_side.lua_loader import load_scripts
    from echomq_viz.redis_side.demo_keys import lease_key
    from echomq_viz.redis_side.server import connect

    client = connect(url)
    dead = f"{space}.0badc0de"
    attacks = [("EVAL", BUSY, 0), ("EVALSHA", hashlib.sha1(BUSY.encode()).hexdigest(), 0), ("SCRIPT", "LOAD", BUSY),
               ("SCRIPT", "FLUSH"), ("FUNCTION", "FLUSH"), ("FUNCTION", "DELETE", "echomq_viz"), ("SELECT", 1),
               ("FLUSHDB",), ("CONFIG", "SET", "maxmemory", 1), ("SET", lease_key(dead), "forever"),
               ("PERSIST", lease_key(dead)), ("MULTI",), ("SWAPDB", 0, 1), ("CLIENT", "PAUSE", 10_000)]
    add = load_scripts()["addPrioritizedJob"]
    odd = QueueContext(f"viz-x@{space}.zzzzzzzz")
    by_hand = ("FCALL", function_name(add.source), 9, *add.keys(odd), Keys.base(odd), "", "j", 1, "{}", 1)
    flood = [Demo(f"viz-flood-{n}", client=client) for n in range(80)]
    not_refused, flood_in, rounds, raw_written = 0, 0, 0, 0
    for start, end, phase in schedule:
        while time.time() < start:
            time.sleep(0.005)
        while phase == "script" and time.time() < end:
            for command in attacks:
                try:
                    client.execute_command(*command)
                    not_refused += 1
                except redis.exceptions.NoPermissionError:
                    pass
            for demo in flood[rounds % len(flood):][:2]:
                try:
                    flood_in += len(demo.add_batch([1] * 2000))
                except Exception as exc:  # the caps: one line, the jobs that went in in .ids
                    flood_in += len(getattr(exc.__cause__, "ids", getattr(exc, "ids", [])))
            for _ in range(50):  # the library called by hand: in while the caps allow, then refused
                try:
                    client.execute_command(*by_hand)
                    flood_in += 1
                except redis.ResponseError:
                    pass
            rounds += 1
        while phase == "cpu" and time.time() < end:  # the control: as busy, but no Redis at all
            sum(i * i for i in range(20_000))
        if phase == "raw":
            block = "x" * 1_000_000
            try:
                while time.time() < end:
                    client.hset(f"emq:{{viz-raw@{dead}}}:{raw_written}", "data", block)
                    raw_written += 1
            except redis.exceptions.OutOfMemoryError:
                pass
            while time.time() < end:
                time.sleep(0.01)
    results.put({"not_refused": not_refused, "flood_in": flood_in, "rounds": rounds, "raw_mb": raw_written})


@contextlib.contextmanager
def _gate(url: str):
    """``echomq-viz gate`` in front of ``url``, as an operator runs it: its port; stopped (Ctrl-C) at
    the end, whatever happened."""
    # the operator's URL in its environment (REDIS_URL), never on a command line every user's `ps` shows
    gate = subprocess.Popen([sys.executable, "-m", "echomq_viz", "gate", "--port", "0"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "REDIS_URL": url})
    try:
        first = gate.stdout.readline()
        if " through 127.0.0.1:" not in first:
            raise RuntimeError(f"the gate did not start: {first.strip()!r}")
        yield int(first.split(" through 127.0.0.1:")[1].split(",")[0])
    finally:
        gate.send_signal(signal.SIGINT)
        try:
            gate.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            gate.kill()
            gate.communicate()


def _through(url: str, port: int) -> str:
    """A student's URL pointed at the gate on ``port``."""
    login = url.split("://", 1)[1].rpartition("@")[0]
    return f"redis://{login}@127.0.0.1:{port}/0"


def _redis_cpu(client) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _p95(samples: list[float]) -> float | None:
    return round(float(np.percentile(np.asarray(samples), 95)), 2) if samples else None


def bench_hostile(seconds: float = 8.0, rounds: int = 2, others: int = 3, log=print) -> dict:
    """The whole run twice: every student straight on Redis (``hostile_*``), then every student
    through the gate (``echomq-viz gate``, :mod:`echomq_viz.redis_side.gate`, with its defaults:
    ``hostile_gated_*``)."""
    direct = bench_course(seconds, rounds, others, log=log)
    gated = bench_course(seconds, rounds, others, log=log, gated=True)
    return {**direct, **{key.replace("hostile_", "hostile_gated_", 1): value for key, value in gated.items()}}


def bench_course(seconds: float = 8.0, rounds: int = 2, others: int = 3, log=print, gated: bool = False) -> dict:
    """Alternate baseline and script phases ``rounds`` times, then the raw flood; the figures.
    ``gated``: the students reach Redis through the gate, in a process of its own."""
    context = multiprocessing.get_context("spawn")
    with RedisServer(port=0, extra_args=("--maxmemory", f"{MAXMEMORY_MB}mb",
                                         "--maxmemory-policy", "noeviction")) as server:
        operator = server.client()
        if int(operator.info("server")["redis_version"].split(".")[0]) < 7:
            raise RuntimeError(f"a shared course needs Redis 7 or newer, this redis-server is "
                               f"{operator.info('server')['redis_version']}: install Debian's (or set "
                               "ECHOMQ_VIZ_REDIS_SERVER)")
        urls = [add_student(operator, f"other{n}", server.url) for n in range(others)]
        hostile_url = add_student(operator, "mallory", server.url)
        with _gate(server.url) if gated else contextlib.nullcontext() as gate_port:
            if gate_port is not None:
                urls, hostile_url = [_through(url, gate_port) for url in urls], _through(hostile_url, gate_port)
            setup = 15.0  # every process imports the package and makes its Demo first
            now = time.time() + setup
            schedule = []
            for _ in range(rounds):
                schedule += [(now, now + seconds, "baseline"), (now + seconds, now + 2 * seconds, "cpu"),
                             (now + 2 * seconds, now + 3 * seconds, "script")]
                now += 3 * seconds
            schedule.append((now, now + seconds, "raw"))
            results = context.Queue()
            workers = [context.Process(target=_other, args=(url, schedule, results)) for url in urls]
            workers.append(context.Process(target=_hostile, args=(hostile_url, namespace_of("mallory"), schedule,
                                                                     results)))
            for worker in workers:
                worker.start()
            log(f"hostile{' through the gate' if gated else ''}: {others} students and one hostile, {rounds} x 3 "
                f"phases of {seconds:g} s, then the raw flood")
            cpu: dict[str, float] = {}  # Redis's own CPU seconds in each kind of phase
            for start, end, phase in schedule:
                while time.time() < start:
                    time.sleep(0.01)
                before = _redis_cpu(operator)
                while time.time() < end:
                    time.sleep(0.01)
                cpu[phase] = cpu.get(phase, 0.0) + _redis_cpu(operator) - before
            reports = [results.get(timeout=600) for _ in workers]
            for worker in workers:
                worker.join(60)
            space = namespace_of("mallory")
            flood = sum(1 for _ in operator.scan_iter(match=f"emq:{{viz-raw@{space}.*", count=1000))
            cleaned = time.perf_counter()
            removed = clean_orphans(operator)  # the raw flood's keys: no live lease holds them
            clean_s = time.perf_counter() - cleaned
            left = sum(1 for _ in operator.scan_iter(match=f"emq:{{viz-raw@{space}.*", count=1000))
            operator.close()
    hostile = next(report for report in reports if "not_refused" in report)
    students = [report for report in reports if "times" in report]
    pooled = {phase: [t for report in students for t in report["times"].get(phase, [])]
              for phase in ("baseline", "cpu", "script", "raw")}
    base, busy, script = _p95(pooled["baseline"]), _p95(pooled["cpu"]), _p95(pooled["script"])
    return {
        "hostile_others": others, "hostile_phase_s": seconds, "hostile_rounds": rounds,
        "hostile_baseline_calls": len(pooled["baseline"]), "hostile_script_calls": len(pooled["script"]),
        "hostile_baseline_p95_ms": base, "hostile_script_p95_ms": script,
        "hostile_p95_ratio": round(script / base, 2) if base and script else None,
        "hostile_cpu_only_p95_ms": busy,  # the hostile process as busy with no Redis: the machine's share
        "hostile_p95_ratio_to_cpu_only": round(script / busy, 2) if busy and script else None,
        "hostile_others_lost": sum(report["lost"].get(phase, 0) for report in students
                                   for phase in ("baseline", "cpu", "script")),
        "hostile_others_errors": sum(report["errors"].get("script", 0) + report["errors"].get("baseline", 0)
                                     for report in students),
        "hostile_not_refused": hostile["not_refused"], "hostile_script_rounds": hostile["rounds"],
        "hostile_flood_jobs_in": hostile["flood_in"],
        "hostile_raw_mb": hostile["raw_mb"], "hostile_raw_p95_ms": _p95(pooled["raw"]),
        "hostile_raw_others_refused": sum(report["refused"].get("raw", 0) for report in students),
        "hostile_raw_others_errors": sum(report["errors"].get("raw", 0) for report in students),
        "hostile_raw_lost": sum(report["lost"].get("raw", 0) for report in students),
        "hostile_raw_keys": flood, "hostile_raw_clean_keys": removed, "hostile_raw_left": left,
        "hostile_raw_clean_s": round(clean_s, 2),
        "hostile_redis_cpu_baseline_pct": round(100 * cpu["baseline"] / (rounds * seconds), 1),
        "hostile_redis_cpu_script_pct": round(100 * cpu["script"] / (rounds * seconds), 1),
        "hostile_load_average": round(os.getloadavg()[0], 2),
        "hostile_note": f"maxmemory {MAXMEMORY_MB} MB noeviction, default caps; the others' calls: add one, "
                        f"take one, reset every 100, {THINK_S * 1000:g} ms between calls",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each phase (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="baseline and script phases, each (default 2)")
    parser.add_argument("--others", type=int, default=3, help="other students (default 3)")
    parser.add_argument("--quick", action="store_true", help="3 s phases, one round, two others")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--into-results", action="store_true",
                        help="merge the figures into benchmarks/results.json as run.py's part 'hostile'")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1 or args.others < 1:
        parser.error("--seconds must be above 0, --rounds and --others 1 or more")
    if args.into_results:
        import run

        return run.main(["--only", "hostile", *(["--quick"] if args.quick else [])],
                        parts={**run.PARTS, "hostile": lambda quick: bench_hostile(*((3.0, 1, 2) if quick else
                                                                                     (args.seconds, args.rounds,
                                                                                      args.others)))})
    results = bench_hostile(*((3.0, 1, 2) if args.quick else (args.seconds, args.rounds, args.others)))
    from report import print_results

    print_results(results, GOALS, str(args.json) if args.json else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
