"""The job functions notebook 10's RQ and huey workers run (imported by ``rq worker`` and ``huey_consumer``).

Each appends the job's name to ``viz10:done`` on the worker's Redis, so the
order a worker ran the jobs in can be read back. The huey instance is
``PriorityRedisHuey`` with its defaults, on the unix socket named by
``ECHOMQ_VIZ_PEER_SOCKET``. :class:`DiesAfterDequeue` is RQ's own worker, killed
(SIGKILL, as by the kernel's out-of-memory killer or a lost machine) the moment its pop
returns a job: what such a death leaves behind is read in notebook 10.
"""

from __future__ import annotations

import os
import signal

from huey import PriorityRedisHuey
from rq import Worker

__all__ = ["record", "huey", "huey_record", "record_huey", "hold_huey", "huey_hold", "DONE", "STARTED",
           "DiesAfterDequeue"]

DONE = "viz10:done"
STARTED = "viz10:started"
SOCKET = os.environ.get("ECHOMQ_VIZ_PEER_SOCKET") or "/nonexistent/redis.sock"


def record(name: str) -> None:
    """RQ's job: the worker's own connection appends the name."""
    from rq import get_current_job

    get_current_job().connection.rpush(DONE, name)


huey = PriorityRedisHuey("viz", url=f"unix://{SOCKET}")


def record_huey(name: str) -> None:
    """huey's task body; a producer registers the same function, as huey names a task by its module."""
    huey.storage.conn.rpush(DONE, name)


huey_record = huey.task(name="record")(record_huey)


def hold_huey(name: str, seconds: float) -> None:
    """A task that says it started, holds its consumer ``seconds``, then records its name."""
    import time

    huey.storage.conn.rpush(STARTED, name)
    time.sleep(seconds)
    huey.storage.conn.rpush(DONE, name)


huey_hold = huey.task(name="hold")(hold_huey)


class DiesAfterDequeue(Worker):
    """``rq worker --worker-class echomq_viz.peers.worker_apps.DiesAfterDequeue``: RQ's worker,
    killed by SIGKILL as soon as its pop (a ``BLPOP`` over its queues) returned a job."""

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        found = super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        if found is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return found
