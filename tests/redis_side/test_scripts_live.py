"""The real scripts on a real redis-server (each test runs on 6.2 and 7.x).

The Python score is checked against an independent implementation: the Lua
include itself, executed by Redis.
"""

from __future__ import annotations

import math
import random
import threading

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_bad_input import JSON_NAN_WORDS
from echomq_viz.core.keys import Keys, QueueContext, key_slot
from echomq_viz.redis_side.lua_loader import LUA_DIR
from echomq_viz.core.score import (
    MAX_PRIORITY_COUNTER, PRIORITY_LIMIT, TIER_SPAN, priority_score, split_score, stored_score,
)
from echomq_viz.redis_side.scripts import DrainError, Scripts, encode_job_data

BOUNDARY_COUNTERS = (1, 2**31, 2**32 - 1, 2**32, 2**32 + 1)
live = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def include_probe(r) -> "redis.commands.core.Script":
    """The getPriorityScore include, verbatim, wrapped so any priority can be
    scored by the server: KEYS pc, zset; ARGV priority, member."""
    include = (LUA_DIR / "includes" / "getPriorityScore.lua").read_text()
    return r.register_script(
        "local rcall = redis.call\n" + include + "\n"
        "local score = getPriorityScore(tonumber(ARGV[1]), KEYS[1])\n"
        "rcall('ZADD', KEYS[2], score, ARGV[2])\n"
        "return rcall('ZSCORE', KEYS[2], ARGV[2])\n"
    )


def lua_score(scripts: Scripts, ctx: QueueContext, priority: int, counter: int) -> float:
    """The score Redis stores for a job added through addPrioritizedJob-9
    when INCR pc returns ``counter``."""
    scripts.set_priority_counter(ctx, counter - 1)
    job_id = scripts.add_prioritized_job(ctx, "probe", {}, priority)
    return float(scripts.client.zscore(Keys.prioritized(ctx), job_id))


# -- the score: Python against Lua ----------------------------------------------


@pytest.mark.parametrize("priority", [1, 2, PRIORITY_LIMIT])
@pytest.mark.parametrize("counter", BOUNDARY_COUNTERS)
def test_python_score_equals_lua_score_at_boundaries(scripts, ctx, priority, counter):
    stored = lua_score(scripts, ctx, priority, counter)
    assert stored == priority_score(priority, counter)
    assert split_score(stored) == (priority, counter % TIER_SPAN)


@pytest.mark.parametrize("counter", BOUNDARY_COUNTERS)
def test_priority_zero_through_the_include(r, counter):
    # addPrioritizedJob refuses priority 0 (such jobs belong on the wait
    # list), so tier 0 is checked through the include alone.
    r.set("pc", counter - 1)
    assert float(include_probe(r)(keys=["pc", "z"], args=[0, "m"])) == priority_score(0, counter)


@live
@given(priority=st.integers(1, PRIORITY_LIMIT), counter=st.integers(1, 2**40))
def test_python_score_equals_lua_score_on_samples(scripts, ctx, priority, counter):
    assert lua_score(scripts, ctx, priority, counter) == priority_score(priority, counter)


@pytest.mark.parametrize("priority", [2**21, 2**21 + 1, 2**22])
def test_stored_score_matches_redis_past_the_limit(r, priority):
    probe = include_probe(r)
    counters = list(range(1, 200)) + [2**31 + k for k in range(-3, 4)] + [2**32 - 1, 2**32, 2**32 + 1]
    with r.pipeline(transaction=False) as pipe:
        for n, counter in enumerate(counters):
            pipe.set("pc", counter - 1)
            probe(keys=["pc", "z"], args=[priority, f"m{n}"], client=pipe)
        replies = pipe.execute()[1::2]
    for counter, reply in zip(counters, replies):
        assert float(reply) == stored_score(priority, counter), counter
    # and the rounding is real: some odd counters share a score with a neighbour
    assert len(set(replies)) < len(replies)


def test_the_largest_priority_counter_still_scores_exactly(scripts, ctx, r, keyspace):
    scripts.set_priority_counter(ctx, MAX_PRIORITY_COUNTER)
    job_id = scripts.add_prioritized_job(ctx, "last", {}, PRIORITY_LIMIT)
    assert scripts.priority_counter(ctx) == 2**53 - 1
    assert r.zscore(Keys.prioritized(ctx), job_id) == priority_score(PRIORITY_LIMIT, 2**53 - 1)
    # One more INCR would leave the doubles' exact range: refused before any write.
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=r"0\.\.9007199254740990 \(2\^53 - 2\)"):
        scripts.add_prioritized_job(ctx, "one too many", {}, 1)
    assert keyspace() == before


def test_promoting_due_jobs_checks_the_counter_for_every_incr_it_makes(scripts, ctx, r, keyspace):
    """moveToActive promotes up to 1000 due delayed jobs in one call, one INCR each: it checked the
    counter once, so four due jobs from 2**53 - 2 took it past 2**53, two jobs shared counter 0."""
    for n in range(4):
        scripts.add_delayed_job(ctx, f"due{n}", {}, 1, 1, timestamp=1000 + n)
    scripts.set_priority_counter(ctx, MAX_PRIORITY_COUNTER)  # 2**53 - 2: room for one INCR, not four
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=r"0\.\.9007199254740987 \(2\^53 - 1 - 4\), so the 4 INCRs of "
                                                  r"this call stay exact, got '9007199254740990'"):
        scripts.move_to_active(ctx, "w", timestamp=10_000)
    assert keyspace() == before
    scripts.set_priority_counter(ctx, 2**53 - 1 - 4)  # the most that four INCRs leave exact
    popped = [scripts.move_to_active(ctx, "w", timestamp=10_000) for _ in range(4)]
    assert scripts.priority_counter(ctx) == 2**53 - 1
    assert [split_score(job.score)[1] for job in popped] == [(2**53 - 4 + n) % TIER_SPAN for n in range(4)]


def test_a_retry_checks_the_counter_for_its_own_incr_after_the_promoted_ones(scripts, ctx, keyspace):
    scripts.add_prioritized_job(ctx, "tried", {}, 3)
    job = scripts.move_to_active(ctx, "w", timestamp=1000)
    scripts.add_delayed_job(ctx, "due", {}, 1, 1, timestamp=1000)
    scripts.set_priority_counter(ctx, MAX_PRIORITY_COUNTER)  # one INCR's room, and the retry makes two
    before = keyspace()
    with pytest.raises(redis.ResponseError, match=r"\(2\^53 - 1 - 2\), so the 2 INCRs of this call stay exact"):
        scripts.retry_job(ctx, job.id, "w", timestamp=10_000)
    assert keyspace() == before


def test_past_the_counter_bound_the_lua_counter_part_is_wrong(r):
    # Why the bound is 2**53 - 2: the Lua holds INCR's reply as a double, so
    # INCR giving 2**53 + 1 reads as 2**53 and the counter part comes out 0, not 1.
    r.set("pc", 2**53)
    score = float(include_probe(r)(keys=["pc", "z"], args=[1, "m"]))
    assert r.get("pc") == str(2**53 + 1)
    assert split_score(score) == (1, 0) != (1, (2**53 + 1) % TIER_SPAN)


# -- the consume order ------------------------------------------------------------


def test_thousand_mixed_jobs_come_out_by_priority_then_arrival(scripts, ctx):
    rng = random.Random(20261129)
    priorities = [rng.choice([1, 2, 3, 5, 8, 13, 1000, PRIORITY_LIMIT]) for _ in range(1000)]
    ids = scripts.add_prioritized_jobs(ctx, [(f"job{i}", {"i": i}, p) for i, p in enumerate(priorities)])
    assert ids == [str(i) for i in range(1, 1001)]
    popped = []
    while (job := scripts.move_to_active(ctx, "worker-1", 60_000)) is not None:
        popped.append(job)
    expected = sorted(range(1000), key=lambda i: (priorities[i], i))
    assert [job.id for job in popped] == [ids[i] for i in expected]
    assert [job.priority for job in popped] == sorted(priorities)
    assert [job.data["i"] for job in popped] == expected
    scores = [job.score for job in popped]
    assert scores == sorted(scores) and len(set(scores)) == 1000
    assert scripts.client.llen(Keys.active(ctx)) == 1000


def test_wait_list_beats_every_tier(scripts, ctx):
    scripts.add_prioritized_job(ctx, "urgent", {}, 1)
    waiting = scripts.add_standard_job(ctx, "plain", {})
    first = scripts.move_to_active(ctx, "t")
    assert first.id == waiting and first.source == "wait" and first.score is None
    second = scripts.move_to_active(ctx, "t")
    assert second.name == "urgent" and second.source == "prioritized"


def test_pc_is_deleted_when_a_consume_finds_the_set_empty(scripts, ctx, r):
    for priority in (3, 1, 2):
        scripts.add_prioritized_job(ctx, "j", {}, priority)
    assert scripts.priority_counter(ctx) == 3
    while scripts.move_to_active(ctx, "t"):
        assert r.exists(Keys.pc(ctx))  # still there while jobs came out
    assert not r.exists(Keys.pc(ctx))
    job_id = scripts.add_prioritized_job(ctx, "again", {}, 2)
    assert split_score(r.zscore(Keys.prioritized(ctx), job_id)) == (2, 1)  # counting restarts


def test_consume_locks_and_records_the_job(scripts, ctx, r):
    job_id = scripts.add_prioritized_job(ctx, "email", {"to": "a@b"}, 4, timestamp=1_700_000_000_000)
    job = scripts.move_to_active(ctx, "token-7", 5_000, timestamp=1_700_000_000_123)
    assert (job.id, job.name, job.data, job.priority) == (job_id, "email", {"to": "a@b"}, 4)
    assert job.score == priority_score(4, 1) and job.counter == 1
    assert r.get(Keys.lock(ctx, job_id)) == "token-7"
    assert 0 < r.pttl(Keys.lock(ctx, job_id)) <= 5_000
    assert r.lrange(Keys.active(ctx), 0, -1) == [job_id]
    assert r.zcard(Keys.prioritized(ctx)) == 0
    fields = r.hgetall(Keys.job(ctx, job_id))
    assert fields["processedOn"] == "1700000000123" and fields["ats"] == "1"
    events = [entry[1] for entry in r.xrange(Keys.events(ctx))]
    assert [e["event"] for e in events] == ["added", "waiting", "active"]
    assert events[2] == {"event": "active", "jobId": job_id, "prev": "waiting"}


# -- adding -----------------------------------------------------------------------------


def test_added_job_hash_events_and_marker(scripts, ctx, r):
    job_id = scripts.add_prioritized_job(ctx, "resize", {"w": 640}, 7, timestamp=1_700_000_000_000)
    fields = r.hgetall(Keys.job(ctx, job_id))
    assert fields == {
        "name": "resize", "data": '{"w":640}', "opts": '{"priority":7}',
        "timestamp": "1700000000000", "delay": "0", "priority": "7",
    }
    events = [entry[1] for entry in r.xrange(Keys.events(ctx))]
    assert events == [
        {"event": "added", "jobId": job_id, "name": "resize"},
        {"event": "waiting", "jobId": job_id},
    ]
    assert r.zrange(Keys.marker(ctx), 0, -1, withscores=True) == [("0", 0.0)]
    assert r.get(Keys.id(ctx)) == "1"


def test_paused_queue_gets_no_marker_and_gives_no_job(scripts, ctx, r):
    r.hset(Keys.meta(ctx), "paused", 1)
    job_id = scripts.add_prioritized_job(ctx, "j", {}, 1)
    assert not r.exists(Keys.marker(ctx))
    assert scripts.move_to_active(ctx, "t") is None
    assert r.zscore(Keys.prioritized(ctx), job_id) is not None  # still queued
    r.hdel(Keys.meta(ctx), "paused")
    assert scripts.move_to_active(ctx, "t").id == job_id


def test_duplicate_custom_id_returns_the_existing_job(scripts, ctx, r):
    first = scripts.add_prioritized_job(ctx, "a", {"v": 1}, 3, job_id="order-9")
    again = scripts.add_prioritized_job(ctx, "b", {"v": 2}, 1, job_id="order-9")
    assert first == again == "order-9"
    assert r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True) == [("order-9", priority_score(3, 1))]
    assert r.hget(Keys.job(ctx, "order-9"), "data") == '{"v":1}'
    assert r.get(Keys.id(ctx)) == "2"  # the id counter moves on every add, as in BullMQ
    assert [e[1]["event"] for e in r.xrange(Keys.events(ctx))][-1] == "duplicated"


def test_bulk_add_keeps_arrival_order_across_chunks(scripts, ctx, r):
    ids = scripts.add_prioritized_jobs(ctx, [("j", i, 1) for i in range(25)], chunk_size=7)
    assert [split_score(s)[1] for _, s in scripts.prioritized(ctx)] == list(range(1, 26))
    assert [m for m, _ in scripts.prioritized(ctx)] == ids


# -- change priority and counts --------------------------------------------------


def test_change_priority_rescores_to_the_back_or_front_of_the_tier(scripts, ctx, r):
    a, b, c = (scripts.add_prioritized_job(ctx, n, {}, 2) for n in "abc")
    assert scripts.change_priority(ctx, a, 2)  # back of the same tier: fresh counter 4
    assert [m for m, _ in scripts.prioritized(ctx)] == [b, c, a]
    assert r.zscore(Keys.prioritized(ctx), a) == priority_score(2, 4)
    assert scripts.change_priority(ctx, c, 2, lifo=True)  # front of the tier: counter 0
    assert r.zscore(Keys.prioritized(ctx), c) == 2 * TIER_SPAN
    assert [m for m, _ in scripts.prioritized(ctx)] == [c, b, a]
    assert r.hget(Keys.job(ctx, c), "priority") == "2"


def test_change_priority_moves_a_waiting_job_and_reports_missing(scripts, ctx, r):
    waiting = scripts.add_standard_job(ctx, "w", {})
    assert scripts.change_priority(ctx, waiting, 5)
    assert r.llen(Keys.wait(ctx)) == 0
    assert split_score(r.zscore(Keys.prioritized(ctx), waiting))[0] == 5
    assert scripts.change_priority(ctx, "no-such-job", 5) is False


def test_counts_per_priority(scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [("j", {}, p) for p in (1, 1, 2, 9, 9, 9, PRIORITY_LIMIT)])
    scripts.add_standard_job(ctx, "w", {})
    counts = scripts.counts_per_priority(ctx, [0, 1, 2, 3, 9, PRIORITY_LIMIT])
    assert counts == {0: 1, 1: 2, 2: 1, 3: 0, 9: 3, PRIORITY_LIMIT: 1}


# -- keys, slots and housekeeping ----------------------------------------------------


def test_every_key_of_a_queue_hashes_to_one_slot(scripts, ctx, keyspace):
    scripts.add_prioritized_jobs(ctx, [("j", {}, p) for p in (1, 2, 3)])
    scripts.add_standard_job(ctx, "w", {}, job_id="custom")
    scripts.move_to_active(ctx, "t")
    keys = [key.decode() for key in keyspace()]  # every key written since the flush
    assert len(keys) >= 10
    slots = {key_slot(k) for k in keys}
    assert slots == {redis.crc.key_slot(k.encode()) for k in keys}  # an independent CRC16
    assert len(slots) == 1


def test_reset_deletes_only_its_own_queue(scripts, ctx, r):
    other = QueueContext("other-queue")
    scripts.add_prioritized_job(ctx, "mine", {}, 1)
    scripts.add_prioritized_job(other, "theirs", {}, 1)
    r.set("unrelated", "keep me")
    r.set("emq:{test-queue}", "not inside the queue's key space")
    deleted = scripts.reset(ctx)
    assert deleted >= 5
    assert not list(r.scan_iter(match=Keys.pattern(ctx)))
    assert r.get("unrelated") == "keep me"
    assert r.get("emq:{test-queue}") == "not inside the queue's key space"
    assert r.zcard(Keys.prioritized(other)) == 1


def test_reset_counts_every_key_it_deletes_across_its_batches(scripts, ctx, r):
    """More keys than one batch of UNLINK (500) holds: the count is the keys there were."""
    r.mset({f"{Keys.base(ctx)}extra:{n}": "x" for n in range(1234)})
    scripts.add_prioritized_job(ctx, "mine", {}, 1)
    there = len(list(r.scan_iter(match=Keys.pattern(ctx))))
    assert there > 1234 and scripts.reset(ctx) == there
    assert not list(r.scan_iter(match=Keys.pattern(ctx)))


def test_reset_escapes_glob_characters_in_the_queue_name(scripts, r):
    globby = QueueContext("q*")
    plain = QueueContext("q-plain")
    scripts.add_prioritized_job(globby, "a", {}, 1)
    scripts.add_prioritized_job(plain, "b", {}, 1)
    scripts.reset(globby)
    assert r.zcard(Keys.prioritized(plain)) == 1


def test_scripts_survive_a_script_cache_flush(scripts, ctx, r):
    scripts.add_prioritized_job(ctx, "a", {}, 1)
    r.script_flush()
    assert scripts.add_prioritized_job(ctx, "b", {}, 1) == "2"  # NOSCRIPT -> load -> EVALSHA
    sha = scripts._registered["addPrioritizedJob"].sha
    assert r.script_exists(sha) == [True]


def test_pipelined_drain_matches_one_by_one(scripts, ctx, r):
    rng = random.Random(5)
    priorities = [rng.randint(1, 4) for _ in range(250)]
    scripts.add_prioritized_jobs(ctx, [("j", {}, p) for p in priorities])
    scripts.add_standard_job(ctx, "w", {})
    taken = scripts.drain(ctx, "t", batch_size=64)  # several round trips, the last one overshoots
    expected = ["251"] + [str(i + 1) for i in sorted(range(250), key=lambda i: (priorities[i], i))]
    assert [job.id for job in taken] == expected
    assert not r.exists(Keys.pc(ctx)) and r.llen(Keys.active(ctx)) == 251
    assert scripts.drain(ctx, "t") == []


@pytest.mark.slow
def test_drain_returns_every_job_it_takes_while_others_add_and_consume(redis_server, r, ctx):
    # A producer adds 3,000 jobs one by one while two consumers drain in
    # small batches: a job added between two calls of one pipelined batch is
    # taken (moved to 'active', locked) and must come back to its taker.
    total = 3000
    added: list[str] = []
    taken: dict[str, list[str]] = {"main": [], "second": []}
    producing = threading.Event()
    producing.set()

    def produce() -> None:
        scripts = Scripts(redis_server.client())
        for i in range(total):
            added.append(scripts.add_prioritized_job(ctx, "j", {"i": i}, 1 + i % 3))
        producing.clear()

    def consume(who: str) -> None:
        scripts = Scripts(redis_server.client())
        while producing.is_set() or r.zcard(Keys.prioritized(ctx)):
            taken[who].extend(job.id for job in scripts.drain(ctx, who, batch_size=100))

    threads = [threading.Thread(target=produce), threading.Thread(target=consume, args=("second",))]
    for thread in threads:
        thread.start()
    consume("main")
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    main, second = taken["main"], taken["second"]
    assert len(added) == total
    assert len(main) == len(set(main)) and len(second) == len(set(second))
    assert not set(main) & set(second)  # every job taken by exactly one consumer
    assert set(main) | set(second) == set(added)
    assert sorted(r.lrange(Keys.active(ctx), 0, -1)) == sorted(main + second)
    assert all(r.get(Keys.lock(ctx, job_id)) == "main" for job_id in main[:50])


def test_bulk_add_and_drain_survive_a_script_cache_flush(scripts, ctx, r):
    r.script_flush()
    ids = scripts.add_prioritized_jobs(ctx, [("j", {}, 1)] * 5, chunk_size=2)
    r.script_flush()
    assert [job.id for job in scripts.drain(ctx, "t", batch_size=2)] == ids


def test_drain_returns_the_jobs_taken_around_a_refused_call(scripts, ctx, r):
    # A member whose job hash someone turned into a string: its consume call
    # fails, the calls before and after it take jobs, and the caller gets them all.
    ids = scripts.add_prioritized_jobs(ctx, [("j", {}, 1)] * 3 + [("j", {}, 3)] * 3)
    r.zadd(Keys.prioritized(ctx), {"broken": priority_score(2, 1)})
    r.set(Keys.job(ctx, "broken"), "not a hash")
    with pytest.raises(DrainError) as info:
        scripts.drain(ctx, "t", batch_size=50)
    assert len(str(info.value).splitlines()) == 1 and "WRONGTYPE" in str(info.value)
    assert [job.id for job in info.value.jobs] == ids
    assert set(r.lrange(Keys.active(ctx), 0, -1)) == {*ids, "broken"}


def test_data_beyond_ascii_is_stored_as_utf8_json(scripts, ctx, r):
    data = {"name": "Zoë", "mood": "😀", "quote": "«ok»"}
    job_id = scripts.add_prioritized_job(ctx, "intl", data, 1)
    assert r.hget(Keys.job(ctx, job_id), "data") == '{"name":"Zoë","mood":"😀","quote":"«ok»"}'
    assert scripts.move_to_active(ctx, "t").data == data


def test_a_stream_left_with_replies_unread_closes_its_connection(scripts, ctx, r):
    # An error between sending and reading must not leave replies on a pooled
    # connection, where the next command would read them as its own.
    with pytest.raises(RuntimeError):
        with scripts._stream("moveToActive", ctx) as stream:
            stream.send([stream.call([Keys.base(ctx), 1, "t", 1000])] * 50)
            raise RuntimeError("interrupted")
    assert stream._connection._sock is None
    with scripts._stream("moveToActive", ctx) as stream:
        stream.send([stream.call([Keys.base(ctx), 1, "t", 1000])] * 2)
        assert stream.receive() == [None, None]
    assert stream._connection._sock is not None  # read to the end: kept open for reuse
    assert r.get("missing") is None


# -- job data: the JSON text the scripts store ---------------------------------------------------


def test_encode_job_data_is_the_compact_utf8_json_the_job_hash_holds(scripts, ctx, r):
    data = {"to": "Zoë", "n": [1, 2.5, None]}
    assert encode_job_data(data) == '{"to":"Zoë","n":[1,2.5,null]}'
    job_id = scripts.add_prioritized_job(ctx, "mail", data, 3)
    assert r.hget(Keys.job(ctx, job_id), "data") == encode_job_data(data)


@pytest.mark.parametrize("data, error, message", [
    ({"x": math.nan}, ValueError, "job data must be JSON-serialisable (no NaN/inf), got dict {'x': nan}: "
                                  + JSON_NAN_WORDS),
    ({1, 2}, TypeError, "job data must be JSON-serialisable (no NaN/inf), got set {1, 2}: "
                        "Object of type set is not JSON serializable"),
    (["\ud800"], ValueError, "job data must be UTF-8 encodable, got str '[\"\\ud800\"]' holding the lone "
                              "surrogate '\\ud800'"),
])
def test_encode_job_data_refuses_with_one_line(data, error, message):
    with pytest.raises(error) as info:
        encode_job_data(data)
    assert str(info.value) == message


# -- many consumers at once, and a server killed mid-drain ---------------------------------------------
# (imports of the tests below sit here so this section merges apart from edits above)

import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402

from conftest import server_binary  # noqa: E402
from echomq_viz.experiments.live import seeded_priorities  # noqa: E402
from echomq_viz.redis_side.server import RedisServer  # noqa: E402

CONCURRENT_JOBS = 10_000
CONCURRENT_WAITING = 100
CONSUMERS = 8
LOCK_MS = 600_000  # the locks are checked at the end: they must not expire first


@pytest.mark.slow
def test_eight_consumers_drain_ten_thousand_jobs_exactly_once_in_order(redis_server, r):
    ctx = QueueContext("viz-concurrency")
    scripts = Scripts(r)
    priorities = seeded_priorities(8, CONCURRENT_JOBS - CONCURRENT_WAITING, range(1, 9))
    prioritized_ids = scripts.add_prioritized_jobs(
        ctx, [(f"job-{i}", {"i": i}, p) for i, p in enumerate(priorities)])
    waiting_ids = [scripts.add_standard_job(ctx, f"plain-{i}", {}) for i in range(CONCURRENT_WAITING)]
    everything = prioritized_ids + waiting_ids
    assert len(set(everything)) == CONCURRENT_JOBS

    start = threading.Barrier(CONSUMERS)
    taken: list[list] = [[] for _ in range(CONSUMERS)]
    errors: list[BaseException] = []

    def consume(n: int) -> None:
        client = redis_server.client()
        own = Scripts(client)
        token = f"consumer-{n}"
        try:
            start.wait(30)
            if n % 2:  # half pipeline small batches, half take one job per call
                taken[n].extend(own.drain(ctx, token, LOCK_MS, batch_size=16))
            else:
                while (job := own.move_to_active(ctx, token, LOCK_MS)) is not None:
                    taken[n].append(job)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            client.close()

    threads = [threading.Thread(target=consume, args=(n,), daemon=True) for n in range(CONSUMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a consumer hung"
    assert not errors, errors

    out = [job.id for jobs in taken for job in jobs]
    assert len(out) == CONCURRENT_JOBS and set(out) == set(everything)  # each once: none lost, none twice
    active = r.lrange(Keys.active(ctx), 0, -1)
    assert len(active) == CONCURRENT_JOBS and set(active) == set(everything)
    assert r.zcard(Keys.prioritized(ctx)) == 0 and r.llen(Keys.wait(ctx)) == 0
    assert all(taken), [len(jobs) for jobs in taken]  # all eight really took part

    rank = {job_id: i for i, job_id in enumerate(prioritized_ids)}
    for n, jobs in enumerate(taken):
        keys = []
        for job in jobs:
            if job.score is None:  # the wait list: always before every tier, FIFO
                keys.append((0, int(job.id)))
            else:
                tier, counter = split_score(job.score)
                assert tier == job.priority == priorities[rank[job.id]]
                assert counter == rank[job.id] + 1  # INCR pc in arrival order
                keys.append((tier, counter))
        assert keys == sorted(keys) and len(set(keys)) == len(keys), f"consumer {n} out of order"
    # Every job is locked by the consumer that received it, and by no other.
    owner = {job.id: f"consumer-{n}" for n, jobs in enumerate(taken) for job in jobs}
    with r.pipeline(transaction=False) as pipe:
        for job_id in everything:
            pipe.get(Keys.lock(ctx, job_id))
        locks = pipe.execute()
    assert locks == [owner[job_id] for job_id in everything]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bundled", "system"])
def test_kill_9_in_the_middle_of_a_drain_loses_no_job_with_aof_always(kind):
    binary = server_binary(kind)
    directory = tempfile.mkdtemp(prefix="emq-aof-")
    aof = ("--appendonly", "yes", "--appendfsync", "always")
    server = RedisServer(binary, port=0, extra_args=aof, directory=directory).start()
    restarted = None
    try:
        client = server.client()
        assert client.config_get("appendfsync")["appendfsync"] == "always"
        ctx = QueueContext("viz-aof")
        priorities = seeded_priorities(5, 5000, range(1, 6))
        ids = Scripts(client).add_prioritized_jobs(ctx, [(f"j{i}", {}, p) for i, p in enumerate(priorities)])
        scores = {job_id: float(priority_score(p, i + 1)) for i, (job_id, p) in enumerate(zip(ids, priorities))}
        client.close()

        returned: list[str] = []
        failure: list[BaseException] = []
        halfway = threading.Event()

        def drain() -> None:
            own = server.client(socket_timeout=5, socket_connect_timeout=2)
            consumer = Scripts(own)
            try:
                while (job := consumer.move_to_active(ctx, "crash-test")) is not None:
                    returned.append(job.id)
                    if len(returned) == 1000:
                        halfway.set()
            except BaseException as exc:
                failure.append(exc)
            finally:
                halfway.set()
                own.close()

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        assert halfway.wait(60)
        os.kill(server.pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive()
        assert failure and isinstance(failure[0], redis.ConnectionError), \
            f"the drain was not cut by the kill: {failure} after {len(returned)} jobs"
        assert 1000 <= len(returned) < 5000
        server.stop()  # its supervisor; the directory is kept

        restarted = RedisServer(binary, port=0, extra_args=aof, directory=directory).start()
        after = restarted.client()
        queued = dict(after.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
        active = after.lrange(Keys.active(ctx), 0, -1)
        assert len(active) == len(set(active)) and not set(active) & set(queued)
        assert set(active) | set(queued) == set(ids), "a job is in neither prioritized nor active"
        assert set(returned) <= set(active), "a job handed to the consumer was lost"
        # At most the in-flight call is lost: its job is active but never reached the consumer.
        assert len(set(active) - set(returned)) <= 1
        assert all(queued[job_id] == scores[job_id] for job_id in queued)  # untouched jobs keep their score
        with after.pipeline(transaction=False) as pipe:
            for job_id in active:
                pipe.hget(Keys.job(ctx, job_id), "ats")
            assert set(pipe.execute()) == {"1"}  # each consume persisted whole, never half
        after.close()
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
        shutil.rmtree(directory, ignore_errors=True)
