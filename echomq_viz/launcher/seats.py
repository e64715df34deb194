"""How many visitors' kernels ``echomq-viz app`` admits, and for how long.

Each visitor's page starts a kernel of its own, about :data:`KERNEL_MB`
resident (``classroom_kernel_rss_mb`` in ``benchmarks/results.json``: 107 MB,
rounded up), and each student's moves take CPU: docs/classroom.md plans
about :data:`STUDENTS_PER_CORE` a core. Without a cap, a class link in the
wrong hands, or a script asking for pages, starts kernels until the machine
runs out of memory or CPU. The default cap is the smaller of what the
available memory holds (a tenth kept for the server and Redis) and what the
cores serve; ``--max-kernels N`` sets another.

Seats rotate: one visitor (one browser session, known by a cookie) holds at
most :data:`SEATS_PER_VISITOR` kernels, a new page giving back that
visitor's stalest one; and a page that has sent its kernel nothing for
:data:`SEAT_IDLE_S` gives its seat back even with its websocket still open
(:mod:`echomq_viz.launcher._app_server`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["KERNEL_MB", "STUDENTS_PER_CORE", "SEATS_PER_VISITOR", "SEAT_IDLE_S", "MAX_KERNELS_RANGE",
           "SEATS_PER_VISITOR_RANGE", "SEAT_IDLE_MINUTES_RANGE", "Rotation", "cores",
           "memory_seats", "default_max_kernels", "class_full_line", "cap_line"]

KERNEL_MB = 110
STUDENTS_PER_CORE = 30  # docs/classroom.md: one core held 50 (the ramp's end); 30 leaves a third and more of margin
SEATS_PER_VISITOR = 3  # a few tabs of the app at once; a fourth page gives back the stalest
SEAT_IDLE_S = 15 * 60  # no message from a page for this long: its seat goes back
MAX_KERNELS_RANGE = (1, 10_000)
SEATS_PER_VISITOR_RANGE = (1, 100)
SEAT_IDLE_MINUTES_RANGE = (0.1, 24 * 60)


@dataclass(frozen=True)
class Rotation:
    """How seats go round: a visitor's share, and the silence after which a page's seat goes back."""

    per_visitor: int = SEATS_PER_VISITOR
    idle_s: int = SEAT_IDLE_S

    def options(self) -> list[str]:
        """The app server's options for it (:class:`~echomq_viz.launcher._app_server.AppKernelManager`)."""
        return [f"--AppKernelManager.seats_per_visitor={self.per_visitor}",
                f"--AppKernelManager.seat_idle_timeout={self.idle_s}"]

    def line(self) -> str:
        idle = f"{self.idle_s // 60} min" if self.idle_s % 60 == 0 else f"{self.idle_s} s"
        return f"at most {self.per_visitor} a visitor, and a page silent for {idle} gives its seat back"


def cores() -> int:
    """The CPUs this process may run on (its affinity, as ``taskset`` or a container sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows: no affinity call
        return max(1, os.cpu_count() or 1)


def _available(available_bytes: int | None) -> int:
    if available_bytes is not None:
        return available_bytes
    import psutil

    return psutil.virtual_memory().available


def memory_seats(available_bytes: int | None = None) -> int:
    """How many kernels of :data:`KERNEL_MB` fit in nine tenths of the
    available memory (``psutil``'s ``available``): at least 1."""
    return max(1, int(_available(available_bytes) * 0.9) // (KERNEL_MB * 2**20))


def default_max_kernels(available_bytes: int | None = None, cpus: int | None = None) -> int:
    """The smaller of :func:`memory_seats` and :data:`STUDENTS_PER_CORE` per core."""
    return min(memory_seats(available_bytes), STUDENTS_PER_CORE * (cpus or cores()))


def class_full_line(taken: int, seats: int) -> str:
    """What a page over the cap says."""
    return f"the class is full: {taken} of {seats} seats taken; try again in a minute"


def cap_line(seats: int, chosen: bool, available_bytes: int | None = None, cpus: int | None = None,
             rotation: Rotation = Rotation()) -> str:
    """The line ``app`` prints at start: the cap and what set it, and how seats go round."""
    rotation = f"; {rotation.line()}"
    if chosen:
        return (f"at most {seats} visitors' kernels at once (--max-kernels), about {seats * KERNEL_MB:,} MB"
                f"{rotation}")
    available, cpus = _available(available_bytes), cpus or cores()
    by_memory = memory_seats(available)
    memory = f"{available // 2**20:,} MB available at about {KERNEL_MB} MB a kernel"
    processors = f"{cpus} core{'s' if cpus != 1 else ''} at about {STUDENTS_PER_CORE} students a core"
    if STUDENTS_PER_CORE * cpus <= by_memory:
        why = f"{processors} (the memory would hold {by_memory:,}: {memory})"
    else:
        why = f"{memory} (the cores would serve {STUDENTS_PER_CORE * cpus:,}: {processors})"
    return f"at most {seats:,} visitors' kernels at once: {why}{rotation} (--max-kernels N to change)"
