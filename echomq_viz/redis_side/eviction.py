"""One line on stderr, once a server, when a Redis evicts keys: a job's hash
evicted leaves a damaged queue, as in BullMQ. :func:`warn_if_evicting` is what
:func:`echomq_viz.redis_side.server.connect` and a ``Demo`` on a client of its
own call.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["warn_if_evicting"]

_warned: set[str] = set()


def warn_if_evicting(client: Any, where: str) -> str | None:
    """Say once per server, in one line on stderr, that a Redis whose
    ``maxmemory-policy`` is not ``noeviction`` deletes keys when full (a job's
    hash among them, leaving a damaged queue), as BullMQ does; the line, or None."""
    import redis

    try:
        info = client.info("memory")
    except redis.RedisError:  # a user without INFO: nothing to say
        return None
    policy = info.get("maxmemory_policy") if isinstance(info, dict) else None
    if not isinstance(policy, str) or policy == "noeviction":
        return None
    line = (f"echomq-viz: warning: Redis at {where} has maxmemory-policy {policy}: when full it deletes keys, a "
            "job's hash among them, and a queue breaks; set maxmemory-policy noeviction")
    if where not in _warned:
        _warned.add(where)
        print(line, file=sys.stderr, flush=True)
    return line
