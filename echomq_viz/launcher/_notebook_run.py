"""One notebook run in a fresh kernel with its widget state stored, as ``echomq-viz export`` and
the refresh run it; nbclient runs it on a thread of its own, so a stop (Ctrl-C, SIGTERM) stays ours.

On the main thread nbclient answers SIGINT and SIGTERM itself (``loop.add_signal_handler``): it
shuts the kernel down under the running cell, which then fails as if the notebook were at fault
while the kernel prints a traceback, and SIGTERM is left at its default afterwards. Off the main
thread asyncio refuses such a handler and nbclient goes on without one (it catches that
``RuntimeError``). A stop is then made as a failing cell is: the running cell is interrupted,
nbclient shuts the idle kernel down (its atexit hooks run), and that is awaited here, so no kernel
is left to nbclient's own atexit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable

from echomq_viz.launcher._kernel_channels import private_kernel_config

__all__ = ["Stopped", "execute_with_widgets", "run_notebook"]

STEP = 0.1  # how late a stop is heard
INTERRUPT_EVERY = 1.0  # one that reaches the kernel just before its cell starts is lost (it ignores SIGINT when idle)
KILL_AFTER = 10.0  # a cell that outlives its interrupts (it catches KeyboardInterrupt) ends with its kernel


class Stopped(Exception):
    """A stop ended the run before its last cell."""


def execute_with_widgets(nb, path: Path, timeout: int, *, page_stills: bool = True,
                         stop: Callable[[], bool] = lambda: False) -> None:
    """Run the notebook in a fresh kernel with its widget state stored, then
    make each page view's still from its stored state
    (:func:`echomq_viz.launcher._stills.store_stills`). With ``page_stills``
    False those get no still (they need a browser to make one). Once ``stop()``
    holds, the kernel is shut down and :class:`Stopped` raised."""
    from nbclient import NotebookClient

    with private_kernel_config() as config:  # its kernel on Unix sockets where it can be
        run_notebook(NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                                    config=config, resources={"metadata": {"path": str(path.parent)}}), stop)
    from echomq_viz.launcher._stills import store_stills

    store_stills(nb, page_views=page_stills)


def run_notebook(client, stop: Callable[[], bool] = lambda: False) -> None:
    """``client.async_execute()`` (an nbclient ``NotebookClient``, whose cell hooks this sets) on a
    thread of its own until it ends or ``stop()`` holds: then the kernel is shut down first, and
    :class:`Stopped` raised. A Ctrl-C heard here as KeyboardInterrupt (a caller that sets no
    handler, as the refresh) stops it too, and is raised after."""
    interrupted: list[bool] = []
    loop = asyncio.new_event_loop()
    # off the main thread nbclient sets no signal handler: the stop stays ours (see the module's docstring)
    worker = threading.Thread(target=loop.run_forever, name="echomq-viz-notebook", daemon=True)
    worker.start()
    run = asyncio.run_coroutine_threadsafe(_execute(client, lambda: bool(interrupted) or stop()), loop)
    try:
        while not run.done():
            try:
                concurrent.futures.wait([run], timeout=STEP)
            except KeyboardInterrupt:
                interrupted.append(True)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        worker.join()
        loop.close()
    if interrupted:
        raise KeyboardInterrupt
    run.result()


async def _execute(client, stopping: Callable[[], bool]) -> None:
    running: list[bool] = []  # a cell's request sent (or about to be), its reply not in: what an interrupt ends

    def refuse_cell(**_: object) -> None:
        if stopping():  # between two cells, or the kernel just started: no cell to interrupt
            raise Stopped("stopped before this cell")

    def before_request(**_: object) -> None:
        refuse_cell()
        running.append(True)

    client.on_cell_start = refuse_cell
    client.on_cell_execute = before_request
    client.on_cell_executed = lambda **_: running.clear()
    # the kernel's own log off the terminal: one stopped under a cell may log a ZMQ traceback as it
    # shuts down; what a cell does reaches us through nbclient (stderr goes to start_kernel's Popen)
    run = asyncio.ensure_future(client.async_execute(stderr=subprocess.DEVNULL))
    loop = asyncio.get_running_loop()
    since = sent = None
    while not run.done():
        await asyncio.wait({run}, timeout=STEP)
        if run.done() or not stopping():
            continue
        now, km = loop.time(), client.km
        since = now if since is None else since
        if km is None or not km.has_kernel:
            continue
        if now - since > KILL_AFTER:
            await km.signal_kernel(signal.SIGKILL)  # nbclient finds it dead within a second
        elif running and (sent is None or now - sent >= INTERRUPT_EVERY):
            # only then: a kernel starting dies of one, loudly; one shutting down may hang on it
            sent = now
            await km.interrupt_kernel()
    try:
        run.result()
    except Exception:
        if not stopping():  # a cell that failed on its own
            raise
    if stopping():
        raise Stopped("stopped")
