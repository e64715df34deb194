"""Measure what a person waits for, in one run on this machine.

    python benchmarks/run.py                  # everything it can measure here
    python benchmarks/run.py --quick          # smaller sizes, for a smoke run
    python benchmarks/run.py --only inspect   # some parts (comma-separated); results.json keeps the rest

Prints a table and writes benchmarks/results.json. A figure that cannot be
measured here (no redis-benchmark, no Chromium) is written as null with the
reason, never guessed. A part that fails (a timeout under load, say) is
recorded as ``<part>_error`` with its reason on one line, the other parts
still run and report, and the run exits 1. Timed figures live only here,
never in the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from echomq_viz.core.keys import Keys, QueueContext  # noqa: E402
from echomq_viz.experiments.live import Demo  # noqa: E402
from echomq_viz.core.score import priority_score, priority_scores_array  # noqa: E402
from echomq_viz.redis_side.scripts import Scripts  # noqa: E402
from echomq_viz.redis_side.server import RedisServer  # noqa: E402
from echomq_viz.widgets.view import one_line  # noqa: E402  (an exception as one short line)

from classroom import (  # noqa: E402  (benchmarks/ is sys.path[0])
    CORE_RAMP as CLASSROOM_CORE_RAMP, GOALS as CLASSROOM_GOALS, RAMP as CLASSROOM_RAMP, bench_classroom, bench_one_core,
)
from lease import GOALS as LEASE_GOALS, bench_lease  # noqa: E402
from hub import GOALS as HUB_GOALS, bench_hub  # noqa: E402
from flood import GOALS as FLOOD_GOALS, bench_flood  # noqa: E402
from peers import QUICK_SIZES as PEERS_QUICK, bench_list_walk, bench_peers  # noqa: E402
from first_view import GOALS as FIRST_VIEW_GOALS, bench_first_view  # noqa: E402
from hostile import GOALS as HOSTILE_GOALS, bench_hostile  # noqa: E402
from page_views import bench_browser, bench_page_draw  # noqa: E402
from profile_slider import profile_slider  # noqa: E402
from report import print_results  # noqa: E402

GOALS = {
    # a drag: drawn in the page within one frame, at no cost to the kernel
    "page_draw_p95_ms": ("<=", 4), "browser_figure_p95_ms": ("<=", 16.7),
    "browser_kernel_messages_per_drag": ("<=", 0), "browser_live_kernel_cpu_ms_per_move": ("<=", 0.5),
    "slider_cpu_ms_per_move": ("<=", 3.5), "add_vs_redis_benchmark": (">=", 0.6),
    "drain_vs_redis_benchmark": (">=", 0.6), "score_pairs_per_s": (">=", 200e6),
    "bands_page_draw_p95_ms": ("<=", 16.7), "test_suite_s": ("<=", 300), "test_quick_s": ("<=", 45),
    # the suite against itself at SUITE_REFERENCE, both measured in this run: 300 s against the
    # 358.4 s recorded there, the cut asked of it then
    "test_suite_vs_reference": ("<=", round(300 / 358.4, 3)),
}


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


# -- Redis throughput against redis-benchmark ------------------------------------------------


def _redis_benchmark_rate(server: RedisServer, argv: list[str], count: int) -> float:
    tool = shutil.which("redis-benchmark")
    start = time.perf_counter()
    subprocess.run([tool, "-s", server.socket_path, "-n", str(count), "-c", "1", "-P", "1000", "-q", *argv],
                   check=True, capture_output=True, text=True)
    return count / (time.perf_counter() - start)


def bench_redis(jobs: int) -> dict:
    if not shutil.which("redis-benchmark"):
        return {"add_vs_redis_benchmark": None, "drain_vs_redis_benchmark": None,
                "redis_note": "redis-benchmark not on PATH (Debian: apt-get install redis-tools)"}
    priorities = np.random.default_rng(2).integers(1, 10, jobs).tolist()
    with RedisServer() as server:
        scripts = Scripts(server.client())
        ours, theirs = QueueContext("bench-ours"), QueueContext("bench-theirs")
        # ours: the package's pipelined add and drain
        start = time.perf_counter()
        scripts.add_prioritized_jobs(ours, [("bench", {}, p) for p in priorities])
        add_rate = jobs / (time.perf_counter() - start)
        start = time.perf_counter()
        drained = scripts.drain(ours, "bench")
        drain_rate = jobs / (time.perf_counter() - start)
        assert len(drained) == jobs
        # theirs: redis-benchmark sending EVALSHA of the same scripts, same server
        add_sha = scripts._registered["addPrioritizedJob"].sha
        move_sha = scripts._registered["moveToActive"].sha
        scripts.client.script_load(scripts.sources["addPrioritizedJob"].source)
        scripts.client.script_load(scripts.sources["moveToActive"].source)
        add_keys = scripts.sources["addPrioritizedJob"].keys(theirs)
        bench_add = _redis_benchmark_rate(server, [
            "EVALSHA", add_sha, "9", *add_keys, Keys.base(theirs), "", "bench",
            str(int(time.time() * 1000)), "{}", "5"], jobs)
        move_keys = scripts.sources["moveToActive"].keys(theirs)
        bench_drain = _redis_benchmark_rate(server, [
            "EVALSHA", move_sha, "11", *move_keys, Keys.base(theirs),
            str(int(time.time() * 1000)), "bench", "30000"], jobs)
        assert scripts.client.zcard(Keys.prioritized(theirs)) == 0  # it really drained
    return {
        "add_jobs_per_s": round(add_rate), "redis_benchmark_add_per_s": round(bench_add),
        "add_vs_redis_benchmark": round(add_rate / bench_add, 3),
        "drain_jobs_per_s": round(drain_rate), "redis_benchmark_drain_per_s": round(bench_drain),
        "drain_vs_redis_benchmark": round(drain_rate / bench_drain, 3),
    }


# -- numpy scores, a million jobs on Redis, and the bands view at its most -------------------


def bench_scores(pairs: int) -> dict:
    rng = np.random.default_rng(3)
    priorities = rng.integers(0, 2**21, pairs, dtype=np.int64)
    counters = rng.integers(0, 2**40, pairs, dtype=np.int64)
    runs = []
    for _ in range(5):  # the first run also pays the page faults of fresh result memory
        start = time.perf_counter()
        scores = priority_scores_array(priorities, counters)
        runs.append(time.perf_counter() - start)
    elapsed = float(np.median(runs))
    sample = rng.integers(0, pairs, 10_000)
    exact = all(int(scores[i]) == priority_score(int(priorities[i]), int(counters[i])) for i in sample)
    return {"score_pairs_per_s": round(pairs / elapsed), "score_first_run_pairs_per_s": round(pairs / runs[0]),
            "score_sample_exact": exact}


# Time the bands' page module (the very text the page runs) drawing the states given, in Node.js
_NODE_STILL = """
const m = await import(process.env.MODULE_URL);
const states = JSON.parse(await (await import("node:fs/promises")).readFile(process.env.STATES, "utf8"));
for (const s of states.slice(0, 5)) m.still(s);  // warm the JIT
const times = states.map((s) => { const t0 = performance.now(); m.still(s); return performance.now() - t0; });
process.stdout.write(JSON.stringify(times));
"""


def _page_still_ms(module: str, states: list[dict]) -> list[float] | None:
    import tempfile

    from echomq_viz.widgets.page_modules import page_module

    node = shutil.which("node")
    if node is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        path, data = Path(folder, f"{module}.mjs"), Path(folder, "states.json")
        path.write_text(page_module(module), encoding="utf-8")
        data.write_text(json.dumps(states), encoding="utf-8")
        done = subprocess.run([node, "--input-type=module", "-e", _NODE_STILL], capture_output=True, text=True,
                              env={**os.environ, "MODULE_URL": path.as_uri(), "STATES": str(data)}, timeout=300,
                              check=True)
    return json.loads(done.stdout)


def bench_bands(jobs: int) -> dict:
    """``jobs`` jobs added to Redis and read back; then notebook 04's view at its most (the
    kernel sends the page JOBS_MAX jobs at most): its refill on Redis, and its page module
    drawing that in Node.js, once for each edge the page can show."""
    from echomq_viz.widgets import BandsView
    from echomq_viz.widgets.bands import JOBS_MAX, START_MAX, TIERS_MAX

    with RedisServer() as server:
        demo = Demo("viz-bench-bands", client=server.client())
        demo.reset()
        priorities = np.random.default_rng(4).integers(1, 9, jobs).tolist()
        start = time.perf_counter()
        demo.add_batch(priorities)
        fill_s = time.perf_counter() - start
        start = time.perf_counter()
        demo.entries()
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        view = BandsView(demo, tiers=TIERS_MAX, jobs=JOBS_MAX, start=START_MAX)  # empties the queue first
        refill_s = time.perf_counter() - start
        state = {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}
    times = _page_still_ms("bands", [dict(state, edge=edge) for edge in range(1, TIERS_MAX)] * 10)
    drawn = ({"bands_page_draw_p50_ms": round(percentile(times, 50), 2),
              "bands_page_draw_p95_ms": round(percentile(times, 95), 2)} if times else
             {"bands_page_draw_p50_ms": None, "bands_page_draw_note": "needs Node.js"})
    return {"bands_jobs": jobs, "bands_1m_fill_s": round(fill_s, 2), "bands_1m_read_s": round(read_s, 2),
            "bands_page_jobs": JOBS_MAX, "bands_view_refill_s": round(refill_s, 3), **drawn}


# -- the read-only inspector on a million jobs ---------------------------------------------------


GOALS.update({"inspect_1m_read_s": ("<=", 1.5), "inspect_max_command_ms": ("<=", 5)})
GOALS.update(CLASSROOM_GOALS)
GOALS.update(LEASE_GOALS)
GOALS.update(HUB_GOALS)
GOALS.update(FLOOD_GOALS)
GOALS.update(FIRST_VIEW_GOALS)
GOALS.update(HOSTILE_GOALS)


def _inspector_commands(admin, name: str) -> dict[bytes, int]:
    """Server time (us) of each command the client called ``name`` sent, from
    SLOWLOG, which is emptied. Each command's text is unique in one read."""
    entries = admin.slowlog_get(100_000)
    admin.slowlog_reset()
    return {e["command"]: e["duration"] for e in entries if e.get("client_name") == name.encode()}


def bench_inspect(jobs: int) -> dict:
    """Reading ``jobs`` scores with inspect_queue (median of three runs), and
    the slowest command it sends, in server time from SLOWLOG on a private
    server: every command while only the scores are read
    (slowlog-log-slower-than 0), and those over 0.1 ms in two full reads that
    also fetch every job hash (a million log entries would not fit). The
    other work on a shared machine may stall the server in any one command,
    so a command's time is its least over the runs; the raw maximum is kept
    beside it."""
    from echomq_viz.experiments.inspection import inspect_queue

    name = "bench-inspector"
    with RedisServer() as server:
        admin = server.client(decode_responses=False)
        base = b"emq:{bench-inspect}:"
        priorities = np.random.default_rng(5).integers(1, 9, jobs)
        scores = priority_scores_array(priorities, np.arange(1, jobs + 1))
        for start in range(0, jobs, 20_000):
            with admin.pipeline(transaction=False) as pipe:
                stop = min(start + 20_000, jobs)
                pipe.zadd(base + b"prioritized", {str(k + 1).encode(): int(scores[k]) for k in range(start, stop)})
                for k in range(start, stop):
                    pipe.hset(base + str(k + 1).encode(), "priority", int(priorities[k]))
                pipe.execute()
        admin.set(base + b"pc", jobs)
        reader = server.client(client_name=name)
        admin.config_set("slowlog-max-len", 100_000)
        for threshold_us, runs, check_jobs in ((0, 3, False), (100, 2, True)):
            admin.config_set("slowlog-log-slower-than", threshold_us)
            admin.slowlog_reset()
            times, logs = [], []
            for _ in range(runs):
                start = time.perf_counter()
                report = inspect_queue(reader, "{bench-inspect}", check_jobs=check_jobs)
                times.append(time.perf_counter() - start)
                logs.append(_inspector_commands(admin, name))
                assert report.total == jobs and report.clean, report.summary()
            if not check_jobs:
                read_s, read_logs = float(np.median(times)), logs
            else:
                full_s, full_logs = float(np.median(times)), logs
        reader.close()
    # A command missing from a run's log took less than that run's threshold there. Each command's
    # least over the runs of a kind; one both kinds send, the larger of its two (not the last kind's).
    least: dict = {}
    for logs in (read_logs, full_logs):
        for cmd in set().union(*logs):
            least[cmd] = max(least.get(cmd, 0), min(log.get(cmd, 0) for log in logs))
    slowest = max(least, key=least.get)
    raw_max = max(d for logs in (read_logs, full_logs) for log in logs for d in log.values())
    return {"inspect_jobs": jobs, "inspect_1m_read_s": round(read_s, 3),
            "inspect_1m_read_commands": len(read_logs[-1]), "inspect_1m_full_s": round(full_s, 2),
            "inspect_max_command_ms": round(least[slowest] / 1000, 2),
            "inspect_slowest_command": slowest.decode(errors="replace").split()[0],
            "inspect_command_p99_ms": round(percentile(list(read_logs[0].values()), 99) / 1000, 2),
            "inspect_max_command_raw_ms": round(raw_max / 1000, 2),
            "inspect_load_average": round(os.getloadavg()[0], 2),
            "inspect_note": "server time from SLOWLOG, each command's least over the runs (raw: the "
                            "largest single time seen, stalls by other work on the machine included)"}


# -- the whole test suite ------------------------------------------------------------------------


# The commit whose suite the goal of 300 s was last set against (358.4 s recorded there, on this
# machine as it then ran): the suite is measured there too, in the same run, as a reference.
SUITE_REFERENCE = "83ae902a408f225a204011d06def50ef7e5aacf3"


def _as_a_clean_clone(root: Path = ROOT) -> dict[str, str]:
    """The environment for a run of the suite as a clean clone on a newcomer's machine starts it:
    none of the project's modules compiled yet (its ``__pycache__`` folders deleted), and Python's
    default of keeping what it compiles (PYTHONDONTWRITEBYTECODE unset; some machines, this one
    among them, set it, and then every kernel compiles the package again and every pytest worker
    rewrites every test module's asserts again)."""
    for folder in ("echomq_viz", "tests", "benchmarks", "notebooks"):
        for cache in (root / folder).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _timed_pytest(*args: str, root: Path = ROOT,
                  python: str = sys.executable) -> tuple[float, str, int, list[str], list[str]]:
    """One run of pytest as the README runs it in a clean clone (:func:`_as_a_clean_clone`) at
    ``root`` with ``python``: (seconds, its last line, exit code, each failed or erroring test with
    its message: :func:`failures`, the slowest steps: :func:`slowest`)."""
    env = _as_a_clean_clone(root)
    start = time.perf_counter()
    run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=25", *args],
                         cwd=root, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in run.stdout.strip().splitlines()] or [""]
    return round(elapsed, 1), lines[-1], run.returncode, failures(lines), slowest(lines)


def slowest(lines: list[str]) -> list[str]:
    """pytest's ``--durations`` rows ("12.34s call tests/x.py::test_y"), slowest first: where the
    suite's time goes, for the next one to cut."""
    return [line.strip() for line in lines if re.match(r"^\s*\d+\.\d+s (call|setup|teardown) ", line)]


def failures(lines: list[str]) -> list[str]:
    """The short summary's ``FAILED`` and ``ERROR`` lines of a pytest run, each with the first
    ``E`` line of its test's report. The summary itself drops the message when the test's name
    is wider than its 80 columns, as a long parametrized name is (except on CI: ``CI`` set)."""
    messages, section = {}, None
    for line in lines:
        header = re.fullmatch(r"_+ (?:ERROR at (?:setup|teardown) of )?(.+?) _+", line)
        if header:
            section = header.group(1)
        elif section and line.startswith("E ") and section not in messages:
            messages[section] = line[1:].strip()
    found = []
    for line in lines:
        if line.startswith(("FAILED ", "ERROR ")):
            if " - " not in line:
                name = line.split(" ", 1)[1].split("::", 1)[-1].replace("::", ".")  # the report's header
                message = messages.get(name)
                line = f"{line} - {message}" if message else line
            found.append(line[:300])
    return found


def _reference_clone(folder: Path) -> tuple[Path, str] | str:
    """A clean clone of this repository at :data:`SUITE_REFERENCE` in ``folder``, set up as its
    README's test command sets up (a venv, ``pip install -e ".[test]"``) with this Python:
    (the clone, its venv's Python), or why there is none (a clone without that history, say)."""
    clone = folder / "echomq-viz"
    steps = [["git", "clone", "--quiet", str(ROOT), str(clone)],
             ["git", "-C", str(clone), "checkout", "--quiet", SUITE_REFERENCE],
             [sys.executable, "-m", "venv", str(clone / ".venv")],
             [str(clone / ".venv" / "bin" / "pip"), "install", "--quiet", "-e", ".[test]"]]
    for step in steps:
        done = subprocess.run(step, cwd=clone if clone.exists() else folder, capture_output=True, text=True)
        if done.returncode != 0:
            return f"{' '.join(step[:3])} failed: {(done.stderr.strip().splitlines() or [''])[-1][:200]}"
    return clone, str(clone / ".venv" / "bin" / "python")


def _suite_figures(prefix: str, run: tuple[float, str, int, list[str], list[str]], *,
                   with_slowest: bool = False) -> dict:
    seconds, tail, code, failed, slowest_steps = run
    figures = {f"{prefix}_s": seconds, f"{prefix}_result": tail, f"{prefix}_exit": code, f"{prefix}_failed": failed}
    return {**figures, f"{prefix}_slowest": slowest_steps} if with_slowest else figures


def bench_test_suite() -> dict:
    """The whole suite (the README's command), then its quick part (-m "not slow"); each also at
    :data:`SUITE_REFERENCE` in the same run (the reference's whole suite first, its quick part
    last), so the ratios compare the two on this machine as it runs now."""
    import tempfile

    figures: dict = {"test_suite_reference": SUITE_REFERENCE[:12]}
    with tempfile.TemporaryDirectory(prefix="emq-bench-reference-") as folder:
        reference = _reference_clone(Path(folder))
        if isinstance(reference, str):
            figures["test_suite_reference_note"] = reference
        else:
            figures.update(_suite_figures("test_suite_reference", _timed_pytest(root=reference[0],
                                                                                python=reference[1])))
        figures.update(_suite_figures("test_suite", _timed_pytest(), with_slowest=True))
        figures.update(_suite_figures("test_quick", _timed_pytest("-m", "not slow")))
        if not isinstance(reference, str):
            figures.update(_suite_figures("test_quick_reference", _timed_pytest("-m", "not slow", root=reference[0],
                                                                                python=reference[1])))
    for part in ("suite", "quick"):
        measured = figures.get(f"test_{part}_reference_s")
        figures[f"test_{part}_vs_reference"] = round(figures[f"test_{part}_s"] / measured, 3) if measured else None
    # each run from no compiled module of its own, keeping what it compiles: _as_a_clean_clone
    figures["test_bytecode_cached"] = "from none, as a clean clone; kept as Python's default keeps them"
    return figures


# Each part: name -> a function of ``quick`` returning its figures. One that raises is
# recorded as missed (``<part>_error``, its reason on one line) and the others still run.
PARTS: dict[str, Callable[[bool], dict]] = {
    "slider": lambda quick: {**bench_page_draw(60 if quick else 300), **profile_slider(60 if quick else 300)},
    "scores": lambda quick: bench_scores(1_000_000 if quick else 10_000_000),
    "redis": lambda quick: bench_redis(10_000 if quick else 100_000),
    "bands": lambda quick: bench_bands(50_000 if quick else 1_000_000),
    "inspect": lambda quick: bench_inspect(100_000 if quick else 1_000_000),
    "classroom": lambda quick: bench_classroom(10 if quick else CLASSROOM_RAMP[-1], [] if quick else CLASSROOM_RAMP,
                                               10 if quick else 20),
    "classroom_core": lambda quick: bench_one_core((4, 8) if quick else CLASSROOM_CORE_RAMP, 10 if quick else 20),
    "lease": lambda quick: bench_lease(1 if quick else 3),
    "hub": lambda quick: bench_hub(4 if quick else 20, 10 if quick else 20),
    "app_flood": lambda quick: bench_flood(30 if quick else 150, 10, 5 if quick else 20),
    # a quick run leaves the stored growth run (the notebook's figure) alone
    "peers": lambda quick: bench_peers(PEERS_QUICK, 10, store=False) if quick else bench_peers(),
    # LINDEX and LINSERT on a long list only (Bull's add), into the stored record beside the growth run
    "peers_walk": lambda quick: bench_list_walk(store=not quick),
    # each page of the app to its first usable view (notebook 10's runs made or found first)
    "first_view": lambda quick: bench_first_view(["10"] if quick else None),
    # a hostile student beside three others on Redis 7: their p95 with and without it
    "hostile": lambda quick: bench_hostile(*((3.0, 1, 2) if quick else (4.0, 8, 3))),
    "browser": lambda quick: bench_browser(40 if quick else 200),
    "tests": lambda quick: bench_test_suite(),
}
_ALIASES = {"add": "redis", "drain": "redis"}  # add and drain are measured together


def _parts(text: str, known: dict) -> list[str]:
    parts = [_ALIASES.get(word.strip(), word.strip()) for word in text.split(",") if word.strip()]
    unknown = sorted(set(parts) - set(known))
    if unknown or not parts:
        raise argparse.ArgumentTypeError(f"parts are {', '.join([*known, *_ALIASES])}; got {text!r}")
    return parts


WRITTEN = "keys_by_part"  # in results.json: the keys each part wrote, which its next run replaces


def run_parts(parts: dict[str, Callable[[bool], dict]], quick: bool, results: dict,
              written: dict[str, list[str]] | None = None) -> list[str]:
    """Run each part into ``results``; a part that raises becomes ``<part>_error``
    with its reason, and the next part runs. Returns the parts that failed; ``written``
    gets the keys each part wrote."""
    failed = []
    written = {} if written is None else written
    for name, part in parts.items():
        try:
            figures = part(quick)
            results.update(figures)
            written[name] = sorted(figures)
        except Exception as exc:  # a miss to record, not the end of the run
            results[f"{name}_error"] = one_line(exc)
            written[name] = [f"{name}_error"]
            print(f"{name}: failed, recorded as missed: {results[f'{name}_error']}", file=sys.stderr, flush=True)
            failed.append(name)
    return failed


def main(argv: list[str] | None = None, *, parts: dict[str, Callable[[bool], dict]] | None = None,
         out: Path | None = None) -> int:
    """Run the parts asked for, write ``out`` (benchmarks/results.json) and print the table.
    Exits 1 when any part failed (each is in results.json as ``<part>_error``), else 0."""
    parts = PARTS if parts is None else parts
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--skip", nargs="*", default=[], choices=list(parts), help="parts to leave out")
    parser.add_argument("--only", type=lambda text: _parts(text, parts), default=None,
                        help="comma-separated parts to run, e.g. 'inspect' or 'add,drain' (the same "
                             "part as 'redis'); results.json keeps the other parts' figures")
    args = parser.parse_args(argv)
    out = out or Path(__file__).with_name("results.json")
    stored = json.loads(out.read_text()) if args.only is not None and out.exists() else None
    if stored is not None and args.quick and not stored.get("quick", False):
        print(f"--quick with --only would put a smoke run's smaller sizes under the full run's names in {out.name}; "
              "run the part in full, or --quick alone (a whole quick record)", file=sys.stderr)
        return 2
    if args.only is not None:
        args.skip = [part for part in parts if part not in args.only]
    quick = args.quick
    results: dict = {"machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpu",
                     "python": platform.python_version(), "quick": quick,
                     "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    written: dict[str, list[str]] = {}
    failed = run_parts({name: part for name, part in parts.items() if name not in args.skip}, quick, results, written)
    if stored is not None:  # the full run's figures stay; say what changed when
        fresh = {k: v for k, v in results.items() if k not in ("machine", "python", "quick", "when")}
        before = stored.get(WRITTEN, {})
        # a part that ran again: what it wrote before goes (a key it no longer writes, its old miss)
        gone = {key for name in args.only for key in [*before.get(name, []), f"{name}_error"]}
        kept = {k: v for k, v in stored.items() if k not in gone and k != WRITTEN}
        results = {**kept, **fresh,
                   "updated": f"{results['when']}: {' '.join(args.only)}{' (quick)' if quick else ''}"}
        written = {**before, **written}
    results[WRITTEN] = written
    out.write_text(json.dumps(results, indent=2) + "\n")
    print_results(results, GOALS)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    if failed:
        print(f"missed: {', '.join(failed)} failed (see {', '.join(f'{name}_error' for name in failed)})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
