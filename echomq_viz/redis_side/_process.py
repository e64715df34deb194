"""The processes and temp folders the package starts, found with psutil and
tied to ours on Linux.

- :func:`die_with_parent`, :func:`become_subreaper`: the two ``prctl`` calls;
- :func:`proc_table`, :func:`descendants`, :func:`cmdline`: who runs below whom;
- :class:`Family`: every process once seen below a root, ended by identity
  (pid and start time), so a reused pid is never signalled;
- :class:`StopSignals`: Ctrl-C, SIGTERM and SIGHUP, heard as requests to stop
  by a loop of the main thread;
- :func:`supervise`: run a server until it exits or we are told to stop, then
  end everything it started;
- :func:`owned_tempdir`, :func:`claim`, :func:`sweep_leftovers`: temp folders
  that name their owner process, and removing those whose owner is dead
  (this user's only), which a ``kill -9`` of the owner leaves behind.

psutil is imported inside the functions that need it: the Redis supervisor
imports this module for :func:`die_with_parent` alone and must start fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 20.0  # how long a server may take to shut its kernels down
OWNER_FILE = ".echomq-viz-owner"
LEFTOVER_PREFIX = "echomq-viz-"


# -- prctl ------------------------------------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    if not sys.platform.startswith("linux"):
        return  # elsewhere the pipes and the process-tree sweep still cover us
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def die_with_parent(signum: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets ``signum`` when the thread that started it dies."""
    return functools.partial(_prctl, PR_SET_PDEATHSIG, int(signum))


def become_subreaper() -> None:
    """Orphans below us come back to us instead of init, so none escapes the sweep."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


# -- who runs below whom -------------------------------------------------------------------------------

_STATE_LETTER = {"running": "R", "sleeping": "S", "disk-sleep": "D", "stopped": "T", "tracing-stop": "t",
                 "zombie": "Z", "dead": "X", "idle": "I", "parked": "P", "waking": "W"}


def proc_table() -> dict[int, tuple[int, float, str]]:
    """Every process as ``pid -> (ppid, start time, state letter)`` (``Z`` zombie, ``X`` dead)."""
    import psutil

    table = {}
    for proc in psutil.process_iter(["ppid", "create_time", "status"]):
        info = proc.info
        if info["ppid"] is not None and info["create_time"] is not None:
            table[proc.pid] = (info["ppid"], info["create_time"], _STATE_LETTER.get(info["status"], "?"))
    return table


def descendants(root: int, table: dict[int, tuple[int, float, str]] | None = None) -> list[int]:
    """The pids of every process below ``root``, children first."""
    table = proc_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, queue = [], list(children.get(root, []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def cmdline(pid: int) -> str:
    """A process's command line, or "" once it is gone."""
    import psutil

    try:
        return " ".join(psutil.Process(pid).cmdline())
    except (psutil.Error, OSError):
        return ""


def _running(proc) -> bool:
    """The very process (same pid and start time) still runs, and is no zombie."""
    import psutil

    try:
        return proc.is_running() and proc.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.Error:
        return False


def signal_pid(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        signal_pid(pid, signal.SIGKILL)


class Family:
    """Every process seen below a root, remembered by identity."""

    def __init__(self) -> None:
        self.seen: dict[int, object] = {}  # pid -> psutil.Process, which knows its start time

    def note(self, root: int, *, skip: Iterable[int] = ()) -> None:
        import psutil

        table = proc_table()
        skipped = set()
        for pid in skip:
            if pid in table:
                skipped.add(pid)
                skipped.update(descendants(pid, table))
        for pid in descendants(root, table):
            if pid in skipped or (pid in self.seen and _running(self.seen[pid])):
                continue
            with contextlib.suppress(psutil.Error):
                self.seen[pid] = psutil.Process(pid)

    def alive(self) -> list[int]:
        return [pid for pid, proc in self.seen.items() if _running(proc)]

    def end(self, grace: float = 5.0) -> list[int]:
        """SIGTERM whatever is still alive, SIGKILL it after ``grace``;
        return the pids that had to be stopped."""
        left = self.alive()
        for pid in left:
            signal_pid(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.1)
        for pid in self.alive():
            signal_pid(pid, signal.SIGKILL)
        self._reap()
        return left

    def _reap(self) -> None:
        """Collect those of the family that were reparented to us (we are their subreaper)."""
        for pid in self.seen:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


# -- stop signals -----------------------------------------------------------------------------------


class StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP, heard as requests to stop by a loop of the main thread:
    ``with StopSignals() as stop: while not stop.wait(0.5): ...``; ``received`` lists them.

    The handler only appends to a list, and :meth:`wait` sleeps in short steps. Python runs a
    signal's handler in the main thread between two of its bytecodes, wherever that thread is; a
    handler that takes a lock, as ``threading.Event.set`` does, waits for ever on itself when the
    signal lands while the thread holds that lock (inside ``Event.wait`` or ``Event.clear``): the
    Ctrl-C that never stopped a run on a loaded machine.
    """

    STEP = 0.05  # how late a stop may be heard: time.sleep resumes after a handler (PEP 475)

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        self._previous = {signum: signal.signal(signum, self._record) for signum in STOP_SIGNALS}
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, before in self._previous.items():
            signal.signal(signum, before)

    def _record(self, signum: int, frame: object) -> None:
        self.received.append(signum)

    def wait(self, timeout: float | None = None, *, heard: int = 0) -> bool:
        """Sleep until more than ``heard`` stop signals have come (True) or ``timeout``
        seconds passed (False); ``None`` waits for a stop however long it takes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while len(self.received) <= heard:
            left = self.STEP if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, self.STEP))
        return True


# -- one server, supervised ------------------------------------------------------------------------


def supervise(argv: Sequence[str], env: dict[str, str], *, keep: Iterable[int] = (),
              grace: float = GRACE_SECONDS, watch: Callable[[], bool] | None = None) -> int:
    """Run a server until it exits or we are told to stop; then make sure
    nothing it started is left. Returns its exit code (0 for a requested stop).

    The server runs in its own session, so Ctrl-C in the terminal reaches only
    us; we pass a stop on as SIGTERM, the signal both JupyterLab and Voila
    answer by shutting their kernels down. Processes that outlive it (a kernel
    it could not stop) are ended too. ``keep`` are pids of ours that are not
    the server's business (the Redis supervisor), left alone here. ``watch``
    is asked about four times a second; when it answers False (something the
    server needs is gone for good), the server is stopped and we return 1.
    """
    become_subreaper()
    family = Family()
    keep = tuple(keep)
    failed = False
    with StopSignals() as stop:
        try:
            child = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=die_with_parent(signal.SIGTERM))  # a clean stop if we die
            asked_at: float | None = None
            signals_answered = 0
            last_look = 0.0
            while child.poll() is None:
                stop.wait(0.25, heard=signals_answered)
                now = time.monotonic()
                if now - last_look >= 1.0:  # who the server has started, for the sweep
                    family.note(child.pid)
                    last_look = now
                failed_now = not failed and watch is not None and not watch()
                failed = failed or failed_now
                signals = len(stop.received)  # read once: a signal may land between two reads
                if signals > signals_answered or failed_now:  # asked to stop
                    signals_answered = signals
                    family.note(child.pid)
                    if asked_at is None:
                        print("\nechomq-viz: stopping the server and its kernels ...", file=sys.stderr, flush=True)
                        signal_pid(child.pid, signal.SIGTERM)
                        asked_at = now
                    else:  # asked twice: no more waiting
                        asked_at = now - grace
                if asked_at is not None and now - asked_at >= grace:
                    kill_group(child.pid)
                    child.wait()
            code = child.returncode
        finally:
            # Whatever the server left (or was reparented to us), then its group; a second
            # Ctrl-C meanwhile is heard, not raised in the middle of the sweep.
            family.note(os.getpid(), skip=keep)
            family.end()
    if failed:
        return 1
    if stop.received and code in (0, -signal.SIGTERM, -signal.SIGKILL, 128 + signal.SIGTERM):
        return 0
    return 128 - code if code < 0 else code


# -- temp folders that name their owner ------------------------------------------------------------


def claim(directory: str | os.PathLike, pid: int | None = None) -> None:
    """Write, inside ``directory``, which process owns it (pid and start time)."""
    import psutil

    pid = os.getpid() if pid is None else pid
    owner = {"pid": pid, "started": psutil.Process(pid).create_time()}
    fd = os.open(os.path.join(directory, OWNER_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(owner, handle)


@contextlib.contextmanager
def owned_tempdir(prefix: str) -> Iterator[Path]:
    """A fresh 0700 temp folder owned by this process, deleted on exit (and by
    :func:`sweep_leftovers` once this process is dead, if we never got there)."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        claim(path)
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def owner_is_dead(directory: str) -> bool:
    import psutil

    try:
        with open(os.path.join(directory, OWNER_FILE), encoding="utf-8") as handle:
            owner = json.load(handle)
        pid, started = int(owner["pid"]), float(owner["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return False  # no owner named (or still being written): not ours to judge
    try:
        proc = psutil.Process(pid)
        return abs(proc.create_time() - started) > 0.01 or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def sweep_leftovers(root: str | os.PathLike | None = None, prefix: str = LEFTOVER_PREFIX) -> list[str]:
    """Delete the temp folders named ``prefix*`` (``echomq-viz-*``) of this user whose owner
    process is dead; never another user's, a live run's, or one naming no owner.
    Returns the folders deleted."""
    root = os.fspath(root) if root is not None else tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in sorted(names):
        path = os.path.join(root, name)
        if not name.startswith(prefix):
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and owner_is_dead(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
