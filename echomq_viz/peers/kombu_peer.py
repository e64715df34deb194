"""Celery's Redis transport (PyPI ``kombu``): one list per priority step.

Called directly, with ``transport_options={"queue_order_strategy": "priority"}``
(Celery sets no such option by itself; its routing guide suggests it), and
``global_keyprefix`` so that every key kombu writes (the lists, the binding
set, the unacked hash) sits inside this kernel's demo queue. A producer
``put``s with ``priority=p``; kombu maps ``p`` to the step at or below it and
``LPUSH``es onto that step's list; a consumer ``RPOP``s the lists in step
order. Priority 0 is served first.
"""

from __future__ import annotations

from typing import Any, Sequence

from echomq_viz.peers.base import Peer, need, redis_url_of
from echomq_viz.peers.workload import WorkJob

__all__ = ["KombuPeer", "DEFAULT_STEPS", "TEN_STEPS"]

DEFAULT_STEPS = None  # kombu's own PRIORITY_STEPS
TEN_STEPS = tuple(range(10))
QUEUE = "jobs"


def _kombu():
    need("packaging")  # kombu 5.7's Redis transport imports it without declaring it
    return need("kombu")


class KombuPeer(Peer):
    """kombu's ``SimpleQueue`` on Redis with ``queue_order_strategy="priority"``.

    :param steps: ``None`` for kombu's default ``priority_steps``, or a
        sequence of steps (e.g. :data:`TEN_STEPS`).
    """

    tier_means = "priority=tier (0 is served first)"
    default_names = "no prefix: the queue's own name, its step lists, _kombu.binding.<exchange>, unacked"

    def __init__(self, client: Any = None, steps: Sequence[int] | None = DEFAULT_STEPS) -> None:
        kombu = _kombu()
        if steps is not None:
            steps = tuple(steps)
            if not steps or any(not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= 255 for s in steps) \
                    or list(steps) != sorted(set(steps)) or steps[0] != 0:
                raise ValueError(f"steps must be increasing ints in 0..255 starting at 0, got {steps!r}")
        self.key = "kombu" if steps is None else f"kombu{len(steps)}"
        super().__init__(client)
        options = {"queue_order_strategy": "priority", "global_keyprefix": self.prefix}
        if steps is not None:
            options["priority_steps"] = list(steps)
        self.transport_options = options
        self._open()
        self.steps = tuple(self.queue.channel.priority_steps)
        self.library = f"kombu {kombu.__version__}"
        self.label = f"kombu, {len(self.steps)} steps"
        self.levels = f"one list per priority step ({len(self.steps)} steps)"
        shown = {k: v for k, v in options.items() if k != "global_keyprefix"}
        self.configured = (f"transport_options={shown} plus global_keyprefix='emq:{{viz-10-{self.key}@…}}:'")
        self._message = None

    def _open(self) -> None:
        kombu = _kombu()
        self.connection = kombu.Connection(redis_url_of(self.client, socket_scheme="redis+socket"),
                                           transport_options=self.transport_options)
        self.queue = self.connection.SimpleQueue(QUEUE)

    def _declare(self) -> None:
        # kombu remembers its declarations in memory: a fresh connection declares them again
        if hasattr(self, "queue"):
            self.close()
            self._open()

    def step_of(self, priority: int) -> int:
        """The step (and so the list) kombu files ``priority`` under."""
        return self.queue.channel.priority(priority)

    def list_of(self, priority: int) -> str:
        """The list key a message of ``priority`` goes to, as Redis names it."""
        return self.prefix + self.queue.channel._q_for_pri(QUEUE, priority)

    def _add(self, job: WorkJob) -> None:
        self.queue.put({"name": job.name}, priority=job.tier)

    def _add_level(self, name: str, level: int, count: int) -> None:
        self.queue.put({"name": name}, priority=level - 1)  # kombu's 0 is served first

    def _pop(self) -> str | None:
        try:
            self._message = self.queue.get(block=False)
        except self.queue.Empty:
            return None
        return self._message.payload["name"]

    def _after_pop(self) -> None:
        self._message.ack()

    def default_key(self, key: str) -> str:
        return key[len(self.prefix):]

    def close(self) -> None:
        self.queue.close()
        self.connection.release()
