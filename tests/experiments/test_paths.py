"""Every path that scores a prioritized job (echomq_viz.experiments.paths), on real servers.

The claim under test: every script that puts a job with a priority into the
prioritized set scores it with getPriorityScore, so the job gets
``priority * 2**32 + (INCR pc)``: a fresh counter, the back of its tier. The
paths are changePriority-7, the promotion of due delayed jobs by the consume
moveToActive-11 (and by retryJob-10), promote-9, and retryJob-10. Each Lua
script also refuses bad input before its first write, like the others.
"""

from __future__ import annotations

import re
import time

import pytest
import redis

from echomq_viz.experiments import paths
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.live import Demo
from echomq_viz.experiments.paths import CLOCK_START, PATHS, ScoringPaths, include_tree, scoring_scripts
from echomq_viz.redis_side.scripts import MAX_DUE_TIME
from echomq_viz.core.score import PRIORITY_LIMIT, priority_score

PREFIX = "emq:{test-queue}:"
T0 = CLOCK_START
TOKEN = "worker-1"


def scored(scripts, ctx) -> dict[str, float]:
    return dict(scripts.prioritized(ctx))


def waiting(r, ctx) -> list[str]:
    """The wait list, next out first."""
    return list(reversed(r.lrange(Keys.wait(ctx), 0, -1)))


def add_scene(scripts, ctx, priorities=(1, 1, 2, 2, 3, 3, 3)) -> list[str]:
    return scripts.add_prioritized_jobs(ctx, [(f"job-{i}", {"i": i}, p) for i, p in enumerate(priorities)])


# -- changePriority-7 ----------------------------------------------------------------------


def test_change_to_the_same_tier_takes_a_fresh_counter_and_the_back_of_the_tier(scripts, ctx):
    ids = add_scene(scripts, ctx)  # job 5 is the front of tier 3, counter 5
    assert scripts.change_priority(ctx, "5", 3)
    assert scored(scripts, ctx)["5"] == priority_score(3, 8)  # INCR pc gave 8
    assert [job for job, _ in scripts.prioritized(ctx)][-3:] == ["6", "7", "5"]
    assert scripts.priority_counter(ctx) == len(ids) + 1


def test_change_to_a_better_tier_goes_to_the_back_of_that_tier(scripts, ctx):
    add_scene(scripts, ctx)
    assert scripts.change_priority(ctx, "5", 1)
    assert scored(scripts, ctx)["5"] == priority_score(1, 8)
    assert [job for job, _ in scripts.prioritized(ctx)][:3] == ["1", "2", "5"]


def test_change_with_lifo_goes_to_the_front_without_counting(scripts, ctx):
    add_scene(scripts, ctx)
    assert scripts.change_priority(ctx, "5", 1, lifo=True)
    assert scored(scripts, ctx)["5"] == priority_score(1, 0)
    assert scripts.priority_counter(ctx) == 7


def test_change_to_priority_zero_moves_the_job_to_the_wait_list(scripts, ctx, r):
    # BullMQ's changePriority does this; before the port, priority 0 was refused.
    add_scene(scripts, ctx)
    waiting_id = scripts.add_standard_job(ctx, "plain", {})
    assert scripts.change_priority(ctx, "5", 0)
    assert "5" not in scored(scripts, ctx)
    assert waiting(r, ctx) == [waiting_id, "5"]  # the back of the wait list
    assert r.hget(Keys.job(ctx, "5"), "priority") == "0"
    assert scripts.priority_counter(ctx) == 7  # no score, no INCR
    assert scripts.change_priority(ctx, "6", 0, lifo=True)
    assert waiting(r, ctx) == ["6", waiting_id, "5"]  # lifo: the front
    assert scripts.move_to_active(ctx, TOKEN).id == "6"


def test_a_waiting_job_given_a_priority_is_scored_like_an_add(scripts, ctx, r):
    add_scene(scripts, ctx)
    job = scripts.add_standard_job(ctx, "plain", {})
    assert scripts.change_priority(ctx, job, 2)
    assert waiting(r, ctx) == []
    assert scored(scripts, ctx)[job] == priority_score(2, 8)


def test_change_of_a_delayed_job_only_sets_the_field_its_promotion_reads(scripts, ctx, r):
    add_scene(scripts, ctx)
    job = scripts.add_delayed_job(ctx, "later", {}, 3, 1000, timestamp=T0)
    assert scripts.change_priority(ctx, job, 1)
    assert job not in scored(scripts, ctx) and r.zscore(Keys.delayed(ctx), job) is not None
    assert scripts.promote(ctx, job)
    assert scored(scripts, ctx)[job] == priority_score(1, 8)


def test_change_of_a_missing_job_is_false_and_writes_nothing(scripts, ctx, keyspace):
    add_scene(scripts, ctx)
    before = keyspace()
    assert scripts.change_priority(ctx, "99", 0) is False
    assert keyspace() == before


# -- addDelayedJob-6 -----------------------------------------------------------------------------


def test_delayed_jobs_are_scored_by_due_time_and_sequence(scripts, ctx, r):
    a = scripts.add_delayed_job(ctx, "a", {"n": 1}, 2, 5000, timestamp=T0)
    b = scripts.add_delayed_job(ctx, "b", {"n": 2}, 0, 4000, timestamp=T0 + 1000)  # due at the same ms
    c = scripts.add_delayed_job(ctx, "c", {"n": 3}, 1, 1000, timestamp=T0)
    assert scripts.delayed_jobs(ctx) == [(c, T0 + 1000, 0), (a, T0 + 5000, 0), (b, T0 + 5000, 1)]
    assert r.zscore(Keys.delayed(ctx), b) == (T0 + 5000) * 0x1000 + 1
    fields = r.hgetall(Keys.job(ctx, a))
    assert (fields["priority"], fields["delay"], fields["name"]) == ("2", "5000", "a")
    assert r.zscore(Keys.marker(ctx), "1") == T0 + 1000  # the next due time, for BullMQ's workers
    assert r.zcard(Keys.prioritized(ctx)) == 0 and r.get(Keys.pc(ctx)) is None  # not scored yet
    events = [fields["event"] for _, fields in r.xrange(Keys.events(ctx))]
    assert events.count("delayed") == 3


def test_a_millisecond_full_of_delayed_jobs_keeps_its_last_sequence_and_its_due_time(scripts, ctx, r):
    """Past 4,095 jobs due in one millisecond the sequence stays at its last value: the next job
    shares that score (due in that millisecond still), rather than spilling into the next one."""
    due = T0 + 5000
    r.zadd(Keys.delayed(ctx), {"placed-by-hand": (due + 1) * 0x1000 - 1})  # the millisecond's 4,096th
    job = scripts.add_delayed_job(ctx, "one more", {}, 1, 5000, timestamp=T0)
    assert r.zscore(Keys.delayed(ctx), job) == (due + 1) * 0x1000 - 1
    assert (job, due, 0x1000 - 1) in scripts.delayed_jobs(ctx)


# -- the consume promotes due delayed jobs ----------------------------------------------------


def test_the_consume_promotes_due_jobs_to_the_back_of_their_tier(scripts, ctx, r):
    add_scene(scripts, ctx)
    job = scripts.add_delayed_job(ctx, "later", {}, 2, 5000, timestamp=T0)
    assert scripts.move_to_active(ctx, TOKEN, timestamp=T0 + 4999).id == "1"  # not due yet
    assert job not in scored(scripts, ctx)
    assert scripts.move_to_active(ctx, TOKEN, timestamp=T0 + 5000).id == "2"
    assert scored(scripts, ctx)[job] == priority_score(2, 8)
    assert [j for j, _ in scripts.prioritized(ctx)][:3] == ["3", "4", job]
    assert r.zcard(Keys.delayed(ctx)) == 0 and r.hget(Keys.job(ctx, job), "delay") == "0"


def test_a_due_job_without_priority_goes_to_the_wait_list_and_out_first(scripts, ctx):
    add_scene(scripts, ctx)
    job = scripts.add_delayed_job(ctx, "later", {}, 0, 10, timestamp=T0)
    taken = scripts.move_to_active(ctx, TOKEN, timestamp=T0 + 10)
    assert (taken.id, taken.score) == (job, None)
    assert scripts.priority_counter(ctx) == 7


def test_a_paused_queue_promotes_but_hands_out_nothing(scripts, ctx, r):
    job = scripts.add_delayed_job(ctx, "later", {}, 4, 10, timestamp=T0)
    r.hset(Keys.meta(ctx), "paused", 1)
    r.delete(Keys.marker(ctx))
    assert scripts.move_to_active(ctx, TOKEN, timestamp=T0 + 10) is None
    assert scored(scripts, ctx) == {job: priority_score(4, 1)}
    assert r.exists(Keys.marker(ctx)) == 0  # paused: nobody is woken


def test_promotion_takes_at_most_1000_due_jobs_per_consume(scripts, ctx, r):
    for n in range(1001):
        r.zadd(Keys.delayed(ctx), {f"d{n}": T0 * 0x1000 + n})
    scripts.move_to_active(ctx, TOKEN, timestamp=T0)
    assert r.zcard(Keys.delayed(ctx)) == 1
    assert r.llen(Keys.wait(ctx)) + r.llen(Keys.active(ctx)) == 1000  # no hash: priority 0, as in BullMQ


# -- promote-9 ----------------------------------------------------------------------------------


def test_promote_puts_a_delayed_job_at_the_back_of_its_tier(scripts, ctx, r):
    add_scene(scripts, ctx)
    job = scripts.add_delayed_job(ctx, "later", {}, 2, 60_000, timestamp=T0)
    assert scripts.promote(ctx, job)
    assert scored(scripts, ctx)[job] == priority_score(2, 8)
    assert r.zscore(Keys.delayed(ctx), job) is None
    last = r.xrevrange(Keys.events(ctx), count=1)[0][1]
    assert (last["event"], last["jobId"], last["prev"]) == ("waiting", job, "delayed")


def test_promote_of_a_job_not_delayed_is_false_and_writes_nothing(scripts, ctx, keyspace):
    add_scene(scripts, ctx)
    before = keyspace()
    assert scripts.promote(ctx, "3") is False
    assert scripts.run("promote", ctx, [PREFIX, "3"]) == -3
    assert keyspace() == before


# -- retryJob-10 --------------------------------------------------------------------------------


def test_a_retried_job_goes_to_the_back_of_its_tier(scripts, ctx, r):
    add_scene(scripts, ctx)
    job = scripts.move_to_active(ctx, TOKEN)
    assert (job.id, job.counter) == ("1", 1)
    scripts.retry_job(ctx, "1", TOKEN, reason="boom")
    assert scored(scripts, ctx)["1"] == priority_score(1, 8)
    assert [j for j, _ in scripts.prioritized(ctx)][:2] == ["2", "1"]
    fields = r.hgetall(Keys.job(ctx, "1"))
    assert (fields["failedReason"], fields["atm"]) == ("boom", "1")
    assert r.llen(Keys.active(ctx)) == 0 and r.exists(Keys.lock(ctx, "1")) == 0


def test_a_retried_job_without_priority_goes_back_to_the_wait_list(scripts, ctx, r):
    first, second = scripts.add_standard_job(ctx, "a", {}), scripts.add_standard_job(ctx, "b", {})
    scripts.move_to_active(ctx, TOKEN)
    scripts.retry_job(ctx, first, TOKEN)
    assert waiting(r, ctx) == [second, first]
    scripts.move_to_active(ctx, TOKEN)
    scripts.retry_job(ctx, second, TOKEN, lifo=True)
    assert waiting(r, ctx) == [second, first]


def test_retry_promotes_due_delayed_jobs_first(scripts, ctx):
    add_scene(scripts, ctx, (1, 1))
    job = scripts.add_delayed_job(ctx, "later", {}, 1, 10, timestamp=T0)
    scripts.move_to_active(ctx, TOKEN, timestamp=T0)
    scripts.retry_job(ctx, "1", TOKEN, timestamp=T0 + 10)
    assert [j for j, _ in scripts.prioritized(ctx)] == ["2", job, "1"]  # promoted, then retried


@pytest.mark.parametrize("case, reply, reason", [
    ("no such job", -1, "does not exist"), ("lock expired", -2, "lock is missing"),
    ("lock of another worker", -6, "lock holds another token"), ("not active", -3, "not in 'active'"),
])
def test_retry_refusals_write_nothing(scripts, ctx, r, keyspace, case, reply, reason):
    add_scene(scripts, ctx)
    scripts.add_delayed_job(ctx, "due", {}, 2, 10, timestamp=T0)  # due: a retry would promote it
    scripts.move_to_active(ctx, TOKEN, timestamp=T0)  # takes job 1
    job, token = {"no such job": ("99", TOKEN), "lock of another worker": ("1", "intruder"),
                  "not active": ("2", "0")}.get(case, ("1", TOKEN))
    if case == "lock expired":
        r.delete(Keys.lock(ctx, "1"))
    before = keyspace()
    assert scripts.run("retryJob", ctx, [PREFIX, T0 + 10, "LPUSH", job, token, "x"]) == reply
    with pytest.raises(LookupError, match=re.escape(f"{reason} (reply {reply})")):  # why, in words
        scripts.retry_job(ctx, job, token, timestamp=T0 + 10)
    assert keyspace() == before


# -- bad input: one line, nothing written --------------------------------------------------------

LUA_CASES = {
    "delayed: priority -1": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "-1", "10"], "0..2097151"),
    "delayed: priority 2^21": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "2097152", "10"], "0..2097151"),
    "delayed: delay 0": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "1", "0"], "delay must be"),
    "delayed: delay 1.5": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "1", "1.5"], "delay must be"),
    "delayed: due at 2^41": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "1", str(2**41 - T0)], "2^41"),
    "delayed: timestamp 2^41": ("addDelayedJob", [PREFIX, "", "j", 2**41, "{}", "1", "1"], "2^41"),
    "delayed: no delay": ("addDelayedJob", [PREFIX, "", "j", T0, "{}", "1"], "delay must be"),
    "delayed: bad data": ("addDelayedJob", [PREFIX, "", "j", T0, "{", "1", "10"], "JSON"),
    "delayed: empty name": ("addDelayedJob", [PREFIX, "", "", T0, "{}", "1", "10"], "job name"),
    "promote: id 'pc'": ("promote", [PREFIX, "pc"], "key type"),
    "promote: empty id": ("promote", [PREFIX, ""], "job id"),
    "promote: other prefix": ("promote", ["emq:{other}:", "1"], "KEYS[1]"),
    "retry: push SET": ("retryJob", [PREFIX, T0, "SET", "1", TOKEN, ""], "push command"),
    "retry: bad timestamp": ("retryJob", [PREFIX, "soon", "LPUSH", "1", TOKEN, ""], "timestamp"),
    "retry: empty token": ("retryJob", [PREFIX, T0, "LPUSH", "1", "", ""], "lock token"),
    "retry: id 'x y'": ("retryJob", [PREFIX, T0, "LPUSH", "x y", TOKEN, ""], "U+0020"),
    "change: priority 2^21": ("changePriority", ["2097152", PREFIX, "1", "0"], "0..2097151"),
    "change: priority -1": ("changePriority", ["-1", PREFIX, "1", "0"], "0..2097151"),
}


@pytest.fixture
def loaded(scripts, ctx, r):
    """A queue with something in every container: scene, delayed, active and locked."""
    add_scene(scripts, ctx)
    scripts.add_delayed_job(ctx, "later", {}, 2, 10, timestamp=T0)
    scripts.add_standard_job(ctx, "plain", {})
    scripts.move_to_active(ctx, TOKEN, timestamp=T0)
    return scripts


@pytest.mark.parametrize("case", LUA_CASES, ids=list(LUA_CASES))
def test_lua_refuses_bad_arguments_and_writes_nothing(loaded, ctx, keyspace, case):
    command, args, fragment = LUA_CASES[case]
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        loaded.run(command, ctx, args)
    assert fragment in str(info.value) and len(str(info.value).splitlines()) == 1
    assert keyspace() == before


VALID_ARGS = {
    "addDelayedJob": [PREFIX, "", "j", T0, "{}", "1", "10"],
    "promote": [PREFIX, "9"],
    "retryJob": [PREFIX, T0 + 10, "LPUSH", "8", TOKEN, ""],
}
KEY_POSITIONS = [(c, p) for c, n in {"addDelayedJob": 6, "promote": 9, "retryJob": 10}.items() for p in range(n)]


# promote takes its job out of `delayed` before it scores it with INCR pc: a counter it cannot use,
# found only then, would leave the job in neither set. Refused before the first write instead.
@pytest.mark.parametrize("value, says", [("twelve", "0..9007199254740990"), (str(2**53 - 1), "0..9007199254740990"),
                                         ({"x": "1"}, "is a hash")], ids=["not a number", "past 2^53 - 2", "a hash"])
def test_promote_refuses_a_counter_it_cannot_use_and_keeps_the_job_delayed(loaded, ctx, r, keyspace, value, says):
    r.delete(Keys.pc(ctx))
    r.hset(Keys.pc(ctx), mapping=value) if isinstance(value, dict) else r.set(Keys.pc(ctx), value)
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=re.escape(says)):
        loaded.run("promote", ctx, [PREFIX, "8"])  # the loaded queue's delayed job, of priority 2
    assert keyspace() == before and r.zscore(Keys.delayed(ctx), "8") is not None


@pytest.mark.parametrize("command, position", KEY_POSITIONS, ids=[f"{c}-KEYS[{p + 1}]" for c, p in KEY_POSITIONS])
def test_every_new_script_refuses_a_foreign_key_in_every_position(loaded, ctx, keyspace, command, position):
    script = loaded.sources[command]
    for foreign in (getattr(Keys, script.key_types[position])(QueueContext("other")),
                    PREFIX + next(t for t in ("pc", "meta", "wait") if t != script.key_types[position])):
        keys = script.keys(ctx)
        keys[position] = foreign
        before = keyspace()
        with pytest.raises(redis.ResponseError, match=rf"KEYS\[{position + 1}\]"):
            loaded.client.eval(script.source, len(keys), *keys, *VALID_ARGS[command])
        assert keyspace() == before


# The Redis type each queue key holds, as BullMQ keeps them (the loaded queue shows those in use).
REDIS_TYPES = {
    "wait": "list", "paused": "list", "active": "list", "prioritized": "zset", "delayed": "zset",
    "completed": "zset", "marker": "zset", "meta": "hash", "id": "string", "pc": "string",
    "limiter": "string", "events": "stream", "stalled": "set",
}
EVERY_SCRIPT_ARGS = {
    **VALID_ARGS,
    "addPrioritizedJob": [PREFIX, "", "j", T0, "{}", "5"],
    "addStandardJob": [PREFIX, "", "j", T0, "{}"],
    "moveToActive": [PREFIX, T0 + 10, TOKEN, "1000"],
    "changePriority": ["2", PREFIX, "3", "0"],
    "getCountsPerPriority": ["0", "1", "2"],
}


def _make_wrong_type(r, key: str, held: str) -> str:
    """Replace ``key`` with a key of another type than ``held``, as a student may by hand; that type."""
    r.delete(key)
    if held == "hash":
        r.set(key, "by hand")
        return "string"
    r.hset(key, "by", "hand")
    return "hash"


def test_a_loaded_queue_holds_each_key_in_its_type(loaded, ctx, r):
    in_use = {name: r.type(PREFIX + name) for name in REDIS_TYPES if r.exists(PREFIX + name)}
    assert {"active", "prioritized", "delayed", "marker", "id", "pc", "events"} <= set(in_use)  # made by the scripts
    assert in_use == {name: REDIS_TYPES[name] for name in in_use}


@pytest.mark.parametrize("command", sorted(EVERY_SCRIPT_ARGS))
def test_every_script_refuses_a_key_of_another_type_in_every_position_before_writing(
        loaded, ctx, r, keyspace, command):
    script = loaded.sources[command]
    for position, name in enumerate(script.key_types):
        key = PREFIX + name
        saved = r.dump(key)
        wrong = _make_wrong_type(r, key, REDIS_TYPES[name])
        before = keyspace()
        with pytest.raises(redis.ResponseError) as info:
            loaded.run(command, ctx, EVERY_SCRIPT_ARGS[command])
        message = str(info.value)
        assert f"KEYS[{position + 1}] {key} is a {wrong}, not a {REDIS_TYPES[name]}" in message
        assert len(message.splitlines()) == 1
        assert keyspace() == before, (command, name)
        r.delete(key)
        if saved is not None:
            r.restore(key, 0, saved)


@pytest.mark.parametrize("command, args, job", [
    ("changePriority", ["1", PREFIX, "6", "0"], "6"),  # a queued job: it would move, then HSET fail
    ("promote", [PREFIX, "8"], "8"),
    ("moveToActive", [PREFIX, T0 + 10, TOKEN, "1000"], "8"),  # due, so promoted first
    ("retryJob", [PREFIX, T0 + 10, "LPUSH", "9", TOKEN, ""], "9"),  # the active one, locked with TOKEN
], ids=["change", "promote", "consume", "retry"])
def test_a_job_key_of_another_type_is_refused_before_writing(loaded, ctx, r, keyspace, command, args, job):
    r.delete(Keys.job(ctx, job))
    r.rpush(Keys.job(ctx, job), "by hand")
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        loaded.run(command, ctx, args)
    assert f"emq:{{test-queue}}:{job} is a list, not a job hash" in str(info.value)
    assert len(str(info.value).splitlines()) == 1
    assert keyspace() == before


@pytest.mark.parametrize("value", ["many", "1.5", str(2**63 - 1), str(2**53), str(-2**53)])
def test_a_retry_refuses_an_attempt_count_it_cannot_add_one_to_before_writing(loaded, ctx, r, keyspace, value):
    r.hset(Keys.job(ctx, "9"), "atm", value)
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=r"whole number between -2\^53 and 2\^53 in its 'atm' field") as info:
        loaded.run("retryJob", ctx, [PREFIX, T0 + 10, "LPUSH", "9", TOKEN, ""])
    assert len(str(info.value).splitlines()) == 1
    assert keyspace() == before
    r.hset(Keys.job(ctx, "9"), "atm", str(2**53 - 1))  # the largest it takes
    assert loaded.run("retryJob", ctx, [PREFIX, T0 + 10, "LPUSH", "9", TOKEN, ""]) == 0
    assert r.hget(Keys.job(ctx, "9"), "atm") == str(2**53)


@pytest.mark.parametrize("command, args", [
    ("moveToActive", [PREFIX, T0 + 10, TOKEN, "1000"]),
    ("retryJob", [PREFIX, T0 + 10, "LPUSH", "1", TOKEN, ""]),
    ("promote", [PREFIX, "8"]),
], ids=["consume", "retry", "promote"])
@pytest.mark.parametrize("bad", ["-1", "high", "2097152"])
def test_a_bad_stored_priority_is_refused_before_promoting(loaded, ctx, r, keyspace, command, args, bad):
    r.hset(Keys.job(ctx, "8"), "priority", bad)  # job 8 is the delayed one, due at T0 + 10
    before = keyspace()
    with pytest.raises(redis.ResponseError, match="priority") as info:
        loaded.run(command, ctx, args)
    assert "emq:{test-queue}:8" in str(info.value)
    assert keyspace() == before


def test_an_unusable_counter_stops_a_promotion_only_when_one_would_score(loaded, ctx, r, keyspace):
    r.set(Keys.pc(ctx), "twelve")
    before = keyspace()
    with pytest.raises(redis.ResponseError, match="0..9007199254740990"):
        loaded.move_to_active(ctx, TOKEN, timestamp=T0 + 10)  # job 8 (priority 2) is due
    assert keyspace() == before
    assert loaded.move_to_active(ctx, TOKEN, timestamp=T0).id == "1"  # nothing due: it consumes as before


PYTHON_CASES = {
    "change to -1": (lambda s, c: s.change_priority(c, "1", -1), ValueError, "0..2,097,151"),
    "change to 2**21": (lambda s, c: s.change_priority(c, "1", 2**21), ValueError, "2²¹ − 1"),
    "change to True": (lambda s, c: s.change_priority(c, "1", True), TypeError, "int"),
    "change lifo 1": (lambda s, c: s.change_priority(c, "1", 1, lifo=1), TypeError, "lifo"),
    "change job 'pc'": (lambda s, c: s.change_priority(c, "pc", 1), ValueError, "key type"),
    "delay 0": (lambda s, c: s.add_delayed_job(c, "j", {}, 1, 0), ValueError, "delay"),
    "delay 1.5": (lambda s, c: s.add_delayed_job(c, "j", {}, 1, 1.5), TypeError, "delay"),
    "due past 2**41": (lambda s, c: s.add_delayed_job(c, "j", {}, 1, 2**41, timestamp=T0), ValueError, "delay"),
    "timestamp 2**41": (lambda s, c: s.add_delayed_job(c, "j", {}, 1, 1, timestamp=MAX_DUE_TIME), ValueError,
                        "timestamp"),
    "delayed priority -1": (lambda s, c: s.add_delayed_job(c, "j", {}, -1, 10), ValueError, "priority"),
    "delayed empty name": (lambda s, c: s.add_delayed_job(c, "", {}, 1, 10), ValueError, "name"),
    "promote job ''": (lambda s, c: s.promote(c, ""), ValueError, "empty"),
    "retry token ''": (lambda s, c: s.retry_job(c, "1", ""), ValueError, "token"),
    "retry reason 5": (lambda s, c: s.retry_job(c, "1", TOKEN, reason=5), TypeError, "failure reason"),
    "retry reason surrogate": (lambda s, c: s.retry_job(c, "1", TOKEN, reason="\ud800"), ValueError, "surrogate"),
}


@pytest.mark.parametrize("case", PYTHON_CASES, ids=list(PYTHON_CASES))
def test_python_refuses_bad_arguments_and_writes_nothing(loaded, ctx, keyspace, case):
    call, error, fragment = PYTHON_CASES[case]
    before = keyspace()
    with pytest.raises(error) as info:
        call(loaded, ctx)
    assert fragment in str(info.value) and len(str(info.value).splitlines()) == 1
    assert keyspace() == before


# -- every path, as the notebook runs it -------------------------------------------------------

EXPECTED_LANDINGS = {
    "same tier": "back of its tier", "better tier": "back of its tier", "lifo": "front of its tier",
    "no priority": "the wait list", "due": "back of its tier", "promote": "back of its tier",
    "retry": "back of its tier",
}


@pytest.fixture
def demo(r):
    """A demo queue on an emptied server."""
    return Demo("viz-test-paths", client=r)


def test_every_scoring_path_packs_tier_and_counter_the_same_way(demo):
    lab = ScoringPaths(demo)
    assert set(PATHS) == set(EXPECTED_LANDINGS)
    for path in PATHS:
        run = lab.run(path)
        assert run.landing == EXPECTED_LANDINGS[path], (path, run.text())
        if path in ("lifo", "no priority"):
            assert run.pc_after == run.pc_before  # not scored by getPriorityScore
            continue
        # getPriorityScore: one INCR pc, and the score packs (tier, that counter)
        assert run.pc_after == run.pc_before + 1, path
        assert run.after.score == priority_score(run.after.tier, run.pc_after), path
        assert run.after.rank == run.after.peers > 1, path
        assert f"counter {run.pc_after}" in run.text()


def test_a_run_reports_the_queue_before_and_after(demo):
    run = ScoringPaths(demo).run("better tier")
    assert run.queue_before == (("1", 1), ("2", 1), ("3", 2), ("4", 2), ("5", 3), ("6", 3), ("7", 3))
    assert run.queue_after == (("1", 1), ("2", 1), ("5", 1), ("3", 2), ("4", 2), ("6", 3), ("7", 3))
    assert (run.before.tier, run.before.counter, run.before.rank) == (3, 5, 1)


@pytest.mark.parametrize("path, error", [("sideways", ValueError), (3, TypeError)])
def test_an_unknown_path_is_refused_before_touching_redis(demo, path, error):
    demo.add("keep", 1)
    with pytest.raises(error, match="same tier"):
        ScoringPaths(demo).run(path)
    assert [e.job_id for e in demo.entries()] == ["1"]


def test_scoring_paths_needs_a_demo():
    with pytest.raises(TypeError, match="Demo"):
        ScoringPaths("viz-08-paths")


# -- the include graph, as the notebook lists it -----------------------------------------------


def test_the_scripts_reaching_get_priority_score_are_those_that_call_it():
    from echomq_viz.redis_side.lua_loader import load_scripts

    assembled = load_scripts()
    callers = {f"{name}-{s.number_of_keys}" for name, s in assembled.items() if "getPriorityScore(" in s.source}
    assert scoring_scripts() == sorted(callers)
    assert scoring_scripts() == ["addPrioritizedJob-9", "changePriority-7", "moveToActive-11", "promote-9",
                                 "retryJob-10"]


def test_the_include_tree_is_read_from_the_files():
    tree = include_tree()
    assert tree.splitlines()[0] == "includes/getPriorityScore"
    assert "├── includes/addJobWithPriority" in tree and "└── includes/promoteDelayedJobs" in tree
    for script in scoring_scripts():
        assert script in tree
    assert "addStandardJob-9" not in tree and "getCountsPerPriority-2" not in tree
    with pytest.raises(ValueError, match="getPriorityScore"):
        include_tree("includes/nothing")


def test_priority_limit_of_the_new_paths_is_the_exact_range(scripts, ctx):
    job = scripts.add_delayed_job(ctx, "top", {}, PRIORITY_LIMIT, 1, timestamp=T0)
    assert scripts.promote(ctx, job)
    assert scored(scripts, ctx)[job] == priority_score(PRIORITY_LIMIT, 1) < 2**53
    assert paths.SCORER == "includes/getPriorityScore"


# -- stock BullMQ's Job.changePriority, as the notebook calls it ----------------------------------


def test_bullmq_change_priority_helper_rescores_our_job(scripts, ctx, r, redis_server):
    from conftest import require_bullmq

    from echomq_viz.experiments.interop import CLIENT_NAME, bullmq_name
    from echomq_viz.experiments.interop import bullmq_change_priority

    require_bullmq()
    add_scene(scripts, ctx)
    bullmq_change_priority(redis_server.url, bullmq_name(ctx), "emq", "5", 1)
    assert scored(scripts, ctx)["5"] == priority_score(1, 8)
    with pytest.raises(LookupError, match="no job '99'"):
        bullmq_change_priority(redis_server.url, bullmq_name(ctx), "emq", "99", 1)
    with pytest.raises(ValueError, match="0..2,097,151"):
        bullmq_change_priority(redis_server.url, bullmq_name(ctx), "emq", "5", -1)
    deadline = time.monotonic() + 10  # a closed connection leaves the server's list a moment later
    while [c for c in r.client_list() if c.get("name") == CLIENT_NAME]:
        assert time.monotonic() < deadline, "BullMQ connections left open"
        time.sleep(0.01)
