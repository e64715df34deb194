"""The package beside other people's data (every foreign key must DUMP the
same afterwards), and notebooks whose kernels are killed (no redis-server or
kernel may outlive them).

The printed numbers of each notebook are checked by nbval (``pytest
notebooks/``), on a server full of other people's data that must survive
each notebook (``tests/conftest.py``); two kernels sharing one server by
``test_notebooks_shared.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import wait_until
from foreign_data import FOREIGN_KEYS, NEAR_MISSES, OURS, Planted, dump_all
from echomq_viz.redis_side._process import cmdline, descendants, proc_table
from echomq_viz.experiments.inspection import inspect_queue
from echomq_viz.experiments.interop import bullmq_add
from echomq_viz.core.keys import QueueContext
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.redis_side.scripts import Scripts
from echomq_viz.redis_side.server import RedisServer, connect
from echomq_viz.widgets import BandsView, ConsumeView, HeroView, InspectorView

ROOT = Path(__file__).resolve().parents[1]


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

    def alive(self) -> dict[int, str]:
        table = proc_table()
        return {pid: cmd for (pid, start), cmd in self.seen.items()
                if pid in table and table[pid][1] == start and table[pid][2] not in ("Z", "X")}


# -- other people's data ------------------------------------------------------------------------
#
# Every notebook runs under nbval on a server full of other people's data (tests/conftest.py plants it
# and checks it after each notebook); here the package's live operations run beside the same data.


@pytest.mark.slow
def test_other_peoples_data_survives_every_live_operation(monkeypatch):
    """The package's live operations, in this process, against a server full of other data and two
    stock BullMQ queues: every foreign key DUMPs the same, in both databases."""
    with RedisServer() as server:
        binary = server.client(decode_responses=False)
        # Two stock BullMQ queues: BullMQ's own layout, and a real EchoMQ-layout queue.
        jobs = [(f"order-{n}", {"n": n}, p) for n, p in enumerate([0, 1, 5, 2, 1, 2097151, 3, 0, 2, 1])]
        bullmq_add(server.url, "orders", "bull", jobs)
        bullmq_add(server.url, "{orders}", "emq", jobs)
        planted = Planted(binary, server.client(decode_responses=False, db=1))
        before = planted.before
        assert len(before) > FOREIGN_KEYS + len(NEAR_MISSES)  # + the BullMQ keys
        assert any(key.startswith(b"bull:orders:") for key in before)
        assert binary.exists(b"emq:{orders}:prioritized")
        monkeypatch.setenv("REDIS_URL", server.url)

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
        hero.switch_live(True)
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
        view._on_run()  # the page's Inspect button
        assert view.status.text == "" and view.report.total == bull.total
        assert bull.total == ours.total == same.total == 8 and bull.wait_length == 2
        assert list(ours.job_ids) == list(bull.job_ids)
        assert hinted.total == 0 and "emq:{orders}:" in hinted.hint
        assert dump_all(binary) == quiet, "inspect_queue wrote to the server"

        assert planted.changes() == []
        after = dump_all(binary)
        # What is left is this process's own demo keys.
        queues = {OURS.match(key).group().decode() for key in after if key not in before}
        assert queues and all(queue.endswith(f"@{a.owner}}}:") for queue in queues), sorted(queues)


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

workdir, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    nb = nbformat.read(path, as_version=4)
    with private_kernel_config() as config:
        client = NotebookClient(nb, timeout=180, kernel_name="python3", shutdown_kernel="immediate",
                                config=config, resources={"metadata": {"path": workdir}})
        with client.setup_kernel():  # leaving it kills the kernel
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            print("running", json.dumps(below_me()), flush=True)  # what the kill must take down
print("executed", len(paths), flush=True)

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
    *running, executed, report = runner.stdout.strip().splitlines()[-4:]
    assert executed == "executed 2"
    assert json.loads(report) == {}, f"left behind after the kernels were killed: {report}"
    # There was something to leave behind: as each kernel was killed, it ran with
    # its own server, and 07's with three cluster nodes besides.
    for line, servers in zip(running, (1, 4)):
        word, found = line.split(" ", 1)
        commands = json.loads(found).values()
        programs = [os.path.basename(command.split(" ")[0]) for command in commands]
        assert word == "running" and programs.count("redis-server") == servers, line
        assert sum("ipykernel" in command for command in commands) == 1, line
    assert wait_until(lambda: not watch.alive(), 5), watch.alive()
