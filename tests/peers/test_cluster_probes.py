"""Notebook 10's libraries on a Redis Cluster (echomq_viz.peers.cluster_probes): which keys their
commands name, and what real local clusters of one and of three masters answer them."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from echomq_viz.peers.cluster_probes import library_path, multi_key_commands, named_keys, names_one, try_on_cluster
from echomq_viz.peers.workers import WorkerRun
from notebook10_text import notebook


def _run(*late: str, keys: dict | None = None, add: tuple = ()) -> WorkerRun:
    return WorkerRun(key="k", label="l", version="v", how="h", settings=(), sent=(), order=(), steady=(),
                     late=tuple((text, False) for text in late), keys=keys or {},
                     add=tuple((text, False) for text in add))


def test_a_move_between_two_slots_is_named_whether_or_not_its_lists_were_left_behind():
    """BRPOPLPUSH names its source and destination: a cluster refuses it across slots even when
    both lists are empty (so absent) by the time the run's keys are read."""
    assert multi_key_commands(_run("BRPOPLPUSH bull:q:wait bull:q:active 5")) == ["BRPOPLPUSH"]
    assert multi_key_commands(_run("BRPOPLPUSH bull:{q}:wait bull:{q}:active 5")) == []  # one slot
    assert multi_key_commands(_run("LMOVE a b LEFT RIGHT", "HGET a f")) == ["LMOVE"]
    assert multi_key_commands(_run("HMGET bull:q:1 bull:q:2", keys={"bull:q:1": "hash"})) == []  # not both keys
    assert multi_key_commands(_run("MULTI", "LLEN jobs", "LLEN jobs:3", "EXEC")) == ["MULTI/EXEC"]


def test_one_jobs_keys_are_set_aside_but_a_step_list_is_counted():
    assert names_one("bull:jobs:25") and names_one("bull:jobs:25:lock")
    assert names_one("rq:job:1450f0af-945c-48bb-aa28-2151632367fb")
    assert not names_one("jobs:1") and not names_one("jobs\x06\x163") and not names_one("bull:jobs:wait")
    run = _run("BRPOP jobs jobs:1 jobs:2 1", "HGETALL bull:jobs:25", add=("LPUSH jobs:2 x",))
    assert named_keys(run) == ["jobs", "jobs:1", "jobs:2"]


def test_where_an_error_arose_is_read_from_the_deepest_cause():
    def inner():
        raise KeyError("deep")

    try:
        try:
            inner()
        except KeyError as error:
            raise RuntimeError("wrapped") from error
    except RuntimeError as error:
        assert library_path(error, packages=("peers",)) == "test_where_an_error_arose_is_read_from_the_deepest_cause → inner"


@pytest.fixture(scope="module")
def tried():
    return dict(try_on_cluster())


@pytest.mark.slow
def test_celery_fails_at_queue_declaration_unless_its_keys_share_a_braced_prefix(tried):
    for what in ("Celery: send_task(priority=3)", "Celery: celery worker"):
        assert "Keys in request don't hash to the same slot" in tried[what], what
        assert "queue_declare → _size" in tried[what], what  # kombu's MULTI of one LLEN per step list
    assert tried["Celery: celery worker"].endswith("the worker exited (code 1)")
    assert tried["Celery, global_keyprefix '{jobs}:': send_task(priority=3)"] == "ok"
    assert tried["Celery, global_keyprefix '{jobs}:': celery worker"] == "ok: the worker ran it"
    prose, printed = notebook()
    assert "Celery fails first at queue declaration, before any `BRPOP`" in prose
    assert all(f"{what}\n    {outcome}" in printed for what, outcome in tried.items())


@pytest.mark.slow
def test_rq_is_refused_and_huey_needs_one_master(tried):
    assert tried["RQ: Queue('mid').enqueue"].startswith("ClusterCrossSlotError: Keys in request don't hash")
    assert tried["huey, one master: add (priority=2) and pop"] == "ok"
    [three] = [outcome for what, outcome in tried.items() if what.startswith("huey, three masters")]
    assert three.startswith("MovedError: 12079 <node>")  # its queue's slot, served by another node
    prose, _ = notebook()
    assert "on three its client, which is no cluster client, got `MOVED`" in prose


# A celery worker whose warm shutdown hangs, as Celery's does while it waits for a broker.
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


@pytest.mark.slow
def test_the_celery_probe_ends_a_worker_whose_warm_shutdown_hangs(monkeypatch):
    """The probe's worker got one SIGTERM and a wait of 10 s, whose timeout escaped as an error
    with the worker still running. It now stops as every run's worker does: SIGKILL after the
    grace, and known to ``stop_every_worker`` meanwhile."""
    from echomq_viz.peers import cluster_probes, deployments
    from echomq_viz.redis_side.server import RedisServer

    real, started = deployments.spawn_worker, []

    def stubborn(argv, env, output=subprocess.DEVNULL):
        started.append(real([sys.executable, "-c", STUBBORN], env, output))
        assert started[-1] in deployments._WORKERS
        return started[-1]

    monkeypatch.setattr(deployments, "spawn_worker", stubborn)
    server = RedisServer().start()
    try:
        said = cluster_probes._celery_worker(server.url, {}, seconds=1)
    finally:
        server.stop()
    [worker] = started
    assert worker.returncode == -signal.SIGKILL, worker.returncode
    assert said == "the worker ran nothing in 1 s (exit code -9)"
    assert worker not in deployments._WORKERS
