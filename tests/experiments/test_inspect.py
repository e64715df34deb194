"""The read-only queue inspector on real redis-server processes (6.2 and 7.x).

Queues are built either through our real scripts or, for broken states, by
writing the keys directly (the test writes, never the inspector). Expected
tiers, counters and orders are derived from the inputs here, with plain
Python ints, not from :mod:`echomq_viz.core.score` (whose ``stored_score`` is only
used to write the doubles Lua would, and is itself checked against the rule
of the Lua's double arithmetic). The 100,000-job test runs as an ACL user limited to read
commands and proves the server saw no write at all. The last tests cover the
inspector's view: where an app visitor may point it, and what its errors show.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import random
import select
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import echomq_viz
from echomq_viz.experiments.inspection import CHUNK_SIZE, Finding, QueueReport, decode_scores, inspect_queue
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.core.score import PRIORITY_LIMIT, equal_score_groups, priority_scores_array, stored_score
from echomq_viz.redis_side.server import RedisServer, free_tcp_port

from conftest import bullmq, require_bullmq

SPAN = 2**32  # written out here rather than imported: expectations stay independent
BIG = 100_000
BATCH = 10_000
READ_COMMANDS = {  # every command the inspector (and redis-py's handshake) may send
    "type", "exists", "zcard", "zrangebyscore", "get", "llen", "hget", "ping", "hello", "auth",
    "client",
}


def tagged(ctx: QueueContext) -> str:
    """The queue name as it appears in the keys: ``{Q}``."""
    return "{" + ctx.queue + "}"


def codes(report: QueueReport) -> list[str]:
    """The findings' codes, in the report's order."""
    return [f.code for f in report.findings]


def finding(report: QueueReport, code: str) -> Finding:
    """The one finding with this code."""
    hits = [f for f in report.findings if f.code == code]
    assert len(hits) == 1, f"expected one {code!r} finding, got {codes(report)}"
    return hits[0]


def expected_order(priorities: list[int]) -> list[int]:
    """Arrival numbers (1-based) in pop order: priority first, then arrival."""
    return sorted(range(1, len(priorities) + 1), key=lambda k: (priorities[k - 1], k))


def write_job(r, base: str, job_id: str, score: float, priority: object) -> None:
    """A prioritized job written by hand: set member plus job hash."""
    r.zadd(base + "prioritized", {job_id: score})
    r.hset(base + job_id, mapping={"name": "hand", "priority": str(priority)})


# -- a clean queue ---------------------------------------------------------------------


def test_clean_queue_from_our_scripts_decodes_exactly(r, scripts, ctx, redis_server):
    rng = random.Random(4261)
    priorities = [rng.choice([1, 2, 3, 7, PRIORITY_LIMIT]) for _ in range(60)]
    ids = scripts.add_prioritized_jobs(ctx, [(f"j{k}", {"k": k}, p) for k, p in enumerate(priorities)])
    scripts.add_standard_job(ctx, "no-priority", {})
    assert ids == [str(k) for k in range(1, 61)]  # fresh queue: INCR id and INCR pc both give k

    calls: list[tuple[int, int]] = []
    report = inspect_queue(r, tagged(ctx), chunk_size=7, progress=lambda d, t: calls.append((d, t)))

    order = expected_order(priorities)
    assert list(report.job_ids) == [str(k) for k in order]
    assert report.tiers.tolist() == [priorities[k - 1] for k in order]
    assert report.counters.tolist() == order  # counter k for the k-th add
    assert report.scores.dtype == np.float64
    assert [int(s) for s in report.scores] == [priorities[k - 1] * SPAN + k for k in order]
    assert report.tiers.dtype == np.int64 and report.counters.dtype == np.int64
    assert dict(report.tier_counts) == dict(sorted(Counter(priorities).items()))
    assert list(report.tier_counts) == sorted(set(priorities))
    assert (report.total, report.wait_length, report.pc) == (60, 1, 60)
    assert report.max_tier == PRIORITY_LIMIT
    assert report.keys["prioritized"] == Keys.prioritized(ctx) and report.keys["pc"] == Keys.pc(ctx)
    assert report.findings == () and report.clean
    assert report.collisions == () and report.priority_mismatches == () and report.missing_priority == ()
    assert calls == [(d, 60) for d in (7, 14, 21, 28, 35, 42, 49, 56, 60)]

    summary = report.summary()
    assert summary.splitlines()[0].startswith(f"queue {Keys.base(ctx)}  prioritized: 60 jobs in 5 tiers")
    assert "wait: 1 jobs" in summary and "findings: none" in summary
    assert f"pc: 60 (counter 60; {SPAN - 60:,} adds until it wraps to 0)" in summary
    assert summary == inspect_queue(r, tagged(ctx)).summary()  # deterministic

    # The same queue through a QueueContext, a client returning bytes, and one on RESP2
    # (flat replies with scores as text, where RESP3 sends [member, double] pairs).
    via_ctx = inspect_queue(r, ctx)
    raw, resp2 = redis_server.client(decode_responses=False), redis_server.client(protocol=2)
    try:
        via_bytes = inspect_queue(raw, tagged(ctx), chunk_size=11)
        via_resp2 = inspect_queue(resp2, tagged(ctx), chunk_size=np.int64(11))
    finally:
        raw.close()
        resp2.close()
    for other in (via_ctx, via_bytes, via_resp2):
        assert list(other.job_ids) == list(report.job_ids)
        assert np.array_equal(other.scores, report.scores)
        assert other.findings == ()


def test_report_arrays_are_read_only(r, scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [("a", {}, 2), ("b", {}, 1)])
    report = inspect_queue(r, ctx)
    for arr in (report.job_ids, report.scores, report.tiers, report.counters):
        with pytest.raises(ValueError):
            arr[0] = arr[1]
    with pytest.raises(TypeError):
        report.tier_counts[1] = 5  # a read-only mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.findings = ()  # evaluated once, when the report was made


def test_equal_score_run_longer_than_a_chunk_is_read_once(r, ctx):
    base = Keys.base(ctx)
    score = 5 * SPAN  # changePriority with lifo puts every such job here: counter 0
    names = [f"job-{i:02d}" for i in range(25)]
    for name in names:
        write_job(r, base, name, score, 5)
    write_job(r, base, "after", 5 * SPAN + 1, 5)
    report = inspect_queue(r, tagged(ctx), chunk_size=4)
    assert list(report.job_ids) == sorted(names) + ["after"]  # member bytes order, each once
    assert len(report.collisions) == 1
    assert report.collisions[0].job_ids == tuple(sorted(names))
    assert report.collisions[0].fifo_broken is None  # custom ids: arrival unknown


def test_jobs_popped_between_chunks_are_not_skipped(r, scripts, ctx):
    """Index ranges would skip jobs when a worker pops from the front mid-read;
    the score cursor does not."""
    ids = scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, 1 + k % 3) for k in range(40)])
    popped: list[str] = []

    def worker_pops(done: int, total: int) -> None:
        if done == 10:  # after the first chunk, a worker takes the first 5 jobs
            popped.extend(m for m, _ in r.zpopmin(Keys.prioritized(ctx), 5))

    report = inspect_queue(r, ctx, chunk_size=10, progress=worker_pops, check_jobs=False)
    assert len(popped) == 5
    assert report.total == 40 and sorted(report.job_ids) == sorted(ids)


# -- findings on deliberately broken data ------------------------------------------------------


def rounded_at_2_53(c: int) -> int:
    """2**53 + c as a double: the spacing there is 2, ties go to the even mantissa."""
    if c % 2 == 0:
        return 2**53 + c
    down, up = c - 1, c + 1
    return 2**53 + (down if (down // 2) % 2 == 0 else up)


def test_priority_above_the_limit_is_flagged_with_its_collisions(r, ctx):
    base = Keys.base(ctx)
    for c in range(1, 9):
        score = stored_score(2**21, c)  # the double the Lua computes
        assert score == rounded_at_2_53(c)  # c=1 -> +0, 3 -> +4, 5 -> +4, 7 -> +8
        write_job(r, base, str(c), score, 2**21)
    r.set(base + "pc", 8)

    report = inspect_queue(r, tagged(ctx))
    assert report.tiers.tolist() == [2**21] * 8
    assert report.counters.tolist() == [rounded_at_2_53(c) - 2**53 for c in range(1, 9)]
    assert report.over_limit.sum() == 8
    assert not report.plottable.any()  # past MAX_SCORE: update_bands would refuse them
    groups = [(c.job_ids, c.fifo_broken) for c in report.collisions]
    assert groups == [(("3", "4", "5"), False), (("7", "8"), False)]
    assert codes(report) == ["above-limit", "equal-scores"]  # ids in order here: FIFO holds
    above = finding(report, "above-limit")
    assert (above.severity, above.count, above.examples) == ("error", 8, ("1", "2", "3"))
    assert "tier 2,097,152" in above.message
    shared = finding(report, "equal-scores")
    assert (shared.count, shared.examples) == (2, ("3", "4", "5"))


def test_equal_scores_pop_10_before_9(r, ctx):
    base = Keys.base(ctx)
    score = 3 * SPAN + 9  # two jobs given one counter
    write_job(r, base, "9", score, 3)
    write_job(r, base, "10", score, 3)
    write_job(r, base, "11", 3 * SPAN + 11, 3)
    r.set(base + "pc", 11)

    report = inspect_queue(r, tagged(ctx))
    assert list(report.job_ids) == ["10", "9", "11"]  # Redis: equal scores by member bytes
    assert len(report.collisions) == 1
    assert report.collisions[0].job_ids == ("10", "9") and report.collisions[0].fifo_broken is True
    assert codes(report) == ["equal-scores", "fifo-broken"]
    fifo = finding(report, "fifo-broken")
    assert (fifo.severity, fifo.count, fifo.examples) == ("error", 1, ("10", "9"))  # 10 pops before 9


def test_job_hash_priority_that_disagrees_or_is_missing(r, scripts, ctx):
    ids = scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, p) for k, p in enumerate([2, 2, 4, 4, 6])])
    r.hset(Keys.job(ctx, ids[2]), "priority", "7")  # job 3 sits in tier 4
    r.hset(Keys.job(ctx, ids[4]), "priority", "6.0")  # a whole float still agrees
    r.hdel(Keys.job(ctx, ids[3]), "priority")  # job 4 lost its priority field
    r.delete(Keys.job(ctx, ids[1]))  # job 2 lost its whole hash (evicted or deleted)

    report = inspect_queue(r, ctx)
    assert [(m.job_id, m.stored, m.tier) for m in report.priority_mismatches] == [("3", "7", 4)]
    assert report.missing_priority == ("4",) and report.missing_hash == ("2",)
    assert codes(report) == ["priority-mismatch", "missing-hash", "missing-priority"]
    assert finding(report, "priority-mismatch").examples == ("3",)
    assert finding(report, "missing-priority").examples == ("4",)
    gone = finding(report, "missing-hash")
    assert gone.examples == ("2",) and gone.severity == "error" and "maxmemory-policy" in gone.message

    unchecked = inspect_queue(r, ctx, check_jobs=False)
    assert unchecked.findings == () and unchecked.priority_mismatches == ()
    assert "job hashes: not read (check_jobs=False)" in unchecked.summary()


def test_the_summary_names_eight_tiers_and_counts_the_rest(r, scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, k) for k in range(1, 10)])
    line = inspect_queue(r, ctx).summary().splitlines()[1]
    assert line == "jobs per priority: " + "  ".join(f"{k}=1" for k in range(1, 9)) + "  ... (1 more tier)"
    scripts.add_prioritized_job(ctx, "j10", {}, 10)
    assert inspect_queue(r, ctx).summary().splitlines()[1].endswith("8=1  ... (2 more tiers)")


def test_pc_near_the_wrap_counts_the_adds_left(r, scripts, ctx):
    scripts.set_priority_counter(ctx, SPAN - 5)
    scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, 1) for k in range(3)])

    report = inspect_queue(r, ctx)
    assert report.pc == SPAN - 2 and report.adds_until_wrap == 2
    assert report.counters.tolist() == [SPAN - 4, SPAN - 3, SPAN - 2]
    assert codes(report) == ["wrap-ahead"] and report.findings[0].count == 2  # adds left
    assert inspect_queue(r, ctx, wrap_warning=1).findings == ()  # 2 left is above that bar
    assert codes(inspect_queue(r, ctx, wrap_warning=2)) == ["wrap-ahead"]  # as many as the bar: a finding

    # The prediction, checked by doing it: the 2nd add from here gets counter 0.
    first, second = scripts.add_prioritized_jobs(ctx, [("x", {}, 1), ("y", {}, 1)])
    got = dict(r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
    assert got[first] == 1 * SPAN + SPAN - 1 and got[second] == 1 * SPAN + 0


def test_pc_wrapped_while_jobs_wait_is_flagged(r, scripts, ctx):
    scripts.set_priority_counter(ctx, SPAN - 5)
    ids = scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, 1) for k in range(7)])
    # Arrivals 1..7 got counters 2**32-4 .. 2**32-1, then 0, 1, 2: the last three overtake.
    report = inspect_queue(r, ctx)
    assert report.pc == SPAN + 2 and report.pc_counter == 2 and report.wraps == 1
    assert list(report.job_ids) == [ids[k] for k in (4, 5, 6, 0, 1, 2, 3)]
    assert report.ahead_of_pc.sum() == 4
    assert codes(report) == ["counter-ahead-of-pc"]
    ahead = report.findings[0]
    assert (ahead.severity, ahead.count, ahead.examples) == ("error", 4, tuple(ids[:3]))
    assert "wrapped 1x" in report.summary()


def test_pc_reset_or_missing_while_jobs_wait_is_flagged(r, scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [(f"j{k}", {}, 2) for k in range(5)])
    r.set(Keys.pc(ctx), 3)  # lowered: jobs 4 and 5 now sit above it
    lowered = inspect_queue(r, ctx)
    assert codes(lowered) == ["counter-ahead-of-pc"] and lowered.findings[0].count == 2

    r.delete(Keys.pc(ctx))
    missing = inspect_queue(r, ctx)
    assert missing.pc is None and missing.adds_until_wrap == SPAN  # next add: counter 1
    assert codes(missing) == ["counter-ahead-of-pc"] and missing.findings[0].count == 5
    assert "pc: not set" in missing.summary()


@pytest.mark.parametrize("protocol", [2, 3])
def test_scores_no_script_writes_are_flagged(r, redis_server, ctx, protocol):
    base = Keys.base(ctx)
    write_job(r, base, "neg", -1 * SPAN + 5, -1)
    write_job(r, base, "zero", 7, 0)
    write_job(r, base, "frac", SPAN + 0.5, 1)
    write_job(r, base, "inf", math.inf, 1)
    r.set(base + "pc", 7)

    client = redis_server.client(protocol=protocol)  # RESP2 sends "inf" and "4294967296.5" as text
    try:
        report = inspect_queue(client, tagged(ctx))
    finally:
        client.close()
    assert list(report.job_ids) == ["neg", "zero", "frac", "inf"]
    assert report.tiers.tolist()[:3] == [-1, 0, 1] and report.counters.tolist()[:3] == [5, 7, 0]
    assert report.plottable.tolist() == [False, True, False, False]
    # 'inf' decodes to a clamped tier, which disagrees with its stored priority 1.
    assert codes(report) == ["irregular-score", "priority-mismatch", "negative-priority", "tier-zero"]
    assert [f.examples for f in report.findings] == [("frac", "inf"), ("inf",), ("neg",), ("zero",)]
    assert report.priority_mismatches[0].tier == 2**63 - 1


def test_decode_scores_is_exact_beyond_2_53():
    scores = [0.0, float(2**53 - 1), float(2**53 + 2), -1.0, float(-(2**40)), 2.0**70, -(2.0**70),
              1e300, -math.inf, 7.75]
    tiers, counters = decode_scores(scores)
    expected = []
    for s in scores[:7]:
        whole = int(s)  # every one of these doubles is an integer: Python ints are exact
        expected.append((whole // SPAN, whole % SPAN))
    assert list(zip(tiers.tolist(), counters.tolist()))[:7] == expected
    assert (tiers[7], counters[7]) == (2**63 - 1, int(1e300) % SPAN)  # tier clamped to int64
    assert tiers[8] == -(2**63)
    assert (tiers[9], counters[9]) == (0, 7)  # floored, and flagged by the report


def test_equal_score_groups_is_one_helper_for_any_order():
    """The inspector groups a sorted set; the frontier view groups scores in counter order."""
    groups = equal_score_groups([5.0, 2.0, 5.0, 7.0, 2.0, 5.0, math.inf])
    assert [g.tolist() for g in groups] == [[1, 4], [0, 2, 5]]  # by score, indices ascending
    assert equal_score_groups([]) == [] and equal_score_groups([1.0, 2.0]) == []


def test_echomq_name_without_braces_gets_a_hint(r, scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [("a", {}, 1)])
    report = inspect_queue(r, ctx.queue)  # emq:test-queue:, not emq:{test-queue}:
    assert report.total == 0
    assert codes(report) == ["wrong-name"] and report.findings[0].message == report.hint
    assert "'{test-queue}'" in report.hint and "QueueContext('test-queue')" in report.hint
    assert inspect_queue(r, "elsewhere").findings == ()  # nothing anywhere: just empty


def test_empty_queue_reports_zero_progress(r):
    calls = []
    report = inspect_queue(r, "{nothing}", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 0)]
    assert (report.total, report.pc, report.max_tier, dict(report.tier_counts)) == (0, None, 0, {})
    assert report.summary().splitlines()[1] == "jobs per priority: none"


# -- read-only, proven with an ACL user on 100,000 jobs --------------------------------------


def build_big_queue(r, base: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """100,000 jobs as addPrioritizedJob-9 would leave them (arrival k: id k,
    counter k), written in batches; returns (priorities, counters) by arrival."""
    priorities = rng.integers(1, 9, BIG)
    counters = np.arange(1, BIG + 1)
    scores = priority_scores_array(priorities, counters)
    for start in range(0, BIG, BATCH):
        stop = start + BATCH
        with r.pipeline(transaction=False) as pipe:
            pipe.zadd(base + "prioritized", {str(k): int(scores[k - 1]) for k in range(start + 1, stop + 1)})
            for k in range(start + 1, stop + 1):
                pipe.hset(base + str(k), mapping={"name": "bulk", "priority": int(priorities[k - 1])})
            pipe.execute()
    r.set(base + "pc", BIG)
    r.set(base + "id", BIG)
    r.rpush(base + "wait", "plain-1", "plain-2")
    return priorities, counters


def server_state(r) -> dict:
    """What any write would change: the server's dirty counter (every write
    bumps it; persistence is off, so nothing resets it) and the key count."""
    return {"dirty": r.info("persistence")["rdb_changes_since_last_save"], "keys": r.dbsize()}


def dumps(raw, keys: list[str]) -> str:
    digest = hashlib.sha256()
    with raw.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.dump(key)
        for key, value in zip(keys, pipe.execute()):
            digest.update(key.encode() + b"\0" + (value or b"<none>"))
    return digest.hexdigest()


def command_calls(r) -> dict[str, tuple[int, int]]:
    """``{command: (calls, rejected)}`` from INFO commandstats."""
    stats = r.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): (v.get("calls", 0), v.get("rejected_calls", 0))
        for name, v in stats.items()
    }


@pytest.fixture
def quiet_server(redis_server):
    """A server of the same kind, with a client on it, that no other client
    writes to: this process's lease renewal may write to the shared one at
    any moment, and the test below counts every write."""
    with RedisServer(redis_server.executable) as server:
        client = server.client()
        yield server, client
        client.close()


@pytest.mark.slow
def test_read_only_acl_user_inspects_100k_jobs_and_writes_nothing(quiet_server, ctx):
    redis_server, r = quiet_server
    base = Keys.base(ctx)
    priorities, counters = build_big_queue(r, base, np.random.default_rng(2597))
    # ~@read minus anything also in @write; PING for redis-py health checks. The handshake
    # (HELLO, AUTH) needs no permission; CLIENT SETINFO, where the server knows it, may be
    # refused: redis-py ignores that.
    user = "echomq-viz-inspector"
    r.acl_setuser(user, enabled=True, reset=True, passwords=["+read-only-secret"], keys=["*"],
                  commands=["+@read", "-@write", "+ping"])
    reader = redis_server.client(username=user, password="read-only-secret")
    raw = redis_server.client(decode_responses=False)
    try:
        assert reader.ping()
        fixed = [base + t for t in ("prioritized", "pc", "id", "wait")]
        sample = fixed + [base + str(k) for k in range(1, BIG + 1, 997)]
        before = (server_state(r), dumps(raw, sample), command_calls(r))

        calls: list[tuple[int, int]] = []
        report = inspect_queue(reader, tagged(ctx), progress=lambda d, t: calls.append((d, t)))

        after_stats = command_calls(r)
        assert (server_state(r), dumps(raw, sample)) == before[:2]
        ran = {
            name: (calls_ - before[2].get(name, (0, 0))[0], rejected - before[2].get(name, (0, 0))[1])
            for name, (calls_, rejected) in after_stats.items()
        }
        ran = {name: delta for name, delta in ran.items() if delta != (0, 0) and name != "info"}
        assert {name.split("|")[0] for name in ran} <= READ_COMMANDS, ran
        # 10 full chunks, then one query that finds the end of the set
        assert ran["hget"] == (BIG, 0) and ran["zrangebyscore"] == (BIG // CHUNK_SIZE + 1, 0)
        assert all(rejected == 0 for name, (_, rejected) in ran.items() if name != "client")

        # It really read everything, exactly.
        order = np.lexsort((counters, priorities))
        assert report.total == BIG and report.wait_length == 2 and report.pc == BIG
        assert np.array_equal(report.tiers, priorities[order])
        assert np.array_equal(report.counters, counters[order])
        assert report.job_ids[0] == str(int(counters[order][0]))
        assert report.findings == ()
        assert [d for d, _ in calls] == list(range(CHUNK_SIZE, BIG + 1, CHUNK_SIZE))
        assert all(t == BIG for _, t in calls)

        # The user really is read-only: writes and scripts are refused.
        with pytest.raises(redis.exceptions.NoPermissionError):
            reader.zadd(base + "prioritized", {"intruder": 1})
        with pytest.raises(redis.exceptions.NoPermissionError):
            reader.eval("return 1", 0)
        assert r.zscore(base + "prioritized", "intruder") is None
    finally:
        reader.close()
        raw.close()
        r.acl_deluser(user)


# -- a stock BullMQ queue ------------------------------------------------------------------


@pytest.mark.parametrize("prefix, queue", [("emq", "{bq}"), ("bull", "plain")])
def test_stock_bullmq_queue_decodes_to_its_priorities(r, redis_server, prefix, queue):
    require_bullmq()
    priorities = [3, 1, 2, 1, 5, 3, 2_000_000, 1]

    async def add_jobs() -> list[str]:
        q = bullmq.Queue(queue, {"prefix": prefix, "connection": redis_server.url})
        try:
            ids = [(await q.add(f"job-{k}", {"k": k}, {"priority": p})).id
                   for k, p in enumerate(priorities, start=1)]
            await q.add("no-priority", {})  # BullMQ puts it on the wait list
            return ids
        finally:
            await q.close()

    ids = asyncio.run(add_jobs())
    assert ids == [str(k) for k in range(1, len(priorities) + 1)]

    report = inspect_queue(r, queue, prefix)
    order = expected_order(priorities)
    assert report.keys["prioritized"] == f"{prefix}:{queue}:prioritized"
    assert list(report.job_ids) == [str(k) for k in order]
    assert report.tiers.tolist() == [priorities[k - 1] for k in order]
    assert report.counters.tolist() == order
    assert (report.total, report.wait_length, report.pc) == (len(priorities), 1, len(priorities))
    assert report.findings == ()  # BullMQ's hashes store the same priority


# -- bad input -----------------------------------------------------------------------------


@pytest.fixture
def unreachable(tmp_path):
    """A client whose server does not exist: any command would fail to connect.
    Retries off: redis-py's default policy retries with backoff for seconds."""
    client = redis.Redis(unix_socket_path=str(tmp_path / "nobody.sock"), socket_connect_timeout=1,
                         retry=Retry(NoBackoff(), 0))
    yield client
    client.close()


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(queue=""), ValueError, "queue name must not be empty"),
    (dict(queue=5), TypeError, "queue name must be a str, got int 5"),
    (dict(queue="a b"), ValueError,
     "queue name must not contain whitespace or control characters, got ' ' in 'a b'"),
    (dict(queue="q\x00"), ValueError,
     "queue name must not contain whitespace or control characters, got '\\x00' in 'q\\x00'"),
    (dict(queue="q", prefix=""), ValueError, "key prefix must not be empty"),
    (dict(queue="q", prefix=None), TypeError, "key prefix must be a str, got NoneType None"),
    (dict(queue="q", chunk_size=0), ValueError, "chunk_size must be 1 or more, got 0"),
    (dict(queue="q", chunk_size=2.0), TypeError, "chunk_size must be an int, got float 2.0"),
    (dict(queue="q", chunk_size=True), TypeError, "chunk_size must be an int, got bool True"),
    (dict(queue="q", progress="bar"), TypeError,
     "progress must be a callable progress(done, total) or None, got str 'bar'"),
    (dict(queue="q", check_jobs="yes"), TypeError, "check_jobs must be True or False, got str 'yes'"),
    (dict(queue="q", wrap_warning=-1), ValueError, "wrap_warning must be 0 or more, got -1"),
    (dict(queue="q", wrap_warning=np.float64(5)), TypeError, "wrap_warning must be an int, got float64 5.0"),
    (dict(queue=QueueContext("q", "app"), prefix="other"), ValueError,
     "prefix must be the QueueContext's 'app' (or left out), got 'other'"),
])
def test_bad_arguments_are_refused_before_any_command(unreachable, kwargs, error, message):
    # On an unreachable client: a check that ran after the first command would
    # raise ConnectionError instead.
    with pytest.raises(error) as info:
        inspect_queue(unreachable, **kwargs)
    assert str(info.value) == message


def test_numpy_ints_are_accepted_as_sizes(r, scripts, ctx):
    scripts.add_prioritized_jobs(ctx, [("a", {}, 2), ("b", {}, 1), ("c", {}, 1)])
    report = inspect_queue(r, ctx, chunk_size=np.int64(2), wrap_warning=np.uint32(10))
    assert report.total == 3 and report.wrap_warning == 10 and type(report.wrap_warning) is int


def test_not_a_client_is_refused():
    with pytest.raises(TypeError, match="client must be a redis-py client .* got str"):
        inspect_queue("redis://127.0.0.1:6379", "q")


def test_unreachable_server_raises_redis_connection_error(unreachable):
    with pytest.raises(redis.exceptions.ConnectionError, match=r"cannot inspect emq:\{q\}:"):
        inspect_queue(unreachable, "{q}")


def test_keys_of_the_wrong_type_are_refused(r):
    r.hset("emq:{odd}:prioritized", "not", "a zset")
    with pytest.raises(ValueError, match=r"emq:\{odd\}:prioritized is a hash, not a zset"):
        inspect_queue(r, "{odd}")
    r.delete("emq:{odd}:prioritized")
    r.set("emq:{odd}:pc", "twelve")
    with pytest.raises(ValueError, match=r"emq:\{odd\}:pc holds 'twelve', not an integer"):
        inspect_queue(r, "{odd}")


# -- member bytes that are not UTF-8 ---------------------------------------------------------


def test_non_utf8_member_is_a_finding_not_a_crash(r, redis_server, ctx):
    base = Keys.base(ctx).encode()
    raw = redis_server.client(decode_responses=False)
    try:
        raw.zadd(base + b"prioritized", {b"\xff\xfe": 1 * SPAN + 1, b"ok": 1 * SPAN + 2})
        raw.hset(base + b"\xff\xfe", "priority", "1")  # its hash, found by the member's bytes
        raw.hset(base + b"ok", "priority", b"\xfe")  # a priority field that is not UTF-8 either
        raw.set(base + b"pc", 2)
        for client in (r, raw):  # a decoding client used to raise UnicodeDecodeError
            report = inspect_queue(client, ctx)
            assert list(report.job_ids) == ["\\xff\\xfe", "ok"]
            assert report.counters.tolist() == [1, 2]
            assert codes(report) == ["non-utf8-id", "priority-mismatch"]
            assert report.findings[0].examples == ("\\xff\\xfe",)
            assert [(m.job_id, m.stored) for m in report.priority_mismatches] == [("ok", "\\xfe")]
    finally:
        raw.close()


# -- module layout ---------------------------------------------------------------------------


def test_no_module_shadows_the_standard_library():
    """A module named like a stdlib one (inspect.py) is imported instead of it
    when a file of the package runs as a script: dataclasses then crashed."""
    package = Path(echomq_viz.__file__).parent
    assert {p.stem for p in package.glob("*.py")} & sys.stdlib_module_names == set()
    # A script run from the package's folder has that folder first on sys.path.
    run = subprocess.run([sys.executable, "-c", "import dataclasses, numpy, json, inspect"], cwd=package,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr


# -- the inspector view: who may point it where ------------------------------------------------


@pytest.fixture
def listener():
    """A TCP port that listens but is not Redis: shows whether anyone connected."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def accepted(sock: socket.socket) -> bool:
    ready, _, _ = select.select([sock], [], [], 0.2)
    return bool(ready)


@pytest.fixture
def own_mode(monkeypatch, redis_server):
    """The view as `echomq-viz app` runs it: visitors, and only the app's Redis."""
    monkeypatch.setenv("ECHOMQ_VIZ_INSPECT", "own")
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    return redis_server.url


def test_app_mode_inspects_only_its_own_redis_and_never_connects_elsewhere(
        own_mode, scripts, ctx, listener, tmp_path):
    from echomq_viz.widgets import InspectorView

    scripts.add_prioritized_jobs(ctx, [("a", {}, 1), ("b", {}, 2)])
    view = InspectorView(queue=tagged(ctx))
    assert not view.figure.url_enabled and view.figure.url == ""
    assert view.inspect().total == 2  # the app's own Redis (REDIS_URL)

    other = tmp_path / "other.sock"
    texts = []
    for url in (f"redis://127.0.0.1:{listener.getsockname()[1]}/0", f"redis://127.0.0.1:{free_tcp_port()}/0",
                f"unix://{other}", own_mode + "&x=1", "redis://user:pw@example.invalid:6379/0"):
        view.figure.set_state({"url": url})  # a visitor's browser can still send a value to a disabled box
        view.report = None
        view._on_run()
        texts.append(view.status.text)
        assert view.report is None
    assert not accepted(listener), "the view connected to a URL it must refuse"
    assert len(set(texts)) == 1, texts  # open, closed, socket: one answer, no port scan
    assert texts[0].startswith("error: PermissionError: ") and len(texts[0].splitlines()) == 1
    assert "pw" not in texts[0] and "127.0.0.1" not in texts[0]


@pytest.mark.parametrize("mode", ["any", None])
def test_lab_mode_may_inspect_any_url(monkeypatch, mode, redis_server, scripts, ctx):
    from echomq_viz.widgets import InspectorView

    if mode is None:
        monkeypatch.delenv("ECHOMQ_VIZ_INSPECT", raising=False)
    else:
        monkeypatch.setenv("ECHOMQ_VIZ_INSPECT", mode)
    monkeypatch.delenv("REDIS_URL", raising=False)
    scripts.add_prioritized_jobs(ctx, [("a", {}, 1)])
    view = InspectorView(redis_server.url, queue=tagged(ctx))
    assert view.figure.url_enabled
    assert view.inspect().total == 1


@pytest.mark.parametrize("url", [
    "redis://someone:s3cr3t-pw@127.0.0.1:{port}/0",
    "redis://:s3cr3t-pw@127.0.0.1:{port}/0",
    "unix:///nowhere/redis.sock?db=0&password=s3cr3t-pw",
    "rediss://someone:s3cr3t-pw@127.0.0.1:{port}/0",
])
def test_view_errors_never_show_a_password(monkeypatch, url):
    from echomq_viz.widgets import InspectorView

    monkeypatch.delenv("ECHOMQ_VIZ_INSPECT", raising=False)
    view = InspectorView(url.format(port=free_tcp_port()), queue="{q}")
    view._on_run()
    assert view.status.text.startswith("error: ") and "s3cr3t" not in view.status.text
    assert "s3cr3t" not in view.figure.status


@pytest.mark.parametrize("mode", ["own", "0wn"])  # a value it does not know counts as own
def test_app_mode_shows_neither_the_apps_url_nor_its_password(monkeypatch, mode):
    from echomq_viz.widgets import InspectorView

    monkeypatch.setenv("ECHOMQ_VIZ_INSPECT", mode)
    monkeypatch.setenv("REDIS_URL", f"redis://app:s3cr3t-pw@127.0.0.1:{free_tcp_port()}/0")
    view = InspectorView(queue="{q}")
    assert not view.figure.url_enabled and view.figure.url == ""
    view._on_run()  # the app's own Redis is down
    assert view.status.text.startswith("error: RedisUnavailable: cannot reach Redis")
    assert "s3cr3t" not in view.status.text + view.figure.status
    mine = InspectorView(f"redis://me:my-s3cr3t@127.0.0.1:{free_tcp_port()}/0", queue="{q}")
    assert not mine.figure.url_enabled and "s3cr3t" not in mine.figure.url  # a notebook's URL, masked


def test_view_works_for_a_read_only_acl_user(monkeypatch, r, redis_server, scripts, ctx):
    """``+@read -@write`` has no PING: connecting must not need it."""
    from echomq_viz.widgets import InspectorView

    monkeypatch.delenv("ECHOMQ_VIZ_INSPECT", raising=False)
    scripts.add_prioritized_jobs(ctx, [("a", {}, 3), ("b", {}, 1)])
    user = "echomq-viz-view-reader"
    r.acl_setuser(user, enabled=True, reset=True, passwords=["+view-secret"], keys=["*"],
                  commands=["+@read", "-@write"])
    try:
        url = redis_server.url.replace("unix://", f"unix://{user}:view-secret@", 1)
        view = InspectorView(url, queue=tagged(ctx))
        view._on_run()
        assert view.status.text == "" and view.report.total == 2
    finally:
        r.acl_deluser(user)


# -- a priority counter the scripts refuse ---------------------------------------------------


@pytest.mark.parametrize("pc, refused", [
    (0, False), (2**53 - 2, False),  # the largest pc whose next INCR stays exact
    (2**53 - 1, True), (2**63 - 1, True), (-1, True), (-(2**63), True),
])
def test_a_pc_the_scripts_refuse_is_flagged(r, scripts, ctx, pc, refused):
    scripts.add_prioritized_jobs(ctx, [("a", {}, 1)])
    r.set(Keys.pc(ctx), pc)
    report = inspect_queue(r, ctx)
    assert report.pc == pc
    assert ("pc-out-of-range" in codes(report)) == refused
    if refused:
        found = finding(report, "pc-out-of-range")
        assert (found.severity, found.count) == ("error", 1)
        assert found.message == (f"pc = {pc:,} is outside 0..9,007,199,254,740,990 (2⁵³ − 2): the scripts "
                                 "refuse every prioritized add and priority change until it is set back")
    # The finding says what the real scripts do with this pc.
    try:
        scripts.add_prioritized_job(ctx, "next", {}, 1)
    except redis.ResponseError as error:
        assert refused and "0..9007199254740990" in str(error)
    else:
        assert not refused


def test_app_mode_reads_this_pages_demo_queues_but_no_other_visitors(own_mode, redis_server):
    from test_live import DemoProcess

    from echomq_viz.experiments.live import Demo
    from echomq_viz.widgets import InspectorView

    mine = Demo("viz-06-mine", client=redis_server.client())
    mine.add_batch([1, 2, 3])
    with DemoProcess(redis_server.url, name="viz-06-theirs") as theirs:
        theirs.ask("add 2")
        for prefix, queue in (("emq", "{" + theirs.queue + "}"), ("emq:{" + theirs.queue + "}", "x")):
            view = InspectorView(prefix=prefix, queue=queue)
            view._on_run()
            assert view.report is None
            assert view.status.text.startswith("error: PermissionError: this app inspects no other visitor's")
        view = InspectorView(queue="{" + mine.queue + "}")
        assert view.inspect().total == 3
    mine.reset()
