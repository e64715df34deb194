"""The Celery app notebook 10's Celery workers run (``celery -A echomq_viz.peers.celery_app worker``).

Configured only through Celery's own settings, read as JSON from the
environment variable ``ECHOMQ_VIZ_CELERY`` (the notebook shows each one and
where Celery documents it). Its one task, ``record``, appends the job's name
to the list :data:`DONE` on the broker's Redis, so the order the worker ran
the jobs in can be read back; it may sleep first, to hold the worker busy.
"""

from __future__ import annotations

import json
import os
import time

from celery import Celery

__all__ = ["app", "record", "DONE"]

DONE = "viz10:done"

app = Celery("viz10")
app.conf.update(json.loads(os.environ.get("ECHOMQ_VIZ_CELERY") or "{}"))
_client = None


def _done_client():
    global _client
    if _client is None:
        import redis

        _client = redis.Redis(unix_socket_path=os.environ["ECHOMQ_VIZ_PEER_SOCKET"])
    return _client


@app.task(name="record")
def record(name: str, seconds: float = 0.0) -> None:
    if seconds:
        time.sleep(seconds)
    _done_client().rpush(DONE, name)
