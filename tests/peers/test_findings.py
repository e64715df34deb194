"""Notebook 10's runs made once per set of installed versions and read by every kernel
(echomq_viz.peers.findings): kept as JSON that gives back equal runs, made by one process at a
time, made again when a version or a source changes, private to the user; a stopped run ends
its workers."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import psutil
import pytest

from conftest import assert_refused, wait_until
from echomq_viz.peers import findings as found_mod
from echomq_viz.peers.deployments import STOP_GRACE_S
from echomq_viz.peers.findings import Findings, cache_key, cache_path, decode, encode, peer_findings
from echomq_viz.peers.observe import OpSummary
from echomq_viz.peers.runs import PeerRun
from echomq_viz.peers.workers import Sent, WorkerRun
from echomq_viz.peers.workload import WorkJob, workload


def _worker_run(key: str = "celery") -> WorkerRun:
    return WorkerRun(key=key, label="Celery, default settings", version="celery 5.7.0", how="celery worker",
                     settings=(("broker_transport_options", {"priority_steps": [0, 3]}, "docs"),),
                     sent=(Sent("one", 1), Sent("half", 1.5), Sent("none", None, "refused")), order=("one", "none"),
                     steady=(("BRPOP jobs 1", False),), late=(("LPUSH jobs x", False), ("ZADD k 1 m", True)),
                     keys={"jobs": "list"}, add=(("LPUSH jobs x", False),), stats={"LPUSH": (3, 1.5)},
                     seconds=0.5, notes={"running": "low1", "unacked": ["low2"], "lost": {"held by": []}})


def _peer_run() -> PeerRun:
    jobs = tuple(workload(per_tier=1))
    summary = OpSummary("add", 3, 1.0, 9.5, 1, "one Lua script", ("EVALSHA",))
    return PeerRun(key="bull", label="Bull (Node.js)", library="bull 4.16.5", configured="prefix", tier_means="tier",
                   jobs=jobs, order=tuple(job.name for job in jobs), keys={"emq:{q}:wait": "list"}, add=summary,
                   pop=summary, slots_configured=1, slots_default=3, queue_slots_default=3, job_keys=True,
                   default_names="bull:<queue>:<type>", levels="positive numbers", levels_kept=10,
                   operations=(("add", (("evalsha", False, "EVALSHA x"),)),))


def _findings() -> Findings:
    return Findings(workers={"celery": _worker_run()}, runs=[_peer_run()], cluster=[("RQ", "ok")],
                    scores={"bullmq 3.4.4 (PyPI)": "return x"}, huey_plain={"1": "refused"},
                    kombu={"get()": ["BRPOP jobs 1"]}, versions={"celery": "5.7.0"})


def test_kept_findings_come_back_equal_through_json():
    original = _findings()
    again = decode(json.loads(json.dumps(encode(original))))
    assert again == original
    assert isinstance(again.workers["celery"].sent[0], Sent) and isinstance(again.runs[0].jobs[0], WorkJob)
    assert again.workers["celery"].stats == {"LPUSH": (3, 1.5)} and again.runs[0].add.names == ("EVALSHA",)
    assert decode(encode({1: ("a", 2)})) == {1: ("a", 2)}  # keys that are not text, tuples
    with assert_refused(TypeError, "cannot keep a set in the findings"):
        encode({"s": {1, 2}})
    with assert_refused(ValueError, "a dict key may not be __type__"):
        encode({"__type__": "x"})
    with assert_refused(ValueError, "unknown kind 'Popen' in the findings"):
        decode({"__type__": "Popen", "args": []})


def test_the_key_follows_every_version_and_the_sources():
    versions = found_mod._versions()
    assert {"celery", "kombu", "rq", "huey", "bullmq", "redis-server", "node", "sources", "python"} <= set(versions)
    assert cache_key(versions) == cache_key(dict(versions))
    for name in ("celery", "redis-server", "node", "sources"):
        assert cache_key({**versions, name: "other"}) != cache_key(versions), name


@pytest.fixture
def counted(monkeypatch):
    """make_findings replaced by one that takes a while and counts its calls (the real one: test_workers)."""
    calls = []

    def make(jobs):
        calls.append(len(jobs))
        time.sleep(0.3)
        return _findings()

    monkeypatch.setattr(found_mod, "make_findings", make)
    return calls


def test_made_once_by_one_process_then_read_by_every_caller(counted, tmp_path):
    results = []
    threads = [threading.Thread(target=lambda: results.append(peer_findings(cache_dir=tmp_path))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert counted == [24] and len(results) == 3 and all(result == results[0] for result in results)
    assert peer_findings(cache_dir=tmp_path) == results[0] and counted == [24]  # read, not made
    peer_findings(cache_dir=tmp_path, fresh=True)
    assert counted == [24, 24]
    path = cache_path(workload(), tmp_path)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert peer_findings(workload(per_tier=2), cache_dir=tmp_path) and counted[-1] == 6  # another workload, kept apart


def test_a_broken_file_is_made_again_and_old_versions_are_pruned(counted, tmp_path):
    path = cache_path(workload(), tmp_path)
    path.write_text('{"__type__": "Findings", "workers":', encoding="utf-8")  # a run killed while writing
    assert peer_findings(cache_dir=tmp_path).workers == _findings().workers and counted == [24]
    for i in range(6):
        (path.parent / f"old{i}.json").write_text("{}")
        os.utime(path.parent / f"old{i}.json", (i, i))
    peer_findings(cache_dir=tmp_path, fresh=True)
    kept = sorted(p.name for p in path.parent.glob("*.json"))
    assert path.name in kept and len(kept) == 1 + found_mod.KEEP and "old0.json" not in kept
    with assert_refused(TypeError, "jobs must be a non-empty list of WorkJob"):
        peer_findings([("j01", 1)], cache_dir=tmp_path)


def test_without_a_cache_folder_they_are_made_for_the_call_alone(counted, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert peer_findings(cache_dir=blocked).workers == _findings().workers
    assert peer_findings(cache_dir=blocked) and counted == [24, 24]  # made each time, kept nowhere


@pytest.mark.slow
def test_the_app_can_make_them_ahead_in_a_child_that_finds_them_kept(monkeypatch, tmp_path):
    """prepare_in_background starts ``python -m echomq_viz.peers.findings``: with the findings kept
    for these versions it reads them and exits at once, making nothing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = cache_path(workload())
    path.write_text(json.dumps(encode(_findings())), encoding="utf-8")
    before = path.stat().st_mtime_ns
    child = found_mod.prepare_in_background()
    assert child.wait(60) == 0
    assert path.stat().st_mtime_ns == before  # read, not made again


# A findings process whose runs have started a worker that does not stop on SIGTERM, as Celery's
# warm shutdown does not while it waits for a broker that is gone (its private Redis went with
# the killed app). The process then waits as its runs would.
STUBBORN_RUNS = """
import sys, time
from echomq_viz.peers import findings
from echomq_viz.peers.deployments import CeleryDeployment

def runs(fresh):
    worker = CeleryDeployment()
    worker._spawn([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   "print('stubborn worker', flush=True); time.sleep(600)"], socket="unused")
    print(worker.process.pid, flush=True)
    time.sleep(600)

findings._make = runs
sys.exit(findings.main([]))
"""


@pytest.mark.slow
def test_a_stopped_findings_process_ends_its_workers_even_one_that_ignores_sigterm(tmp_path):
    """The SIGTERM the app's death sends ``python -m echomq_viz.peers.findings`` (or a Ctrl-C) ends
    its workers too: SIGTERM to each, then SIGKILL after the grace; the process exits at once with
    one line on stderr. Before, the worker got only a SIGTERM of its own, and outlived the run."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = subprocess.Popen([sys.executable, "-c", STUBBORN_RUNS], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    worker = None
    try:
        line = runs.stdout.readline()
        if not line.strip().isdigit():
            runs.kill()
            pytest.fail(f"the runs started no worker: {line!r} {runs.stderr.read()[-2000:]}")
        worker = psutil.Process(int(line))
        assert "stubborn" in " ".join(worker.cmdline())
        runs.send_signal(signal.SIGTERM)
        assert runs.wait(STOP_GRACE_S + 20) == 128 + signal.SIGTERM

        def gone() -> bool:
            try:
                return not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:  # reaped between the two looks
                return True

        assert wait_until(gone, 10), "the worker outlived the findings process that was told to stop"
        assert runs.stderr.read().strip() == "notebook 10's runs: stopped before they were made (1 worker(s) ended)"
    finally:
        runs.kill()
        runs.wait(10)
        if worker is not None and worker.is_running():
            worker.kill()
