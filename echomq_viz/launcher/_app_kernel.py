"""The kernel of each ``echomq-viz app`` visitor: ipykernel without its
debugger, without subshells (the main thread reads the shell socket), and
without a wait on its I/O thread when nothing was printed.

ipykernel loads debugpy at start whenever it is installed, about 8 MB of
each kernel's memory; a Voila page has no debugger to use it. The app's
kernel spec (``voila_template/kernels/python3/kernel.json``, found first on
the app's ``JUPYTER_PATH``) starts this module instead of ipykernel's own
launcher. That spec also turns off ipywidgets' echo of every change a page
sends (``JUPYTER_WIDGETS_ECHO=0``): a page has its kernel to itself, and the
echo was one message in seven per slider move, each read, checked and
relayed by the server; the page applies the kernel's own updates either way.
And it keeps no IPython history (``--HistoryManager.enabled=False``): no
database and no thread saving the cells a page runs. On loopback ports (no
folder took its sockets) it does not repeat ipykernel's warning about them:
the launcher said once why (:mod:`echomq_viz.launcher._kernel_channels`).
And a status its I/O thread can no longer send, because the kernel is
shutting down, is dropped instead of printed as a traceback in the app's
terminal (:class:`AppIOPubThread`).
"""

from __future__ import annotations

import sys
import threading

import zmq
from ipykernel.iostream import IOPubThread, OutStream  # imports no debugpy


class AppIOPubThread(IOPubThread):
    """ipykernel's I/O thread, quiet about the last status of a shutdown.

    When a page goes and its kernel is shut down, the control thread
    publishes "idle" after the shutdown request while the main thread stops
    this thread and closes its event pipes. ``schedule`` checks that the
    thread is alive, then wakes it through a pipe that may be closed by then
    (ipykernel 7.4 guards the send itself, not this wake-up), and the
    ``ENOTSOCK`` was logged as a traceback in the app's terminal, one per
    culled kernel now and then. Once the thread is stopped nothing can
    reach the page anyway: that status is dropped. Any other error, or the
    same one before a stop, is raised as before.
    """

    def schedule(self, f) -> None:
        try:
            super().schedule(f)
        except zmq.ZMQError as error:
            if error.errno != zmq.ENOTSOCK or not self._stopped:
                raise


class AppOutStream(OutStream):
    """ipykernel's stdout and stderr, with a flush that costs nothing when
    nothing was written.

    ipykernel flushes both streams after every message it handles, so that
    printed text goes out before the "idle" status: each flush hands two
    callbacks to the I/O thread and waits for it. A slider move prints
    nothing, so these were two thread round trips per move for nothing.
    The full path is kept whenever there may be text on its way: a flush
    pending (text written since the last one), text in the buffers, or the
    I/O thread sending it at this moment; both the text and the status go
    out through the I/O thread, in the order they were handed to it.
    """

    _flushing = False  # the I/O thread is taking the buffers and sending them

    def _flush(self) -> None:
        # set before ipykernel clears the pending flag: a flush() that finds
        # that flag clear finds this one set until the text is on its way
        self._flushing = True
        try:
            super()._flush()
        finally:
            self._flushing = False

    def flush(self) -> None:
        if (self.echo is not None or self._flush_pending or self._flushing
                or self._subprocess_flush_pending or self._written()):
            super().flush()

    def _written(self) -> bool:
        with self._buffer_lock:
            return any(buffer.tell() for buffer in self._buffers.values())


# ipykernel 7's line, at every kernel's start, for a kernel on loopback ports
TCP_WARNING = "Kernel is running over TCP without encryption"


class _NoShellChannelThread:
    """Where ipykernel keeps its shell-channel thread: false, so the main
    thread reads the shell socket itself; ``parent_thread`` for the one place
    that asks for it (a cell with a top-level ``await``)."""

    parent_thread = threading.main_thread()

    def __bool__(self) -> bool:
        return False


def main() -> None:
    sys.modules["debugpy"] = None  # its import fails: ipykernel runs without a debugger
    from ipykernel import kernelapp

    kernelapp.IOPubThread = AppIOPubThread  # the name init_iopub builds its I/O thread from
    from ipykernel.ipkernel import IPythonKernel

    class AppKernel(IPythonKernel):
        """ipykernel's kernel without subshells (a page never asks for one)."""

        @property
        def _supports_kernel_subshells(self) -> bool:
            return bool(self.shell_channel_thread)  # the stand-in is false

    class AppKernelApp(kernelapp.IPKernelApp):
        """ipykernel 7 reads every shell message on a thread of its own and
        hands it to the main thread, for subshells: one more thread wake-up
        and socket hop per slider move. Here the main thread reads them."""

        def init_sockets(self) -> None:
            # on loopback ports (no folder took the sockets), the launcher said why once, for all kernels
            self.log.addFilter(lambda record: not str(record.msg).startswith(TCP_WARNING))
            super().init_sockets()
            thread = getattr(self, "shell_channel_thread", None)
            if isinstance(thread, threading.Thread) and not thread.is_alive():  # else ipykernel's own way
                thread.io_loop.close()  # never started
                self.shell_channel_thread = _NoShellChannelThread()

    AppKernelApp.launch_instance(kernel_class=AppKernel, outstream_class=f"{__name__}.AppOutStream")


if __name__ == "__main__":
    main()
