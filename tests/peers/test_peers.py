"""Notebook 10's queue libraries (echomq_viz.peers) on real Redis servers.

Each library's pop order, key layout and commands are checked against what
the notebook says of them; every key any library writes must be a demo key of
this process, so the kernel's exit and ``echomq-viz clean`` remove it.
"""

from __future__ import annotations

import asyncio
import struct
import time

import psutil
import pytest

from conftest import SERVER_KINDS, assert_refused, server_binary
from echomq_viz.redis_side import server as server_mod
from echomq_viz.redis_side._process import _running
from echomq_viz.redis_side.demo_keys import demo_owner, lease_key
from echomq_viz.redis_side.owners import this_owner
from echomq_viz.peers import (closing_rows, closing_table, closing_table_html, correct_order, details, node_missing,
                              observe, observe_all, peer_makers, workload)
from echomq_viz.peers.base import bytes_client
from echomq_viz.peers.observe import Line, Operation, file_lines, summarize
from echomq_viz.peers.packed_peers import LoopThread
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
        found = demo_owner(key.encode("utf-8", "surrogateescape"))
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
    # RQ's job ids are random UUIDs: the count kept is of the queue's own keys, the same every run
    queue_keys = ["rq:queue:high", "rq:queue:mid", "rq:queue:low", "rq:queues"]
    assert rq.job_keys and rq.queue_slots_default == slot_count(queue_keys)


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


@pytest.mark.slow
def test_a_node_runner_whose_redis_dies_answers_within_its_timeout_and_is_stopped():
    """ioredis retries forever once its Redis is gone: a request waited for ever, and the notebook (and
    the findings lock every kernel waits on) with it."""
    from echomq_viz.peers.node import WORKER, NodeRunner

    server = server_mod.RedisServer().start()
    runner = NodeRunner(script=WORKER, timeout=3.0)
    try:
        runner.request("open", lib="bull", path=server.socket_path, queue="jobs")
        server.stop()
        started = time.monotonic()
        with assert_refused(RuntimeError, r"^the Node runner did not answer 'add' within 3 s: it was stopped$"):
            runner.request("add", jobs=[{"name": "a", "priority": 1}])
        assert time.monotonic() - started >= 3 - 0.05  # a lower bound: the timeout was waited out
        assert runner.process.poll() is not None  # ended, not left retrying
    finally:
        runner.close()
        server.stop()


# -- the views, and a machine without Node.js ------------------------------------------------------


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
