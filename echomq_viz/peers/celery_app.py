"""The Celery app notebook 10's Celery workers run (``celery -A echomq_viz.peers.celery_app worker``).

Configured only through Celery's own settings, read as JSON from the
environment variable ``ECHOMQ_VIZ_CELERY`` (the notebook shows each one and
where Celery documents it). Its one task, ``record``, appends the job's name
to the list :data:`DONE` on the broker's Redis (the private socket
``ECHOMQ_VIZ_PEER_SOCKET``, or ``ECHOMQ_VIZ_PEER_URL`` on a cluster node), so
the order the worker ran the jobs in can be read back. It may sleep first, or
wait at a gate (a file the producer removes), to hold the worker busy while
the producer sends more.
"""

from __future__ import annotations

import json
import os
import time

from celery import Celery

__all__ = ["app", "record", "DONE", "STARTED"]

DONE = "viz10:done"
STARTED = "viz10:started"  # a gated task says here that it runs, before it waits
GATE_LIMIT_S = 30.0  # a gate nobody opens holds a task this long at most, never forever

app = Celery("viz10")
app.conf.update(json.loads(os.environ.get("ECHOMQ_VIZ_CELERY") or "{}"))
_client = None


def _done_client():
    global _client
    if _client is None:
        import redis

        url = os.environ.get("ECHOMQ_VIZ_PEER_URL")  # never printed: it may hold a password
        _client = redis.Redis.from_url(url) if url else redis.Redis(unix_socket_path=os.environ["ECHOMQ_VIZ_PEER_SOCKET"])
    return _client


@app.task(name="record")
def record(name: str, seconds: float = 0.0, gate: str | None = None) -> None:
    """Append ``name`` to :data:`DONE`. With ``gate`` (a file's path), the task first says it
    runs (:data:`STARTED`), then waits while that file exists: the worker stays busy with the
    first task, and holds what it fetched ahead, until the producer removes the file."""
    if gate:
        _done_client().rpush(STARTED, name)
        deadline = time.monotonic() + GATE_LIMIT_S
        while os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.005)
    if seconds:
        time.sleep(seconds)
    _done_client().rpush(DONE, name)
