"""Reliability suite (issue 6): bad input, other people's data, concurrency,
faults, no orphans. Real redis-server processes and real kernels only.

- **Bad input** adds to ``test_bad_input.py`` (Python API and Lua ARGV) the
  cases it lacks: huge ints, numpy floats, bytes for str, a str for a
  QueueContext, a foreign key prefix in ARGV, the widgets (constructors,
  sliders, callbacks) and the ``echomq-viz`` command. Each refusal names the
  problem in one line and leaves the keyspace (DUMP of every key) unchanged.
- **Other people's data** (the slow test, about 15-20 s): 10,000 unrelated keys
  of every type, near-miss key names and two stock BullMQ queues; then every
  notebook in ``notebooks/`` and the package's live operations run against
  that server; every foreign key must still DUMP the same.
- **Concurrency**: 8 consumers drain 10,000 jobs through moveToActive-11 at
  once, on both server kinds.
- **Faults**: a view whose Redis stops mid-action shows one line and works
  again after a restart on the same address; kill -9 of an AOF-always server
  in the middle of a drain loses no job.
- **No orphans**: notebooks under nbclient with the kernel killed at the end
  leave no redis-server or kernel process behind.
"""

from __future__ import annotations

import glob
import math
import os
import random
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest
import redis

from conftest import server_binary
from echomq_viz._process import cmdline, descendants, proc_table
from echomq_viz.inspection import inspect_queue
from echomq_viz.interop import bullmq_add
from echomq_viz.keys import Keys, QueueContext
from echomq_viz.live import Demo, seeded_priorities
from echomq_viz.score import COUNTER_MASK, priority_score, split_score
from echomq_viz.scripts import Scripts
from echomq_viz.server import RedisServer, connect
from echomq_viz.widgets import (
    BandsView, ComparisonView, ConsumeView, FrontierView, HeroView, InspectorView,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(glob.glob(str(ROOT / "notebooks" / "*.ipynb")))
CTX = QueueContext("test-queue")
PREFIX = Keys.base(CTX)
TS = "1700000000000"


# -- helpers ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition: Callable[[], bool], seconds: float, step: float = 0.05) -> bool:
    """Bounded polling: True as soon as ``condition()`` holds, False at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


def one_clear_line(text: str) -> bool:
    return bool(text) and len(text.strip().splitlines()) == 1 and "Traceback" not in text


@contextmanager
def not_redis_server() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that answers everything like an HTTP server."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                self.request.recv(4096)
                self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def dump_all(client: redis.Redis) -> dict[bytes, tuple[bytes | None, bool]]:
    """Every key of the client's db: its DUMP and whether it has a TTL."""
    keys = list(client.scan_iter(count=2000))
    found: dict[bytes, tuple[bytes | None, bool]] = {}
    for start in range(0, len(keys), 1000):
        chunk = keys[start:start + 1000]
        with client.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.dump(key)
                pipe.pttl(key)
            replies = pipe.execute()
        for key, dumped, ttl in zip(chunk, replies[::2], replies[1::2]):
            found[key] = (dumped, ttl > 0)
    return found


# -- processes of ours, seen through /proc ---------------------------------------------------------


class ProcessWatch:
    """Samples, in a thread, every process below this one; remembers those
    that were not there at the start, by (pid, start time), so a reused pid
    is never mistaken for one of ours. A command line is re-read while the
    process lives (a fresh fork shows its parent's until it execs)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        table = proc_table()
        self.baseline = {(pid, table[pid][1]) for pid in descendants(os.getpid(), table)}
        self.seen: dict[tuple[int, str], str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        table = proc_table()
        for pid in descendants(os.getpid(), table):
            key = (pid, table[pid][1])
            if key not in self.baseline:
                self.seen[key] = cmdline(pid) or self.seen.get(key, "")

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "ProcessWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sample()
        self._stop.set()
        self._thread.join(5)

    def started(self, fragment: str) -> list[int]:
        """Pids whose command line contains ``fragment``."""
        return [pid for (pid, _), cmd in self.seen.items() if fragment in cmd]

    def started_program(self, name: str) -> list[int]:
        """Pids whose program (first word of the command line) is ``name``."""
        return [pid for (pid, _), cmd in self.seen.items() if os.path.basename(cmd.split(" ")[0]) == name]

    def alive(self) -> dict[int, str]:
        table = proc_table()
        return {pid: cmd for (pid, start), cmd in self.seen.items()
                if pid in table and table[pid][1] == start and table[pid][2] not in ("Z", "X")}


def run_notebooks(paths: list[str], workdir: Path, **client_options) -> None:
    """Execute copies of notebooks in ``workdir`` with nbclient (kernel
    python3, 180 s per cell); the repository's stored outputs stay untouched."""
    import nbformat
    from nbclient import NotebookClient

    for path in paths:
        nb = nbformat.read(path, as_version=4)
        copy = workdir / Path(path).name
        NotebookClient(nb, timeout=180, kernel_name="python3",
                       resources={"metadata": {"path": str(workdir)}}, **client_options).execute()
        nbformat.write(nb, copy)


# == 1. Bad input ===================================================================================
#
# test_bad_input.py covers ~50 Python/Lua cases (priorities, names, ids, tokens,
# Lua ARGV). These are the layers and kinds it does not.


# -- widgets ------------------------------------------------------------------------------------------

WIDGET_CASES = {
    "HeroView priority 0": (lambda: HeroView(None, priority=0), "priority"),
    "HeroView priority 99 beyond its 6 tiers": (lambda: HeroView(None, priority=99, tiers=6), "priority"),
    "HeroView tiers 0": (lambda: HeroView(None, tiers=0), "tiers"),
    "HeroView counter -1": (lambda: HeroView(None, counter=-1), "counter"),
    "HeroView counter 2**32 (no slider position)": (lambda: HeroView(None, counter=2**32), "counter"),
    "HeroView priority 1.5": (lambda: HeroView(None, priority=1.5), "priority"),
    "HeroView priority numpy float64": (lambda: HeroView(None, priority=np.float64(2.0)), "float64"),
    "ComparisonView a=(0, 1)": (lambda: ComparisonView(None, a=(0, 1)), "priority"),
    "ComparisonView a=(1,)": (lambda: ComparisonView(None, a=(1,)), "(priority, counter)"),
    "ComparisonView b counter -5": (lambda: ComparisonView(None, b=(1, -5)), "counter"),
    "FrontierView priority 5 (not a frontier choice)": (lambda: FrontierView(None, priority=5), "priority"),
    "BandsView without a Demo": (lambda: BandsView(None), "Demo"),
    "ConsumeView without a Demo": (lambda: ConsumeView(None, priorities=[1]), "Demo"),
    "Demo queue 'viz' (no dash)": (lambda: Demo("viz"), "viz-"),
    "Demo queue 'viz-a b'": (lambda: Demo("viz-a b"), "' '"),
    "Demo queue as bytes": (lambda: Demo(b"viz-x"), "str"),
}


@pytest.mark.parametrize("case", WIDGET_CASES, ids=list(WIDGET_CASES))
def test_widget_constructors_refuse_bad_values_with_a_clear_message(case):
    # Values given in code are refused, not silently clamped to something else.
    make, fragment = WIDGET_CASES[case]
    with pytest.raises((ValueError, TypeError)) as info:
        make()
    assert fragment in str(info.value), str(info.value)
    assert one_clear_line(str(info.value))


@pytest.fixture
def demo(r) -> Demo:
    """A demo queue holding three jobs, next to someone else's key."""
    queue = Demo("viz-reliability", client=r)
    queue.add_batch([2, 1, 3])
    r.set("someone-else", "data")
    return queue


DEMO_CASES = {
    "BandsView tiers 0": (lambda d: BandsView(d, tiers=0, jobs=20), ValueError, "tiers"),
    "ConsumeView batch with priority 0": (lambda d: ConsumeView(d, priorities=[1, 0]), ValueError, "1..2_097_151"),
    "add_at_counter numpy float counter": (lambda d: d.add_at_counter("j", 1, np.float64(3.0)), TypeError, "float64"),
    "add_batch with priority 2**21": (lambda d: d.add_batch([1, 2**21]), ValueError, "2**21 - 1"),
}


@pytest.mark.parametrize("case", DEMO_CASES, ids=list(DEMO_CASES))
def test_views_on_a_demo_refuse_bad_values_and_write_nothing(demo, keyspace, case):
    make, error, fragment = DEMO_CASES[case]
    before = keyspace()
    with pytest.raises(error) as info:
        make(demo)
    assert fragment in str(info.value)
    assert one_clear_line(str(info.value))
    assert keyspace() == before  # the demo queue included: refused before reset


def test_slider_values_out_of_range_are_clamped_and_wrong_types_refused():
    # A slider can only hold values of its range: ipywidgets clamps numbers to
    # the bounds, and the view shows exactly the clamped value.
    hero = HeroView(None, priority=2, counter=5, tiers=6)
    for value, shown in ((99, 6), (0, 1), (-3, 1), (2**70, 6)):
        hero.priority.value = value
        assert hero.priority.value == shown
        assert hero.readout_text().startswith(f"score = {shown} × 0x100000000 + 5")
        assert hero.stairs.marker.get_ydata()[0] == priority_score(shown, 5) / 2**32
    for value, shown in ((2**32, COUNTER_MASK), (-5, 0), (2**64, COUNTER_MASK)):
        hero.counter.value = value
        assert hero.counter.value == hero.counter_box.value == shown
        assert f"{priority_score(hero.priority.value, shown):,}" in hero.readout_text()
    # A number that is not one: refused by the trait, naming it; nothing moved.
    from traitlets import TraitError

    for value in ("three", None, math.nan, [2]):
        with pytest.raises(TraitError, match="expected an int"):
            hero.priority.value = value
        assert hero.priority.value == 6
    assert hero.status.text == ""
    view = ComparisonView(None, max_priority=5)
    view.b_priority.value = 50
    view.b_counter.value = -1
    assert view.job_b == (5, 0) and view.status.text == ""


def _click_and_read(view) -> str:
    view.run_button.click()
    assert not view.run_button.disabled  # usable again
    return view.status.text


def test_inspector_view_bad_input_is_one_status_line_and_writes_nothing(redis_server, r, keyspace, caplog):
    r.hset("emq:{odd}:prioritized", "not", "a zset")
    r.set("someone-else", "data")
    before = keyspace()
    url = redis_server.url
    with not_redis_server() as http_port:
        cases = [
            (InspectorView(url, queue=""), "error: ValueError: queue name must not be empty"),
            (InspectorView(url, queue="   "), "error: ValueError: queue name must not be empty"),
            (InspectorView(url, prefix="em q", queue="{q}"), "error: ValueError: key prefix 'em q' contains ' '"),
            (InspectorView(url, queue="{odd}"), "error: ValueError: emq:{odd}:prioritized is a hash, not a zset"),
            (InspectorView("htp://x", queue="{q}"), "error: RedisUnavailable: bad Redis URL 'htp://x'"),
            (InspectorView(f"redis://127.0.0.1:{http_port}/0", queue="{q}"),
             f"error: RedisUnavailable: cannot reach Redis at redis://127.0.0.1:{http_port}/0"),
        ]
        for view, expected in cases:
            text = _click_and_read(view)
            assert text.startswith(expected), text
            assert one_clear_line(text) and len(text) < 260
            assert view.report is None
    assert "Exception in callback" not in caplog.text  # the guard caught it, not ipywidgets
    assert keyspace() == before


# -- the command ------------------------------------------------------------------------------------


def run_cli(args: list[str], env_changes: dict[str, str | None], timeout: float = 60) -> tuple[int, str]:
    """``python -m echomq_viz ARGS`` in its own session; (exit code, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.Popen([sys.executable, "-m", "echomq_viz", *args], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"echomq-viz {' '.join(args)} did not exit within {timeout} s")
    return proc.returncode, err


def test_cli_bad_port_is_a_usage_error():
    code, err = run_cli(["redis", "--port", "notanumber"], {})
    assert code == 2
    assert err.startswith("usage: echomq-viz redis")
    assert "argument --port: invalid int value: 'notanumber'" in err and "Traceback" not in err


@pytest.mark.parametrize("port", ["70000", "-5"])
def test_cli_port_outside_0_to_65535_is_named(port):
    code, err = run_cli(["redis", "--port", port], {})
    assert code == 2 and "Traceback" not in err
    assert "port" in err and port in err and "65535" in err, err


def _cli_cases(http_port: int, dead_port: int) -> dict[str, tuple[list[str], dict, list[str]]]:
    return {
        "REDIS_URL with a bad scheme": (
            ["lab", "--no-browser"], {"REDIS_URL": "htp://x"},
            ["echomq-viz: bad Redis URL 'REDIS_URL=htp://x'", "redis://, rediss://, unix://"]),
        "REDIS_URL with a bad port": (
            ["app", "--no-browser"], {"REDIS_URL": "redis://127.0.0.1:notaport/0"},
            ["echomq-viz: bad Redis URL 'REDIS_URL=redis://127.0.0.1:notaport/0'", "notaport"]),
        "REDIS_URL at a dead port": (
            ["lab", "--no-browser"], {"REDIS_URL": f"redis://127.0.0.1:{dead_port}/0"},
            [f"echomq-viz: cannot reach Redis at REDIS_URL=redis://127.0.0.1:{dead_port}/0", "refused"]),
        "REDIS_URL at a server that is not Redis": (
            ["lab", "--no-browser"], {"REDIS_URL": f"redis://127.0.0.1:{http_port}/0"},
            [f"echomq-viz: cannot reach Redis at REDIS_URL=redis://127.0.0.1:{http_port}/0", "Protocol error"]),
        "ECHOMQ_VIZ_REDIS_SERVER missing": (
            ["redis"], {"ECHOMQ_VIZ_REDIS_SERVER": "/nonexistent"},
            ["echomq-viz: ECHOMQ_VIZ_REDIS_SERVER='/nonexistent' is not an executable file"]),
        "ECHOMQ_VIZ_REDIS_SERVER not a redis-server": (
            ["redis"], {"ECHOMQ_VIZ_REDIS_SERVER": shutil.which("false") or "/bin/false"},
            ["echomq-viz: could not start", "exited with 1"]),
    }


CLI_CASE_NAMES = list(_cli_cases(0, 0))


@pytest.mark.parametrize("case", CLI_CASE_NAMES)
def test_cli_bad_environment_is_exit_2_and_one_clear_line(case):
    with not_redis_server() as http_port:
        args, env, fragments = _cli_cases(http_port, free_port())[case]
        started = time.monotonic()
        code, err = run_cli(args, env)
    assert code == 2, err
    assert one_clear_line(err), err
    for fragment in fragments:
        assert fragment in err, err
    assert time.monotonic() - started < 30  # refused up front, JupyterLab never started


# == 2. Other people's data ============================================================================

FOREIGN_KEYS = 10_000
# Names one slip of a pattern away from a demo queue's keys.
NEAR_MISSES = [
    b"emq:{viz-01-score}", b"emq:{viz-01-score-extra}:pc", b"emq:viz-01-score:pc",
    b"bull:{viz-01-score}:prioritized", b"emq:{vizier}:prioritized", b"emq:{VIZ-03-consume}:pc",
    b"emq:{viz-*}:pc", b"emq:{viz-?}:wait", b"emq:{viz-[0]}:id", b"emq:{viz-04-bands}x:pc",
    b"emq:{viz-03-consume}\x00:pc", b"\xff\xfeemq:{viz-02-compare}:pc", b"viz-01-score", b"{viz-05-frontier}:pc",
    b"emq:{orders}x", b"emq:{viz-01-score}}:pc",
]


def load_foreign_data(client: redis.Redis) -> None:
    """10,000 unrelated keys of every type (some with a TTL), plus near misses."""
    rng = random.Random(20240606)
    names = ("user:{i}", "cache:{i}:blob", "emq:{{tenant-{i}}}:meta", "bull:mail:{i}", "viz-{i}",
             "emq:viz-{i}:pc", "sess\xe9:{i}", "q:{{{i}}}:prioritized")
    with client.pipeline(transaction=False) as pipe:
        for i in range(FOREIGN_KEYS):
            key = names[i % len(names)].format(i=i).encode()
            if i % 97 == 0:
                key = b"\xc3\x28bin:" + rng.randbytes(6) + str(i).encode()  # not UTF-8
            kind = i % 10
            if kind < 3:
                size = 65_536 if i % 1000 == 0 else rng.randint(0, 200)
                pipe.set(key, rng.randbytes(size))
            elif kind < 5:
                pipe.hset(key, mapping={f"f{n}".encode(): rng.randbytes(rng.randint(0, 30))
                                        for n in range(rng.randint(1, 10))})
            elif kind == 5:
                pipe.rpush(key, *[rng.randbytes(rng.randint(0, 20)) for _ in range(rng.randint(1, 20))])
            elif kind == 6:
                pipe.sadd(key, *{str(rng.randint(0, 10**6)) for _ in range(rng.randint(1, 20))})
            elif kind < 9:
                pipe.zadd(key, {f"m{n}": rng.choice([rng.randint(-10**6, 10**6), priority_score(3, n),
                                                     rng.random(), math.inf])
                                for n in range(rng.randint(1, 20))})
            else:
                for _ in range(rng.randint(1, 5)):
                    pipe.xadd(key, {"event": "added", "n": str(i)})
            if i % 7 == 0:
                pipe.expire(key, 3600 + i)
            if i % 1000 == 999:
                pipe.execute()
        for n, key in enumerate(NEAR_MISSES):
            if n % 2:
                pipe.zadd(key, {"1": priority_score(1, 1), "2": priority_score(1, 2)})
            else:
                pipe.set(key, b"near miss " + key)
        pipe.execute()


OURS = re.compile(rb"^emq:\{viz-[^{}]*\}:")


def test_other_peoples_data_survives_every_notebook_and_live_operation(tmp_path, monkeypatch):
    """SLOW (about 15-20 s): the whole package against a server full of other data."""
    server = RedisServer().start()
    try:
        binary = server.client(decode_responses=False)
        load_foreign_data(binary)
        other_db = server.client(decode_responses=False, db=1)
        other_db.set("db1-key", b"\x00\x01")
        other_db.zadd("emq:{viz-01-score}:prioritized", {"1": 1})  # our name, another database
        # Two stock BullMQ queues: BullMQ's own layout, and a real EchoMQ-layout queue.
        jobs = [(f"order-{n}", {"n": n}, p) for n, p in enumerate([0, 1, 5, 2, 1, 2097151, 3, 0, 2, 1])]
        bullmq_add(server.url, "orders", "bull", jobs)
        bullmq_add(server.url, "{orders}", "emq", jobs)
        before = dump_all(binary)
        assert len(before) > FOREIGN_KEYS + len(NEAR_MISSES)  # + the BullMQ keys
        assert any(key.startswith(b"bull:orders:") for key in before)
        assert binary.exists(b"emq:{orders}:prioritized")
        other_before = dump_all(other_db)

        monkeypatch.setenv("REDIS_URL", server.url)
        workdir = tmp_path / "notebooks"
        workdir.mkdir()
        assert len(NOTEBOOKS) >= 7, NOTEBOOKS
        with ProcessWatch() as watch:
            run_notebooks(NOTEBOOKS, workdir)
        assert watch.started("ipykernel"), "no kernel seen: the watch is blind"
        assert wait_until(lambda: not watch.alive(), 20), watch.alive()

        # The package's live operations, in this process, through REDIS_URL.
        client = connect()
        a = Demo("viz-rel-a")
        a.add_batch(seeded_priorities(1, 300, (1, 2, 3)))
        a.add("extra", 2)
        a.add_waiting("plain")
        assert len(a.drain()) == 302
        a.reset()
        b = Demo("viz-rel-b")
        assert b.compare((1, 4_000_000_000), (2, 1)).popped == "A"
        b.add_past_the_limit_for_teaching("far", 2**21, counter=5)
        c = Demo("viz-rel-c")
        hero = HeroView(c)
        hero.live.value = True
        hero.set(priority=3, counter=77)
        assert "equal" in hero.live_text and hero.status.text == ""
        consume = ConsumeView(c, priorities=[3, 1, 2], waiting=1)
        consume.drain()
        assert [job.id for job in consume.popped] == consume.expected_order()
        bands = BandsView(c, tiers=3, jobs=100)
        assert sum(bands.counts.values()) == 100
        scripts = Scripts(client)
        ctx = QueueContext("viz-rel-scripts")
        ids = scripts.add_prioritized_jobs(ctx, [("x", {}, 3), ("y", {}, 1), ("z", {}, 2)])
        scripts.add_standard_job(ctx, "w", {})
        assert scripts.change_priority(ctx, ids[0], 1, lifo=True)
        assert scripts.counts_per_priority(ctx, [0, 1, 2, 3]) == {0: 1, 1: 2, 2: 1, 3: 0}
        assert [job.id for job in scripts.drain(ctx, "t", batch_size=2)] == ["4", ids[0], ids[1], ids[2]]
        scripts.set_priority_counter(ctx, 41)
        scripts.reset(ctx)

        # Inspecting the foreign queues writes nothing at all.
        quiet = dump_all(binary)
        bull = inspect_queue(client, "orders", "bull")
        ours = inspect_queue(client, "{orders}")
        same = inspect_queue(client, QueueContext("orders"))
        hinted = inspect_queue(client, "orders")
        view = InspectorView(server.url, prefix="bull", queue="orders")
        view.run_button.click()
        assert view.status.text == "" and view.report.total == bull.total
        assert bull.total == ours.total == same.total == 8 and bull.wait_length == 2
        assert list(ours.job_ids) == list(bull.job_ids)
        assert hinted.total == 0 and "emq:{orders}:" in hinted.hint
        assert dump_all(binary) == quiet, "inspect_queue wrote to the server"

        after = dump_all(binary)
        missing = [key for key in before if key not in after]
        changed = [key for key in before if key in after and after[key][0] != before[key][0]]
        ttl_changed = [key for key in before if key in after and after[key][1] != before[key][1]]
        added = [key for key in after if key not in before]
        assert not missing, missing[:10]
        assert not changed, changed[:10]
        assert not ttl_changed, ttl_changed[:10]
        strays = [key for key in added if not OURS.match(key)]
        assert not strays, strays[:10]
        # Kernels clean up after themselves: what is left is this process's own.
        queues = {OURS.match(key).group().decode() for key in added}
        assert all(queue.endswith(f"@{a.owner}}}:") for queue in queues), sorted(queues)
        # REDIS_URL reached the kernels: they ran the scripts on this server.
        evalsha = binary.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
        assert evalsha > 1000, evalsha
        assert dump_all(other_db) == other_before
    finally:
        server.stop()


# == 3. Concurrency ==================================================================================

JOBS = 10_000
WAITING = 100
CONSUMERS = 8
LOCK_MS = 600_000  # the locks are checked at the end: they must not expire first


def test_eight_consumers_drain_ten_thousand_jobs_exactly_once_in_order(redis_server, r):
    ctx = QueueContext("viz-concurrency")
    scripts = Scripts(r)
    priorities = seeded_priorities(8, JOBS - WAITING, range(1, 9))
    prioritized_ids = scripts.add_prioritized_jobs(
        ctx, [(f"job-{i}", {"i": i}, p) for i, p in enumerate(priorities)])
    waiting_ids = [scripts.add_standard_job(ctx, f"plain-{i}", {}) for i in range(WAITING)]
    everything = prioritized_ids + waiting_ids
    assert len(set(everything)) == JOBS

    start = threading.Barrier(CONSUMERS)
    taken: list[list] = [[] for _ in range(CONSUMERS)]
    errors: list[BaseException] = []

    def consume(n: int) -> None:
        client = redis_server.client()
        own = Scripts(client)
        token = f"consumer-{n}"
        try:
            start.wait(30)
            if n % 2:  # half pipeline small batches, half take one job per call
                taken[n].extend(own.drain(ctx, token, LOCK_MS, batch_size=16))
            else:
                while (job := own.move_to_active(ctx, token, LOCK_MS)) is not None:
                    taken[n].append(job)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            client.close()

    threads = [threading.Thread(target=consume, args=(n,), daemon=True) for n in range(CONSUMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a consumer hung"
    assert not errors, errors

    out = [job.id for jobs in taken for job in jobs]
    assert len(out) == JOBS and set(out) == set(everything)  # each once: none lost, none twice
    active = r.lrange(Keys.active(ctx), 0, -1)
    assert len(active) == JOBS and set(active) == set(everything)
    assert r.zcard(Keys.prioritized(ctx)) == 0 and r.llen(Keys.wait(ctx)) == 0
    assert all(taken), [len(jobs) for jobs in taken]  # all eight really took part

    rank = {job_id: i for i, job_id in enumerate(prioritized_ids)}
    for n, jobs in enumerate(taken):
        keys = []
        for job in jobs:
            if job.score is None:  # the wait list: always before every tier, FIFO
                keys.append((0, int(job.id)))
            else:
                tier, counter = split_score(job.score)
                assert tier == job.priority == priorities[rank[job.id]]
                assert counter == rank[job.id] + 1  # INCR pc in arrival order
                keys.append((tier, counter))
        assert keys == sorted(keys) and len(set(keys)) == len(keys), f"consumer {n} out of order"
    # Every job is locked by the consumer that received it, and by no other.
    owner = {job.id: f"consumer-{n}" for n, jobs in enumerate(taken) for job in jobs}
    with r.pipeline(transaction=False) as pipe:
        for job_id in everything:
            pipe.get(Keys.lock(ctx, job_id))
        locks = pipe.execute()
    assert locks == [owner[job_id] for job_id in everything]


# == 4. Faults =======================================================================================


def test_view_whose_redis_stops_mid_action_shows_one_line_and_recovers(caplog):
    port = free_port()
    server = RedisServer(port=port).start()
    restarted = None
    try:
        demo = Demo("viz-fault", client=connect(server.url, timeout=2))
        comparison = ComparisonView(demo, a=(1, 4_000_000_000), b=(2, 1))
        consume = ConsumeView(demo, priorities=[2, 1, 3], waiting=1)
        hero = HeroView(demo)
        comparison.run_button.click()
        assert comparison.redis_text.startswith("Redis popped job A first") and comparison.status.text == ""

        # Redis goes away in the middle of "Pop one": after the pop, before the table is read.
        real_pop = demo.pop

        def pop_then_stop(*args, **kwargs):
            job = real_pop(*args, **kwargs)
            server.stop()
            return job

        demo.pop = pop_then_stop
        consume.step_button.click()
        demo.pop = real_pop
        assert not server.running
        hero.live.value = True  # adds on Redis at once: fails, shown in the view
        hero.set(counter=12)
        comparison.run_button.click()
        for view in (consume, hero, comparison):
            text = view.status.text
            assert text.startswith("error: ConnectionError") and one_clear_line(text) and len(text) < 260, text
            assert "Traceback" not in view.status.widget.value
        assert not any(button.disabled for button in consume._buttons) and not comparison.run_button.disabled
        assert "Exception in callback" not in caplog.text

        # A new server on the same address: the same views work again, the error line goes.
        restarted = RedisServer(port=port, password=server.password).start()
        consume.refill_button.click()
        assert consume.status.text == "" and len(demo.entries()) == 3 and demo.waiting()
        assert [job.id for job in consume.drain()] == consume.expected_order()
        hero.set(counter=99)
        assert hero.status.text == "" and hero.live_text.endswith("equal")
        comparison.redis_text = ""
        comparison.run_button.click()  # the very same click that failed before
        assert comparison.redis_text.startswith("Redis popped job A first")
        assert comparison.status.text == "", "a stale error stays under a view that works again"
        comparison.a_priority.value = 3
        comparison.run_button.click()
        assert comparison.redis_text.startswith("Redis popped job B first")
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()


@pytest.mark.parametrize("kind", ["bundled", "system"])
def test_kill_9_in_the_middle_of_a_drain_loses_no_job_with_aof_always(kind):
    binary = server_binary(kind)
    directory = tempfile.mkdtemp(prefix="emq-aof-")
    aof = ("--appendonly", "yes", "--appendfsync", "always")
    server = RedisServer(binary, port=0, extra_args=aof, directory=directory).start()
    restarted = None
    try:
        client = server.client()
        assert client.config_get("appendfsync")["appendfsync"] == "always"
        ctx = QueueContext("viz-aof")
        priorities = seeded_priorities(5, 5000, range(1, 6))
        ids = Scripts(client).add_prioritized_jobs(ctx, [(f"j{i}", {}, p) for i, p in enumerate(priorities)])
        scores = {job_id: float(priority_score(p, i + 1)) for i, (job_id, p) in enumerate(zip(ids, priorities))}
        client.close()

        returned: list[str] = []
        failure: list[BaseException] = []
        halfway = threading.Event()

        def drain() -> None:
            own = server.client(socket_timeout=5, socket_connect_timeout=2)
            consumer = Scripts(own)
            try:
                while (job := consumer.move_to_active(ctx, "crash-test")) is not None:
                    returned.append(job.id)
                    if len(returned) == 1000:
                        halfway.set()
            except BaseException as exc:
                failure.append(exc)
            finally:
                halfway.set()
                own.close()

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        assert halfway.wait(60)
        os.kill(server.pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive()
        assert failure and isinstance(failure[0], redis.ConnectionError), \
            f"the drain was not cut by the kill: {failure} after {len(returned)} jobs"
        assert 1000 <= len(returned) < 5000
        server.stop()  # its supervisor; the directory is kept

        restarted = RedisServer(binary, port=0, extra_args=aof, directory=directory).start()
        after = restarted.client()
        queued = dict(after.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
        active = after.lrange(Keys.active(ctx), 0, -1)
        assert len(active) == len(set(active)) and not set(active) & set(queued)
        assert set(active) | set(queued) == set(ids), "a job is in neither prioritized nor active"
        assert set(returned) <= set(active), "a job handed to the consumer was lost"
        # At most the in-flight call is lost: its job is active but never reached the consumer.
        assert len(set(active) - set(returned)) <= 1
        assert all(queued[job_id] == scores[job_id] for job_id in queued)  # untouched jobs keep their score
        with after.pipeline(transaction=False) as pipe:
            for job_id in active:
                pipe.hget(Keys.job(ctx, job_id), "ats")
            assert set(pipe.execute()) == {"1"}  # each consume persisted whole, never half
        after.close()
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
        shutil.rmtree(directory, ignore_errors=True)


# == 5. No orphans ===================================================================================


# Runs notebooks as a child subreaper: whatever a killed kernel leaves behind
# is reparented to this runner instead of init, so nothing escapes the count.
RUNNER = r"""
import ctypes, json, os, signal, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
import nbformat
from nbclient import NotebookClient

workdir, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3", shutdown_kernel="immediate",
                   resources={"metadata": {"path": workdir}}).execute()
print("executed", len(paths), flush=True)

def below_me():
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                data = open(f"/proc/{name}/stat", "rb").read()
            except OSError:
                continue
            fields = data[data.rindex(b")") + 2:].split()
            table[int(name)] = (int(fields[1]), fields[0].decode())
    found, todo = {}, [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, (ppid, state) in table.items():
            if ppid == parent:
                if state == "Z" and ppid == os.getpid():
                    os.waitpid(pid, os.WNOHANG)  # an orphan that ended: reap it
                    continue
                found[pid] = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
                todo.append(pid)
    return found

deadline = time.monotonic() + 20
left = below_me()
while left and time.monotonic() < deadline:
    time.sleep(0.1)
    left = below_me()
print(json.dumps(left), flush=True)
for pid in left:
    os.kill(pid, signal.SIGKILL)
"""


def test_no_redis_or_kernel_outlives_notebooks_whose_kernel_is_killed(tmp_path):
    """Without REDIS_URL each kernel starts its own embedded redis-server (and
    notebook 07 a 3-node cluster, left running here); nbclient's "immediate"
    shutdown kills the kernel; every process it started must then go."""
    import json

    import nbformat

    consume = ROOT / "notebooks" / "03-inside-the-consume.ipynb"
    cluster = nbformat.read(ROOT / "notebooks" / "07-bullmq-and-cluster.ipynb", as_version=4)
    stops = [i for i, cell in enumerate(cluster.cells)
             if cell.cell_type == "code" and re.search(r"^cluster\.stop\(\)", cell.source, re.M)]
    assert len(stops) == 1, "notebook 07 no longer stops its cluster in one cell"
    cluster.cells = cluster.cells[:stops[0]]  # the kernel dies with the cluster still running
    truncated = tmp_path / "07-cluster-left-running.ipynb"
    nbformat.write(cluster, truncated)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    with ProcessWatch() as watch:
        runner = subprocess.run([sys.executable, "-c", RUNNER, str(tmp_path), str(consume), str(truncated)],
                                env=env, capture_output=True, text=True, timeout=400)
    assert runner.returncode == 0, runner.stderr[-3000:]
    executed, report = runner.stdout.strip().splitlines()[-2:]
    assert executed == "executed 2"
    assert json.loads(report) == {}, f"left behind after the kernels were killed: {report}"
    # The watch saw what there was to leave behind: two kernels, 2 + 3 servers.
    assert len(watch.started("ipykernel")) >= 2, watch.seen
    assert len(watch.started_program("redis-server")) >= 5, watch.seen
    assert wait_until(lambda: not watch.alive(), 5), watch.alive()
