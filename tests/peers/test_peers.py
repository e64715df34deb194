"""Notebook 10's queue libraries (echomq_viz.peers) on real Redis servers.

Each library's pop order, key layout and commands are checked against what
the notebook says of them; every key any library writes must be a demo key of
this process, so the kernel's exit and ``echomq-viz clean`` remove it.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import struct
import time
from pathlib import Path

import psutil
import pytest

from conftest import SERVER_KINDS, assert_refused, server_binary
from echomq_viz.redis_side import server as server_mod
from echomq_viz.redis_side._process import _running
from echomq_viz.redis_side.owners import _demo_owner, lease_key, this_owner
from echomq_viz.peers import (closing_rows, closing_table, closing_table_html, correct_order, details, node_missing,
                              observe, observe_all, peer_makers, workload)
from echomq_viz.peers.base import bytes_client
from echomq_viz.peers.growth import growth_jobs, load_growth, measure_growth, series
from echomq_viz.peers.observe import Line, Operation, file_lines, summarize
from echomq_viz.peers.packed_peers import LoopThread
from echomq_viz.peers.table import slot_text
from echomq_viz.peers.deployed import (BULLMQ_PY_FIFO, accepted, before, burst_takes, burst_text, first_take,
                                       huey_plain_priority, huey_storage_slots, multi_key_commands, plans,
                                       run_workers, score_lines, slots_of, take_text)
from echomq_viz.peers.worker_apps import record_huey
from echomq_viz.peers.workers import BLOCKING, before_each_record, take_commands
from echomq_viz.peers.workload import fifo_breaks, is_job_key, key_shape, slot_count, tier_breaks

ORDER = ("packed", "bullmq", "bull", "kombu", "kombu10", "rq", "huey")


# -- the workload and its verdicts, pure ----------------------------------------------------------


def test_workload_is_three_interleaved_tiers_of_eight_fixed_by_its_seed():
    jobs = workload()
    assert [job.arrival for job in jobs] == list(range(1, 25))
    assert sorted(job.tier for job in jobs) == [1] * 8 + [2] * 8 + [3] * 8
    tiers = [job.tier for job in jobs]
    assert tiers[:8] != sorted(tiers[:8]) or len(set(tiers[:8])) > 1  # interleaved, not tier by tier
    assert workload() == jobs and workload(seed=7) != jobs
    assert correct_order(jobs)[:8] == [job.name for job in jobs if job.tier == 1]


def test_verdicts_count_tier_and_fifo_breaks():
    jobs = workload(per_tier=2)
    right = correct_order(jobs)
    assert fifo_breaks(jobs, right) == 0 and tier_breaks(jobs, right) == 0
    arrival = [job.name for job in jobs]
    assert tier_breaks(jobs, arrival) > 0 and fifo_breaks(jobs, arrival) == 0
    assert fifo_breaks(jobs, list(reversed(right))) == 3 and tier_breaks(jobs, list(reversed(right))) == 4


def test_key_shape_and_slots():
    assert key_shape("job:1450f0af-945c-48bb-aa28-2151632367fb", "") == "job:<id>"
    assert key_shape("emq:{q}:17", "emq:{q}:") == "<id>"
    assert slot_count(["{a}x", "{a}y"]) == 1 and slot_count(["a:x", "b:y", "c:z"]) > 1
    assert is_job_key("emq:{q@o}:job:1450f0af-945c-48bb-aa28-2151632367fb") and is_job_key("emq:{q@o}:7")
    assert not is_job_key("emq:{q@o}:queue:high") and not is_job_key("emq:{q@o}:id")


def test_bad_workloads_are_refused():
    with assert_refused(ValueError, r"per_tier must be in 1\.\.100,000, got 0"):
        workload(per_tier=0)
    with assert_refused(ValueError, "tiers must be distinct"):
        workload(tiers=(1, 1))


def test_atomicity_reads_scripts_transactions_and_separate_writes():
    writes = {"lpush", "rpop", "zadd", "hset", "linsert"}
    script = Operation("add", [Line("evalsha", False, ""), Line("linsert", True, "")])
    multi = Operation("add", [Line("multi", False, ""), Line("zadd", False, ""), Line("hset", False, ""),
                              Line("exec", False, "")])
    apart = Operation("pop", [Line("rpop", False, ""), Line("rpop", False, ""), Line("multi", False, ""),
                              Line("hset", False, ""), Line("exec", False, "")])
    assert summarize([script], "add", writes).how == "one Lua script"
    assert summarize([multi], "add", writes).how == "MULTI/EXEC"
    popped = summarize([apart], "pop", writes)
    assert (popped.steps, popped.atomic, popped.how) == (3, False, "3 separate steps")
    assert summarize([script, multi], "add", writes).client_commands == 2.5
    with assert_refused(ValueError, "no pop operation"):
        summarize([script], "pop", writes)


def test_transactions_are_told_apart_from_another_clients_on_one_socket():
    def line(text, lua=False):
        return {"command": text, "client_type": "lua" if lua else "unix"}

    mark = "ECHO m "
    raw = [line("ECHO m start"), line("ECHO m op pop"),
           line("RPOP q:{t}:a"), line("MULTI"),                  # ours: RPOP, then our MULTI
           line("MULTI"), line("SET other 1"), line("EXEC"),     # another client's whole transaction
           line("ZADD q:{t}:u 1 x"), line("HSET q:{t}:h x 1"), line("EXEC"),  # our body, then our EXEC
           line("MULTI"), line("EXEC"),                          # another client's, empty
           line("ECHO m op add"), line("EVALSHA abc 1 q:{t}:w"), line("lpush q:{t}:w 1", lua=True),
           line("ECHO m pause"), line("GET q:{t}:x")]
    pop, add = file_lines(raw, "{t}", mark)
    assert [entry.name for entry in pop.lines] == ["rpop", "multi", "zadd", "hset", "exec"]
    assert [(entry.name, entry.in_script) for entry in add.lines] == [("evalsha", False), ("lpush", True)]
    assert summarize([pop], "pop", {"rpop", "zadd", "hset"}).steps == 2


# -- every library on both servers ----------------------------------------------------------------


@pytest.fixture(scope="module", params=SERVER_KINDS)
def observed(request):
    """Every library through the workload on an emptied private server; the
    runs by key, and every key of the database afterwards."""
    server = server_mod.RedisServer(server_binary(request.param)).start()
    try:
        client = server.client()
        runs = {run.key: run for run in observe_all(peer_makers(client, ORDER), workload())}
        every_key = set(client.scan_iter(count=1000))
        yield runs, every_key, client
    finally:
        server.stop()


@pytest.mark.slow
def test_node_is_here_for_bull():
    assert node_missing() is None, "Node.js and npm are needed for Bull (apt-get install npm)"


@pytest.mark.slow
def test_every_key_written_is_a_demo_key_of_this_process(observed):
    runs, every_key, _ = observed
    owner = this_owner()
    for key in every_key - {lease_key(owner)}:
        found = _demo_owner(key.encode("utf-8", "surrogateescape"))
        assert found is not None and found[1] == owner, f"{key!r} is no demo key of this process"
    for run in runs.values():
        assert all(key.startswith(f"emq:{{viz-10-{run.key}@{owner}}}:") for key in run.keys), run.key
    assert not [key for key in every_key if key.startswith(("rq:", "bull:", "huey.", "_kombu", "unacked"))]
    assert not [key for key in every_key if ":worker" in key]  # RQ: the worker's dequeue, no worker process
    assert all(run.slots_configured == 1 for run in runs.values())  # braces in every prefix set here


@pytest.mark.slow
def test_the_orders_the_notebook_states(observed):
    runs, _, _ = observed
    jobs = workload()
    for key in ("packed", "bullmq", "bull", "kombu10", "rq", "huey"):
        assert list(runs[key].order) == correct_order(jobs), key
        assert runs[key].correct
    assert {key: run.levels_kept for key, run in runs.items()} == {
        "packed": 10, "bullmq": 10, "bull": 10, "kombu": 4, "kombu10": 10, "rq": 10, "huey": 10}
    kombu = runs["kombu"]
    assert not kombu.correct and kombu.fifo_breaks == 0 and kombu.tier_breaks > 0
    # tiers 1 and 2 share step 0's list: they come out by arrival alone, then tier 3
    first_two = [job.name for job in jobs if job.tier in (1, 2)]
    assert list(kombu.order) == first_two + [job.name for job in jobs if job.tier == 3]


@pytest.mark.slow
def test_bull_inserts_into_its_wait_list(observed):
    from echomq_viz.peers.bull_peer import bull_source

    bull = observed[0]["bull"]
    source = bull_source("includes/addJobWithPriority.lua")
    for command in ("ZADD", "ZCOUNT", "LLEN", "LINDEX", "LINSERT"):
        assert f'"{command}"' in source
    assert {shape: kind for (shape, kind) in bull.key_layout()} == {
        "<id>": "hash", "id": "string", "priority": "zset", "wait": "list"}
    adds = bull.commands_of("add")
    assert all(add[0] == ("evalsha", False) and sum(not inner for _, inner in add) == 1 for add in adds)
    assert sum(("linsert", True) in add for add in adds) > len(adds) // 2  # most adds insert inside the list
    assert bull.add.how == "one Lua script" and bull.slots_default > 1
    # a worker takes from the list's end: RPOPLPUSH wait -> active inside the consume script
    assert all(("rpoplpush", True) in pop or ("brpoplpush", False) in pop for pop in bull.commands_of("pop"))
    with assert_refused(ValueError, "relative must name a .lua file"):
        bull_source("../package.json")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["packed", "bullmq"])
def test_the_packed_score_in_one_sorted_set(observed, key):
    run = observed[0][key]
    layout = dict(run.key_layout())
    assert layout[("prioritized", "zset")] == 1 and layout[("<id>", "hash")] == 24
    assert not any(kind == "list" for (_, kind) in layout)
    assert all(("zpopmin", True) in pop for pop in run.commands_of("pop"))
    assert all(("zadd", True) in add for add in run.commands_of("add"))
    assert run.add.how == run.pop.how == "one Lua script"
    assert (run.slots_default == 1) == (key == "packed")


@pytest.mark.slow
def test_kombu_keeps_one_list_per_step(observed):
    from echomq_viz.peers.kombu_peer import TEN_STEPS, KombuPeer

    runs, _, client = observed
    with KombuPeer(client) as default, KombuPeer(client, TEN_STEPS) as ten:
        assert default.steps == (0, 3, 6, 9) and ten.steps == tuple(range(10))
        assert {default.list_of(p) for p in (0, 1, 2)} == {default.prefix + "jobs"}
        assert default.list_of(3) == default.list_of(5) != default.list_of(2)
        assert len({ten.list_of(p) for p in range(10)}) == 10
        assert ten.transport_options["queue_order_strategy"] == "priority"
    lists = {shape for (shape, kind) in runs["kombu"].key_layout() if kind == "list"}
    assert lists == {"jobs", "jobs\x06\x163"}
    assert len({shape for (shape, kind) in runs["kombu10"].key_layout() if kind == "list"}) == 3
    for pop in runs["kombu"].commands_of("pop"):
        names = [name for name, _ in pop]
        assert names[names.index("multi"):] == ["multi", "zadd", "hset", "exec"]
        assert set(names[:names.index("multi")]) == {"rpop"}
    for pop in runs["kombu"].texts_of("pop"):  # the transaction records the message as unacknowledged
        body = pop[pop.index("MULTI") + 1:pop.index("EXEC")]
        assert body and all(f"{{{runs['kombu'].key_tag}}}:unacked" in text for text in body)
    assert len(runs["kombu"].commands_of("pop")[-1]) == 2 + 4  # a tier-3 job: step 0's list, then step 3's
    assert not runs["kombu"].pop.atomic and runs["kombu"].add.names[-1] == "LPUSH"
    with assert_refused(ValueError, "steps must be increasing ints"):
        KombuPeer(client, (3, 1))
    with KombuPeer(client) as peer:
        before = sorted(client.scan_iter(match=f"{peer.prefix}*"))
        with assert_refused(TypeError, "jobs must be a non-empty list of WorkJob"):
            observe(peer, [("j01", 1)])
        assert sorted(client.scan_iter(match=f"{peer.prefix}*")) == before  # refused before the reset


@pytest.mark.slow
def test_rq_worker_asks_its_queues_in_order(observed):
    rq = observed[0]["rq"]
    jobs = {job.name: job for job in workload()}
    for name, pop in zip(rq.order, rq.commands_of("pop")):
        lpops = [name for name, _ in pop if name == "lpop"]
        assert len(lpops) == jobs[name].tier  # one LPOP per queue up to the job's own
    assert {shape for (shape, _) in rq.key_layout()} == {"job:<id>", "queue:high", "queue:mid", "queue:low",
                                                           "queues"}
    assert not rq.pop.atomic and not rq.add.atomic and rq.slots_default > 1
    # RQ's job ids are random UUIDs: the count shown is of the queue's own keys, the same every run
    queue_keys = ["rq:queue:high", "rq:queue:mid", "rq:queue:low", "rq:queues"]
    assert rq.job_keys and rq.queue_slots_default == slot_count(queue_keys)
    assert slot_text(rq) == f"{slot_count(queue_keys)} slots, each job's key apart"


@pytest.mark.slow
def test_huey_scores_by_priority_alone_with_a_clock_in_front(observed):
    from echomq_viz.peers.huey_peer import HueyPeer, member_clock

    _, _, client = observed
    raw = bytes_client(client)
    with HueyPeer(client) as huey:
        huey.reset()
        jobs = workload()
        huey.add_all(jobs)
        stored = raw.zrange(f"{huey.prefix}queue".encode(), 0, -1, withscores=True)
        assert sorted({score for _, score in stored}) == [-3.0, -2.0, -1.0]  # -priority, priority = 4 - tier
        for score in (-3.0, -2.0, -1.0):
            members = [member for member, s in stored if s == score]
            clocks = [member_clock(member) for member in members]
            assert clocks == sorted(clocks)  # equal scores: member bytes, the clock first
            assert all(abs(clock / 1e6 - time.time()) < 600 for clock in clocks)  # microseconds of now
        assert huey.pop_all(24) == correct_order(jobs)
        huey.reset()
    run = observed[0]["huey"]
    assert run.add.names == ("ZADD",) and run.pop.names == ("ZPOPMIN",)
    assert struct.calcsize(">Q") == 8


@pytest.mark.slow
def test_commands_and_table_come_from_the_runs(observed):
    runs = [observed[0][key] for key in ORDER]
    rows = closing_rows(runs)
    assert [row[0] for row in rows] == [run.label for run in runs]
    assert all(all(cell for cell in row) for row in rows)
    by_key = dict(zip(ORDER, rows))
    assert by_key["kombu"][1].startswith("wrong") and by_key["packed"][1] == "correct"
    assert by_key["huey"][5] == "1" and by_key["huey"][6] == "1"
    assert "in Lua" in by_key["bull"][5]
    text, page = closing_table(runs), closing_table_html(runs)
    assert all(run.label in text and run.label in page for run in runs)
    for run in runs:
        assert run.library.split()[0] in details(run)


# -- TCP with a password, the Node runner's life ------------------------------------------------------


@pytest.fixture(scope="module")
def tcp_server():
    server = server_mod.RedisServer(port=0).start()
    yield server
    server.stop()


@pytest.mark.slow
def test_tcp_with_a_password_never_shows_it(tcp_server):
    client = tcp_server.client()
    runs = observe_all(peer_makers(client, ("bull", "kombu10", "rq")), workload())
    for run in runs:
        assert run.correct, run.key
        shown = details(run) + run.configured + run.library
        assert tcp_server.password not in shown


@pytest.mark.slow
def test_a_unix_socket_with_a_password_reaches_every_library():
    import redis

    server = server_mod.RedisServer().start()
    password = "a-socket-password-0123"
    server.client().config_set("requirepass", password)
    client = redis.Redis(unix_socket_path=server.socket_path, password=password, decode_responses=True)
    try:
        runs = observe_all(peer_makers(client, ("bullmq", "bull", "kombu10", "rq", "huey")), workload())
        assert all(run.correct for run in runs)
        assert not any(password in details(run) for run in runs)
    finally:
        client.config_set("requirepass", "")
        server.stop()


@pytest.mark.slow
def test_the_node_runner_ends_with_its_peer(tcp_server):
    from echomq_viz.peers.bull_peer import BullPeer

    peer = BullPeer(tcp_server.client())
    runner = psutil.Process(peer.runner.pid)
    assert "node_runner.js" in " ".join(runner.cmdline())
    peer.close()
    assert not _running(runner), "the node runner outlived its peer"  # gone, or a zombie


# -- growth ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_growth_measures_every_size_in_batches_with_redis_own_time():
    from echomq_viz.peers.growth import SLOWLOG_ARGS, _server_seconds, slowlog_on
    from echomq_viz.peers.packed_peers import PackedPeer

    server = server_mod.RedisServer(extra_args=SLOWLOG_ARGS).start()
    try:
        with PackedPeer(server.client()) as peer:
            assert slowlog_on(peer.client)
            points = measure_growth(peer, (5, 20), per_size=3, batches=2, server=True)
            assert [point["n"] for point in points] == [5, 20]
            for point in points:
                for kind in ("add", "add_least", "pop", "server_add", "server_add_least", "server_pop"):
                    assert len(point[kind]) == 2 and all(value > 0 for value in point[kind]), kind
            # Redis's own time is a part of what the client waits: each add's SLOWLOG durations
            # fall inside the client's timer around it, so their sums compare the same way
            # (a median of one against a mean of the other need not).
            jobs = growth_jobs(3, 100)
            peer.client.slowlog_reset()
            waited = sum(peer.time_adds(jobs))
            inside = _server_seconds(peer.client, len(jobs)) * len(jobs)
            assert 0 < inside <= waited, (inside, waited)
            peer.reset()
            assert not list(server.client().scan_iter(match=f"{peer.prefix}*"))
            with assert_refused(ValueError, "sizes must increase"):
                measure_growth(peer, (20, 5))
    finally:
        server.stop()
    assert [job.name for job in growth_jobs(3, 10)] == ["g10", "g11", "g12"]
    assert {job.tier for job in growth_jobs(5, 0, tier=3)} == {3}


def test_the_stored_run_has_five_batches_a_size_and_redis_own_time():
    stored = load_growth()
    assert stored["batches"] >= 5 and stored["sizes"] == [100, 1_000, 10_000, 100_000]
    prose, _ = _notebook()  # as the figure's paragraph says
    assert stored["batches"] == 5 and "five times over, 30 adds of the most urgent tier" in prose
    assert stored["per_size"] == 30 and "(100 to 100,000)" in prose
    assert stored["server_timing"]
    for which in ("add", "add_least", "pop", "server_add", "server_add_least", "server_pop"):
        lines = series(stored, which)
        assert set(lines) == {entry["label"] for entry in stored["libraries"].values()}, which
        assert all(len(points) == 4 and all(lo <= med <= hi for _, med, lo, hi in points)
                   for points in lines.values())
    with assert_refused(ValueError, "which must be one of add, add_least, pop"):
        series(stored, "both")


def test_bulls_add_cost_grows_with_the_less_urgent_jobs_waiting():
    """The notebook's sentence on Bull's add, checked against the stored run: at 100,000
    waiting, Redis spends far longer on a most urgent add (it walks past every less urgent
    job) than on a least urgent one, and the packed score's add stays flat."""
    stored = load_growth()
    bull = stored["libraries"].get("bull")
    if bull is None:
        pytest.fail("the stored run has no Bull (it was made without Node.js)")
    urgent, least = series(stored, "server_add")[bull["label"]], series(stored, "server_add_least")[bull["label"]]
    assert urgent[-1][1] > 5 * least[-1][1]
    assert urgent[-1][1] / urgent[0][1] > 5 * (least[-1][1] / least[0][1])
    packed = series(stored, "server_add")[stored["libraries"]["packed"]["label"]]
    assert packed[-1][1] / packed[0][1] < 3
    prose, _ = _notebook()
    assert "in proportion to the waiting jobs *less urgent* than the new one" in prose


# -- the views, and a machine without Node.js ------------------------------------------------------


@pytest.mark.slow  # matplotlib draws four log-log plots
def test_growth_view_fits_the_page():
    from echomq_viz.peers.view import GrowthView
    from test_widgets import caption_of

    stored = load_growth()
    growth = GrowthView(stored)
    assert all(entry["label"] in growth.describe() for entry in stored["libraries"].values())
    assert caption_of(growth) == growth.describe()  # right under its image, which it names
    from echomq_viz.figures import visual

    # the project's visual system: fits every page, legible type (the pop orders: tests/peers/test_orders_view.py)
    assert growth.fig.get_figwidth() * growth.fig.dpi <= visual.MAX_FIGURE_PX
    assert visual.smallest_text_px(growth.fig)[0] >= visual.MIN_TEXT_PX
    for ax in growth.fig.axes:  # plain numbers on both axes, never "2 × 10²"
        ax.figure.canvas.draw()
        labels = [tick.get_text() for tick in ax.get_xticklabels() + ax.get_yticklabels() if tick.get_text()]
        assert labels and not any("10^" in text or "times" in text or "×" in text for text in labels), labels


def test_without_node_bull_is_left_out_in_one_line(monkeypatch, tmp_path):
    from echomq_viz.peers.base import need
    from echomq_viz.peers.node import NodeMissing, install_node_packages

    monkeypatch.setenv("PATH", str(tmp_path))
    why = node_missing()
    assert why and len(why.splitlines()) == 1 and "node and npm not found" in why
    assert len(peer_makers(None, None)) == 6  # every Python library, no Bull
    with assert_refused(NodeMissing, "Bull"):
        install_node_packages(tmp_path)
    with assert_refused(ImportError, r"pip install 'echomq-viz\[peers\]'"):
        need("no_such_queue_library")


@pytest.mark.slow
def test_the_node_runner_ends_when_its_python_is_killed(tcp_server, tmp_path):
    import signal
    import subprocess
    import sys

    from conftest import wait_until

    script = tmp_path / "hold_bull.py"
    script.write_text(
        "import sys, time\n"
        "from echomq_viz.peers.bull_peer import BullPeer\n"
        "from echomq_viz.redis_side.server import connect\n"
        "peer = BullPeer(connect(sys.argv[1]))\n"
        "print(peer.runner.pid, flush=True)\n"
        "time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, str(script), tcp_server.url], stdout=subprocess.PIPE, text=True)
    try:
        runner = int(holder.stdout.readline())
        assert psutil.pid_exists(runner)
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        gone = wait_until(lambda: not psutil.pid_exists(runner)
                          or psutil.Process(runner).status() == psutil.STATUS_ZOMBIE, 15)
        assert gone, "the node runner outlived the Python process that started it"
    finally:
        holder.kill()
        holder.wait(10)


# -- each library through its own worker (echomq_viz.peers.workers, .deployments, .deployed) ----------

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10-the-queues-people-run.ipynb"


def _notebook() -> tuple[str, str]:
    """Notebook 10's prose (every markdown cell) and its stored printed output, as text."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    prose = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    printed = "\n".join("".join(output.get("text", "")) for cell in cells if cell["cell_type"] == "code"
                        for output in cell.get("outputs", ()))
    return " ".join(prose.split()), printed


@pytest.fixture(scope="module")
def workers():
    """The notebook's worker runs: every library's own worker on a private Redis of its own, and the probes."""
    return run_workers(workload())


def test_take_commands_reads_the_blocking_pop_and_leaves_the_producers_add_out():
    word = "w"
    lines = [("ECHO w worker", False), ("BRPOP jobs jobs:3 1", False), ("RPUSH viz10:done j01", False),
             ("BRPOP jobs jobs:3 1", False), ("ECHO w late", False), ("LPUSH jobs {}", False),
             ("MULTI", False), ("ZADD unacked_index 1 a", False), ("HSET unacked a {}", False), ("EXEC", False),
             ("RPUSH viz10:done late", False)]
    steady, late = take_commands(lines, word, [("LPUSH jobs {}", False)])
    assert [text.split()[0] for text, _ in late] == ["BRPOP", "MULTI", "ZADD", "HSET", "EXEC"]
    assert [text for text, _ in first_take(late)] == ["BRPOP jobs jobs:3 1", "MULTI", "ZADD unacked_index 1 a",
                                                      "HSET unacked a {}", "EXEC"]


def test_take_text_writes_a_locks_token_the_same_whatever_the_workers_fetch_count():
    """BullMQ's token is its worker id and a count of its fetches (empty ones too): a timing, not a fact."""
    takes = [[("SET bull:jobs:25:lock 0123456789abcdef0123:27 PX 30000", True)],
             [("SET bull:jobs:25:lock 0123456789abcdef0123:28 PX 30000", True)],
             [("SET bull:jobs:25:lock 1450f0af-945c-48bb-aa28-2151632367fb PX 30000", True)]]
    assert {take_text(take) for take in takes} == {"      in Lua: SET bull:jobs:25:lock <token> PX 30000"}
    assert take_text([("SET bull:jobs:25:x 0123456789abcdef0123:27", False)]) == "  SET bull:jobs:25:x <sha>:27"


def test_stopping_a_loop_thread_ends_the_tasks_left_pending_on_it():
    """A stopped BullMQ worker can leave its timer or blocking wait pending on a busy machine; collected
    pending, a task prints "Task was destroyed but it is pending!" into the notebook's output."""
    loop = LoopThread()

    async def leave_pending():
        async def hold():
            try:
                await asyncio.Event().wait()
            finally:
                ended.append("cleaned up in the loop")

        return asyncio.ensure_future(hold())

    ended: list[str] = []
    task = loop.run(leave_pending())
    loop.stop()
    assert task.cancelled() and ended == ["cleaned up in the loop"]
    assert loop.loop.is_closed() and not loop.thread.is_alive()


@pytest.mark.slow
def test_every_worker_runs_the_workload_in_the_order_the_notebook_prints(workers):
    jobs = workload()
    right = correct_order(jobs)
    for key in ("celery10", "rq", "huey", "bullmq-py") + (("bull", "bullmq-node") if node_missing() is None else ()):
        assert list(workers[key].order) == right + ["late"], key
    celery = workers["celery"]  # kombu's default steps [0, 3, 6, 9]: tiers 1 and 2 share one list
    assert list(celery.order[:24]) == [job.name for job in jobs if job.tier < 3] + [job.name for job in jobs
                                                                                     if job.tier == 3]
    _, printed = _notebook()
    assert "(NOT the right order)" in printed and printed.count("(the right order)") >= 4


@pytest.mark.slow
def test_celery_sets_no_priority_option_and_its_worker_takes_with_one_brpop(workers):
    import kombu.transport.redis as kombu_redis
    from celery import Celery

    assert kombu_redis.Channel.queue_order_strategy == "round_robin"
    assert kombu_redis.Channel.priority_steps == [0, 3, 6, 9]
    assert not Celery("bare").conf.broker_transport_options  # Celery sets none of it
    assert Celery("bare").conf.worker_prefetch_multiplier == 4
    for key, lists in (("celery", 4), ("celery10", 10)):
        take = first_take(workers[key].late)
        verbs = [text.split()[0].upper() for text, _ in take]
        assert verbs == ["BRPOP", "MULTI", "ZADD", "HSET", "EXEC"], (key, take)  # 5 commands, 2 steps
        assert len(take[0][0].split()) == 1 + lists + 1  # BRPOP, every step list, the timeout
    prose, _ = _notebook()
    assert "how Celery sets it" not in prose and "Celery sets no priority option" in prose
    assert "one `BRPOP` naming every step list" in prose


@pytest.mark.slow
def test_celery_direction_default_clamping_and_prefetch(workers):
    probe = workers["celery-probe"]
    assert probe.order == ("no-priority", "zero", "minus-three", "five", "nine", "ten", "twelve", "fifteen")
    assert before(probe, "zero", "nine") and before(probe, "no-priority", "zero")
    assert workers["celery-max-priority"].order == ("zero", "four", "five", "nine")  # x-max-priority ignored
    four, one = workers["celery-prefetch-4"].ran("urgent"), workers["celery-prefetch-1"].ran("urgent")
    # The urgent task runs after the one that ran, the one running when it was sent (held at the
    # gate) and the ones the worker held: as many as its multiplier, with one process.
    assert (one, four) == (1 + 1 + 1 + 1, 1 + 1 + 4 + 1)
    prose, printed = _notebook()
    assert "10, 12 and 15 run after 9, in the order sent (clamped to 9): True" in printed
    assert "-3 runs with the 0s (clamped to 0): True" in printed
    assert f"worker_prefetch_multiplier=4: " in printed and f"it ran at position {four} of 9" in printed


def test_a_celery_gate_is_a_file_beside_the_private_socket_that_opens_once_and_goes(monkeypatch):
    from echomq_viz.peers.deployments import CeleryDeployment
    from echomq_viz.redis_side.server import RedisServer

    deployment = CeleryDeployment(prefetch=1, gate=True)
    sent = []
    with RedisServer() as server:
        deployment.open_producer(server.socket_path)  # Celery connects only when a task is sent
        monkeypatch.setattr(deployment.app, "send_task", lambda name, **options: sent.append((name, options)))
        gate = deployment.gate
        try:
            assert os.path.dirname(gate) == os.path.dirname(server.socket_path) and os.path.isfile(gate)
            assert stat.S_IMODE(os.stat(os.path.dirname(gate)).st_mode) == 0o700
            deployment.add([("low1", 9)])
            assert sent == [("record", {"args": ("low1", 0.0), "priority": 9, "kwargs": {"gate": gate}})]
            deployment.open_gate()
            assert not os.path.exists(gate)
            open(gate, "x").close()  # closed again: stop opens it, so no task waits on a stopped run
        finally:
            deployment.stop()
        assert not os.path.exists(gate) and deployment.gate is None
    ungated = CeleryDeployment()
    ungated.open_producer("/nonexistent/redis.sock")
    monkeypatch.setattr(ungated.app, "send_task", lambda name, **options: sent.append((name, options)))
    ungated.add([("j01", 1)])
    ungated.stop()
    assert sent[-1] == ("record", {"args": ("j01", 0.0), "priority": 1})  # the body the notebook shows


@pytest.mark.slow
def test_rq_worker_blocks_on_every_queue_at_once(workers):
    take = first_take(workers["rq"].late)
    assert [text.split()[0] for text, _ in take] == ["BLPOP", "HGETALL"]
    assert take[0][0].split()[1:4] == ["rq:queue:high", "rq:queue:mid", "rq:queue:low"]
    prose, _ = _notebook()
    assert "sends one `BLPOP` naming the three queues in that order, then `HGETALL` of the job" in prose
    assert "a pop sends one `LPOP` per queue, in order, until one answers, so a tier-3" not in prose


@pytest.mark.slow
def test_rq_burst_worker_sends_one_lpop_per_queue_until_one_answers(workers):
    """The sentence on `rq worker --burst`, from that worker process (the rq CLI) on its own Redis."""
    burst, jobs = workers["rq-burst"], workload()
    assert burst.how.startswith("rq worker --burst ") and list(burst.order) == correct_order(jobs)
    tier = {job.name: job.tier for job in jobs}
    takes = burst_takes(burst)
    assert [name for name, _ in takes] == list(burst.order)
    queues = ["rq:queue:high", "rq:queue:mid", "rq:queue:low"]
    for name, take in takes:
        assert [text for text in take[:-1]] == [f"LPOP {queue}" for queue in queues[:tier[name]]], (name, take)
        assert take[-1].startswith("HGETALL rq:job:"), (name, take)
    assert not [text for text, _ in burst.worker if text.split(" ", 1)[0].upper() in BLOCKING]  # never blocks
    prose, printed = _notebook()
    assert ("the worker sends instead one `LPOP` per queue, in order, until one answers, so in burst mode a "
            "tier-3 job costs three round trips") in prose
    assert "LPOPs sent for each job, by its tier: tier 1: 1, tier 2: 2, tier 3: 3" in printed
    assert "LPOPs sent for each job, by its tier: tier 1: 1, tier 2: 2, tier 3: 3" in burst_text(burst, jobs)


@pytest.mark.slow
def test_huey_needs_its_priority_storage_and_its_keys_sit_in_four_slots(workers):
    assert huey_plain_priority().startswith("NotImplementedError")
    assert len(set(huey_storage_slots().values())) == 4
    assert multi_key_commands(workers["huey"]) == []  # each command names one key: a cluster takes it
    assert [text.split()[0] for text, _ in first_take(workers["huey"].late)][0] == "BZPOPMIN"
    # no ack: after the pop, huey's consumer writes nothing that would keep the task
    writes = {"ZADD", "RPUSH", "LPUSH", "HSET", "SET", "LMOVE", "RPOPLPUSH", "EVAL", "EVALSHA", "MULTI"}
    assert not [text for text, _ in workers["huey"].late[1:] if text.split()[0].upper() in writes]
    prose, printed = _notebook()
    assert "one hash slot (default names)" not in prose
    assert "huey works because each of its commands names one key" in prose
    assert "RedisHuey, a task with priority=1: NotImplementedError" in printed


@pytest.mark.slow
def test_a_cluster_refuses_celery_and_rq_and_bull_without_braces(workers):
    assert "BRPOP" in multi_key_commands(workers["celery"])
    assert {"BLPOP", "MULTI/EXEC"} <= set(multi_key_commands(workers["rq"]))
    if node_missing() is None:
        # Bull's worker, back from an empty queue, moves a job from wait to active: two slots
        assert multi_key_commands(workers["bull"]) == ["BRPOPLPUSH", "EVALSHA"]
        assert multi_key_commands(workers["bullmq-node"]) == ["EVALSHA"]
    assert multi_key_commands(workers["bullmq-py"]) == ["EVALSHA"]


@pytest.mark.slow
def test_bullmq_pypi_accepts_what_node_refuses_and_loses_fifo_at_2_31(workers):
    probe = workers["bullmq-py-probe"]
    assert all(outcome == "ok" for outcome in accepted(probe).values())  # 2²¹, 2³¹, 1.5, −1 all accepted
    assert before(probe, "no-priority", "minus-one") and before(probe, "minus-one", "one")
    assert probe.ran("one-and-a-half") == 0  # accepted, never taken
    fifo = workers["bullmq-py-fifo"]
    assert len(fifo.order) == 12 and list(fifo.order) != [name for name, _ in BULLMQ_PY_FIFO]
    assert list(fifo.order) == sorted(fifo.order, key=lambda name: str(int(name[1:])))  # by job-id string
    _, printed = _notebook()
    assert f"ran: {' '.join(fifo.order)}" in printed


@pytest.mark.slow
def test_node_bullmq_refuses_past_2_21_and_serves_minus_one_first(workers):
    if node_missing() is not None:
        pytest.fail(node_missing())
    probe = workers["bullmq-node-probe"]
    outcomes = accepted(probe)
    assert "between 0 and 2097151" in outcomes["2²¹"]
    assert outcomes["2²¹ − 1"] == "ok" and outcomes["minus-one"] == "ok"
    assert before(probe, "minus-one", "one") and before(probe, "no-priority", "minus-one")
    _, printed = _notebook()
    assert "Priority should be between 0 and 2097151; never ran" in printed


@pytest.mark.slow
def test_bull_serves_zero_last_and_misorders_after_a_negative(workers):
    if node_missing() is not None:
        pytest.fail(node_missing())
    zero = workers["bull-zero"]
    assert zero.order == ("one", "two", "zero", "no-priority")  # 0 means no priority: after every prioritized job
    negative = workers["bull-negative"]
    assert before(negative, "one-and-a-half", "one")  # after a -1 job, 1.5 is placed ahead of 1
    take = first_take(workers["bull"].late)  # after an empty queue: BRPOPLPUSH outside Lua, then a script
    assert take[0][0].lower().startswith("brpoplpush") and take[1][0].lower().startswith("evalsha")
    prose, _ = _notebook()
    assert all(outcome == "ok" for run in (zero, negative) for outcome in accepted(run).values())  # 0, −1, 1.5
    assert "any number" not in prose.replace("by design", "")
    assert "after a −1 job, a 1.5 job went ahead of a 1 job" in prose
    assert "`BRPOPLPUSH` moves it to `active` outside any script" in prose
    # the lock is set by the second step's script: between the two, the job sits in active unlocked
    assert not [text for text, lua in take[:1] if "lock" in text.lower()]
    assert any(lua and text.upper().startswith("SET ") and text.split()[1].endswith(":lock") for text, lua in take)
    assert "then a separate `EVALSHA` locks it; in between the job sits in `active` with no lock" in prose


def test_versions_table_lists_each_library_once():
    _, printed = _notebook()
    head = printed[:printed.index("Celery settings set")]
    for library in ("celery 5.7.0", "rq 3.0.0", "huey 3.5.4", "bullmq 3.4.4 (PyPI)"):
        assert head.count(library) >= 1
    assert "how it was called" in head
    settings = printed[printed.index("Celery settings set"):]
    # each shown with where Celery documents it
    for setting in ("worker_concurrency", "task_default_queue", "broker_transport_options",
                    "worker_prefetch_multiplier", "task_queue_max_priority"):
        assert f"{setting} = " in settings and f"configuration.html#{setting.replace('_', '-')}" in settings \
            or setting == "broker_transport_options" and "routing.html#redis-message-priorities" in settings


@pytest.mark.slow  # reads npm's bullmq, installed on first use
def test_the_installed_bullmq_scores_take_the_counter_modulo_2_32():
    lines = score_lines()
    assert any("(PyPI)" in package for package in lines)
    assert all(line == "return priority * 0x100000000 + prioCounter % 0x100000000" for line in lines.values())
    prose, printed = _notebook()
    assert "bit.band(prioCounter, 0xffffffffffff)" in prose and "first released in 5.8.1" in prose
    assert all(f"{package:<22} {line}" in printed for package, line in lines.items())


@pytest.mark.slow
def test_a_worker_process_ends_with_the_thread_that_started_it():
    import threading

    from echomq_viz.peers.deployments import RQDeployment

    server = server_mod.RedisServer().start()
    deployment = RQDeployment()
    try:
        deployment.open_producer(server.socket_path)
        started = threading.Thread(target=deployment.start_worker, args=(server.socket_path,))
        started.start()
        started.join()
        worker = deployment.process
        worker.wait(20)  # its starting thread has ended: the worker got SIGTERM
        assert worker.returncode is not None
    finally:
        deployment.stop()
        server.stop()


@pytest.mark.slow
def test_on_a_real_cluster_celery_and_rq_get_crossslot_and_huey_works():
    """The cluster sentences, tried on a one-master local cluster (every slot on one node, so
    a command whose keys sit in two slots gets CROSSSLOT, as on any cluster)."""
    import redis
    from celery import Celery
    from huey import PriorityRedisHuey
    from rq import Queue

    from echomq_viz.redis_side.cluster import LocalCluster

    with LocalCluster(1) as cluster:
        node = cluster.node_client(0, decode_responses=False)
        url = f"redis://:{cluster.password}@127.0.0.1:{cluster.nodes[0].port}/0"
        with pytest.raises(redis.exceptions.ResponseError, match="hash to the same slot"):
            Queue("mid", connection=node).enqueue("echomq_viz.peers.worker_apps.record", "x")
        app = Celery("viz-cluster", broker=url)
        with pytest.raises(Exception, match="hash to the same slot"):
            app.send_task("record", args=("x",), priority=3)
        app.close()
        huey = PriorityRedisHuey("viz", url=url)
        task = huey.task(name="record")(record_huey)
        task("x", priority=2)
        assert huey.dequeue() is not None  # ZADD and BZPOPMIN name one key each
        huey.storage.pool.disconnect()
    _, printed = _notebook()
    assert "ClusterCrossSlotError: Keys in request don't hash to the same slot" in printed


def test_without_node_the_worker_runs_leave_bull_and_node_bullmq_out():
    names = [name for name, *_ in plans(workload(), node=False)]
    assert not [name for name in names if name.startswith("bull-") or name in ("bull", "bullmq-node")]
    assert {"celery", "celery10", "rq", "huey", "bullmq-py", "celery-probe", "bullmq-py-probe"} <= set(names)


@pytest.mark.slow
def test_a_smaller_number_is_more_urgent_in_celery_bull_and_bullmq_and_larger_in_huey(workers):
    celery = workers["celery-probe"]
    assert before(celery, "zero", "five") and before(celery, "five", "nine")
    if node_missing() is None:
        assert before(workers["bull-zero"], "one", "two") and before(workers["bullmq-node-probe"], "one", "two")
    assert before(workers["bullmq-py-probe"], "one", "two")
    jobs = workload()  # huey got priority = 4 - tier: the larger number ran first
    assert list(workers["huey"].order[:24]) == correct_order(jobs)
    prose, _ = _notebook()
    assert "In Bull and BullMQ a smaller number is more urgent too, counted from 1" in prose
    assert "count the other way" not in prose


@pytest.mark.slow
def test_bullmq_takes_priority_0_as_no_priority_and_serves_it_first(workers):
    """'0 means "no priority"' (Bull and BullMQ), and 'BullMQ [serves a job of priority 0] before them'."""
    if node_missing() is not None:
        pytest.fail(node_missing())
    for name in ("bullmq-py-probe", "bullmq-node-probe"):
        probe = workers[name]
        assert accepted(probe)["zero"] == "ok"
        prioritized = [sent.name for sent in probe.sent if sent.priority not in (None, 0) and probe.ran(sent.name)]
        assert prioritized and all(before(probe, "zero", other) for other in prioritized), probe.order
        assert probe.order[:2] == ("zero", "no-priority")  # one wait list, in the order added
    assert workers["bull-zero"].order[-2:] == ("zero", "no-priority")  # Bull: after every prioritized one
    prose, _ = _notebook()
    assert 'counted from 1; 0 means "no priority"' in prose
    assert "Bull serves a job of priority 0 (no priority) after every prioritized one, BullMQ before them" in prose


@pytest.mark.slow
def test_celery_clamps_silently_and_its_worker_prefetches_with_prefork_by_default(workers):
    from celery import Celery

    probe = workers["celery-probe"]
    assert all(outcome == "ok" for outcome in accepted(probe).values())  # 10, 12, 15 and -3 taken, no warning
    assert Celery("bare").conf.worker_pool == "prefork" and "prefork pool" in workers["celery"].how
    # the second add, the one MONITOR saw alone, is the task sent with no priority: kombu files it
    # at 0 (step 0's list, priority 0 in its properties), and the worker ran it first
    assert probe.sent[1].name == "no-priority" and probe.sent[1].priority is None
    (text, _), = probe.add
    assert text.startswith("LPUSH jobs ") and '"priority": 0,' in text
    assert probe.order[0] == "no-priority"
    prose, _ = _notebook()
    assert "clamps past 0..9 silently" in prose and "With Celery's default prefork pool" in prose
    assert "puts a task without a priority at 0 (ahead of every prioritized one)" in prose


@pytest.mark.slow
def test_bull_and_bullmq_keep_one_slot_with_a_braced_queue_name():
    """'Bull and BullMQ work there only with a braced prefix, such as a queue named `{jobs}`': with that
    name, every command, transaction and script each worker and producer sent names keys of one slot."""
    from echomq_viz.peers.deployments import BullMQPyDeployment, NodeDeployment
    from echomq_viz.peers.workers import run_all

    if node_missing() is not None:
        pytest.fail(node_missing())
    jobs = [("a", 2), ("b", 1), ("c", None)]
    makers = [lambda: NodeDeployment("bull", queue="{jobs}"), lambda: NodeDeployment("bullmq", queue="{jobs}"),
              lambda: BullMQPyDeployment(queue="{jobs}")]
    for run in run_all([(make, jobs, {}) for make in makers], workers=3):
        assert run.order[:3] in (("b", "a", "c"), ("c", "b", "a")) and run.order[-1] == "late", run.label
        assert multi_key_commands(run) == [], run.label
        assert len(set(slots_of(list(run.keys)).values())) == 1 and all("{jobs}" in key for key in run.keys)
    prose, _ = _notebook()
    assert "Bull and BullMQ work there only with a braced prefix, such as a queue named `{jobs}`" in prose


def test_a_move_between_two_slots_is_named_whether_or_not_its_lists_were_left_behind():
    """BRPOPLPUSH names its source and destination: a cluster refuses it across slots even when
    both lists are empty (so absent) by the time the run's keys are read."""
    from echomq_viz.peers.workers import WorkerRun

    def run(*late: str, keys: dict | None = None) -> WorkerRun:
        return WorkerRun(key="k", label="l", version="v", how="h", settings=(), sent=(), order=(), steady=(),
                         late=tuple((text, False) for text in late), keys=keys or {})

    assert multi_key_commands(run("BRPOPLPUSH bull:q:wait bull:q:active 5")) == ["BRPOPLPUSH"]
    assert multi_key_commands(run("BRPOPLPUSH bull:{q}:wait bull:{q}:active 5")) == []  # one slot
    assert multi_key_commands(run("LMOVE a b LEFT RIGHT", "HGET a f")) == ["LMOVE"]
    assert multi_key_commands(run("HMGET bull:q:1 bull:q:2", keys={"bull:q:1": "hash"})) == []  # not both keys


def test_before_each_record_splits_a_workers_lines_at_each_jobs_record():
    lines = [("LPOP rq:queue:high", False), ("RPUSH viz10:done j01", False), ("LPOP rq:queue:high", False),
             ("LPOP rq:queue:mid", False), ("HGETALL rq:job:x", False), ("RPUSH viz10:done j02", False),
             ("LPOP rq:queue:high", False)]
    parts = before_each_record(lines)
    assert [[text.split()[0] for text, _ in part] for part in parts] == [["LPOP"], ["LPOP", "LPOP", "HGETALL"],
                                                                          ["LPOP"]]


@pytest.mark.slow
def test_both_node_scripts_answer_through_the_one_shared_loop():
    from echomq_viz.peers.node import RUNNER, SERVE, WORKER, NodeRunner

    for script in (RUNNER, WORKER):
        text = script.read_text(encoding="utf-8")
        assert 'require("./node_serve")' in text and "readline" not in text, script.name
    assert "module.exports = { serve }" in SERVE.read_text(encoding="utf-8")
    for script in (RUNNER, WORKER):
        runner = NodeRunner(script=script)
        try:
            with assert_refused(RuntimeError, 'unknown op "nope"'):
                runner.request("nope")
            assert runner.request("close") is None  # the loop answers on after an error
        finally:
            runner.close()
        assert runner.process.returncode == 0  # stdin closed: the loop closed the queue, then exited


@pytest.mark.slow
def test_a_huey_task_popped_by_a_consumer_that_dies_is_lost():
    """'keeps no copy of it: there is no ack, so a task popped by a consumer that dies is lost',
    with huey_consumer itself: killed (SIGKILL) while it runs a task, then started again."""
    import os
    import signal

    from conftest import wait_until
    from echomq_viz.peers.deployments import HueyDeployment
    from echomq_viz.peers.worker_apps import DONE, STARTED, hold_huey

    server = server_mod.RedisServer().start()
    deployment = HueyDeployment()
    try:
        client = server.client()
        deployment.open_producer(server.socket_path)
        deployment.huey.task(name="hold")(hold_huey)("held", 30)
        storage = deployment.huey.storage
        assert client.zcard(storage.queue_key) == 1
        deployment.start_worker(server.socket_path)
        assert wait_until(lambda: client.lrange(STARTED, 0, -1) == ["held"], 20), "the consumer never ran it"
        assert client.zcard(storage.queue_key) == 0  # popped: no copy anywhere in Redis
        assert set(client.scan_iter(count=1000)) <= {STARTED}
        os.killpg(deployment.process.pid, signal.SIGKILL)
        deployment.process.wait(10)
        deployment.start_worker(server.socket_path)  # a fresh consumer finds nothing to run
        time.sleep(3)
        assert deployment.process.poll() is None
        assert client.lrange(STARTED, 0, -1) == ["held"] and client.llen(DONE) == 0
    finally:
        deployment.stop()
        server.stop()
    prose, _ = _notebook()
    assert "keeps no copy of it: there is no ack, so a task popped by a consumer that dies is lost" in prose


@pytest.mark.slow
def test_bullmq_workers_add_with_one_zadd_and_take_with_zpopmin_in_scripts(workers):
    """'BullMQ 4 dropped the list insert for the prioritized sorted set, one `ZADD` [...] and `ZPOPMIN`
    in the consume script', from BullMQ's own producer and Worker (npm and PyPI)."""
    if node_missing() is not None:
        pytest.fail(node_missing())
    for key in ("bullmq-node", "bullmq-py"):
        run = workers[key]
        assert [text.split()[0].upper() for text, lua in run.add if not lua] == ["EVALSHA"], key  # one script
        inner = [text.split()[:2] for text, lua in run.add if lua]
        assert inner.count(["ZADD", "bull:jobs:prioritized"]) == 1 and not [w for w in inner if w[0] == "LINSERT"]
        take = first_take(run.late)
        assert [text.split()[0].upper() for text, lua in take if not lua] == ["BZPOPMIN", "EVALSHA"], key
        assert any(lua and text.split()[:2] == ["ZPOPMIN", "bull:jobs:prioritized"] for text, lua in take), key
    prose, _ = _notebook()
    assert "BullMQ 4 dropped the list insert for the prioritized sorted set, one `ZADD`" in prose
    assert "and `ZPOPMIN` in the consume script" in prose
