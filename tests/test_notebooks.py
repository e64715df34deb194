"""The notebooks as a whole, run by real kernels: against a server full of
other people's data (every foreign key must DUMP the same afterwards), and
killed at the end (no redis-server or kernel may outlive them). Each test
executes notebooks, so each is marked slow.

The printed numbers of each notebook are checked by nbval (``pytest
notebooks/``), two kernels sharing one server by ``test_notebooks_shared.py``.
"""

from __future__ import annotations

import glob
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis

from conftest import wait_until
from echomq_viz.launcher._kernel_channels import private_kernel_config
from echomq_viz.redis_side._process import cmdline, descendants, proc_table
from echomq_viz.experiments.inspection import inspect_queue
from echomq_viz.experiments.interop import bullmq_add
from echomq_viz.core.keys import QueueContext
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.core.score import priority_score
from echomq_viz.redis_side.scripts import Scripts
from echomq_viz.redis_side.server import RedisServer, connect
from echomq_viz.widgets import BandsView, ConsumeView, HeroView, InspectorView

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(glob.glob(str(ROOT / "notebooks" / "*.ipynb")))


# -- helpers ------------------------------------------------------------------------------------


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


# -- processes of ours, seen through psutil -------------------------------------------------------


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
        with private_kernel_config() as config:  # no loopback port to lose to the suite's other connections
            NotebookClient(nb, timeout=180, kernel_name="python3", config=config,
                           resources={"metadata": {"path": str(workdir)}}, **client_options).execute()
        nbformat.write(nb, copy)


# -- other people's data ------------------------------------------------------------------------

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


@pytest.mark.slow
def test_other_peoples_data_survives_every_notebook_and_live_operation(tmp_path, monkeypatch):
    """The whole package against a server full of other data: every foreign key DUMPs the same."""
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


# -- no orphans ----------------------------------------------------------------------------------


# Runs notebooks as a child subreaper: whatever a killed kernel leaves behind
# is reparented to this runner instead of init, so nothing escapes the count.
RUNNER = r"""
import ctypes, json, os, signal, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
import nbformat
from nbclient import NotebookClient
from echomq_viz.launcher._kernel_channels import private_kernel_config
from echomq_viz.redis_side._process import cmdline, descendants, proc_table

workdir, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    nb = nbformat.read(path, as_version=4)
    with private_kernel_config() as config:
        NotebookClient(nb, timeout=180, kernel_name="python3", shutdown_kernel="immediate", config=config,
                       resources={"metadata": {"path": workdir}}).execute()
print("executed", len(paths), flush=True)

def below_me():
    table, me = proc_table(), os.getpid()
    found = {}
    for pid in descendants(me, table):
        if table[pid][2] in "ZX":
            if table[pid][0] == me:
                os.waitpid(pid, os.WNOHANG)  # an orphan that ended: reap it
            continue
        line = cmdline(pid)
        if line:  # "" once it has ended
            found[pid] = line
    return found

deadline = time.monotonic() + 20
left = below_me()
while left and time.monotonic() < deadline:
    time.sleep(0.1)
    left = below_me()
print(json.dumps(left), flush=True)
for pid in left:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # ended meanwhile
"""


@pytest.mark.slow
def test_no_redis_or_kernel_outlives_notebooks_whose_kernel_is_killed(tmp_path):
    """Without REDIS_URL each kernel starts its own embedded redis-server (and
    notebook 07 a 3-node cluster, left running here); nbclient's "immediate"
    shutdown kills the kernel; every process it started must then go."""
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
