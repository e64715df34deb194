"""How many visitors' kernels ``echomq-viz app`` admits at once.

Each visitor's page starts a kernel of its own, about :data:`KERNEL_MB`
resident (``classroom_kernel_rss_mb`` in ``benchmarks/results.json``: 107 MB,
rounded up). Without a cap, a class link in the wrong hands, or a script
asking for pages, starts kernels until the machine runs out of memory. The
default cap is what the machine's available memory holds, a tenth kept for
the server and Redis; ``--max-kernels N`` sets another.
"""

from __future__ import annotations

__all__ = ["KERNEL_MB", "MAX_KERNELS_RANGE", "default_max_kernels", "class_full_line", "cap_line"]

KERNEL_MB = 110
MAX_KERNELS_RANGE = (1, 10_000)


def default_max_kernels(available_bytes: int | None = None) -> int:
    """How many kernels of :data:`KERNEL_MB` fit in nine tenths of the
    available memory (``psutil``'s ``available``): at least 1."""
    if available_bytes is None:
        import psutil

        available_bytes = psutil.virtual_memory().available
    return max(1, int(available_bytes * 0.9) // (KERNEL_MB * 2**20))


def class_full_line(taken: int, seats: int) -> str:
    """What a page over the cap says."""
    return f"the class is full: {taken} of {seats} seats taken; try again in a minute"


def cap_line(seats: int, chosen: bool, available_bytes: int | None = None) -> str:
    """The line ``app`` prints at start."""
    if chosen:
        return f"at most {seats} visitors' kernels at once (--max-kernels), about {seats * KERNEL_MB:,} MB"
    if available_bytes is None:
        import psutil

        available_bytes = psutil.virtual_memory().available
    return (f"at most {seats} visitors' kernels at once: {available_bytes // 2**20:,} MB available, about "
            f"{KERNEL_MB} MB a kernel (--max-kernels N to change)")
