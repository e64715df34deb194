"""RQ (PyPI ``rq``): one queue per level, a worker that listens in order.

RQ has no priorities: its users make one queue per level and start
``Worker([high, mid, low])``, which takes from the first non-empty queue.
Here the worker's own dequeue, ``Queue.dequeue_any``, takes the jobs (no
worker process, so no worker keys). RQ names its keys by class attributes;
subclasses of ``Queue`` and ``Job`` set them inside this kernel's demo queue,
so the global ``rq:queues`` set becomes ``emq:{viz-10-rq@…}:queues``.
"""

from __future__ import annotations

from typing import Any

from echomq_viz.peers.base import Peer, bytes_client
from echomq_viz.peers.workload import TIERS, WorkJob

__all__ = ["RQPeer", "LEVELS"]

LEVELS = ("high", "mid", "low")  # the queues for tiers 1, 2, 3, in the worker's listening order


def record(name: str) -> str:
    """The job function: a worker would run it; here it names the job."""
    return name


class RQPeer(Peer):
    key = "rq"
    label = "RQ, 3 queues"
    tier_means = "queue: tier " + ", ".join(f"{tier} -> {level!r}" for tier, level in zip(TIERS, LEVELS))
    default_names = "rq:queue:<name>, rq:job:<id>, rq:queues"

    requires = "rq"

    def __init__(self, client: Any = None) -> None:
        super().__init__(client)  # rq is imported there, or one clear line says how to install it
        from rq.job import Job
        from rq.queue import Queue

        prefix = self.prefix

        class DemoJob(Job):
            redis_job_namespace_prefix = prefix + "job:"

        class DemoQueue(Queue):
            job_class = DemoJob
            redis_queue_namespace_prefix = prefix + "queue:"
            redis_queues_keys = prefix + "queues"

        self.configured = ("Queue.redis_queue_namespace_prefix, Queue.redis_queues_keys and "
                           "Job.redis_job_namespace_prefix set to 'emq:{viz-10-rq@…}:…' in subclasses")
        self.connection = bytes_client(self.client)  # RQ stores pickles
        self.job_class, self.queue_class = DemoJob, DemoQueue
        self.queues = [DemoQueue(level, connection=self.connection) for level in LEVELS]
        self.levels = "one per queue the worker listens to"

    def _queue_for(self, tier: int):
        return self.queues[TIERS.index(tier)]

    def _add(self, job: WorkJob) -> None:
        self._queue_for(job.tier).enqueue(record, job.name, job_id=None, result_ttl=0)

    def probe_levels(self, count: int = 10) -> int:
        """As RQ's users would: one queue per level, the worker listening in order."""
        tiers = self.queues
        self.queues = [self.queue_class(f"level-{level}", connection=self.connection)
                       for level in range(1, count + 1)]
        try:
            return super().probe_levels(count)
        finally:
            self.queues = tiers

    def _add_level(self, name: str, level: int, count: int) -> None:
        self.queues[level - 1].enqueue(record, name, result_ttl=0)

    def _pop(self) -> str | None:
        found = self.queue_class.dequeue_any(self.queues, None, connection=self.connection,
                                             job_class=self.job_class)
        return None if found is None else found[0].args[0]

    def default_key(self, key: str) -> str:
        return "rq:" + key[len(self.prefix):]

    def close(self) -> None:
        self.connection.connection_pool.disconnect()
