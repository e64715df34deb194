"""The packed score: this project's own scripts, and stock BullMQ (PyPI ``bullmq``).

Both keep prioritized jobs in one sorted set scored
``priority * 2^32 + (INCR pc) % 2^32`` and take them with ``ZPOPMIN`` inside
the consume script. BullMQ 4 moved here from Bull's list insert.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any, Awaitable, TypeVar

from echomq_viz.core.score import PRIORITY_LIMIT
from echomq_viz.peers.base import Peer, redis_url_of
from echomq_viz.peers.workload import WorkJob

__all__ = ["PackedPeer", "BullMQPeer"]

T = TypeVar("T")


class PackedPeer(Peer):
    """``addPrioritizedJob-9`` and ``moveToActive-11`` from ``lua/``, through :class:`~echomq_viz.experiments.live.Demo`."""

    key = "packed"
    label = "packed score (this project)"
    library = "echomq-viz lua/"
    configured = "nothing: every key is emq:{<queue>}:<type> by design"
    tier_means = "priority=tier (1 is served first)"
    default_names = "emq:{<queue>}:<type>"
    levels = f"{PRIORITY_LIMIT:,} (exact scores up to 2²¹ − 1)"

    def _add(self, job: WorkJob) -> None:
        self.demo.add(job.name, job.tier)

    def _pop(self) -> str | None:
        job = self.demo.pop()
        return None if job is None else job.name

    def default_key(self, key: str) -> str:
        return key


class LoopThread:
    """One event loop on a thread of its own: BullMQ's connections live on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="echomq-viz-bullmq", daemon=True)
        self.thread.start()

    def run(self, coroutine: Awaitable[T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        """End what is still pending on the loop, as ``asyncio.run`` does, then the loop. A task left
        pending (a stopped BullMQ worker's timer or blocking wait, on a busy machine) would be
        reported on stderr when collected, in the notebook's output: "Task was destroyed but it is pending!"."""
        try:
            self.run(_cancel_the_rest(), timeout=10)
        except Exception:  # a task that ignores its cancel for 10 s: stop the loop all the same
            pass
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


async def _cancel_the_rest() -> None:
    """Cancel every other task on this loop and wait for each to end (what each raises is theirs)."""
    rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class BullMQPeer(Peer):
    """Stock BullMQ: ``Queue.add(name, data, {"priority": p})``; a ``Worker``'s ``getNextJob``."""

    key = "bullmq"
    label = "BullMQ (stock client)"
    tier_means = "priority=tier (1 is served first)"
    default_names = "bull:<queue>:<type>"
    levels = PackedPeer.levels + ", the same score"

    def __init__(self, client: Any = None) -> None:
        import bullmq

        super().__init__(client)
        self.library = f"bullmq {bullmq.__version__} (PyPI)"
        self.configured = "prefix='emq', queue name '{viz-10-bullmq@…}' (the braces make it one hash slot)"
        self.name = f"{{{self.tag}}}"
        options = {"connection": redis_url_of(self.client), "prefix": "emq"}
        self._loop = LoopThread()
        self._token = uuid.uuid4().hex

        async def open_both():
            return bullmq.Queue(self.name, options), bullmq.Worker(self.name, None, options)

        self.queue, self.worker = self._loop.run(open_both())

    def _add(self, job: WorkJob) -> None:
        self._loop.run(self.queue.add(job.name, {}, {"priority": job.tier, "removeOnComplete": True}))

    def _pop(self) -> str | None:
        job = self._loop.run(self.worker.getNextJob(self._token))
        return None if job is None else job.name

    def default_key(self, key: str) -> str:
        return "bull:queue:" + key[len(self.prefix):]

    def close(self) -> None:
        try:
            self._loop.run(self.worker.close(force=True))
            self._loop.run(self.queue.close())
        finally:
            self._loop.stop()
