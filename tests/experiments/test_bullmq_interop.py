"""Interop with the stock BullMQ Python client (PyPI ``bullmq``) on a real Redis.

A BullMQ queue named ``{Q}`` with prefix ``emq`` uses exactly our keys
``emq:{Q}:<type>``, so BullMQ and our scripts can share one queue:

- jobs BullMQ adds carry the scores :func:`priority_score` predicts;
- BullMQ and our addPrioritizedJob-9 share the arrival counter ``pc``;
- a stock BullMQ ``Worker`` processes jobs our script added, in
  priority-then-arrival order, and wakes for them when idle (the marker);
- our moveToActive-11 pops BullMQ-added jobs in the order BullMQ's own
  worker processes them.

Every expected order is derived from the batch itself, sorting by
``(priority, arrival)``; every expected score from the formula. Each test
runs on both server kinds (see conftest) and must leave no BullMQ worker,
asyncio task or Redis connection behind: every BullMQ connection carries a
client name, and the server's CLIENT LIST is polled until none is left.

``bullmq`` is a test dependency: without it these tests fail, they do not skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter

import pytest

from echomq_viz.core.keys import KEY_TYPES, Keys, QueueContext
from echomq_viz.core.score import PRIORITY_LIMIT, priority_score, split_score

from conftest import bullmq, require_bullmq

PREFIX = "emq"
CLIENT_TAG = "echomq-viz-bullmq-interop"  # CLIENT SETNAME of every BullMQ connection
N_JOBS = 30
TIERS = (1, 2, 3, 5, PRIORITY_LIMIT)
DEADLINE = 20.0  # seconds: for a batch to be processed, a worker to block, clients to go
WAKE_DEADLINE = 10.0  # an idle worker must take a new job well within this ...
IDLE_BLOCK = 60  # ... while, unwoken, its BZPOPMIN on the marker would block this long
SEEDS = {"scores": 4249, "worker": 2597, "consume": 1929}


# -- helpers -----------------------------------------------------------------------------


def bullmq_name(ctx: QueueContext) -> str:
    """The BullMQ queue name whose keys are ours: the name in its hash tag."""
    return f"{{{ctx.queue}}}"


def bullmq_opts(redis_server, **extra) -> dict:
    url = redis_server.url
    url += ("&" if "?" in url else "?") + f"client_name={CLIENT_TAG}"
    return {"prefix": PREFIX, "connection": url, **extra}


def bullmq_clients(r) -> list[dict]:
    """Server-side connections of BullMQ: named with our tag, or renamed by a
    BullMQ worker to its qualified queue name ``emq:{Q}``."""
    return [
        c for c in r.client_list()
        if c.get("name") == CLIENT_TAG or c.get("name", "").startswith(f"{PREFIX}:{{")
    ]


def seeded_batch(seed: int, tiers: tuple[int, ...] = TIERS, n: int = N_JOBS) -> list[int]:
    """Priorities in arrival order: 1, 2 and 2**21 - 1 always, ties in tiers."""
    rng = random.Random(seed)
    batch = [1, 2, PRIORITY_LIMIT] + rng.choices(tiers, k=n - 3)
    rng.shuffle(batch)
    assert len(set(batch)) < len(batch), "the batch must share tiers to test arrival order"
    return batch


def priority_then_arrival(batch: list[int]) -> list[int]:
    """Indices into the batch in the order a consumer must take them."""
    return sorted(range(len(batch)), key=lambda k: (batch[k], k))


def run_async(r, coro):
    """Run a coroutine in a fresh event loop, then prove it left nothing behind:
    no asyncio task, and (polled with a deadline) no BullMQ connection."""

    async def checked():
        result = await coro
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if others:
            _, pending = await asyncio.wait(others, timeout=DEADLINE)
            assert not pending, f"tasks still running after every worker closed: {pending}"
        return result

    result = asyncio.run(checked())
    deadline = time.monotonic() + DEADLINE
    while bullmq_clients(r):
        if time.monotonic() > deadline:
            pytest.fail(f"BullMQ connections left open: {bullmq_clients(r)}")
        time.sleep(0.01)
    return result


@contextlib.asynccontextmanager
async def open_queue(redis_server, ctx: QueueContext):
    queue = bullmq.Queue(bullmq_name(ctx), bullmq_opts(redis_server))
    try:
        yield queue
    finally:
        await queue.close()


class Recorder:
    """A BullMQ processor that records the jobs in the order it gets them,
    and an event set once ``expected`` jobs have completed (or on any failure)."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.processed: list = []  # bullmq.Job objects, in processing order
        self.completed: list[str] = []
        self.problems: list[tuple] = []
        self.done = asyncio.Event()

    async def process(self, job, token):
        self.processed.append(job)
        return {"seen": job.id}

    def on_completed(self, job, result, *rest) -> None:
        self.completed.append(job.id)
        if len(self.completed) >= self.expected:
            self.done.set()

    def on_problem(self, *args) -> None:
        self.problems.append(args)
        self.done.set()

    async def wait(self, timeout: float = DEADLINE) -> None:
        try:
            await asyncio.wait_for(self.done.wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"after {timeout} s the worker completed {len(self.completed)} of "
                f"{self.expected} jobs (problems: {self.problems})"
            ) from None
        assert not self.problems, f"the worker reported failures/errors: {self.problems}"
        assert len(self.completed) == self.expected


@contextlib.asynccontextmanager
async def running_worker(redis_server, ctx: QueueContext, recorder: Recorder, **opts):
    """A stock BullMQ Worker (concurrency 1) on our queue, always closed on exit."""
    worker = bullmq.Worker(
        bullmq_name(ctx), recorder.process, bullmq_opts(redis_server, concurrency=1, **opts)
    )
    worker.on("completed", recorder.on_completed)
    worker.on("failed", lambda *args: recorder.on_problem("failed", *args))
    worker.on("error", lambda *args: recorder.on_problem("error", *args))
    clean = False
    try:
        yield worker
        clean = True
    finally:
        await worker.close(force=not clean)


# -- the key layout ----------------------------------------------------------------------


def test_bullmq_queue_named_in_braces_uses_our_keys(r, redis_server):
    require_bullmq()
    ctx = QueueContext("interop")

    async def main():
        async with open_queue(redis_server, ctx) as queue:
            return dict(queue.keys), queue.toKey("7")

    theirs, job_key = run_async(r, main())
    assert theirs[""] == Keys.base(ctx)
    assert job_key == Keys.job(ctx, "7")
    for key_type in KEY_TYPES:
        assert theirs[key_type] == getattr(Keys, key_type)(ctx), key_type


# -- (a) BullMQ's adds carry the scores the formula predicts ---------------------------


@pytest.mark.parametrize("method", ["add", "addBulk"])
def test_bullmq_add_stores_the_predicted_scores(r, redis_server, method):
    require_bullmq()
    ctx = QueueContext("interop")
    batch = seeded_batch(SEEDS["scores"])
    names = [f"job-{i}" for i in range(1, len(batch) + 1)]

    async def main():
        async with open_queue(redis_server, ctx) as queue:
            if method == "add":
                jobs = [
                    await queue.add(name, {"arrival": i}, {"priority": p})
                    for i, (name, p) in enumerate(zip(names, batch), start=1)
                ]
            else:
                jobs = await queue.addBulk([
                    {"name": name, "data": {"arrival": i}, "opts": {"priority": p}}
                    for i, (name, p) in enumerate(zip(names, batch), start=1)
                ])
            return [job.id for job in jobs]

    ids = run_async(r, main())
    assert ids == [str(i) for i in range(1, len(batch) + 1)]  # the id counter, INCR per add

    stored = r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True)
    expected = {job_id: priority_score(p, i) for i, (job_id, p) in enumerate(zip(ids, batch), start=1)}
    # float == int is exact in Python: equal only if Redis holds the exact integer
    assert dict(stored) == expected
    assert [job_id for job_id, _ in stored] == [ids[k] for k in priority_then_arrival(batch)]
    for job_id, score in stored:
        i = int(job_id)
        assert split_score(score) == (batch[i - 1], i)
        assert r.hget(Keys.job(ctx, job_id), "priority") == str(batch[i - 1])
    assert r.get(Keys.pc(ctx)) == str(len(batch))
    top = [score for job_id, score in stored if batch[int(job_id) - 1] == PRIORITY_LIMIT]
    assert top and all(s < 2**53 for s in top)


def test_bullmq_and_our_script_share_the_counters(r, scripts, redis_server):
    """Adds alternating between BullMQ and addPrioritizedJob-9 on one queue
    take one arrival counter (pc) and one id counter between them."""
    require_bullmq()
    ctx = QueueContext("interop")
    batch = seeded_batch(SEEDS["scores"] + 1)

    async def main():
        ids = []
        async with open_queue(redis_server, ctx) as queue:
            for i, p in enumerate(batch, start=1):
                if i % 2:
                    ids.append((await queue.add(f"bull-{i}", {"arrival": i}, {"priority": p})).id)
                else:
                    ids.append(scripts.add_prioritized_job(ctx, f"ours-{i}", {"arrival": i}, p))
        return ids

    ids = run_async(r, main())
    assert ids == [str(i) for i in range(1, len(batch) + 1)]
    stored = dict(r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
    assert stored == {str(i): priority_score(p, i) for i, p in enumerate(batch, start=1)}

    # The job hashes: our script writes every field BullMQ's add writes.
    bull_fields = {frozenset(r.hkeys(Keys.job(ctx, str(i)))) for i in range(1, len(batch) + 1, 2)}
    our_fields = {frozenset(r.hkeys(Keys.job(ctx, str(i)))) for i in range(2, len(batch) + 1, 2)}
    assert len(bull_fields) == 1 and len(our_fields) == 1
    missing = set(*bull_fields) - set(*our_fields)
    assert not missing, f"BullMQ's job hash has fields our addPrioritizedJob-9 lacks: {missing}"


# -- (b) a stock BullMQ Worker processes jobs our script added --------------------------


def test_bullmq_worker_processes_our_jobs_in_priority_then_arrival_order(r, scripts, redis_server):
    require_bullmq()
    ctx = QueueContext("interop")
    batch = seeded_batch(SEEDS["worker"])
    ids = [
        scripts.add_prioritized_job(ctx, f"job-{i}", {"arrival": i, "priority": p}, p)
        for i, p in enumerate(batch, start=1)
    ]
    order = priority_then_arrival(batch)

    async def main():
        async with open_queue(redis_server, ctx) as queue:
            counts = await queue.getCountsPerPriority(sorted(set(batch)))
        recorder = Recorder(len(batch))
        async with running_worker(redis_server, ctx, recorder):
            await recorder.wait()
            assert bullmq_clients(r), "the leak check must see the worker's connections"
        return counts, recorder

    counts, recorder = run_async(r, main())
    # BullMQ counts our tiers as we do
    assert counts == {str(p): n for p, n in Counter(batch).items()}
    # the order the processor saw, and what BullMQ read from our job hashes
    assert [job.id for job in recorder.processed] == [ids[k] for k in order]
    assert [(job.name, job.data, job.priority) for job in recorder.processed] == [
        (f"job-{k + 1}", {"arrival": k + 1, "priority": batch[k]}, batch[k]) for k in order
    ]
    assert recorder.completed == [ids[k] for k in order]
    # every job ended completed, with the processor's return value
    assert r.zcard(Keys.prioritized(ctx)) == 0
    assert r.llen(Keys.active(ctx)) == 0
    assert r.zcard(Keys.base(ctx) + "failed") == 0  # BullMQ's failed set (not an EchoMQ key type)
    assert set(r.zrange(Keys.completed(ctx), 0, -1)) == set(ids)
    for job_id in ids:
        assert json.loads(r.hget(Keys.job(ctx, job_id), "returnvalue")) == {"seen": job_id}


def test_idle_bullmq_worker_wakes_for_our_job(r, scripts, redis_server):
    """A worker blocked on BZPOPMIN of the marker takes our job at once: the
    marker our script writes wakes it (without it, it would sleep IDLE_BLOCK s)."""
    require_bullmq()
    ctx = QueueContext("interop")

    async def main():
        recorder = Recorder(1)
        async with running_worker(redis_server, ctx, recorder, drainDelay=IDLE_BLOCK) as worker:
            deadline = time.monotonic() + DEADLINE
            while not any(
                c.get("name") == worker.clientName and c.get("cmd") == "bzpopmin"
                and "b" in c.get("flags", "")
                for c in r.client_list()
            ):
                if time.monotonic() > deadline:
                    raise AssertionError("the BullMQ worker never blocked on the marker")
                await asyncio.sleep(0.01)
            job_id = scripts.add_prioritized_job(ctx, "wake-up", {"x": 1}, 7)
            await recorder.wait(WAKE_DEADLINE)
        return job_id, recorder

    job_id, recorder = run_async(r, main())
    assert [(job.id, job.name, job.data, job.priority) for job in recorder.processed] == [
        (job_id, "wake-up", {"x": 1}, 7)
    ]
    assert r.zrange(Keys.completed(ctx), 0, -1) == [job_id]


# -- (c) our moveToActive pops BullMQ's jobs in BullMQ's worker order -------------------


def test_our_move_to_active_pops_bullmq_jobs_in_bullmq_worker_order(r, scripts, redis_server):
    require_bullmq()
    ours, theirs = QueueContext("interop-ours"), QueueContext("interop-bull")
    # Priority 0 means no priority: BullMQ puts such jobs on the wait list, which
    # both consumers serve first, oldest first; sorting by (priority, arrival)
    # puts them first in arrival order too.
    batch = seeded_batch(SEEDS["consume"], tiers=(0,) + TIERS)
    assert 0 in batch
    order = priority_then_arrival(batch)

    async def add_batch(queue):
        return [
            (await queue.add(f"job-{i}", {"arrival": i}, {"priority": p})).id
            for i, p in enumerate(batch, start=1)
        ]

    async def main():
        async with open_queue(redis_server, ours) as q1, open_queue(redis_server, theirs) as q2:
            ids = await add_batch(q1), await add_batch(q2)
        recorder = Recorder(len(batch))
        async with running_worker(redis_server, theirs, recorder):
            await recorder.wait()
        return ids, recorder

    (our_ids, their_ids), recorder = run_async(r, main())
    expected_ids = [str(i) for i in range(1, len(batch) + 1)]
    assert our_ids == their_ids == expected_ids

    popped = []
    for _ in range(len(batch)):
        job = scripts.move_to_active(ours, "interop-token")
        assert job is not None, f"the queue ran dry after {len(popped)} of {len(batch)} jobs"
        popped.append(job)
    assert scripts.move_to_active(ours, "interop-token") is None
    assert scripts.priority_counter(ours) is None  # the empty pop reset pc

    expected_order = [expected_ids[k] for k in order]
    assert [job.id for job in recorder.processed] == expected_order
    assert [job.id for job in popped] == [job.id for job in recorder.processed]
    assert [job.data for job in popped] == [job.data for job in recorder.processed]
    assert [job.priority for job in popped] == [job.priority for job in recorder.processed]

    # The scores our consumer saw: wait-list jobs have none; prioritized jobs
    # carry their tier and their rank among the prioritized adds (pc counts only those).
    counter = {}
    for i, p in enumerate(batch, start=1):
        if p:
            counter[str(i)] = len(counter) + 1
    for job in popped:
        p = batch[int(job.id) - 1]
        if p == 0:
            assert job.source == "wait" and job.score is None
        else:
            assert job.score == priority_score(p, counter[job.id])
            assert job.counter == counter[job.id]


# -- (d) every path that scores a job, across the two clients ---------------------------------
# The stock client offers Job.changePriority and Job.promote: each is run on jobs our
# scripts added, and ours (echomq_viz.experiments.paths) on jobs BullMQ added. Every score must be
# the formula's: a fresh INCR pc (the back of the tier), or counter 0 with lifo.

CHANGES = (("4", 3, False), ("5", 1, False), ("3", 2, True), ("2", 0, False))  # (job, new priority, lifo)
CHANGE_BATCH = (1, 1, 2, 3, 3)  # jobs 1..5, counters 1..5


def assert_changed_by_the_formula(r, ctx) -> None:
    """The queue after CHANGES on CHANGE_BATCH, whichever client changed it."""
    stored = dict(r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
    assert stored == {
        "1": priority_score(1, 1),
        "5": priority_score(1, 7),  # the back of tier 1: INCR pc gave 7 (job 4 took 6)
        "3": priority_score(2, 0),  # lifo: the front of tier 2, no INCR
        "4": priority_score(3, 6),  # the same tier again: the back of it
    }
    assert r.lrange(Keys.wait(ctx), 0, -1) == ["2"]  # priority 0: the wait list
    assert r.get(Keys.pc(ctx)) == "7"
    for job_id, priority, _ in CHANGES:
        assert r.hget(Keys.job(ctx, job_id), "priority") == str(priority)


def test_bullmq_change_priority_rescores_our_jobs_by_the_formula(r, scripts, redis_server):
    require_bullmq()
    ctx = QueueContext("interop")
    for i, p in enumerate(CHANGE_BATCH, start=1):
        scripts.add_prioritized_job(ctx, f"job-{i}", {"i": i}, p)

    async def main():
        async with open_queue(redis_server, ctx) as queue:
            for job_id, priority, lifo in CHANGES:
                job = await bullmq.Job.fromId(queue, job_id)
                await job.changePriority({"priority": priority, "lifo": lifo})

    run_async(r, main())
    assert_changed_by_the_formula(r, ctx)
    popped = [scripts.move_to_active(ctx, "interop-token").id for _ in CHANGE_BATCH]
    assert popped == ["2", "1", "5", "3", "4"]  # wait list, then (tier, counter)


def test_our_change_priority_rescores_bullmq_jobs_and_its_worker_agrees(r, scripts, redis_server):

    require_bullmq()
    ctx = QueueContext("interop")

    async def add():
        async with open_queue(redis_server, ctx) as queue:
            for i, p in enumerate(CHANGE_BATCH, start=1):
                await queue.add(f"job-{i}", {"i": i}, {"priority": p})

    run_async(r, add())
    for job_id, priority, lifo in CHANGES:
        assert scripts.change_priority(ctx, job_id, priority, lifo=lifo)
    assert_changed_by_the_formula(r, ctx)

    async def work():
        recorder = Recorder(len(CHANGE_BATCH))
        async with running_worker(redis_server, ctx, recorder):
            await recorder.wait()
        return recorder

    recorder = run_async(r, work())
    assert [job.id for job in recorder.processed] == ["2", "1", "5", "3", "4"]
    assert [job.priority for job in recorder.processed] == [0, 1, 1, 2, 3]


def test_delayed_jobs_promoted_across_the_two_clients_join_the_back_of_their_tier(r, scripts, redis_server):
    """BullMQ's delayed job promoted by our promote-9, ours by BullMQ's Job.promote."""

    require_bullmq()
    ctx = QueueContext("interop")
    for i in range(1, 3):
        scripts.add_prioritized_job(ctx, f"job-{i}", {"i": i}, 2)  # counters 1, 2

    async def add():
        async with open_queue(redis_server, ctx) as queue:
            return (await queue.add("theirs", {}, {"priority": 2, "delay": 60_000})).id

    theirs = run_async(r, add())
    ours = scripts.add_delayed_job(ctx, "ours", {}, 2, 60_000)
    due = {job_id: due_ms for job_id, due_ms, _ in scripts.delayed_jobs(ctx)}
    assert set(due) == {theirs, ours}
    assert abs(due[theirs] - due[ours]) < DEADLINE * 1000  # one layout: due time * 0x1000 + sequence
    assert r.zcard(Keys.prioritized(ctx)) == 2  # neither is scored while it waits

    assert scripts.promote(ctx, theirs)

    async def promote_ours():
        async with open_queue(redis_server, ctx) as queue:
            await (await bullmq.Job.fromId(queue, ours)).promote()

    run_async(r, promote_ours())
    stored = dict(r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True))
    assert stored[theirs] == priority_score(2, 3) and stored[ours] == priority_score(2, 4)
    assert [job_id for job_id, _ in r.zrange(Keys.prioritized(ctx), 0, -1, withscores=True)] == [
        "1", "2", theirs, ours]
    assert r.zcard(Keys.delayed(ctx)) == 0
