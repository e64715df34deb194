"""huey (PyPI ``huey``) with its priority storage: a sorted set scored by the priority alone.

``PriorityRedisHuey`` stores each task in one sorted set with score
``-priority`` and takes the smallest (``ZPOPMIN``), so a higher priority
number runs first. Equal scores come out by member bytes; huey 3.x puts the
adding client's clock first in each member, an 8-byte big-endian count of
microseconds, so inside a tier the order is the clock's. huey names its keys
``huey.redis.<name>`` and has no prefix option: the storage's key attributes
are set after it is made, inside this kernel's demo queue.
"""

from __future__ import annotations

import struct
from typing import Any

from echomq_viz.peers.base import Peer, bytes_client
from echomq_viz.peers.workload import WorkJob

__all__ = ["HueyPeer", "member_clock"]

_STORAGE_KEYS = ("queue_key", "schedule_key", "result_key", "counter_key")


def member_clock(member: bytes) -> int:
    """The microseconds huey put in front of a queued member."""
    return struct.unpack(">Q", member[:8])[0]


class HueyPeer(Peer):
    key = "huey"
    label = "huey, priority storage"
    tier_means = "priority=4-tier (a higher number is served first)"
    levels = "any number (the score is -priority)"
    default_names = "huey.redis.<name>, huey.schedule.<name>, huey.results.<name>"

    requires = "huey"

    def __init__(self, client: Any = None) -> None:
        super().__init__(client)
        pool = bytes_client(self.client).connection_pool  # huey stores pickles
        self.huey = self.lib.PriorityRedisHuey("viz", connection_pool=pool, blocking=False)
        storage = self.huey.storage
        for attribute in _STORAGE_KEYS:
            setattr(storage, attribute, f"{self.prefix}{attribute.removesuffix('_key')}")
        storage.notify_prefix = f"{self.prefix}notify."
        self.configured = ("storage.queue_key, schedule_key, result_key, counter_key set to "
                           "'emq:{viz-10-huey@…}:<name>' after PriorityRedisHuey('viz') is made")
        self._pool = pool

        @self.huey.task()
        def record(name):
            return name

        self.task = record

    def _add(self, job: WorkJob) -> None:
        self.task(job.name, priority=4 - job.tier)

    def _add_level(self, name: str, level: int, count: int) -> None:
        self.task(name, priority=count - level)

    def _pop(self) -> str | None:
        task = self.huey.dequeue()
        return None if task is None else task.args[0]

    def default_key(self, key: str) -> str:
        return "huey.redis.viz" if key == f"{self.prefix}queue" else "huey." + key[len(self.prefix):] + ".viz"

    def close(self) -> None:
        self._pool.disconnect()
