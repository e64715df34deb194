"""Bad input is refused with a message naming the problem, and writes nothing.

Every case runs against a queue that already holds jobs, and compares the
whole keyspace (DUMP of every key) before and after. Refusals are checked at
both levels: the Python API, and the Lua scripts called directly.
"""

from __future__ import annotations

import math

import pytest
import redis

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


@pytest.fixture
def loaded(scripts: Scripts, r):
    """A queue with prioritized, waiting and active jobs, plus a foreign key."""
    scripts.add_prioritized_jobs(CTX, [("a", {}, 3), ("b", {}, 1), ("c", {}, 2)])
    scripts.add_standard_job(CTX, "w", {})
    scripts.move_to_active(CTX, "t")
    r.set("someone-else", "data")
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
    assert loaded.run("addPrioritizedJob", CTX, add_args(priority=LIMIT)) == "5"
    assert loaded.run("changePriority", CTX, ["2", PREFIX, "5", "1"]) == 0
    assert loaded.run("getCountsPerPriority", CTX, ["0", "1", "2", LIMIT]) == [0, 1, 2, 0]
