"""Owners and leases on a shared Redis: a lapsed lease is never taken back,
clean never deletes a live owner's key, a restarted server gets the lease
back before anything else is written, and refusals say one clear line."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from conftest import assert_refused, one_clear_line
from echomq_viz.redis_side import owners
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.live import Demo, clean_orphans
from echomq_viz.redis_side.demo_keys import lease_key
from echomq_viz.redis_side.owners import ENV_LEASE, DemoKeysForbidden, LeaseLost, lease_seconds
from echomq_viz.redis_side.scripts import BatchError
from echomq_viz.redis_side.server import RedisServer

ROOT = Path(__file__).resolve().parents[2]


def _load_bench():
    """benchmarks/lease.py: its kernel (a process holding a Demo) is this module's too."""
    spec = importlib.util.spec_from_file_location("lease_bench", ROOT / "benchmarks" / "lease.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lease_bench = _load_bench()
Kernel, Cleaner, wait_until = lease_bench.Kernel, lease_bench.Cleaner, lease_bench.wait_until


class Writes:
    """Every keyspace event on one owner's keys (its lease too), in order:
    after its lease lapsed only "del" (clean) may follow, never a write."""

    def __init__(self, client, token: str) -> None:
        self.client = client  # held: a client that is collected closes its pool, our subscription's too
        self.pubsub = client.pubsub()
        self.pubsub.psubscribe(f"__keyspace@0__:emq:{{viz-*@{token}}}:*")
        assert self.pubsub.get_message(timeout=10)["type"] == "psubscribe"  # listening from here on
        self.events: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            message = self.pubsub.get_message(timeout=0.05)
            if message and message["type"] == "pmessage":
                self.events.append((message["channel"].split(":", 1)[1], message["data"]))

    def after_the_lapse(self) -> list[tuple[str, str]]:
        """The events after the lease expired (or was deleted)."""
        self._stop.set()
        self._thread.join(5)
        self.pubsub.close()
        self.client.close()
        lapse = [n for n, (key, event) in enumerate(self.events)
                 if key.endswith(":lease") and event in ("expired", "del")]
        assert lapse, f"the lease never lapsed: {self.events[-5:]}"
        return self.events[lapse[0] + 1:]


@pytest.fixture(scope="module")
def watched():
    """A server of this module's own that reports every write as a keyspace event."""
    with RedisServer(extra_args=("--notify-keyspace-events", "KEA")) as server:
        server.start()
        yield server


@pytest.fixture
def w(watched):
    client = watched.client()
    client.flushall()  # a server this module started
    yield client
    client.close()


def consistent(state: dict, count: int) -> bool:
    """A queue with jobs 1..count added one by one: ids, counters, pc, id and job hashes agree."""
    expected = [str(n) for n in range(1, count + 1)]
    return (state["ids"] == expected and state["counters"] == list(range(1, count + 1))
            and state["pc"] == count and state["id"] == str(count) and state["hashes"] == count)


# -- the lease's length -----------------------------------------------------------------------


def test_the_lease_length_comes_from_the_environment():
    assert lease_seconds({}) == 30.0
    assert lease_seconds({ENV_LEASE: "2.5"}) == 2.5 and lease_seconds({ENV_LEASE: "3600"}) == 3600


@pytest.mark.parametrize("text", ["0", "0.5", "3601", "abc", "nan", "inf", "-5", ""])
def test_a_bad_lease_length_is_one_clear_line(text):
    with pytest.raises(ValueError) as info:
        lease_seconds({ENV_LEASE: text})
    assert str(info.value) == f"{ENV_LEASE} must be a number of seconds in 1..3600, got {text!r}"


def test_a_bad_lease_length_stops_the_import_in_one_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT), ENV_LEASE: "soon"}
    done = subprocess.run([sys.executable, "-c", "import echomq_viz.redis_side.owners"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == f"ValueError: {ENV_LEASE} must be a number of seconds " \
                                                   "in 1..3600, got 'soon'"


# -- fencing: a lapsed lease is never taken back ------------------------------------------------


def test_a_lapse_seen_after_a_reconnect_is_still_a_lapse(w):
    owner = owners._Owner()
    try:
        token = owner.claim(w)
        w.delete(lease_key(token))  # as if paused past it; same server, same run_id
        for server in owner._servers.values():
            server.close()  # the next command sets a connection up again
        assert owner.claim(w) != token
        assert not w.exists(lease_key(token)) and w.exists(lease_key(owner.token))
    finally:
        owner.release()


BAD_CALLS = {
    "add": (lambda d: d.add("j", 0), ValueError), "add_waiting": (lambda d: d.add_waiting(""), ValueError),
    "add_batch": (lambda d: d.add_batch([1, 2**21]), ValueError),
    "set_counter": (lambda d: d.set_counter(-1), ValueError),
    "counts": (lambda d: d.counts([-1]), ValueError), "pop": (lambda d: d.pop(""), ValueError),
    "drain": (lambda d: d.drain(7), TypeError), "add_at_counter": (lambda d: d.add_at_counter("j", 1, -1), ValueError),
}


@pytest.mark.parametrize("call", BAD_CALLS)
def test_bad_input_is_refused_before_the_lease_is_proved(r, keyspace, call):
    demo = Demo("viz-refused", client=r)
    demo.add("kept", 1)
    owner = demo.owner
    r.delete(lease_key(owner))  # lapsed: proving it would move this process to a new token
    action, error = BAD_CALLS[call]
    with assert_refused(error, keyspace=keyspace):
        action(demo)
    assert demo.owner == owner == owners.this_owner() and not r.exists(lease_key(owner))
    with pytest.raises(LeaseLost):
        demo.add("then the lapse is found", 1)


@pytest.mark.slow
def test_a_kernel_paused_past_its_lease_never_writes_again_while_clean_runs(w, watched):
    with Kernel(watched.url, lease=2) as paused, Kernel(watched.url, lease=30) as alive:
        assert paused.ask("add 3") == ["1", "2", "3"] and alive.ask("add 2") == ["1", "2"]
        writes = Writes(watched.client(), paused.token)
        paused.pause()  # SIGSTOP: the lid closes
        assert wait_until(lambda: not w.exists(lease_key(paused.token)), 10), "the lease never lapsed"
        assert clean_orphans(w) > 3  # its queue is gone: pc, id, the set, the job hashes
        with Cleaner(w):
            paused.resume()  # SIGCONT: its renewal thread wakes up
            time.sleep(2.5)  # more than three renewal periods of a 2 s lease
            error = paused.ask("add 1")
            after = paused.ask("add 4")
            state = paused.ask("state")
            alive_state = alive.ask("state")
        assert set(error) == {"error"} and one_clear_line(error["error"]) and error["error"].startswith("LeaseLost")
        assert paused.queue in error["error"] and state["queue"] in error["error"]
        assert after == ["1", "2", "3", "4"] and consistent(state, 4)  # a fresh queue, none of it cleaned
        assert consistent(alive_state, 2)
        assert {event for _, event in writes.after_the_lapse()} <= {"del"}  # clean's, never a write
        assert not any(w.scan_iter(match=f"*@{paused.token}}}:*"))


@pytest.mark.slow
def test_clean_over_100k_keys_never_deletes_a_resumed_or_live_kernels_keys(w, watched):
    with w.pipeline(transaction=False) as pipe:  # a dead kernel's leftovers: a long scan
        for n in range(100_000):
            pipe.set(f"emq:{{viz-dead-{n % 50}@0badc0de}}:{n}", "x")
        pipe.execute()
    with Kernel(watched.url, lease=2) as paused, Kernel(watched.url, lease=30) as alive:
        paused.ask("add 5")
        writes = Writes(watched.client(), paused.token)
        paused.pause()
        assert wait_until(lambda: not w.exists(lease_key(paused.token)), 10), "the lease never lapsed"
        removed = []
        cleaner = threading.Thread(target=lambda: removed.append(clean_orphans(w)))
        cleaner.start()
        paused.resume()  # while clean is scanning
        replies, alive_added = [], 0
        while cleaner.is_alive() or len(replies) < 3:
            replies.append(paused.ask("add 1"))
            alive_added += len(alive.ask("add 1"))
        cleaner.join(60)
        state, alive_state = paused.ask("state"), alive.ask("state")
    assert removed and removed[0] >= 100_000
    assert "error" in replies[0] and replies[0]["error"].startswith("LeaseLost")
    assert all(isinstance(reply, list) for reply in replies[1:])
    assert consistent(state, len(replies) - 1) and consistent(alive_state, alive_added)
    assert {event for _, event in writes.after_the_lapse()} <= {"del"}
    assert not any(w.scan_iter(match="*@0badc0de}:*"))


def test_clean_checks_the_lease_in_the_same_step_as_the_delete(w):
    keys = [f"emq:{{viz-q{n % 3}@0badc0de}}:{n}".encode() for n in range(2500)]
    w.mset({key: "x" for key in keys})
    server = owners._Server(w, "0badc0de")
    try:
        queues = {"viz-q": keys}
        w.set(lease_key("0badc0de"), "renewed meanwhile", px=30_000)
        assert owners._unlink_orphaned(server, server.nodes[0], "0badc0de", queues) == 0
        assert w.exists(*keys) == len(keys)
        w.delete(lease_key("0badc0de"))
        assert owners._unlink_orphaned(server, server.nodes[0], "0badc0de", queues) == len(keys)
    finally:
        server.close()
    assert w.dbsize() == 0


# -- a redis-server that restarted empty -----------------------------------------------------------


@pytest.mark.slow
def test_a_restarted_server_gets_the_lease_back_before_any_write_so_clean_in_the_gap_keeps_it():
    with RedisServer(restarts=1) as server:
        server.start()
        with Kernel(server.url, lease=30) as kernel:  # renewals 10 s apart: the gap is open long
            assert kernel.ask("add 2") == ["1", "2"]
            os.kill(server.pid, signal.SIGKILL)
            assert wait_until(lambda: any("restarted" in line for line in server.events()), 20)
            client = server.client()
            assert client.dbsize() == 0  # empty: nobody can have cleaned anything of ours
            assert kernel.ask("add 3") == ["1", "2", "3"]  # its own new jobs, after the restart
            assert clean_orphans(client) == 0  # the gap: clean runs before any renewal
            assert consistent(kernel.ask("state"), 3)
            assert client.get(lease_key(kernel.token)) is not None


# -- one clear line, nothing changed ----------------------------------------------------------------


def test_a_user_without_rights_on_demo_keys_gets_one_line_and_nothing_changes(r, redis_server, keyspace):
    r.acl_setuser("visitor", enabled=True, reset=True, passwords=["+visitor-s3cret"], keys=["other:*"],
                  commands=["+@all"])
    limited = redis_server.client(username="visitor", password="visitor-s3cret")
    try:
        with assert_refused(DemoKeysForbidden, r"may not write the demo keys emq:\{viz-…\}:\*",
                            keyspace=keyspace) as info:
            Demo("viz-01-score", client=limited)
        assert info.value._render_traceback_() == [f"DemoKeysForbidden: {info.value}"]  # IPython shows this
    finally:
        limited.close()
        r.acl_deluser("visitor")


def test_lease_lost_shows_as_one_line_in_ipython():
    error = LeaseLost("this kernel's lease lapsed")
    assert error._render_traceback_() == ["LeaseLost: this kernel's lease lapsed"]


@pytest.fixture
def full(r):
    """``r`` on a server that will say it is out of memory once ``fill()`` is called."""
    def fill(room: int | None = None) -> None:
        """Leave ``room`` bytes, or none at all."""
        r.config_set("maxmemory", 1 if room is None else int(r.info("memory")["used_memory"]) + room)

    try:
        yield fill
    finally:
        r.config_set("maxmemory", 0)


def test_a_bulk_add_stopped_by_out_of_memory_says_how_many_jobs_went_in(r, full):
    demo = Demo("viz-full", client=r)
    full(room=200_000)
    with pytest.raises(BatchError) as info:
        demo.add_batch([1] * 20_000)
    went_in = info.value.ids
    assert 0 < len(went_in) < 20_000
    assert one_clear_line(str(info.value))
    assert f"({len(went_in)} of 20000 jobs went in: see .ids)" in str(info.value)
    assert "maxmemory" in str(info.value)
    r.config_set("maxmemory", 0)
    assert [entry.job_id for entry in demo.entries()] == went_in == [str(n) for n in range(1, len(went_in) + 1)]


def test_reset_works_on_a_server_out_of_memory(r, full):
    demo = Demo("viz-full", client=r)
    demo.add_batch([1, 2, 3])
    full()
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        r.set("anything", "1")  # the server is full indeed
    assert demo.reset() > 3
    assert demo.entries() == [] and r.exists(lease_key(demo.owner))
    assert not any(r.scan_iter(match=f"{Keys.base(QueueContext(demo.queue))}*"))


def test_lease_lost_says_what_is_known_and_guesses_no_pause(r):
    demo = Demo("viz-deleted-lease", client=r)
    demo.add("a", 1)
    lapsed = demo.queue
    r.delete(lease_key(demo.owner))  # another client deleted it (or the server evicted it): no pause at all
    with pytest.raises(LeaseLost) as info:
        demo.add("b", 1)
    said = info.value._render_traceback_()
    assert len(said) == 1 and one_clear_line(said[0])
    assert "lease on Redis is gone (it expired, was evicted or was deleted)" in said[0]
    assert "paused" not in said[0] and lapsed in said[0] and demo.queue in said[0] and demo.queue != lapsed
