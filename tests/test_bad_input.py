"""Bad input is refused with a message naming the problem, and writes nothing.

Every case runs against a queue that already holds jobs, and compares the
whole keyspace (DUMP of every key) before and after. Refusals are checked at
both levels: the Python API, and the Lua scripts called directly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import redis

from echomq_viz.inspect import inspect_queue
from echomq_viz.keys import Keys, QueueContext
from echomq_viz.scripts import Scripts

CTX = QueueContext("test-queue")
LIMIT = "2097151"

PYTHON_CASES = {
    "priority 0": (lambda s: s.add_prioritized_job(CTX, "j", {}, 0), ValueError, "1..2_097_151"),
    "priority -1": (lambda s: s.add_prioritized_job(CTX, "j", {}, -1), ValueError, "1..2_097_151"),
    "priority 2**21": (lambda s: s.add_prioritized_job(CTX, "j", {}, 2**21), ValueError, "2**21 - 1"),
    "priority 2**64": (lambda s: s.add_prioritized_job(CTX, "j", {}, 2**64), ValueError, "2**21 - 1"),
    "priority True": (lambda s: s.add_prioritized_job(CTX, "j", {}, True), TypeError, "int"),
    "priority 1.0": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1.0), TypeError, "float"),
    "priority nan": (lambda s: s.add_prioritized_job(CTX, "j", {}, math.nan), TypeError, "float"),
    "priority '1'": (lambda s: s.add_prioritized_job(CTX, "j", {}, "1"), TypeError, "str"),
    "priority None": (lambda s: s.add_prioritized_job(CTX, "j", {}, None), TypeError, "NoneType"),
    "empty name": (lambda s: s.add_prioritized_job(CTX, "", {}, 1), ValueError, "name"),
    "name None": (lambda s: s.add_prioritized_job(CTX, None, {}, 1), TypeError, "name"),
    "data not JSON": (lambda s: s.add_prioritized_job(CTX, "j", object(), 1), TypeError, "JSON"),
    "data NaN": (lambda s: s.add_prioritized_job(CTX, "j", {"x": math.nan}, 1), TypeError, "NaN"),
    "integer custom id": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="12"), ValueError, "integer"),
    "key-type custom id": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="pc"), ValueError, "key type"),
    "custom id with colon": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="a:b"), ValueError, "':'"),
    "bad job in a bulk add": (
        lambda s: s.add_prioritized_jobs(CTX, [("a", {}, 1), ("b", {}, 0), ("c", {}, 1)]),
        ValueError, "1..2_097_151",
    ),
    "short tuple in a bulk add": (lambda s: s.add_prioritized_jobs(CTX, [("a", {})]), ValueError, "name, data"),
    "standard job without name": (lambda s: s.add_standard_job(CTX, "", {}), ValueError, "name"),
    "empty lock token": (lambda s: s.move_to_active(CTX, ""), ValueError, "token"),
    "lock 0 ms": (lambda s: s.move_to_active(CTX, "t", 0), ValueError, "1..2_147_483_647"),
    "lock True ms": (lambda s: s.move_to_active(CTX, "t", True), TypeError, "int"),
    "change to priority 0": (lambda s: s.change_priority(CTX, "1", 0), ValueError, "add_standard_job"),
    "change with lifo 'yes'": (lambda s: s.change_priority(CTX, "1", 2, lifo="yes"), TypeError, "bool"),
    "count priority -1": (lambda s: s.counts_per_priority(CTX, [1, -1]), ValueError, "0..2_097_151"),
    "count priority 2**21": (lambda s: s.counts_per_priority(CTX, [2**21]), ValueError, "0..2_097_151"),
    "counter -1": (lambda s: s.set_priority_counter(CTX, -1), ValueError, "counter"),
    "counter 1.5": (lambda s: s.set_priority_counter(CTX, 1.5), TypeError, "counter"),
    "unknown script": (lambda s: s.run("flushEverything", CTX, []), KeyError, "known"),
}

# ARGV as each script receives it; prefix/timestamp/data are valid unless named.
PREFIX = Keys.base(CTX)


def add_args(priority="5", custom="", name="j", timestamp="1700000000000", data="{}"):
    return [PREFIX, custom, name, timestamp, data, priority]


LUA_CASES = {
    "priority 0": ("addPrioritizedJob", add_args(priority="0"), "in 1..2097151"),
    "priority 2^21": ("addPrioritizedJob", add_args(priority="2097152"), "in 1..2097151"),
    "priority 1.5": ("addPrioritizedJob", add_args(priority="1.5"), "integer"),
    "priority -3": ("addPrioritizedJob", add_args(priority="-3"), "integer"),
    "priority 1e3": ("addPrioritizedJob", add_args(priority="1e3"), "integer"),
    "priority empty": ("addPrioritizedJob", add_args(priority=""), "integer"),
    "priority huge": ("addPrioritizedJob", add_args(priority="9" * 30), "in 1..2097151"),
    "missing name": ("addPrioritizedJob", add_args(name=""), "name must not be empty"),
    "bad timestamp": ("addPrioritizedJob", add_args(timestamp="soon"), "timestamp"),
    "data not JSON": ("addPrioritizedJob", add_args(data="{oops"), "JSON"),
    "integer custom id": ("addPrioritizedJob", add_args(custom="77"), "plain integer"),
    "custom id with brace": ("addPrioritizedJob", add_args(custom="a}b"), "must not contain"),
    "standard: missing name": ("addStandardJob", add_args(name="")[:5], "name must not be empty"),
    "consume: empty token": ("moveToActive", [PREFIX, "1700000000000", "", "1000"], "token"),
    "consume: lock 0": ("moveToActive", [PREFIX, "1700000000000", "t", "0"], "lock duration"),
    "consume: lock abc": ("moveToActive", [PREFIX, "1700000000000", "t", "abc"], "lock duration"),
    "consume: bad timestamp": ("moveToActive", [PREFIX, "now", "t", "1000"], "timestamp"),
    "change: priority 0": ("changePriority", ["0", PREFIX, "1", "0"], "in 1..2097151"),
    "change: lifo maybe": ("changePriority", ["2", PREFIX, "1", "maybe"], "lifo"),
    "change: empty job id": ("changePriority", ["2", PREFIX, "", "0"], "job id"),
    "count: -1": ("getCountsPerPriority", ["1", "-1"], "integer in 0..2097151"),
    "count: 2^21": ("getCountsPerPriority", ["2097152"], "in 0..2097151"),
}


# More cases: other wrong types, huge ints, the inspector, and the key prefix.
PYTHON_CASES.update({
    # wrong types the other file does not try
    "ctx is a plain str": (lambda s: s.add_prioritized_job("test-queue", "j", {}, 1), TypeError, "QueueContext"),
    "priority numpy float64": (lambda s: s.add_prioritized_job(CTX, "j", {}, np.float64(2.0)), TypeError, "float64"),
    "name as bytes": (lambda s: s.add_prioritized_job(CTX, b"j", {}, 1), TypeError, "job name must be a str, got bytes"),
    "custom id as bytes": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id=b"x"), TypeError, "job id must be a str, got bytes"),
    "lock token as bytes": (lambda s: s.move_to_active(CTX, b"t"), TypeError, "lock token must be a str"),
    "data holding bytes": (lambda s: s.add_prioritized_job(CTX, "j", {"x": b"a"}, 1), TypeError, "JSON"),
    "data holding inf": (lambda s: s.add_prioritized_job(CTX, "j", [math.inf], 1), TypeError, "NaN/inf"),
    "timestamp as float": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, timestamp=1.7e12), TypeError, "timestamp must be an int"),
    "count priorities given as a str": (lambda s: s.counts_per_priority(CTX, "12"), TypeError, "got str '1'"),
    "count priority NaN": (lambda s: s.counts_per_priority(CTX, [math.nan]), TypeError, "float nan"),
    "change priority of an int job id": (lambda s: s.change_priority(CTX, 1, 2), ValueError, "job id must be a non-empty str"),
    "bulk add chunk_size 0": (lambda s: s.add_prioritized_jobs(CTX, [("a", {}, 1)], chunk_size=0), ValueError, "chunk_size"),
    "drain batch_size 0": (lambda s: s.drain(CTX, "t", batch_size=0), ValueError, "batch_size"),
    # huge ints
    "priority 10**100": (lambda s: s.add_prioritized_job(CTX, "j", {}, 10**100), ValueError, "2**21 - 1"),
    "counter 2**63": (lambda s: s.set_priority_counter(CTX, 2**63), ValueError, "2**63 - 2"),
    "lock 10**30 ms": (lambda s: s.move_to_active(CTX, "t", 10**30), ValueError, "lock_ms"),
    "lock 2**63 - 1 ms": (lambda s: s.move_to_active(CTX, "t", 2**63 - 1), ValueError, "lock_ms"),
    "timestamp 2**64 ms": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, timestamp=2**64), ValueError, "timestamp"),
    # the inspector (read-only) on names it cannot use
    "inspect a bytes queue name": (lambda s: inspect_queue(s.client, b"{q}"), TypeError, "queue name must be a str, got bytes"),
    "inspect with a prefix holding a space": (lambda s: inspect_queue(s.client, "{q}", "em q"), ValueError, "key prefix 'em q'"),
})


TS = "1700000000000"


def _add_args(prefix=PREFIX, priority="5", timestamp=TS):
    return [prefix, "", "j", timestamp, "{}", priority]


LUA_CASES.update({
    "add: priority 'nan'": ("addPrioritizedJob", _add_args(priority="nan"), "integer"),
    "add: priority '0x10'": ("addPrioritizedJob", _add_args(priority="0x10"), "integer"),
    "add: priority ' 5'": ("addPrioritizedJob", _add_args(priority=" 5"), "integer"),
    "add: timestamp '1.7e12'": ("addPrioritizedJob", _add_args(timestamp="1.7e12"), "timestamp"),
    "standard: timestamp '-1'": ("addStandardJob", _add_args(timestamp="-1")[:5], "timestamp"),
    "count: 'nan'": ("getCountsPerPriority", ["nan"], "integer in 0..2097151"),
    "change: priority 'inf'": ("changePriority", ["inf", PREFIX, "1", "0"], "in 1..2097151"),
    # a lock too long for SET PX: must be refused before the job leaves the set
    "consume: lock 10^30 ms": ("moveToActive", [PREFIX, TS, "t", "1" + "0" * 30], "lock duration"),
    "consume: lock 2^63 - 1 ms": ("moveToActive", [PREFIX, TS, "t", str(2**63 - 1)], "lock duration"),
    # ARGV[1] must be the base of the script's own KEYS: else the job hash
    # lands in another queue's keys (or at the top level of the keyspace)
    "add: prefix of another queue": ("addPrioritizedJob", _add_args(prefix="emq:{other}:"), "prefix"),
    "add: empty prefix": ("addPrioritizedJob", _add_args(prefix=""), "prefix"),
    "consume: prefix of another queue": ("moveToActive", ["emq:{other}:", TS, "t", "1000"], "prefix"),
})


@pytest.fixture
def loaded(scripts: Scripts, r):
    """A queue with prioritized, waiting and active jobs, plus foreign keys."""
    scripts.add_prioritized_jobs(CTX, [("a", {}, 3), ("b", {}, 1), ("c", {}, 2)])
    scripts.add_standard_job(CTX, "w", {})
    scripts.move_to_active(CTX, "t")
    scripts.add_prioritized_job(CTX, "d", {}, 2)
    r.set("someone-else", "data")
    r.hset("emq:{other}:4", "mine", "yes")
    return scripts


@pytest.mark.parametrize("case", PYTHON_CASES, ids=list(PYTHON_CASES))
def test_python_api_refuses_and_writes_nothing(loaded, keyspace, case):
    call, error, fragment = PYTHON_CASES[case]
    before = keyspace()
    with pytest.raises(error) as info:
        call(loaded)
    assert fragment in str(info.value)
    assert len(str(info.value).splitlines()) == 1  # one clear line
    assert keyspace() == before


@pytest.mark.parametrize("case", LUA_CASES, ids=list(LUA_CASES))
def test_lua_scripts_refuse_and_write_nothing(loaded, keyspace, case):
    command, args, fragment = LUA_CASES[case]
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        loaded.run(command, CTX, args)
    assert fragment in str(info.value)
    assert keyspace() == before


def test_lua_accepts_the_valid_counterparts(loaded):
    # The refusals above are about the bad field, not the call shape.
    assert loaded.run("addPrioritizedJob", CTX, add_args(priority=LIMIT)) == "6"
    assert loaded.run("changePriority", CTX, ["2", PREFIX, "6", "1"]) == 0
    assert loaded.run("getCountsPerPriority", CTX, ["0", "1", "2", LIMIT]) == [0, 1, 3, 0]
