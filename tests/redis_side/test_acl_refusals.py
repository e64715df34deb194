"""A hostile student on a real shared Redis 7: every command that runs code of
their own or changes the server is refused, floods through the package stop
at the caps, a lease by hand either cannot be written or is not a lease to
``clean``, keys written by hand in odd shapes are found by ``clean``, a raw
flood stays in the student's own keys under ``maxmemory``; and all along
another student's demo keeps running, every job of theirs kept."""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import pytest
import redis

from conftest import one_clear_line, server_binary
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.live import Demo, clean_orphans
from echomq_viz.redis_side.acl import add_student, remove_student
from echomq_viz.redis_side.caps import JobCaps
from echomq_viz.redis_side.functions import LIBRARY, function_name
from echomq_viz.redis_side.lua_loader import load_scripts
from echomq_viz.redis_side.demo_keys import lease_key, namespace_of
from echomq_viz.redis_side.server import RedisServer, connect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from lease import Kernel  # noqa: E402  (a process holding a Demo, driven line by line)

pytestmark = pytest.mark.slow  # servers and kernels of their own
CAPS = JobCaps(queue_jobs=500, student_jobs=800, student_queues=4, job_bytes=1024)
BUSY = "while true do end"
SHOULD_NOT_RUN = [
    ("EVAL", BUSY, 0), ("EVAL_RO", BUSY, 0), ("EVALSHA", hashlib.sha1(BUSY.encode()).hexdigest(), 0),
    ("SCRIPT", "LOAD", BUSY), ("SCRIPT", "FLUSH"), ("SCRIPT", "KILL"),
    ("FUNCTION", "FLUSH"), ("FUNCTION", "DELETE", LIBRARY), ("FUNCTION", "KILL"), ("FUNCTION", "DUMP"),
    ("FUNCTION", "LOAD", "REPLACE", f"#!lua name={LIBRARY}\nredis.register_function('x', function() {BUSY} end)"),
    ("FUNCTION", "RESTORE", "x", "FLUSH"), ("SELECT", 1), ("SWAPDB", 0, 1), ("MULTI",), ("FLUSHDB",), ("FLUSHALL",),
    ("CONFIG", "SET", "maxmemory", "1"), ("CONFIG", "SET", "maxmemory-policy", "allkeys-random"),
    ("DEBUG", "SLEEP", 5), ("CLIENT", "PAUSE", 10_000), ("CLIENT", "KILL", "TYPE", "normal"),
    ("CLIENT", "NO-EVICT", "on"), ("ACL", "SETUSER", "alice", "+@all"), ("SHUTDOWN", "NOSAVE"),
    ("MODULE", "LIST"), ("BGSAVE",), ("REPLICAOF", "127.0.0.1", 1), ("KEYS", "*"), ("PUBLISH", "x", "y"),
]
# Reads of alice's own keys whose work a few bytes set (acl.COSTLY_READS): one of them in a loop
# held every other student's calls for seconds
OWN = f"emq:{{viz-q@{namespace_of('alice')}.0123abcd}}:"
SHOULD_NOT_RUN += [("LCS", OWN + "1:lock", OWN + "2:lock"), ("ZRANDMEMBER", OWN + "prioritized", -10**9),
                   ("HRANDFIELD", OWN + "1", -10**9), ("SRANDMEMBER", OWN + "stalled", -10**9),
                   ("LOLWUT", "VERSION", 6, 1000, 1000), ("RANDOMKEY",)]


@pytest.fixture(scope="module")
def course():
    """A course's Redis 7, as its operator runs it: a password, maxmemory with noeviction."""
    with RedisServer(server_binary("system"), port=0,
                     extra_args=("--maxmemory", "64mb", "--maxmemory-policy", "noeviction")) as server:
        yield server


@pytest.fixture
def students(course):
    """alice (hostile) and bob, each with a user of their own and CAPS; bob runs a demo in a kernel."""
    operator = course.client()
    urls = {name: add_student(operator, name, course.url, caps=CAPS) for name in ("alice", "bob")}
    bob = Kernel(urls["bob"], lease=3, name="viz-01-score")
    assert bob.ask("add 5") == ["1", "2", "3", "4", "5"]
    alice = connect(urls["alice"])
    yield operator, alice, bob, urls
    alice.close()
    bob.__exit__()
    for key in operator.scan_iter(count=1000):
        operator.unlink(key)
    for name in urls:
        remove_student(operator, name)
    operator.close()


def still_running(bob: Kernel, added: int) -> None:
    """bob adds again, in well under a second, and every job he added is there."""
    started = time.monotonic()
    assert len(bob.ask(f"add {added}")) == added, "bob's demo stopped"
    assert time.monotonic() - started < 5
    state = bob.ask("state")
    assert state["hashes"] == len(state["ids"]) == bob.counted and bob.lost() == 0


def test_a_student_may_run_no_code_of_their_own_nor_change_the_server(students):
    operator, alice, bob, _ = students
    library = operator.execute_command("FUNCTION", "LIST", "LIBRARYNAME", LIBRARY)
    config = operator.config_get("*")
    for command in SHOULD_NOT_RUN:
        with pytest.raises(redis.ResponseError) as info:
            alice.execute_command(*command)
        # DEBUG and MODULE are no commands at all on a server RedisServer starts (as on a course's, we advise)
        assert isinstance(info.value, redis.exceptions.NoPermissionError) or (
            command[0] in ("DEBUG", "MODULE") and "unknown command" in str(info.value)), command
        assert one_clear_line(str(info.value))
    with pytest.raises(redis.ResponseError, match="Function not found"):  # only the library's functions exist
        alice.execute_command("FCALL", "x", 0)
    assert operator.execute_command("FUNCTION", "LIST", "LIBRARYNAME", LIBRARY) == library
    assert operator.config_get("*") == config and operator.ping()
    operator.execute_command("SELECT", 1)
    assert operator.dbsize() == 0  # nothing reached another database
    operator.execute_command("SELECT", 0)
    still_running(bob, 3)


def test_a_flood_through_the_package_stops_at_the_caps(students, monkeypatch):
    _, alice, bob, _ = students
    # alice's kernel: a process whose first lease is on the course Redis as alice (this test
    # process may have taken its token on another server first, which alice's keys cannot name)
    from echomq_viz.redis_side import owners

    monkeypatch.setattr(owners, "_OWNER", owners._Owner())
    flood = Demo("viz-flood", client=alice)
    with pytest.raises(Exception, match=r"at most 500 jobs here \(the operator's queue_jobs cap\)") as info:
        flood.add_batch([1] * 10_000)
    assert one_clear_line(str(info.value)) and len(flood.entries()) == 500
    others = [Demo(f"viz-flood-{n}", client=alice) for n in range(3)]
    with pytest.raises(Exception, match="student_jobs cap") as info:
        for demo in others:
            demo.add_batch([1] * 200)
    assert "student alice holds 800" in str(info.value)
    # Calling the library itself, on a queue of an odd name in alice's pattern: capped all the same.
    add = load_scripts()["addPrioritizedJob"]
    odd = QueueContext(f"viz-x@{namespace_of('alice')}.zzzzzzzz")
    with pytest.raises(redis.ResponseError, match="student_jobs cap"):
        alice.execute_command("FCALL", function_name(add.source), 9, *add.keys(odd), Keys.base(odd), "", "j",
                              1, "{}", 1)
    still_running(bob, 3)


def test_a_lease_by_hand_cannot_be_written_without_an_expiry_nor_keep_keys_from_clean(students):
    operator, alice, bob, _ = students
    dead = f"{namespace_of('alice')}.0badc0de"
    lease = lease_key(dead)
    for command in (("SET", lease, "mine"), ("SETNX", lease, "mine"), ("MSET", lease, "mine"),
                    ("GETSET", lease, "mine"), ("PERSIST", lease), ("RENAME", lease, lease + "x")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            alice.execute_command(*command)
    alice.execute_command("PSETEX", lease, 10**12, "mine")  # an expiry, but longer than any kernel takes
    keys = [f"emq:{{viz-held@{dead}}}:{n}" for n in range(20)]
    for key in keys:
        alice.hset(key, "data", "x")
    assert clean_orphans(operator) == len(keys) + 1 and not operator.exists(lease, *keys)
    still_running(bob, 2)


def test_a_key_another_student_shapes_like_ones_own_leaves_ones_clean_whole(students):
    """Bob may write emq:{viz-q@bob.<hex>}:x@alice.0}:y (his pattern), which alice's clean scan
    also matches: her clean filed it under bob's token, asked Redis about his lease, got NOPERM
    and stopped, her own orphans kept."""
    operator, alice, bob, urls = students
    mine, his = namespace_of("alice"), namespace_of("bob")
    bait = f"emq:{{viz-q@{his}.12345678}}:x@{mine}.0}}:y"
    by_hand = connect(urls["bob"])  # bob's own user, by hand
    by_hand.hset(bait, "data", "x")
    by_hand.close()
    orphan = f"emq:{{viz-q@{mine}.0badc0de}}:1"  # alice's, its owner gone (no lease)
    alice.hset(orphan, "data", "x")
    assert clean_orphans(alice) >= 1
    assert not operator.exists(orphan) and operator.exists(bait)  # hers went, his stays for his clean
    assert clean_orphans(operator) >= 1 and not operator.exists(bait)
    still_running(bob, 2)


def test_keys_written_by_hand_in_odd_shapes_are_found_by_clean(students):
    operator, alice, bob, _ = students
    space = namespace_of("alice")
    odd = [f"emq:{{viz-{{@{space}.00000000}}:x", f"emq:{{viz-x@{space}.ZZZZZZZZ}}:y",
           f"emq:{{viz-@{space}.registrx}}:z", f"emq:{{viz-{'v' * 120}@{space}.0badc0de}}:w"]
    for key in odd:
        alice.hset(key, "data", "x")
    alice.execute_command("HSET", f"emq:{{viz-\xff@{space}.0badc0de}}:u".encode("latin-1"), "data", "x")
    assert clean_orphans(alice) == len(odd) + 1  # the student's own clean finds them
    for key in odd:
        alice.hset(key, "data", "x")
    assert clean_orphans(operator) == len(odd)  # and the operator's
    left = {key.decode("latin-1") for key in operator.scan_iter(match=f"emq:{{viz-*@{space}.*", count=1000)}
    assert left <= {f"emq:{{viz-@{space}.registry}}:queues"}
    still_running(bob, 2)


def test_a_raw_flood_stays_in_its_own_keys_under_maxmemory_and_clean_takes_it_back(students):
    operator, alice, bob, urls = students
    space = namespace_of("alice")
    mine = f"emq:{{viz-f@{space}.0badc0de}}"
    for command in (("SET", f"{mine}:x", "y"), ("APPEND", f"{mine}:x", "y"), ("SADD", f"{mine}:s", "y"),
                    ("SETRANGE", f"{mine}:x", 0, "y"), ("SET", "elsewhere", "y")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            alice.execute_command(*command)
    block, written = "x" * 1_000_000, 0
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        for n in range(200):  # 200 MB asked; the server holds 64 MB
            alice.hset(f"emq:{{viz-f@{space}.0badc0de}}:{n}", "data", block)
            written += 1
    assert 20 < written < 64
    time.sleep(4)  # past bob's 3 s lease: renewed on a full server all the same
    assert operator.exists(lease_key(bob.token)) and bob.lost() == 0 and bob.ask("state")["hashes"] == bob.counted
    for _ in range(3):  # at the brim: each add fits, or is refused in one line; nothing of bob's is lost
        reply = bob.ask("add 1")
        assert isinstance(reply, list) or "OutOfMemoryError" in reply["error"], reply
        bob.counted = bob.ask("state")["hashes"] if isinstance(reply, dict) else bob.counted
    assert bob.lost() == 0
    assert clean_orphans(operator) == written  # the flood's keys: no live lease holds them
    still_running(bob, 3)


def test_stock_bullmq_as_a_student_is_refused_in_one_line_naming_why(students):
    """Notebooks 06 to 08 drive the stock BullMQ client, which runs its own Lua:
    for a student that is refused, in one line saying why and what to do."""
    from echomq_viz.experiments.interop import bullmq_add, bullmq_process_order

    operator, alice, _, urls = students
    queue = "{viz-06-bullmq@" + namespace_of("alice") + ".abcdefgh}"  # BullMQ's keys are in alice's own pattern
    for call in (lambda: bullmq_add(urls["alice"], queue, "emq", [("a", {}, 1)]),
                 lambda: bullmq_process_order(urls["alice"], queue, "emq", timeout=5, count=1)):
        with pytest.raises(redis.exceptions.NoPermissionError) as raised:
            call()
        said = raised.value._render_traceback_()
        assert len(said) == 1 and "\n" not in said[0], said
        assert "stock BullMQ runs its own Lua" in said[0] and "unset REDIS_URL" in said[0], said
        assert urls["alice"].split("@")[0].split(":")[-1] not in said[0]  # no password
    assert not list(operator.scan_iter(match="emq:{viz-06-bullmq*", count=1000))  # nothing written
