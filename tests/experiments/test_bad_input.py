"""Bad input is refused with a message naming the problem, and writes nothing.

Every case runs against a queue that already holds jobs, and compares the
whole keyspace (DUMP of every key) before and after. Refusals are checked at
both levels: the Python API, and the Lua scripts called directly.
"""

from __future__ import annotations

import json
import math
from datetime import date

import numpy as np
import pytest
import redis
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from echomq_viz.experiments.inspection import inspect_queue
from echomq_viz.core.keys import KEY_TYPES, Keys, QueueContext, validate_job_id
from echomq_viz.redis_side.scripts import Scripts

CTX = QueueContext("test-queue")
LIMIT = "2097151"

# The exact messages, in the package's one wording; the long ones in parts.
PRIORITY = "priority must be in 1..2,097,151 (2²¹ − 1), got "
NO_PRIORITY = " (0 means no priority: use add_standard_job)"
PC = "counter must be in 0..9,007,199,254,740,990 (2⁵³ − 2, so INCR pc stays exact), got "
KEY_TYPE = ("job id must not be a key type name (prioritized, pc, id, marker, meta, events, wait, active, "
            "delayed, completed, stalled, limiter, paused: its job hash would be that key), got ")
LAYOUT = ("job id must not contain '{', '}', ':', whitespace or control characters "
          "(the emq:{queue}:type key layout), got ")
JSON_DATA = "job data must be JSON-serialisable (no NaN/inf), got "
EACH_JOB = "each job must be a (name, data, priority[, job_id]) tuple, got "
LONE = " holding the lone surrogate "
NOT_JSON = "Object of type %s is not JSON serializable"


def _json_refusal(value: object) -> str:
    """json's own words for refusing ``value`` (they differ between Python versions)."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"json took {value!r}")


JSON_NAN_WORDS = _json_refusal(math.nan)
JSON_INF_WORDS = _json_refusal(math.inf)  # from 3.12 the words name the value

PYTHON_CASES = {
    "priority 0": (lambda s: s.add_prioritized_job(CTX, "j", {}, 0), ValueError,
                   PRIORITY + "0" + NO_PRIORITY),
    "priority -1": (lambda s: s.add_prioritized_job(CTX, "j", {}, -1), ValueError, PRIORITY + '-1'),
    "priority 2**21": (lambda s: s.add_prioritized_job(CTX, "j", {}, 2**21), ValueError,
                       PRIORITY + '2,097,152'),
    "priority 2**64": (lambda s: s.add_prioritized_job(CTX, "j", {}, 2**64), ValueError,
                       PRIORITY + '18,446,744,073,709,551,616'),
    "priority True": (lambda s: s.add_prioritized_job(CTX, "j", {}, True), TypeError,
                      'priority must be an int, got bool True'),
    "priority 1.0": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1.0), TypeError,
                     'priority must be an int, got float 1.0'),
    "priority nan": (lambda s: s.add_prioritized_job(CTX, "j", {}, math.nan), TypeError,
                     'priority must be an int, got float nan'),
    "priority '1'": (lambda s: s.add_prioritized_job(CTX, "j", {}, "1"), TypeError,
                     "priority must be an int, got str '1'"),
    "priority None": (lambda s: s.add_prioritized_job(CTX, "j", {}, None), TypeError,
                      'priority must be an int, got NoneType None'),
    "empty name": (lambda s: s.add_prioritized_job(CTX, "", {}, 1), ValueError, 'job name must not be empty'),
    "name None": (lambda s: s.add_prioritized_job(CTX, None, {}, 1), TypeError,
                  'job name must be a str, got NoneType None'),
    "data not JSON": (lambda s: s.add_prioritized_job(CTX, "j", {"on": date(2024, 1, 2)}, 1), TypeError,
                      JSON_DATA + "dict {'on': datetime.date(2024, 1, 2)}: " + NOT_JSON % "date"),
    "data NaN": (lambda s: s.add_prioritized_job(CTX, "j", {"x": math.nan}, 1), ValueError,
                 JSON_DATA + "dict {'x': nan}: " + JSON_NAN_WORDS),
    "integer custom id": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="12"), ValueError,
                          "custom job id must not be a plain integer (auto ids are), got '12'"),
    "key-type custom id": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="pc"), ValueError,
                           KEY_TYPE + "'pc'"),
    "custom id with colon": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="a:b"), ValueError,
                             LAYOUT + "':' in 'a:b'"),
    "bad job in a bulk add": (
        lambda s: s.add_prioritized_jobs(CTX, [("a", {}, 1), ("b", {}, 0), ("c", {}, 1)]),
        ValueError, PRIORITY + "0" + NO_PRIORITY,
    ),
    "short tuple in a bulk add": (lambda s: s.add_prioritized_jobs(CTX, [("a", {})]), ValueError,
                                  EACH_JOB + "tuple ('a', {})"),
    "a str as a job in a bulk add": (lambda s: s.add_prioritized_jobs(CTX, ["abc"]), TypeError,
                                     EACH_JOB + "str 'abc'"),
    "standard job without name": (lambda s: s.add_standard_job(CTX, "", {}), ValueError,
                                  'job name must not be empty'),
    "empty lock token": (lambda s: s.move_to_active(CTX, ""), ValueError, 'lock token must not be empty'),
    "lock 0 ms": (lambda s: s.move_to_active(CTX, "t", 0), ValueError,
                  'lock_ms must be in 1..2,147,483,647, got 0'),
    "lock True ms": (lambda s: s.move_to_active(CTX, "t", True), TypeError,
                     'lock_ms must be an int, got bool True'),
    "change to priority -1": (lambda s: s.change_priority(CTX, "1", -1), ValueError,
                              "priority must be in 0..2,097,151 (2²¹ − 1), got -1"),
    "change with lifo 'yes'": (lambda s: s.change_priority(CTX, "1", 2, lifo="yes"), TypeError,
                               "lifo must be True or False, got str 'yes'"),
    "count priority -1": (lambda s: s.counts_per_priority(CTX, [1, -1]), ValueError,
                          'priority must be in 0..2,097,151 (2²¹ − 1), got -1'),
    "count priority 2**21": (lambda s: s.counts_per_priority(CTX, [2**21]), ValueError,
                             'priority must be in 0..2,097,151 (2²¹ − 1), got 2,097,152'),
    "counter -1": (lambda s: s.set_priority_counter(CTX, -1), ValueError, PC + '-1'),
    "counter 1.5": (lambda s: s.set_priority_counter(CTX, 1.5), TypeError,
                    'counter must be an int, got float 1.5'),
    "unknown script": (lambda s: s.run("flushEverything", CTX, []), KeyError,
                       "no script 'flushEverything'; known: "
                       "addDelayedJob, addPrioritizedJob, addStandardJob, changePriority, getCountsPerPriority, "
                       "moveToActive, promote, retryJob"),
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
    "change: priority -1": ("changePriority", ["-1", PREFIX, "1", "0"], "in 0..2097151"),
    "change: lifo maybe": ("changePriority", ["2", PREFIX, "1", "maybe"], "lifo"),
    "change: empty job id": ("changePriority", ["2", PREFIX, "", "0"], "job id"),
    "count: -1": ("getCountsPerPriority", ["1", "-1"], "integer in 0..2097151"),
    "count: 2^21": ("getCountsPerPriority", ["2097152"], "in 0..2097151"),
}


# More cases: other wrong types, huge ints, the inspector, and the key prefix.
PYTHON_CASES.update({
    # wrong types the other file does not try
    "ctx is a plain str": (lambda s: s.add_prioritized_job("test-queue", "j", {}, 1), TypeError,
                           "ctx must be a QueueContext, e.g. QueueContext('orders'), got str 'test-queue'"),
    "priority numpy float64": (lambda s: s.add_prioritized_job(CTX, "j", {}, np.float64(2.0)), TypeError,
                               'priority must be an int, got float64 2.0'),
    "name as bytes": (lambda s: s.add_prioritized_job(CTX, b"j", {}, 1), TypeError,
                      "job name must be a str, got bytes b'j'"),
    "custom id as bytes": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id=b"x"), TypeError,
                           "job id must be a str, got bytes b'x'"),
    "lock token as bytes": (lambda s: s.move_to_active(CTX, b"t"), TypeError,
                            "lock token must be a str, got bytes b't'"),
    "data holding bytes": (lambda s: s.add_prioritized_job(CTX, "j", {"x": b"a"}, 1), TypeError,
                           JSON_DATA + "dict {'x': b'a'}: Object of type bytes is not JSON serializable"),
    "data holding inf": (lambda s: s.add_prioritized_job(CTX, "j", [math.inf], 1), ValueError,
                         JSON_DATA + 'list [inf]: ' + JSON_INF_WORDS),
    "timestamp as float": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, timestamp=1.7e12), TypeError,
                           'timestamp must be an int, got float 1700000000000.0'),
    "count priorities given as a str": (lambda s: s.counts_per_priority(CTX, "12"), TypeError,
                                        "priority must be an int, got str '1'"),
    "count priority NaN": (lambda s: s.counts_per_priority(CTX, [math.nan]), TypeError,
                           'priority must be an int, got float nan'),
    "change priority of an int job id": (lambda s: s.change_priority(CTX, 1, 2), TypeError,
                                         'job id must be a str, got int 1'),
    "bulk add chunk_size 0": (lambda s: s.add_prioritized_jobs(CTX, [("a", {}, 1)], chunk_size=0), ValueError,
                              'chunk_size must be 1 or more, got 0'),
    "drain batch_size 0": (lambda s: s.drain(CTX, "t", batch_size=0), ValueError,
                           'batch_size must be 1 or more, got 0'),
    # huge ints
    "priority 10**100": (lambda s: s.add_prioritized_job(CTX, "j", {}, 10**100), ValueError,
                         PRIORITY + '1.000 × 10¹⁰⁰'),
    "counter 2**63": (lambda s: s.set_priority_counter(CTX, 2**63), ValueError,
                      PC + '9,223,372,036,854,775,808'),
    "lock 10**30 ms": (lambda s: s.move_to_active(CTX, "t", 10**30), ValueError,
                       'lock_ms must be in 1..2,147,483,647, got 1.000 × 10³⁰'),
    "lock 2**63 - 1 ms": (lambda s: s.move_to_active(CTX, "t", 2**63 - 1), ValueError,
                          'lock_ms must be in 1..2,147,483,647, got 9,223,372,036,854,775,807'),
    "timestamp 2**64 ms": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, timestamp=2**64), ValueError,
                           'timestamp must be in 1..9,007,199,254,740,991, got 18,446,744,073,709,551,616'),
    # the inspector (read-only) on names it cannot use
    "inspect a bytes queue name": (lambda s: inspect_queue(s.client, b"{q}"), TypeError,
                                   "queue name must be a str, got bytes b'{q}'"),
    "inspect with a prefix holding a space": (lambda s: inspect_queue(s.client, "{q}", "em q"), ValueError,
                                              "key prefix must not contain whitespace or control characters, "
                                               "got ' ' in 'em q'"),
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
    "change: priority 'inf'": ("changePriority", ["inf", PREFIX, "1", "0"], "in 0..2097151"),
    # a lock too long for SET PX: must be refused before the job leaves the set
    "consume: lock 10^30 ms": ("moveToActive", [PREFIX, TS, "t", "1" + "0" * 30], "lock duration"),
    "consume: lock 2^63 - 1 ms": ("moveToActive", [PREFIX, TS, "t", str(2**63 - 1)], "lock duration"),
    "consume: lock 2^31 ms": ("moveToActive", [PREFIX, TS, "t", str(2**31)], "lock duration"),  # one past
    "consume: timestamp 2^53": ("moveToActive", [PREFIX, str(2**53), "t", "1000"], "timestamp"),  # one past
    # ARGV[1] must be the base of the script's own KEYS: else the job hash
    # lands in another queue's keys (or at the top level of the keyspace)
    "add: prefix of another queue": ("addPrioritizedJob", _add_args(prefix="emq:{other}:"), "prefix"),
    "add: empty prefix": ("addPrioritizedJob", _add_args(prefix=""), "prefix"),
    "consume: prefix of another queue": ("moveToActive", ["emq:{other}:", TS, "t", "1000"], "prefix"),
})


# More cases: job ids, text that is not UTF-8, the priority counter.
PYTHON_CASES.update({
    "custom id 'meta'": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="meta"), ValueError,
                         KEY_TYPE + "'meta'"),
    "custom id 'events'": (lambda s: s.add_standard_job(CTX, "j", {}, job_id="events"), ValueError,
                           KEY_TYPE + "'events'"),
    "custom id 'x y'": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="x y"), ValueError,
                        LAYOUT + "' ' in 'x y'"),
    "custom id NUL": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="\x00"), ValueError,
                      LAYOUT + "'\\x00' in '\\x00'"),
    "custom id with a C1 control": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="a\x9bb"), ValueError,
                                    LAYOUT + "'\\x9b' in 'a\\x9bb'"),
    "custom id a lone surrogate": (lambda s: s.add_prioritized_job(CTX, "j", {}, 1, job_id="a\ud800"), ValueError,
                                   "job id must be UTF-8 encodable, got str 'a\\ud800'" + LONE + "'\\ud800'"),
    "change priority of job 'pc'": (lambda s: s.change_priority(CTX, "pc", 2), ValueError, KEY_TYPE + "'pc'"),
    "change priority of job 'x y'": (lambda s: s.change_priority(CTX, "x y", 2), ValueError,
                                     LAYOUT + "' ' in 'x y'"),
    "change priority of job ''": (lambda s: s.change_priority(CTX, "", 2), ValueError,
                                  'job id must not be empty'),
    "data a lone surrogate": (lambda s: s.add_prioritized_job(CTX, "j", "\ud800", 1), ValueError,
                              "job data must be UTF-8 encodable, got str '\"\\ud800\"'" + LONE + "'\\ud800'"),
    "data holding a lone surrogate": (lambda s: s.add_standard_job(CTX, "j", {"k": ["\udfff"]}), ValueError,
                                      "job data must be UTF-8 encodable, got str '{\"k\":[\"\\udfff\"]}'" + LONE + "'\\udfff'"),
    "name a lone surrogate": (lambda s: s.add_prioritized_job(CTX, "\ud800", {}, 1), ValueError,
                              "job name must be UTF-8 encodable, got str '\\ud800'" + LONE + "'\\ud800'"),
    "token a lone surrogate": (lambda s: s.move_to_active(CTX, "\ud800"), ValueError,
                               "lock token must be UTF-8 encodable, got str '\\ud800'" + LONE + "'\\ud800'"),
    "drain token a lone surrogate": (lambda s: s.drain(CTX, "\ud800"), ValueError,
                                     "lock token must be UTF-8 encodable, got str '\\ud800'" + LONE + "'\\ud800'"),
    "bulk add with a lone surrogate last": (
        lambda s: s.add_prioritized_jobs(CTX, [("a", {}, 1), ("b", "\ud800", 1)]), ValueError,
        "job data must be UTF-8 encodable, got str '\"\\ud800\"'" + LONE + "'\\ud800'",
    ),
    "counter 2**53 - 1": (lambda s: s.set_priority_counter(CTX, 2**53 - 1), ValueError,
                          PC + '9,007,199,254,740,991'),
    "counter 2**63 - 2": (lambda s: s.set_priority_counter(CTX, 2**63 - 2), ValueError,
                          PC + '9,223,372,036,854,775,806'),
    "counter True": (lambda s: s.set_priority_counter(CTX, True), TypeError,
                     'counter must be an int, got bool True'),
    "counter numpy float": (lambda s: s.set_priority_counter(CTX, np.float64(3)), TypeError,
                            'counter must be an int, got float64 3.0'),
})

# Custom ids the add refuses: (id, what the message says).
REFUSED_CUSTOM_IDS = [
    ("meta", "key type"), ("pc", "key type"), ("prioritized", "key type"), ("events", "key type"),
    ("x y", "U+0020"), ("\x00", "U+0000"), ("a\nb", "U+000A"), ("a\u00a0b", "U+00A0"),
    ("a\u3000b", "U+3000"), ("a\x9bb", "U+009B"), ("é" * 101, "1..100 characters"),
    (b"a\xffb", "UTF-8"), (b"\xed\xa0\x80", "UTF-8"),  # a stray byte; an encoded surrogate
]
LUA_CASES.update({
    f"add: custom id {job_id!r}": ("addPrioritizedJob", add_args(custom=job_id), fragment)
    for job_id, fragment in REFUSED_CUSTOM_IDS
})
LUA_CASES.update({
    "standard: custom id 'wait'": ("addStandardJob", add_args(custom="wait")[:5], "key type"),
    "standard: custom id with a tab": ("addStandardJob", add_args(custom="a\tb")[:5], "U+0009"),
    "change: job id 'pc'": ("changePriority", ["2", PREFIX, "pc", "0"], "key type"),
    "change: job id 'x y'": ("changePriority", ["2", PREFIX, "x y", "0"], "U+0020"),
    "consume: prefix without a hash tag": ("moveToActive", ["emq:test-queue:", TS, "t", "1000"], "prefix"),
    "consume: prefix with a newline": ("moveToActive", ["emq:{test\nqueue}:", TS, "t", "1000"], "prefix"),
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
    call, error, message = PYTHON_CASES[case]
    before = keyspace()
    with pytest.raises(error) as info:
        call(loaded)
    assert info.value.args == (message,)  # one clear line, exactly
    assert len(message.splitlines()) == 1
    assert keyspace() == before


@pytest.mark.parametrize("case", LUA_CASES, ids=list(LUA_CASES))
def test_lua_scripts_refuse_and_write_nothing(loaded, keyspace, case):
    command, args, fragment = LUA_CASES[case]
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        loaded.run(command, CTX, args)
    assert fragment in str(info.value)
    assert len(str(info.value).splitlines()) == 1  # one clear line
    assert keyspace() == before


def test_lua_accepts_the_valid_counterparts(loaded):
    # The refusals above are about the bad field, not the call shape.
    assert loaded.run("addPrioritizedJob", CTX, add_args(priority=LIMIT)) == "6"
    assert loaded.run("changePriority", CTX, ["2", PREFIX, "6", "1"]) == 0
    assert loaded.run("getCountsPerPriority", CTX, ["0", "1", "2", LIMIT]) == [0, 1, 3, 0]
    # the largest lock and timestamp taken, each one below its refused case
    assert loaded.run("moveToActive", CTX, [PREFIX, str(2**53 - 1), "t", str(2**31 - 1)]) is not None


# -- every KEYS position, the priority counter, one job-id rule -----------------------

def _eval(scripts: Scripts, command: str, keys: list, args: list):
    """Run a script's source with any KEYS, as a caller bypassing Python can."""
    return scripts.client.eval(scripts.sources[command].source, len(keys), *keys, *args)


VALID_ARGS = {
    "addPrioritizedJob": add_args(),
    "addStandardJob": add_args()[:5],
    "moveToActive": [PREFIX, TS, "t", "1000"],
    "changePriority": ["2", PREFIX, "1", "0"],
    "getCountsPerPriority": ["0", "1", "2"],
}
OTHER = QueueContext("other")
KEY_POSITIONS = [
    (command, position, kind)
    for command, count in {"addPrioritizedJob": 9, "addStandardJob": 9, "moveToActive": 11,
                           "changePriority": 7, "getCountsPerPriority": 2}.items()
    for position in range(count)
    for kind in ("other queue", "other type")
]


@pytest.fixture
def foreign(scripts: Scripts, r):
    """Another queue, ``emq:{other}:*``, with each of its keys in use."""
    scripts.add_prioritized_jobs(OTHER, [("x", {}, 1), ("y", {}, 2)])
    scripts.add_standard_job(OTHER, "z", {})
    scripts.move_to_active(OTHER, "them")
    r.hset(Keys.meta(OTHER), "concurrency", 3)
    return scripts


@pytest.mark.parametrize("state", ["empty queue", "loaded queue"])
@pytest.mark.parametrize("command, position, kind", KEY_POSITIONS,
                         ids=[f"{c}-KEYS[{p + 1}]-{k}" for c, p, k in KEY_POSITIONS])
def test_every_script_refuses_a_foreign_key_in_every_position(foreign, keyspace, command, position, kind, state):
    if state == "loaded queue":
        foreign.add_prioritized_jobs(CTX, [("a", {}, 3), ("b", {}, 1)])
        foreign.add_standard_job(CTX, "w", {})
    script = foreign.sources[command]
    keys = script.keys(CTX)
    own_type = script.key_types[position]
    if kind == "other queue":
        keys[position] = getattr(Keys, own_type)(OTHER)
    else:  # a key of this queue, but of another type
        keys[position] = Keys.base(CTX) + next(t for t in ("pc", "meta", "wait") if t != own_type)
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        _eval(foreign, command, keys, VALID_ARGS[command])
    message = str(info.value)
    if command == "getCountsPerPriority" and position == 0 and kind == "other queue":
        # This script takes its queue from KEYS[1]: then KEYS[2] is the odd one out.
        assert "KEYS[2]" in message and Keys.base(OTHER) in message
    else:
        assert f"KEYS[{position + 1}]" in message and keys[position] in message
    assert len(message.splitlines()) == 1
    assert keyspace() == before


def test_consume_on_an_empty_queue_leaves_a_foreign_pc_alone(foreign, keyspace, r):
    # The reported case: KEYS[10] is DELeted when the prioritized set is empty.
    keys = foreign.sources["moveToActive"].keys(CTX)
    keys[9] = Keys.pc(OTHER)
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=r"KEYS\[10\]"):
        _eval(foreign, "moveToActive", keys, VALID_ARGS["moveToActive"])
    assert keyspace() == before and r.exists(Keys.pc(OTHER))


@pytest.mark.parametrize("command", sorted(VALID_ARGS))
def test_every_script_refuses_too_few_or_too_many_keys(foreign, keyspace, command):
    keys = foreign.sources[command].keys(CTX)
    before = keyspace()
    for wrong in (keys[:-1], keys + [Keys.base(CTX) + "extra"]):
        with pytest.raises(redis.ResponseError, match=f"{len(keys)} KEYS"):
            _eval(foreign, command, wrong, VALID_ARGS[command])
    assert keyspace() == before


UNUSABLE_COUNTERS = {
    "not a number": "twelve",
    "a fraction": "1.5",
    "negative": "-1",
    "leading zero": "007",
    "INCR would pass 2^53 - 1": str(2**53 - 1),
    "past INCR's range": str(2**63 - 1),
}


@pytest.mark.parametrize("command, args", [
    ("addPrioritizedJob", add_args()), ("changePriority", ["2", PREFIX, "1", "0"]),
], ids=["add", "change"])
@pytest.mark.parametrize("value", list(UNUSABLE_COUNTERS.values()), ids=list(UNUSABLE_COUNTERS))
def test_lua_refuses_an_unusable_priority_counter_before_writing(loaded, keyspace, r, command, args, value):
    r.set(Keys.pc(CTX), value)
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        loaded.run(command, CTX, args)
    assert "emq:{test-queue}:pc" in str(info.value) and "0..9007199254740990" in str(info.value)
    assert keyspace() == before


def test_lua_refuses_a_priority_counter_of_the_wrong_type(loaded, keyspace, r):
    r.delete(Keys.pc(CTX))
    r.hset(Keys.pc(CTX), "x", 1)
    before = keyspace()
    with pytest.raises(redis.ResponseError, match="is a hash"):
        loaded.run("addPrioritizedJob", CTX, add_args())
    assert keyspace() == before


def test_numpy_ints_set_the_priority_counter(loaded):
    loaded.set_priority_counter(CTX, np.int64(41))
    assert loaded.priority_counter(CTX) == 41
    loaded.set_priority_counter(CTX, np.uint32(2**32 - 1))
    assert loaded.priority_counter(CTX) == 2**32 - 1


# The same job-id rule on both sides: Python's validate_job_id accepts an id
# exactly when the Lua does. Characters are drawn where the rule has edges.
ID_ALPHABET = st.sampled_from(
    list("aZ09-_.é{}:") + [" ", "\t", "\n", "\x00", "\x1f", "\x7f", "\x80", "\x85", "\x9f", "\xa0", "\xa1",
                           "\u1680", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f",
                           "\u3000", "\ufeff", "\U0001f600"]
)
job_ids = st.one_of(
    st.text(ID_ALPHABET, min_size=0, max_size=6),
    st.sampled_from(list(KEY_TYPES) + ["PC", "lock", "0", "12", "007", "x" * 100, "x" * 101, "é" * 100]),
)
live = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


EDGE_IDS = ["a\x85b", "a\u200bb", "\ufeff", "é" * 100, "é" * 101, "pc", "12"]


def _with_edge_examples(test):
    for job_id in EDGE_IDS:
        test = example(job_id=job_id)(test)
    return test


def _python_accepts(job_id: str, existing: bool) -> bool:
    try:
        validate_job_id(job_id, existing=existing)
    except ValueError:
        return False
    return True


def _lua_accepts(scripts: Scripts, job_id: str, existing: bool) -> bool:
    # A new custom id goes through an add, the id of a job to change through changePriority.
    command, args = (("changePriority", ["2", PREFIX, job_id, "0"]) if existing
                     else ("addStandardJob", [PREFIX, job_id, "j", TS, "{}"]))
    try:
        scripts.run(command, CTX, args)
    except redis.ResponseError as error:
        assert "job id" in str(error)
        return False
    return True


@pytest.mark.parametrize("existing", [False, True], ids=["custom id to add", "job id to change"])
@live
@given(job_id=job_ids)
@_with_edge_examples
def test_python_and_lua_accept_the_same_job_ids(scripts, existing, job_id):
    assume(existing or job_id != "")  # "" asks the add for an auto id, as job_id=None does
    assert _lua_accepts(scripts, job_id, existing) == _python_accepts(job_id, existing), repr(job_id)


def test_lua_refuses_every_invisible_format_character_as_python_does(scripts, keyspace):
    """Unicode's format characters (zero-width, bidi controls, tags): each of
    the ranges' ends and each character Python's Unicode calls Cf, refused by
    both sides in one line that names it, with nothing written."""
    import unicodedata

    from echomq_viz.core.keys import FORMAT_CHARACTERS

    codes = {code for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"}
    codes |= {end for pair in FORMAT_CHARACTERS for end in pair}
    before = keyspace()
    for code in sorted(codes):
        job_id = f"a{chr(code)}b"
        assert not _python_accepts(job_id, False), f"U+{code:04X}"
        with pytest.raises(redis.ResponseError) as info:
            scripts.run("addStandardJob", CTX, [PREFIX, job_id, "j", TS, "{}"])
        assert f"invisible format characters (zero-width, bidi controls: nobody could see them), got U+{code:04X} " \
               f"at character 2" in str(info.value)
    assert keyspace() == before
    for neighbour in ("a\u200ab", "a\u2010b", "a\u2065b", "a\ufffcb"):  # beside the ranges: a space, a hyphen, ...
        assert _lua_accepts(scripts, neighbour, False) == _python_accepts(neighbour, False)
