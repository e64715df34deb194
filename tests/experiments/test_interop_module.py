"""echomq_viz.experiments.interop: the synchronous BullMQ helpers the notebooks call.

test_bullmq_interop.py checks the protocol itself with hand-written asyncio;
this file checks the package's wrappers around it, on both server kinds:
what they return, that they work from inside a running event loop (as in a
Jupyter kernel), that a worker that cannot finish is closed and reported, and
that no BullMQ connection is ever left open.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from echomq_viz.experiments import interop
from echomq_viz.experiments.interop import (
    CLIENT_NAME, ProcessedJob, bullmq_add, bullmq_keys, bullmq_name, bullmq_process_order,
)
from echomq_viz.core.keys import KEY_TYPES, Keys, QueueContext
from echomq_viz.experiments.live import seeded_priorities
from echomq_viz.core.score import PRIORITY_LIMIT, priority_score

PREFIX = "emq"


def bullmq_connections(r) -> list[dict]:
    return [
        c for c in r.client_list()
        if c.get("name") == CLIENT_NAME or c.get("name", "").startswith(f"{PREFIX}:{{")
    ]


def assert_no_bullmq_left(r, deadline: float = 10.0) -> None:
    """Polled: the server may log a closed connection out a moment later."""
    end = time.monotonic() + deadline
    while bullmq_connections(r):
        if time.monotonic() > end:
            pytest.fail(f"BullMQ connections left open: {bullmq_connections(r)}")
        time.sleep(0.01)


@pytest.fixture
def ctx() -> QueueContext:
    return QueueContext("interop-module")


def test_bullmq_keys_are_our_keys(r, redis_server, ctx):
    theirs = bullmq_keys(redis_server.url, bullmq_name(ctx), PREFIX)
    assert bullmq_name(ctx) == "{interop-module}"
    assert theirs[""] == Keys.base(ctx)
    assert {t: theirs[t] for t in KEY_TYPES} == Keys.all_types(ctx)
    assert_no_bullmq_left(r)


def test_bullmq_add_gives_the_predicted_scores(r, redis_server, ctx):
    priorities = [3, 1, 0, 3, PRIORITY_LIMIT, 2, 1, 0, 2]
    ids = bullmq_add(redis_server.url, bullmq_name(ctx), PREFIX,
                     [(f"job-{i}", {"i": i}, p) for i, p in enumerate(priorities)])
    assert ids == [str(n) for n in range(1, len(priorities) + 1)]
    # pc counts prioritized adds only; priority 0 goes to the wait list
    expected, counter = {}, 0
    for job_id, p in zip(ids, priorities):
        if p:
            counter += 1
            expected[job_id] = priority_score(p, counter)
    assert dict(r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True)) == expected
    assert r.lrange(Keys.wait(ctx), 0, -1) == ["8", "3"]  # LPUSH: newest at the head
    assert_no_bullmq_left(r)


def test_worker_processes_our_jobs_in_priority_then_arrival_order(r, scripts, redis_server, ctx):
    priorities = seeded_priorities(7, 20, (1, 2, 3, PRIORITY_LIMIT))
    ids = scripts.add_prioritized_jobs(ctx, [(f"job-{i}", {"i": i}, p) for i, p in enumerate(priorities)])
    order = sorted(range(len(priorities)), key=lambda i: (priorities[i], i))

    processed = bullmq_process_order(redis_server.url, bullmq_name(ctx), PREFIX)
    assert processed == [ProcessedJob(ids[i], f"job-{i}", {"i": i}, priorities[i]) for i in order]
    assert r.zcard(Keys.prioritized(ctx)) == 0 and r.llen(Keys.active(ctx)) == 0
    assert set(r.zrange(Keys.completed(ctx), 0, -1)) == set(ids)
    assert_no_bullmq_left(r)


def test_worker_serves_the_wait_list_first_and_honours_count(r, scripts, redis_server, ctx):
    first = scripts.add_prioritized_job(ctx, "prio", {}, 1)
    waiting = scripts.add_standard_job(ctx, "plain", {})
    last = scripts.add_prioritized_job(ctx, "prio-2", {}, 1)
    processed = bullmq_process_order(redis_server.url, bullmq_name(ctx), PREFIX, count=2)
    assert [job.id for job in processed[:2]] == [waiting, first]
    # a third job may be taken while the worker closes; whatever it took, it finished
    assert r.llen(Keys.active(ctx)) == 0
    assert set(r.zrange(Keys.completed(ctx), 0, -1)) == {job.id for job in processed}
    assert {job.id for job in processed} <= {first, waiting, last}
    assert_no_bullmq_left(r)


def test_empty_queue_needs_no_worker(r, redis_server, ctx):
    assert bullmq_process_order(redis_server.url, bullmq_name(ctx), PREFIX) == []
    assert_no_bullmq_left(r)


@pytest.mark.slow  # waits out its 3 s timeout
def test_a_worker_that_cannot_finish_times_out_and_is_closed(r, scripts, redis_server, ctx):
    scripts.add_prioritized_job(ctx, "only", {}, 4)
    started = time.monotonic()
    # 3 s, not 0.5: the same timeout bounds the worker's start and its wind-down
    # (run_sync, _settle), and with 0.5 s the test failed once on a loaded machine
    with pytest.raises(TimeoutError, match="completed 1 of 3 jobs"):
        bullmq_process_order(redis_server.url, bullmq_name(ctx), PREFIX, timeout=3, count=3)
    assert time.monotonic() - started < 30  # it gave up and closed the worker, not hung
    assert_no_bullmq_left(r)


def test_helpers_work_inside_a_running_event_loop(r, redis_server, ctx):
    # A Jupyter kernel runs cells while its loop runs: asyncio.run would refuse.
    async def cell():
        asyncio.get_running_loop()
        return bullmq_add(redis_server.url, bullmq_name(ctx), PREFIX, [("a", {}, 5), ("b", {}, 2)])

    assert asyncio.run(cell()) == ["1", "2"]
    assert r.zrange(Keys.prioritized(ctx), 0, -1) == ["2", "1"]
    assert_no_bullmq_left(r)


@pytest.mark.parametrize("call, error, message", [
    (lambda url, q: bullmq_add(url, q, PREFIX, [("a", {}, 1), ("b", {})]), ValueError,
     "each job must be a (name, data, priority) tuple, got tuple ('b', {})"),
    (lambda url, q: bullmq_add(url, q, PREFIX, ["abc"]), TypeError,
     "each job must be a (name, data, priority) tuple, got str 'abc'"),
    (lambda url, q: bullmq_add(url, q, "", []), ValueError, "prefix must not be empty"),
    (lambda url, q: bullmq_keys(url, b"{q}", PREFIX), TypeError, "queue must be a str, got bytes b'{q}'"),
    (lambda url, q: bullmq_process_order(url, q, PREFIX, count=-1), ValueError, "count must be 0 or more, got -1"),
], ids=["short tuple", "a str", "empty prefix", "bytes queue", "count -1"])
def test_bad_arguments_are_refused_before_anything_is_sent(r, redis_server, keyspace, ctx, call, error, message):
    with pytest.raises(error) as info:
        call(redis_server.url, bullmq_name(ctx))
    assert str(info.value) == message
    assert keyspace() == {}


def test_redis_url_and_client_name(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6390/2")
    assert interop.redis_url() == "redis://127.0.0.1:6390/2"
    assert interop._named("unix:///tmp/x/redis.sock?db=0&client_name=old") == (
        f"unix:///tmp/x/redis.sock?db=0&client_name={CLIENT_NAME}"
    )
    assert interop._named("redis://h:1/0").endswith(f"/0?client_name={CLIENT_NAME}")
