"""Caps on the jobs a student (or an app's kernel) may hold, kept by Redis.

The scripts that add a job refuse one past a cap, in one line naming it
(``lua/includes/checkJobCap.lua``), where the write happens: a kernel that
skips the Python checks, or calls the functions itself, meets them all the
same. The caps live in Redis, where a student cannot change them:

- ``emq:caps:<namespace>``, one student's (:func:`echomq_viz.redis_side.acl.add_student`
  writes it; that student's ACL may read it, never write it);
- ``emq:caps``, the server's, for every owner without one of its own: on the
  app's private Redis each kernel is such an owner (:func:`set_caps` with no
  namespace), and an operator may set it for every student at once.

A server with neither (a private one, a lab) has no caps. Past ``maxmemory``
nothing more is written anyway (``noeviction``): the caps keep each student
far below it, so one student's flood never fills it for the others
(docs/sharing-a-redis.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from echomq_viz.core.checks import check_int
from echomq_viz.redis_side.functions import MAX_ARG_BYTES
from echomq_viz.redis_side.demo_keys import key_pattern

__all__ = ["JobCaps", "DEFAULT_CAPS", "CAP_LIMITS", "caps_key", "set_caps", "read_caps", "clear_caps"]

# The widest each cap may be set: past these a cap stops protecting anyone.
CAP_LIMITS = {"queue_jobs": 1_000_000, "student_jobs": 10_000_000, "student_queues": 10_000,
              "job_bytes": MAX_ARG_BYTES}


@dataclass(frozen=True)
class JobCaps:
    """The caps of one student (or of every owner without caps of its own).

    :param queue_jobs: jobs one demo queue may hold (notebook 04's bands view
        fills one with up to 5,000).
    :param student_jobs: jobs all of a student's demo queues may hold together.
    :param student_queues: demo queues holding jobs a student may have at once
        (every notebook open in two kernels needs about 40).
    :param job_bytes: bytes of one job's name and data together.
    """

    queue_jobs: int = 5_000
    student_jobs: int = 20_000
    student_queues: int = 64
    job_bytes: int = 4_096

    def __post_init__(self) -> None:
        for name, highest in CAP_LIMITS.items():
            check_int(name, getattr(self, name), 1, highest)
        if self.student_jobs < self.queue_jobs:
            raise ValueError(f"student_jobs must be at least queue_jobs ({self.queue_jobs:,}): one queue is a "
                             f"student's too, got {self.student_jobs:,}")

    def describe(self) -> str:
        """The caps in one line, as ``acl add`` and the app print them."""
        return (f"{self.queue_jobs:,} jobs a queue, {self.student_jobs:,} a student in at most "
                f"{self.student_queues:,} queues, {self.job_bytes:,} bytes a job")


DEFAULT_CAPS = JobCaps()


def caps_key(namespace: str | None = None) -> str:
    """Where a student's caps live (``namespace``: :func:`echomq_viz.redis_side.demo_keys.namespace_of`
    of their Redis user), or, without one, the server's."""
    if namespace is None:
        return "emq:caps"
    key_pattern(namespace)  # checks it is a namespace
    return f"emq:caps:{namespace}"


def set_caps(client: Any, caps: JobCaps = DEFAULT_CAPS, *, namespace: str | None = None) -> str:
    """Set the caps of one student (``namespace``) or, without one, of every
    owner with none of its own (each kernel of an app); the key written.
    ``client`` must be allowed to write it: the operator's, or the app's own."""
    if not isinstance(caps, JobCaps):
        raise TypeError(f"caps must be a JobCaps, e.g. JobCaps(queue_jobs=5000), got {type(caps).__name__}")
    key = caps_key(namespace)
    with client.pipeline(transaction=True) as pipe:  # never half a set of caps
        pipe.delete(key)
        pipe.hset(key, mapping=asdict(caps))
        pipe.execute()
    return key


def read_caps(client: Any, *, namespace: str | None = None) -> JobCaps | None:
    """The caps stored for ``namespace`` (or the server's), None when there are none."""
    values = client.hgetall(caps_key(namespace))
    if not values:
        return None
    text = {(k.decode() if isinstance(k, bytes) else k): v for k, v in values.items()}
    return JobCaps(**{field.name: int(text[field.name]) for field in fields(JobCaps)})


def clear_caps(client: Any, *, namespace: str | None = None) -> bool:
    """Remove the caps of ``namespace`` (or the server's); True if there were some."""
    return bool(client.delete(caps_key(namespace)))
