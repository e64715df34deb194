"""The demo keys of the app's kernels that stopped, removed once their lease lapsed.

A visitor's kernel deletes its demo keys as it exits. One culled while busy,
or killed when it did not exit within jupyter_client's grace, leaves them
behind, with a lease that lapses within ``ECHOMQ_VIZ_LEASE_SECONDS``; and
nothing else would remove them from the app's private Redis (the launcher
cleans a given Redis once, at start). So after a kernel stops, once its
lease has had time to lapse, the app runs
:func:`echomq_viz.redis_side.owners.clean_orphans` on the Redis its kernels
use, on a thread of its own: only keys whose owner holds no live lease go,
so every other visitor's stay. Kernels stopping in a burst share one run.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Callable

__all__ = ["OrphanSweeper", "clean_orphans_at"]


def clean_orphans_at(url: str) -> int:
    """:func:`echomq_viz.redis_side.owners.clean_orphans` on the Redis (or the cluster of the
    node) at ``url``: how many it removed (the app's sweeper and ``echomq-viz clean`` alike)."""
    from echomq_viz.redis_side.cluster import connect_any
    from echomq_viz.redis_side.owners import clean_orphans

    client = connect_any(url)
    try:
        return int(clean_orphans(client))
    finally:
        client.close()


class OrphanSweeper:
    """Runs ``clean`` (by default :func:`clean_orphans` on ``REDIS_URL``)
    ``delay`` seconds (a lease and one more, by default) after a kernel stopped.

    :param log: where a run that removed keys, or failed, says so in one line.
    """

    def __init__(self, log: logging.Logger, url: str | None = None, delay: float | None = None,
                 clean: Callable[[str], int] = clean_orphans_at) -> None:
        from echomq_viz.redis_side.owners import LEASE_SECONDS
        from echomq_viz.redis_side.server import ENV_URL

        self.log, self.clean = log, clean
        self.url = url if url is not None else os.environ.get(ENV_URL, "")
        self.delay = LEASE_SECONDS + 1.0 if delay is None else delay
        self._pending: asyncio.TimerHandle | None = None
        self._last_stop = float("-inf")
        self._sweeping = False
        self.runs = 0  # how many sweeps have finished (tests wait on it)

    def kernel_stopped(self) -> None:
        """Called on the server's loop when a kernel has stopped."""
        if not self.url:
            return
        loop = asyncio.get_running_loop()
        self._last_stop = loop.time()
        if self._pending is None:
            self._pending = loop.call_at(self._last_stop + self.delay, self._start)

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._pending = None
        if self._sweeping:  # the last run is still going: once more after it
            self._pending = loop.call_later(1.0, self._start)
            return
        if self._last_stop > loop.time() - self.delay:  # a kernel stopped since: its lease may still hold
            self._pending = loop.call_at(self._last_stop + self.delay, self._start)
        self._sweeping = True
        task = asyncio.ensure_future(self._sweep())
        self._task = task  # kept: a task nobody refers to may be collected mid-run

    async def _sweep(self) -> None:
        from echomq_viz.core.redaction import first_line_redacted

        try:
            removed = await asyncio.get_running_loop().run_in_executor(None, self.clean, self.url)
        except Exception as exc:  # the app goes on; the next stop tries again
            self.log.warning("Could not remove the demo keys of stopped kernels: %s: %s",
                             type(exc).__name__, first_line_redacted(exc, self.url))
        else:
            if removed:
                self.log.info("Removed %d demo keys of kernels that stopped", removed)
        finally:
            self._sweeping = False
            self.runs += 1
