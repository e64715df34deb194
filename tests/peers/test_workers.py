"""Notebook 10's libraries through their own workers (echomq_viz.peers.workers, .deployments,
.deployed), each on a private Redis of its own: what each worker does is checked here on a fresh
run, and every sentence the notebook prints or states about it against that run."""

from __future__ import annotations

import os
import stat
import time

import pytest

from conftest import wait_until
from echomq_viz.peers import correct_order, node_missing, workload
from echomq_viz.peers.cluster_probes import huey_storage_slots, multi_key_commands, slot_rows
from echomq_viz.peers.deployed import (FIFO_NAMES, MAIN, PREFETCH_RUNS, accepted, before, huey_plain_priority, plans,
                                       run_workers, score_lines)
from echomq_viz.peers.telling import (burst_takes, burst_text, first_take, left_behind, orders_table, prefetch_rows,
                                      sent_and_ran, slot_table, take_text, takes_text, versions_table)
from echomq_viz.peers.workers import BLOCKING, before_each_record, take_commands
from echomq_viz.redis_side import server as server_mod
from notebook10_text import notebook

NODE = node_missing() is None


@pytest.fixture(scope="module")
def workers():
    """The notebook's worker runs, made fresh here: every library's own worker on a private Redis, and the probes."""
    return run_workers(workload())


# -- pure: reading MONITOR lines ---------------------------------------------------------------------------


def test_take_commands_reads_the_blocking_pop_and_leaves_the_producers_add_out():
    lines = [("ECHO w worker", False), ("BRPOP jobs jobs:3 1", False), ("RPUSH viz10:done j01", False),
             ("BRPOP jobs jobs:3 1", False), ("ECHO w late", False), ("LPUSH jobs {}", False),
             ("MULTI", False), ("ZADD unacked_index 1 a", False), ("HSET unacked a {}", False), ("EXEC", False),
             ("RPUSH viz10:done late", False)]
    steady, late = take_commands(lines, "w", [("LPUSH jobs {}", False)])
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


def test_before_each_record_splits_a_workers_lines_at_each_jobs_record():
    lines = [("LPOP rq:queue:high", False), ("RPUSH viz10:done j01", False), ("LPOP rq:queue:high", False),
             ("LPOP rq:queue:mid", False), ("HGETALL rq:job:x", False), ("RPUSH viz10:done j02", False),
             ("LPOP rq:queue:high", False)]
    parts = before_each_record(lines)
    assert [[text.split()[0] for text, _ in part] for part in parts] == [["LPOP"], ["LPOP", "LPOP", "HGETALL"],
                                                                          ["LPOP"]]


def test_without_node_the_worker_runs_leave_bull_and_node_bullmq_out():
    names = [name for name, *_ in plans(workload(), node=False)]
    assert not [name for name in names if name.startswith("bull-") or name in ("bull", "bullmq-node")
                or name.startswith("bullmq-node")]
    assert {"celery", "celery10", "rq", "huey", "bullmq-py", "celery-probe", "bullmq-py-probe"} <= set(names)


# -- the workload through each worker ----------------------------------------------------------------------


@pytest.mark.slow
def test_every_worker_runs_the_workload_in_the_order_the_notebook_prints(workers):
    jobs = workload()
    right = correct_order(jobs)
    for key in ("celery10", "rq", "huey", "bullmq-py") + (("bull", "bullmq-node") if NODE else ()):
        assert list(workers[key].order) == right + ["late"], key
    celery = workers["celery"]  # kombu's default steps [0, 3, 6, 9]: tiers 1 and 2 share one list
    assert list(celery.order[:24]) == [job.name for job in jobs if job.tier < 3] + [job.name for job in jobs
                                                                                     if job.tier == 3]
    _, printed = notebook()
    table = orders_table(workers, MAIN, right)
    assert table in printed and printed.count(" ".join(right)) == 1  # the right order, printed once
    assert versions_table(workers, MAIN) in printed


@pytest.mark.slow
def test_celery_sets_no_priority_option_and_its_worker_takes_with_one_brpop(workers):
    import kombu.transport.redis as kombu_redis
    from celery import Celery

    assert kombu_redis.Channel.queue_order_strategy == "round_robin"
    assert kombu_redis.Channel.priority_steps == [0, 3, 6, 9]
    assert not Celery("bare").conf.broker_transport_options  # Celery sets none of it
    assert Celery("bare").conf.worker_prefetch_multiplier == 4 and Celery("bare").conf.worker_pool == "prefork"
    for key, lists in (("celery", 4), ("celery10", 10)):
        take = first_take(workers[key].late)
        verbs = [text.split()[0].upper() for text, _ in take]
        assert verbs == ["BRPOP", "MULTI", "ZADD", "HSET", "EXEC"], (key, take)  # 5 commands, 2 steps
        assert len(take[0][0].split()) == 1 + lists + 1  # BRPOP, every step list, the timeout
    prose, printed = notebook()
    assert "Celery sets no priority option for Redis by itself" in prose
    assert "the default steps are `[0, 3, 6, 9]`, so priorities 0, 1 and 2 share one list" in prose
    assert takes_text(workers, MAIN) in printed


@pytest.mark.slow
def test_each_takes_steps_are_as_the_notebook_says(workers):
    """The bullets under the takes: BullMQ blocks on its marker and moves the job in one script, Bull moves
    it outside a script then locks it, RQ's second step only reads, huey keeps nothing."""
    for key in ("bullmq-py",) + (("bullmq-node",) if NODE else ()):
        run = workers[key]
        assert [text.split()[0].upper() for text, lua in run.add if not lua] == ["EVALSHA"], key  # one script
        inner = [text.split()[:2] for text, lua in run.add if lua]
        assert inner.count(["ZADD", "bull:jobs:prioritized"]) == 1 and not [w for w in inner if w[0] == "LINSERT"]
        take = first_take(run.late)
        first = [text.split()[:2] for text, lua in take if not lua][0]
        assert [first[0].upper(), first[1]] == ["BZPOPMIN", "bull:jobs:marker"], key
        assert [text.split()[0].upper() for text, lua in take if not lua] == ["BZPOPMIN", "EVALSHA"], key
        assert any(lua and text.split()[:2] == ["ZPOPMIN", "bull:jobs:prioritized"] for text, lua in take), key
    if NODE:
        take = first_take(workers["bull"].late)  # after an empty queue: BRPOPLPUSH outside Lua, then a script
        assert take[0][0].lower().startswith("brpoplpush") and take[1][0].lower().startswith("evalsha")
        assert not [text for text, lua in take[:1] if "lock" in text.lower()]
        assert any(lua and text.upper().startswith("SET ") and text.split()[1].endswith(":lock") for text, lua in take)
    take = first_take(workers["rq"].late)
    assert [text.split()[0] for text, _ in take] == ["BLPOP", "HGETALL"]
    assert take[0][0].split()[1:4] == ["rq:queue:high", "rq:queue:mid", "rq:queue:low"]
    writes = {"ZADD", "RPUSH", "LPUSH", "HSET", "SET", "LMOVE", "RPOPLPUSH", "EVAL", "EVALSHA", "MULTI"}
    assert [text.split()[0] for text, _ in first_take(workers["huey"].late)][0] == "BZPOPMIN"
    assert not [text for text, _ in workers["huey"].late[1:] if text.split()[0].upper() in writes]  # no ack
    prose, _ = notebook()
    for sentence in ("its second step, one script, moves the job from `prioritized` into `active` with `ZPOPMIN`",
                     "BullMQ 4 dropped the list insert for the prioritized sorted set, one `ZADD`",
                     "`BRPOPLPUSH` moves it to `active` outside any script, then a separate `EVALSHA` locks it; "
                     "in between the job sits in `active` with no lock",
                     "RQ's `BLPOP` removes the job's id from its queue; `HGETALL` only reads the job",
                     "keeps no copy of it: there is no ack, so a task popped by a consumer that dies is lost"):
        assert sentence.replace("**", "") in prose.replace("**", ""), sentence


@pytest.mark.slow
def test_a_huey_task_popped_by_a_consumer_that_dies_is_lost():
    """'keeps no copy of it: there is no ack', with huey_consumer itself: killed (SIGKILL) while it
    runs a task, then started again."""
    import signal

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


# -- which way priorities count, and just past the range ---------------------------------------------------


@pytest.mark.slow
def test_celery_serves_0_first_files_no_priority_at_0_clamps_and_cuts_fractions(workers):
    probe = workers["celery-probe"]  # kombu's default steps
    assert all(outcome == "ok" for outcome in accepted(probe).values())  # 10, 12, 15 and -3 taken, no warning
    # the second add, the one MONITOR saw alone, is the task sent with no priority: it carries 0
    assert probe.sent[1].name == "no-priority" and probe.sent[1].priority is None
    (text, _), = probe.add
    assert text.startswith("LPUSH jobs ") and '"priority": 0,' in text
    # 0, 1 and 2 share one list, first come first served: the priority-1 task sent first runs first
    assert probe.order == ("one", "no-priority", "zero", "minus-three", "five", "nine", "ten", "twelve", "fifteen")
    assert before(probe, "zero", "nine")
    steps = workers["celery10-probe"]  # ten steps: 1.5 filed with 1, behind the 1.5 sent earlier, before 2
    assert steps.order == ("no-priority", "one-and-a-half", "one", "two")
    default = workers["celery-default-priority"]  # task_default_priority=9 reaches apply_async only
    assert default.order == ("send_task", "five", "apply_async")
    assert workers["celery-max-priority"].order == ("zero", "four", "five", "nine")  # x-max-priority: nothing
    prose, printed = notebook()
    for key in ("celery-probe", "celery10-probe", "celery-default-priority", "celery-max-priority"):
        assert sent_and_ran(workers[key]) in printed
    for sentence in ("On Redis, Celery's 0 is the most urgent. A task sent without a priority carries priority 0",
                     "so the priority-1 task sent before it ran first",
                     "Past 0..9 kombu clamps silently (10, 12 and 15 ran with 9, −3 with 0)",
                     "a fraction is cut down to its step (1.5 ran with 1, before 2)",
                     "`task_default_priority` reaches the task's own `apply_async` only: `send_task` still sent 0",
                     "on Redis it changed nothing"):
        assert sentence in prose, sentence
    assert "ahead of every prioritized one" not in prose


@pytest.mark.slow
def test_celery_prefetch_and_the_settings_users_reach_for(workers):
    """With one child: the default holds four tasks ahead (urgent 6th), x1 still holds one as the running task
    was acked when it started (3rd), x1 with late acks holds none beside the running one (2nd), and
    worker_disable_prefetch none at all (2nd)."""
    found = {key: (workers[key].ran("urgent"), workers[key].notes) for key in PREFETCH_RUNS}
    assert found["celery-prefetch-4"] == (6, {"running": "low1", "unacked": ["low2", "low3", "low4", "low5"]})
    assert found["celery-prefetch-1"] == (3, {"running": "low1", "unacked": ["low2"]})
    assert found["celery-prefetch-1-late"] == (2, {"running": "low1", "unacked": ["low1"]})
    assert found["celery-no-prefetch"] == (2, {"running": "low1", "unacked": []})
    prose, printed = notebook()
    assert prefetch_rows(workers, tuple(PREFETCH_RUNS)) in printed
    assert "With the default the worker already held four tasks when the urgent one came, so it ran 6th" in prose
    assert "Celery acknowledges a task when it *starts*, so the running task no longer counts" in prose


def test_a_celery_gate_is_a_file_beside_the_private_socket_that_opens_once_and_goes(monkeypatch):
    from echomq_viz.peers.deployments import CeleryDeployment

    deployment = CeleryDeployment(prefetch=1, gate=True)
    sent = []
    with server_mod.RedisServer() as server:
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
    assert sent[-1] == ("record", {"args": ("j01", 0.0), "priority": 1})


@pytest.mark.slow
def test_bull_and_bullmq_count_from_1_and_differ_on_0(workers):
    """'0 means "no priority"' in both; Bull serves it after every prioritized job, BullMQ before them."""
    if not NODE:
        pytest.fail(node_missing())
    assert workers["bull-zero"].order == ("one", "two", "zero", "no-priority")
    for name in ("bullmq-py-probe", "bullmq-node-probe"):
        probe = workers[name]
        prioritized = [sent.name for sent in probe.sent if sent.priority not in (None, 0) and probe.ran(sent.name)]
        assert prioritized and all(before(probe, "zero", other) for other in prioritized), probe.order
        assert probe.order[:2] == ("zero", "no-priority")  # one wait list, in the order added
    prose, _ = notebook()
    assert 'In Bull and BullMQ a smaller number is more urgent too, counted from 1; 0 means "no priority"' in prose
    assert "Bull serves a job of priority 0 (no priority) after every prioritized one, BullMQ before them" in prose


@pytest.mark.slow
def test_past_the_range_bull_misorders_and_node_bullmq_guards_only_the_top(workers):
    if not NODE:
        pytest.fail(node_missing())
    negative = workers["bull-negative"]
    assert all(outcome == "ok" for outcome in accepted(negative).values())  # −1 and 1.5 taken
    assert negative.order == ("minus-one", "one-and-a-half", "one")  # after a −1 job, 1.5 ahead of 1
    probe = workers["bullmq-node-probe"]
    outcomes = accepted(probe)
    assert "between 0 and 2097151" in outcomes["2²¹"] and outcomes["2²¹−1"] == "ok"
    assert all(outcomes[name] == "ok" for name in ("minus-one", "−2³¹", "−2³¹−1"))  # every negative tried
    assert before(probe, "−2³¹", "one") and before(probe, "minus-one", "one")
    fifo = workers["bullmq-node-fifo"]  # at −2³¹ the twelve scores are one: Redis orders the ids as text
    assert list(fifo.order) == sorted(FIFO_NAMES, key=lambda name: str(int(name[1:])))
    prose, printed = notebook()
    assert "(refused: Priority should be between 0 and 2097151)" in printed
    assert sent_and_ran(probe) in printed and " ".join(fifo.order) in printed
    assert "after a −1 job, a 1.5 job went ahead of a 1 job" in prose
    assert "accepts every negative tried, down to −2³¹ − 1, and serves it before 1" in prose


@pytest.mark.slow
def test_bullmq_pypi_takes_fractions_and_leaves_the_job_in_active(workers):
    probe = workers["bullmq-py-probe"]
    assert all(outcome == "ok" for outcome in accepted(probe).values())  # 2²¹, 2³¹, 1.5, −1 all accepted
    assert probe.ran("one-and-a-half") == 0 and before(probe, "minus-one", "one")
    assert probe.notes["one-and-a-half"] == ["bull:jobs:active"]  # moved to active, never run
    assert probe.notes["worker errors"] == ["ValueError: invalid literal for int() with base 10: '1.5'"]
    fifo = workers["bullmq-py-fifo"]
    assert list(fifo.order) == sorted(FIFO_NAMES, key=lambda name: str(int(name[1:])))  # by job-id text
    prose, printed = notebook()
    assert left_behind(probe) in printed and " ".join(fifo.order) in printed
    assert "then the worker failed reading it back (`int('1.5')`)" in prose


@pytest.mark.slow  # reads npm's bullmq, installed on first use
def test_the_installed_bullmq_scores_take_the_counter_modulo_2_32():
    lines = score_lines()
    assert any("(PyPI)" in package for package in lines)
    assert all(line == "return priority * 0x100000000 + prioCounter % 0x100000000" for line in lines.values())
    prose, printed = notebook()
    assert "bit.band(prioCounter, 0xffffffffffff)" in prose and "first released in 5.8.1" in prose
    assert all(f"{package:<22} {line}" in printed for package, line in lines.items())


@pytest.mark.slow
def test_plain_huey_refuses_a_priority_but_0_and_its_keys_sit_in_four_slots():
    assert huey_plain_priority(1) == "NotImplementedError: Task priorities are not supported by this storage."
    assert huey_plain_priority(0) == "accepted, stored in huey.redis.viz (list)"
    assert len(set(huey_storage_slots().values())) == 4
    prose, printed = notebook()
    assert "RedisHuey, a task with priority=0: accepted, stored in huey.redis.viz (list)" in printed
    assert "The plain storage refuses 1 but takes 0 into its list" in prose


# -- RQ: queue order, and a worker killed after its pop -----------------------------------------------------


@pytest.mark.slow
def test_rq_strategies_give_up_the_queue_order_and_at_front_stays_in_its_queue(workers):
    right = correct_order(workload())
    assert list(workers["rq-burst"].order) == right
    for key in ("rq-round_robin", "rq-random"):
        assert workers[key].how.endswith("high mid low") and "--dequeue-strategy" in workers[key].how
        assert list(workers[key].order) != right and sorted(workers[key].order) == sorted(right), key
    assert workers["rq-at-front"].order == ("m", "urgent", "a", "b")
    prose, printed = notebook()
    assert orders_table(workers, ("rq-burst", "rq-round_robin", "rq-random"), right, with_right=False) in printed
    assert "`at_front=True` puts a job at the head of its own queue only: it ran after the `mid` job" in prose


@pytest.mark.slow
def test_rq_burst_worker_sends_one_lpop_per_queue_until_one_answers(workers):
    burst, jobs = workers["rq-burst"], workload()
    tier = {job.name: job.tier for job in jobs}
    takes = burst_takes(burst)
    assert [name for name, _ in takes] == list(burst.order)
    queues = ["rq:queue:high", "rq:queue:mid", "rq:queue:low"]
    for name, take in takes:
        assert [text for text in take[:-1]] == [f"LPOP {queue}" for queue in queues[:tier[name]]], (name, take)
        assert take[-1].startswith("HGETALL rq:job:"), (name, take)
    assert not [text for text, _ in burst.worker if text.split(" ", 1)[0].upper() in BLOCKING]  # never blocks
    prose, printed = notebook()
    assert "one `LPOP` per queue in order until one answers, so a tier-3 job costs three round trips" in prose
    assert burst_text(burst, tier) == "LPOPs sent for each job, by its tier: tier 1: 1, tier 2: 2, tier 3: 3"
    assert burst_text(burst, tier) in printed


@pytest.mark.slow
def test_an_rq_worker_killed_after_its_blpop_loses_the_job(workers):
    killed = workers["rq-killed"]
    assert killed.order == ("next",)  # the fresh burst worker ran the other job, never the one taken
    assert killed.notes == {"lost": {"status": "queued", "held by": []}}
    prose, printed = notebook()
    assert left_behind(killed) in printed and "its id is in no list, set or sorted set" in printed
    assert "The job's hash still says `queued`, but its id left the queue with the `BLPOP`" in prose


# -- a Redis Cluster ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_which_commands_name_keys_of_two_slots(workers):
    assert {"BRPOP", "MULTI/EXEC"} <= set(multi_key_commands(workers["celery"]))
    assert {"BLPOP", "MULTI/EXEC"} <= set(multi_key_commands(workers["rq"]))
    assert multi_key_commands(workers["huey"]) == []  # each command names one key
    if NODE:
        assert multi_key_commands(workers["bull"]) == ["BRPOPLPUSH", "EVALSHA"]
        assert multi_key_commands(workers["bullmq-node"]) == ["EVALSHA"]
    assert multi_key_commands(workers["bullmq-py"]) == ["EVALSHA"]
    rows = {label: (keys, slots) for label, keys, slots, _ in slot_rows([workers[key] for key in MAIN
                                                                         if key in workers])}
    assert rows["Celery, ten priority steps"][0] >= 12  # every step list counted: kombu's jobs:1 is no job's key
    _, printed = notebook()
    assert slot_table([workers[key] for key in MAIN if key in workers]) in printed


@pytest.mark.slow
def test_bull_and_bullmq_keep_one_slot_with_a_braced_queue_name():
    """With a queue named ``{jobs}``, every command, transaction and script each worker and producer sent
    names keys of one slot."""
    from echomq_viz.peers.cluster_probes import slots_of
    from echomq_viz.peers.deployments import BullMQPyDeployment, NodeDeployment
    from echomq_viz.peers.workers import run_all

    if not NODE:
        pytest.fail(node_missing())
    jobs = [("a", 2), ("b", 1), ("c", None)]
    makers = [lambda: NodeDeployment("bull", queue="{jobs}"), lambda: NodeDeployment("bullmq", queue="{jobs}"),
              lambda: BullMQPyDeployment(queue="{jobs}")]
    for run in run_all([(make, jobs, {}) for make in makers], workers=3):
        assert run.order[:3] in (("b", "a", "c"), ("c", "b", "a")) and run.order[-1] == "late", run.label
        assert multi_key_commands(run) == [], run.label
        assert len(set(slots_of(list(run.keys)).values())) == 1 and all("{jobs}" in key for key in run.keys)
    prose, _ = notebook()
    assert "with a braced queue name, such as `{jobs}`, every key of the queue shares one slot" in prose


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
