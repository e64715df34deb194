"""Demo queues on a shared Redis: each process owns its own, refusals write
nothing, and the keys of a process that is gone can be cleaned up."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from echomq_viz.experiments import live
from echomq_viz.redis_side import owners
from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo, clean_orphans, seeded_priorities
from echomq_viz.redis_side.demo_keys import lease_key
from echomq_viz.core.score import TIER_SPAN, priority_score, split_score
from echomq_viz.redis_side.server import RedisServer, connect

from conftest import one_clear_line, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


def keys_of(client, token: str) -> set[str]:
    """Every key naming this owner token, demo keys and lease alike."""
    return {key for key in client.scan_iter(match=f"*@{token}*", count=1000)}


# A second process with a Demo of the same base name, driven line by line.
CHILD = r"""
import json, sys
from echomq_viz.experiments import live
from echomq_viz.redis_side import owners
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import connect

url, lease_seconds, name = sys.argv[1], float(sys.argv[2]), sys.argv[3]
owners.LEASE_SECONDS = lease_seconds
demo = Demo(name, client=connect(url))
print(json.dumps(demo.queue), flush=True)
for line in sys.stdin:
    command, *args = line.split()
    if command == "add":
        reply = [demo.add(f"child-{n}", 2) for n in range(int(args[0]))]
    elif command == "entries":
        reply = [entry.job_id for entry in demo.entries()]
    elif command == "reset":
        reply = demo.reset()
    print(json.dumps(reply), flush=True)
"""


class DemoProcess:
    """A Python process holding ``Demo(name)`` on the server at ``url``."""

    def __init__(self, url: str, name: str = "viz-shared", lease_seconds: float = 30.0) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, url, str(lease_seconds), name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.queue = self._read()
        self.token = self.queue.rsplit("@", 1)[-1]

    def _read(self):
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        assert ready, "the demo process did not answer"
        line = self.process.stdout.readline()
        assert line, f"the demo process ended (exit {self.process.wait(5)})"
        return json.loads(line)

    def ask(self, command: str):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self._read()

    def exit(self) -> int:
        """End the process the ordinary way (stdin closed): its atexit runs."""
        self.process.stdin.close()
        return self.process.wait(30)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no atexit, the lease stays until it expires
        self.process.wait(30)

    def __enter__(self) -> "DemoProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.kill()
        self.process.stdout.close()
        if not self.process.stdin.closed:
            self.process.stdin.close()


# -- one kernel, one set of demo queues ---------------------------------------------


def test_demo_queue_is_the_base_name_and_this_process_owner(demo, r):
    assert demo.name == "viz-test"
    assert demo.queue == f"viz-test@{demo.owner}" and len(demo.owner) == 8
    assert int(demo.owner, 16) >= 0 and demo.owner == demo.owner.lower()
    assert Demo("viz-other", client=r).owner == demo.owner  # one token per process
    assert r.exists(lease_key(demo.owner))
    assert 0 < r.pttl(lease_key(demo.owner)) <= owners.LEASE_SECONDS * 1000
    lapsed = demo.queue
    demo.add("kept", 1)
    r.delete(lease_key(demo.owner))  # lapsed, as if paused past it: never taken back
    before = {key: r.dump(key) for key in r.scan_iter()}
    with pytest.raises(owners.LeaseLost) as info:
        demo.add("after the lapse", 1)
    assert one_clear_line(str(info.value)) and lapsed in str(info.value) and demo.queue in str(info.value)
    after = {key: r.dump(key) for key in r.scan_iter()}
    assert after == {**before, lease_key(demo.owner): after[lease_key(demo.owner)]}  # nothing but the new lease
    assert demo.queue != lapsed and demo.owner == owners.this_owner() and r.exists(lease_key(demo.owner))
    assert not r.exists(lease_key(lapsed.rsplit("@", 1)[1]))
    assert demo.add("fresh", 1) == "1" and [e.job_id for e in demo.entries()] == ["1"]


def test_an_owner_whose_token_is_taken_picks_another(r, redis_server):
    owner = owners._Owner()
    taken = owner.token
    r.set(lease_key(taken), "another live process")
    try:
        token = owner.claim(r)
        assert token != taken and r.get(lease_key(taken)) == "another live process"
        assert r.exists(lease_key(token))
        with RedisServer() as second:  # once queues are named, a taken token is an error
            second.client().set(lease_key(token), "a twin")
            with pytest.raises(RuntimeError, match="restart"):
                owner.claim(second.client())
    finally:
        owner.release()
    assert not r.exists(lease_key(token)) and r.exists(lease_key(taken))


def test_two_processes_with_one_demo_name_never_see_each_others_jobs(r, redis_server):
    mine = Demo("viz-shared", client=r)
    mine.add_batch([3, 1, 2])
    with DemoProcess(redis_server.url) as other:
        assert other.queue.startswith("viz-shared@") and other.queue != mine.queue
        assert other.ask("add 2") == ["1", "2"]  # its own id counter, from 1
        assert other.ask("entries") == ["1", "2"]
        assert [e.job_id for e in mine.entries()] == ["2", "3", "1"]
        assert [e.counter for e in mine.entries()] == [2, 3, 1]  # its own pc, untouched
        assert mine.add("four", 1) == "4"


def test_reset_of_one_process_never_deletes_the_others_keys(r, redis_server, keyspace):
    mine = Demo("viz-shared", client=r)
    mine.add_batch([1, 2])
    mine_prefix = Keys.base(mine.ctx).encode()
    with DemoProcess(redis_server.url) as other:
        other.ask("add 3")
        before = keyspace()
        assert other.ask("reset") > 0
        after = keyspace()
        mine_before = {k: v for k, v in before.items() if k.startswith(mine_prefix)}
        assert mine_before and all(after.get(k) == v for k, v in mine_before.items())
        mine.reset()
        assert other.ask("add 1") == ["1"] and other.ask("entries") == ["1"]
        assert mine.entries() == []


def test_the_notebooks_demo_names_only_reset_themselves(r):
    r.set("emq:{orders}:pc", "41")
    r.set("emq:{viz-test}:pc", "7")  # the old shared demo name: someone else's now
    demo = Demo("viz-test", client=r)
    demo.add("j", 1)
    demo.reset()
    assert r.get("emq:{orders}:pc") == "41" and r.get("emq:{viz-test}:pc") == "7"
    assert demo.entries() == []


# -- ending, and cleaning up after the dead ----------------------------------------------

# Keys that look like demo keys of a dead owner (deadbeef has no lease) but are not.
NEAR_MISSES = [
    "emq:{viz-a@1234567}:pc", "emq:{viz-a@123456789}:pc", "emq:{viz-a@DEADBEEF}:pc",
    "emq:{viz-@deadbeef}:pc", "emq:{viz-a b@deadbeef}:pc", "emq:{viz-a@deadbeef}x:pc",
    "emq:{viz-a@deadbeef}", "xemq:{viz-a@deadbeef}:pc", "emq:{viz-a@deadbeef}}:pc",
    "bull:{viz-a@deadbeef}:pc", "emq:{VIZ-a@deadbeef}:pc", "emq:{vizier@deadbeef}:pc",
    "emq:viz-a@deadbeef:pc", "emq:{viz-a@b@deadbeef}:pc", "emq:{viz-a\x00@deadbeef}:pc",
    "emq:{viz-a@deadbeef:pc", "other:{viz-a@deadbeef}:pc", "emq:{viz-*@deadbeef",
]


@pytest.mark.slow
def test_clean_orphans_removes_a_killed_process_keys_and_nothing_else(r, redis_server, keyspace):
    binary = redis_server.client(decode_responses=False)
    for key in NEAR_MISSES:
        r.set(key, "not a demo key")
    binary.set(b"emq:{viz-\xff@deadbeef}:pc", b"not UTF-8: no Demo makes it")
    r.set("emq:{viz-gone@0badc0de}:pc", "5")  # a demo key whose owner never renewed
    r.rpush("emq:{viz-gone@0badc0de}:wait", "1")
    mine = Demo("viz-orphans", client=r)
    mine.add_batch([1, 2])
    # Short leases, so the test need not wait long; the live one has slack for a busy machine.
    with DemoProcess(redis_server.url, lease_seconds=2) as alive, \
            DemoProcess(redis_server.url, lease_seconds=1) as killed:
        started = time.monotonic()
        alive.ask("add 3")
        killed.ask("add 4")
        killed.kill()
        assert wait_until(lambda: not r.exists(lease_key(killed.token)), 10), "the lease never expired"
        time.sleep(max(0.0, started + 2.5 - time.monotonic()))  # alive's first lease is over too
        assert r.exists(lease_key(alive.token)), "a live process's lease was not renewed"
        doomed = keys_of(binary, killed.token) | {b"emq:{viz-gone@0badc0de}:pc",
                                                  b"emq:{viz-gone@0badc0de}:wait"}
        assert len(doomed) > 4
        before = keyspace()
        assert clean_orphans(r) == len(doomed)
        assert keyspace() == {k: v for k, v in before.items() if k not in doomed}
        assert alive.ask("entries") == ["1", "2", "3"]
        assert clean_orphans(r) == 0
        assert alive.exit() == 0
    assert keys_of(r, alive.token) == set()  # its atexit took its keys and lease with it
    assert len(mine.entries()) == 2


def test_clean_orphans_works_through_many_batches(r):
    with r.pipeline(transaction=False) as pipe:
        for n in range(2500):
            pipe.set(f"emq:{{viz-many-{n % 7}@0badc0de}}:{n}", "x")
            pipe.set(f"emq:{{viz-foreign-{n % 5}}}:{n}", "y")
        pipe.execute()
    mine = Demo("viz-many-0", client=r)
    mine.add_batch([1] * 300)
    assert clean_orphans(r) == 2500
    assert r.dbsize() == 2500 + len(keys_of(r, mine.owner))
    assert len(mine.entries()) == 300


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_a_process_that_exits_deletes_its_demo_keys_and_lease(r, redis_server):
    with DemoProcess(redis_server.url, name="viz-short") as short, \
            DemoProcess(redis_server.url, name="viz-short") as sibling:
        short.ask("add 5")
        sibling.ask("add 2")
        assert len(keys_of(r, short.token)) > 5
        assert short.exit() == 0
        assert keys_of(r, short.token) == set()
        assert sibling.ask("entries") == ["1", "2"]


def test_clean_orphans_refuses_what_is_not_a_client():
    with pytest.raises(TypeError, match="redis client"):
        clean_orphans("redis://127.0.0.1:6379")


# -- names ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, error, message", [
    ("orders", ValueError, "demo queue name must start with 'viz-' and go on after it, e.g. 'viz-mine', got 'orders'"),
    ("viz-", ValueError, "demo queue name must start with 'viz-' and go on after it, e.g. 'viz-mine', got 'viz-'"),
    ("viz-a@b", ValueError,
     "demo queue name must not contain '@' (it marks the owning process, added for you), got 'viz-a@b'"),
    ("viz-" + "x" * 88, ValueError,
     "demo queue name must be 1..91 characters (the owner's '@' and token take 9 more), got 92"),
    ("viz-a:b", ValueError, "queue name must not contain '{', '}', ':', whitespace or control characters "
                            "(the emq:{queue}:type key layout), got ':' in 'viz-a:b'"),
    (b"viz-x", TypeError, "demo queue name must be a str, got bytes b'viz-x'"),
])
def test_demo_refuses_bad_names_before_touching_redis(name, error, message):
    with pytest.raises(error) as info:
        Demo(name, client=object())  # never used: the name is checked first
    assert str(info.value) == message


def test_demo_refuses_what_is_not_a_client():
    with pytest.raises(TypeError, match="redis client"):
        Demo("viz-x", client="redis://localhost")


# -- refusals write nothing ----------------------------------------------------------------

PRIORITY_0 = "priority must be in 1..2,097,151 (2²¹ − 1), got 0 (0 means no priority: use add_standard_job)"
COUNTER_RANGE = "counter must be in 0..4,294,967,295 (2³² − 1), got "
PC_RANGE = "counter must be in 0..9,007,199,254,740,990 (2⁵³ − 2, so INCR pc stays exact), got "
REFUSALS = {
    "add_at_counter empty name": (lambda d: d.add_at_counter("", 1, 500), ValueError, "job name must not be empty"),
    "add_at_counter name 5": (lambda d: d.add_at_counter(5, 1, 500), TypeError, "job name must be a str, got int 5"),
    "add_at_counter priority 0": (lambda d: d.add_at_counter("j", 0, 500), ValueError, PRIORITY_0),
    "add_at_counter priority True": (lambda d: d.add_at_counter("j", True, 500), TypeError,
                                     "priority must be an int, got bool True"),
    "add_at_counter data set": (lambda d: d.add_at_counter("j", 1, 500, data={1, 2}), TypeError,
                                "job data must be JSON-serialisable (no NaN/inf), got set {1, 2}: "
                                "Object of type set is not JSON serializable"),
    "add_at_counter counter -1": (lambda d: d.add_at_counter("j", 1, -1), ValueError, COUNTER_RANGE + "-1"),
    "add_at_counter counter 2**32": (lambda d: d.add_at_counter("j", 1, 2**32), ValueError,
                                     COUNTER_RANGE + "4,294,967,296"),
    "add_at_counter counter True": (lambda d: d.add_at_counter("j", 1, True), TypeError,
                                    "counter must be an int, got bool True"),
    "add_at_counter counter 1.0": (lambda d: d.add_at_counter("j", 1, 1.0), TypeError,
                                   "counter must be an int, got float 1.0"),
    "teaching empty name": (lambda d: d.add_past_the_limit_for_teaching("", 2**21, 900), ValueError,
                            "job name must not be empty"),
    "teaching priority 2**32": (lambda d: d.add_past_the_limit_for_teaching("j", 2**32, 900), ValueError,
                                "priority must be in 1..4,294,967,295 (2³² − 1), got 4,294,967,296"),
    "teaching counter -1": (lambda d: d.add_past_the_limit_for_teaching("j", 2**21, -1), ValueError,
                            COUNTER_RANGE + "-1"),
    "compare A priority 0": (lambda d: d.compare((0, 5), (1, 1)), ValueError,
                             "job A priority must be in 1..2,097,151, got 0"),
    "compare B counter 2**32": (lambda d: d.compare((1, 5), (1, 2**32)), ValueError,
                                "job B counter must be in 0..4,294,967,295 (2³² − 1), got 4,294,967,296"),
    "compare A not a pair": (lambda d: d.compare(5, (1, 1)), TypeError,
                             "job A must be a (priority, counter) pair, got int 5"),
    "compare B triple": (lambda d: d.compare((1, 1), (1, 2, 3)), TypeError,
                         "job B must be a (priority, counter) pair, got tuple (1, 2, 3)"),
    "add_batch empty name": (lambda d: d.add_batch([1, 2], name=""), ValueError, "job name must not be empty"),
    "add_batch priority 0": (lambda d: d.add_batch([1, 0]), ValueError, PRIORITY_0),
    "set_counter -1": (lambda d: d.set_counter(-1), ValueError, PC_RANGE + "-1"),
    "set_counter True": (lambda d: d.set_counter(True), TypeError, "counter must be an int, got bool True"),
    "set_counter 2**53 - 1": (lambda d: d.set_counter(2**53 - 1), ValueError, PC_RANGE + "9,007,199,254,740,991"),
    "set_counter 2**63": (lambda d: d.set_counter(2**63), ValueError, PC_RANGE + "9,223,372,036,854,775,808"),
}


@pytest.mark.parametrize("case", REFUSALS, ids=list(REFUSALS))
def test_demo_refusals_change_nothing(demo, keyspace, case):
    make, error, message = REFUSALS[case]
    demo.add_batch([2, 1])
    demo.set_counter(41)
    before = keyspace()
    with pytest.raises(error) as info:
        make(demo)
    assert str(info.value) == message
    assert keyspace() == before


def test_counter_zero_means_incr_wrapped_to_two_to_the_32(demo, r):
    job_id, stored = demo.add_at_counter("j", 2, 0)
    assert split_score(stored) == (2, 0) and r.get(Keys.pc(demo.ctx)) == str(TIER_SPAN)


# -- numpy integers are ints, bools are not ------------------------------------------------------


def test_numpy_integers_are_accepted_wherever_an_int_is(demo):
    job_id, stored = demo.add_at_counter("j", np.int64(2), np.uint32(7))
    assert stored == priority_score(2, 7)
    demo.set_counter(np.int64(99))
    assert demo.priority_counter() == 99
    _, far = demo.add_past_the_limit_for_teaching("far", np.int64(2**21), np.int32(4))
    assert far == float(2**21 * TIER_SPAN + 4)
    assert demo.compare((np.int8(1), np.uint64(5)), (np.int16(2), np.int32(1))).popped == "A"
    assert seeded_priorities(np.int64(3), np.int64(4), np.array([1, 2])) == seeded_priorities(3, 4, [1, 2])


@pytest.mark.parametrize("seed, count, tiers, error, message", [
    (True, 3, (1,), TypeError, "seed must be an int, got bool True"),
    (1.5, 3, (1,), TypeError, "seed must be an int, got float 1.5"),
    (1, -1, (1,), ValueError, "count must be in 0..10,000,000, got -1"),
    (1, 3, (), ValueError, "tiers must name at least one priority, got none"),
    (1, 3, (0, 1), ValueError, PRIORITY_0),
    (1, "3", (1,), TypeError, "count must be an int, got str '3'"),
])
def test_seeded_priorities_refuses_bad_arguments(seed, count, tiers, error, message):
    with pytest.raises(error) as info:
        seeded_priorities(seed, count, tiers)
    assert str(info.value) == message


@pytest.mark.slow
def test_demo_and_clean_orphans_on_a_cluster():
    from conftest import server_binary
    from echomq_viz.redis_side.cluster import LocalCluster

    with LocalCluster(3, server_binary("bundled")) as cluster:
        client = cluster.client()
        demo = Demo("viz-cluster", client=client)
        demo.add_batch([2, 1, 3])
        dead = [f"emq:{{viz-dead-{n}@0badc0de}}:pc" for n in range(12)]  # spread over the slots
        for key in dead:
            client.set(key, "1")
        client.set("emq:{viz-dead-0@0badc0de}x", "not a demo key")
        assert len({cluster.owner_index(key) for key in dead}) > 1
        assert clean_orphans(client) == len(dead)
        assert not any(client.exists(key) for key in dead)
        assert client.exists("emq:{viz-dead-0@0badc0de}x")
        assert [job.id for job in demo.drain()] == ["2", "1", "3"]
        assert client.exists(lease_key(demo.owner))


@pytest.mark.parametrize("token, error, message", [
    ("3FA9C1D2", ValueError, "owner token must be 8 lowercase hex digits, after '<namespace>.' or not, got '3FA9C1D2'"),
    (0x3FA9C1D2, TypeError, "owner token must be a str, got int 1068089810"),
])
def test_lease_key_refuses_what_is_no_owner_token(token, error, message):
    with pytest.raises(error) as info:
        lease_key(token)
    assert str(info.value) == message


# -- bad input without a client, and in a filled queue ------------------------------------------------
# (imports of the tests below sit here so this section merges apart from edits above)

import re  # noqa: E402

from conftest import assert_refused  # noqa: E402

NAMES_REFUSED_WITHOUT_A_CLIENT = {
    "Demo queue 'viz' (no dash)": ("viz", ValueError, "viz-"),
    "Demo queue 'viz-a b'": ("viz-a b", ValueError, "' '"),
    "Demo queue as bytes": (b"viz-x", TypeError, "str"),
}


@pytest.mark.parametrize("case", NAMES_REFUSED_WITHOUT_A_CLIENT, ids=list(NAMES_REFUSED_WITHOUT_A_CLIENT))
def test_demo_refuses_bad_names_without_a_client(case):
    name, error, fragment = NAMES_REFUSED_WITHOUT_A_CLIENT[case]
    with assert_refused(error, re.escape(fragment)):
        Demo(name)


FILLED_QUEUE_REFUSALS = {
    "add_at_counter numpy float counter": (lambda d: d.add_at_counter("j", 1, np.float64(3.0)), TypeError, "float64"),
    "add_batch with priority 2**21": (lambda d: d.add_batch([1, 2**21]), ValueError, "2²¹ − 1"),
}


@pytest.mark.parametrize("case", FILLED_QUEUE_REFUSALS, ids=list(FILLED_QUEUE_REFUSALS))
def test_demo_refusals_in_a_filled_queue_write_nothing(demo, r, keyspace, case):
    make, error, fragment = FILLED_QUEUE_REFUSALS[case]
    demo.add_batch([2, 1, 3])
    r.set("someone-else", "data")
    with assert_refused(error, re.escape(fragment), keyspace):
        make(demo)


# -- a damaged queue, an evicting Redis -------------------------------------------------------------


def test_a_job_id_without_its_hash_is_said_in_one_line_by_every_read(r):
    demo = Demo("viz-damaged", client=r)
    demo.reset()
    ids = demo.add_batch([1, 2, 3])
    waiting = demo.add_waiting("w")
    r.delete(Keys.job(demo.ctx, ids[1]), Keys.job(demo.ctx, waiting))  # what an evicting Redis does when full
    for call, where in ((demo.entries, "in the prioritized set"), (demo.waiting, "on the wait list")):
        with pytest.raises(live.QueueDamaged) as info:
            call()
        shown = info.value._render_traceback_()
        assert len(shown) == 1 and one_clear_line(shown[0]) and where in shown[0]
        assert "maxmemory-policy: noeviction" in shown[0] and "reset()" in shown[0]
    r.delete(Keys.wait(demo.ctx))  # the consume script would take the wait list first
    assert demo.pop().id == ids[0]
    with pytest.raises(live.QueueDamaged, match=f"e.g. job '{ids[1]}'"):
        demo.pop()  # the consume script hands out an empty job: never silently
    demo.reset()
    assert demo.entries() == [] and demo.waiting() == []


def test_an_evicting_redis_gets_one_warning_line_naming_the_setting(capsys):
    with RedisServer(extra_args=("--maxmemory-policy", "allkeys-lru")) as evicting:
        Demo("viz-01-score", client=evicting.client())
        Demo("viz-02-score", client=evicting.client())
        said = capsys.readouterr().err.splitlines()
        assert len(said) == 1 and "maxmemory-policy allkeys-lru" in said[0] and "noeviction" in said[0]
        connect(evicting.url)
        assert "maxmemory-policy allkeys-lru" in capsys.readouterr().err  # the launcher's connect says it too
    with RedisServer() as keeping:  # noeviction, Redis's default
        Demo("viz-01-score", client=keeping.client())
        assert capsys.readouterr().err == ""


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_a_real_eviction_of_job_hashes_is_found_by_the_demo_and_the_inspector():
    from echomq_viz.experiments.inspection import inspect_queue

    with RedisServer(extra_args=("--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "10")) as server:
        client = server.client()
        demo = Demo("viz-evicted", client=client)
        ids = demo.add_batch([1] * 400)  # job hashes enough that evicting 20 kB never reaches the keys used now
        time.sleep(2.2)  # the job hashes age (Redis's LRU clock ticks each second) ...
        demo.priority_counter()  # ... while the lease, pc and the set are used now
        client.zcard(Keys.prioritized(demo.ctx))
        client.config_set("maxmemory", int(client.info("memory")["used_memory"]) - 20_000)
        client.set("filler", "x" * 1000)  # over maxmemory: Redis evicts the least recently used keys
        client.config_set("maxmemory", 0)
        evicted = [job_id for job_id in ids if not client.exists(Keys.job(demo.ctx, job_id))]
        assert evicted and client.info("stats")["evicted_keys"] >= len(evicted)
        assert client.exists(lease_key(demo.owner)) and client.zcard(Keys.prioritized(demo.ctx)) == 400
        with pytest.raises(live.QueueDamaged) as info:
            demo.entries()  # it carried on silently before: entries() still 200
        said = info.value._render_traceback_()
        assert len(said) == 1 and f"{len(evicted)} job id(s)" in said[0] and "allkeys-lru" in said[0]
        report = inspect_queue(client, demo.ctx)
        assert report.missing_hash == tuple(evicted) and "missing-hash" in [f.code for f in report.findings]
