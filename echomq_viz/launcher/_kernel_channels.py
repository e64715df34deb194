"""Where the kernels we start put their channels, and what they find ready.

A kernel on loopback ports gets them picked free by jupyter_client, then
binds them a moment later, once Python has started. When many kernels start
at once (a class joining, a test suite), another process's connection can
take such a port in between; that kernel dies ("Address already in use") and
its page or notebook is left without one. A kernel on Unix sockets
(``transport=ipc``) has socket files named after itself, next to its
connection file, which nobody else can take. We use them where the socket
paths fit and the folder's file system takes sockets (some network and FUSE
file systems do not). A socket path holds about 100 bytes, so a long
``TMPDIR`` leaves no room: the kernels then get a folder of the run's own in
a short root (``/tmp``), deleted with the run (:func:`socket_folder`); and
where no folder takes them, jupyter_client's loopback ports, with one line
saying why.

A new home has no Matplotlib font cache: the first kernel builds it, and
past five seconds (a loaded machine) says so on its stderr, in the
notebook. :func:`warm_font_cache` builds it before any kernel starts, in a
process of its own (a third of a second of CPU), unless the folder Matplotlib
documents for it already holds one made since Matplotlib was installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from traitlets.config import Config

__all__ = ["IPC_PATH_MAX", "SHORT_ROOTS", "KERNEL_FOLDER_PREFIX", "KernelFolder", "ipc_problem", "ipc_works",
           "ipc_options", "socket_folder", "sweep_kernel_folders", "private_kernel_config", "runtime_dir",
           "font_cache_is_current", "warm_font_cache"]

# A Unix socket's path holds at most 103 bytes on macOS, 107 on Linux.
IPC_PATH_MAX = 100
# The longest socket a kernel makes in its connection folder: "kernel-<uuid>-ipc-N".
_SOCKET_NAME = "/kernel-" + "0" * 36 + "-ipc-5"


# Where a run's kernels get a folder when the temp folder's path is too long for their sockets.
SHORT_ROOTS = ("/tmp", "/var/tmp")
KERNEL_FOLDER_PREFIX = "echomq-viz-k-"  # short; swept after a killed run like the run's other folders


def ipc_problem(folder: str | os.PathLike, *, below: str = "") -> str | None:
    """Why kernels whose connection files go to ``folder`` (or to a folder
    ``below`` it, named so) cannot have their channels on Unix sockets there,
    in a few words; None when they can: the paths fit, and ``folder`` (which
    exists) takes a socket."""
    longest = len(os.path.join(str(folder), below) if below else str(folder)) + len(_SOCKET_NAME)
    if os.name != "posix":
        return "this system has no Unix sockets for Jupyter kernels"
    if longest > IPC_PATH_MAX:
        return f"their socket paths in {folder} would be {longest} bytes long, and at most {IPC_PATH_MAX} fit"
    probe = os.path.join(str(folder), f".echomq-viz-socket-probe-{os.getpid()}-{threading.get_ident()}")
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(probe)
        os.unlink(probe)
    except OSError as exc:
        return f"{folder} takes no socket ({exc.strerror or exc})"
    return None


def ipc_works(folder: str | os.PathLike, *, below: str = "") -> bool:
    """Whether :func:`ipc_problem` finds nothing against Unix sockets in ``folder``."""
    return ipc_problem(folder, below=below) is None


def ipc_options(folder: str | os.PathLike, *, below: str = "") -> list[str]:
    """A Jupyter server's options putting its kernels on Unix sockets, when
    :func:`ipc_works` says they can; else none (loopback ports)."""
    return ["--KernelManager.transport=ipc"] if ipc_works(folder, below=below) else []


def sweep_kernel_folders() -> list[str]:
    """Delete the kernels' folders (:func:`socket_folder`) of this user's runs
    that were killed, in :data:`SHORT_ROOTS`; quietly: they held sockets and
    connection files only. Returns the folders deleted."""
    from echomq_viz.redis_side._process import sweep_leftovers  # the one rule for whose folder is stale

    return [path for root in SHORT_ROOTS for path in sweep_leftovers(root, prefix=KERNEL_FOLDER_PREFIX)]


@dataclass(frozen=True)
class KernelFolder:
    """Where a server's kernels keep their connection files, and how they talk."""

    path: Path
    options: list[str]  # the server's options for it: ["--KernelManager.transport=ipc"] or none
    why_tcp: str | None  # on loopback ports: the one line saying why


@contextlib.contextmanager
def socket_folder(preferred: str | os.PathLike, *, below: str = "") -> Iterator[KernelFolder]:
    """``preferred`` (the run's own folder) when its kernels' sockets fit
    there; else a fresh 0700 folder of this process in the first of
    :data:`SHORT_ROOTS` where they do, deleted on exit (and swept after a
    killed run); else ``preferred`` on loopback ports, with the line saying why."""
    from echomq_viz.redis_side._process import claim

    why = ipc_problem(preferred, below=below)
    if why is None:
        yield KernelFolder(Path(preferred), ["--KernelManager.transport=ipc"], None)
        return
    for root in SHORT_ROOTS if os.name == "posix" else ():
        try:
            folder = tempfile.mkdtemp(prefix=KERNEL_FOLDER_PREFIX, dir=root)
        except OSError:
            continue
        try:
            try:
                claim(folder)  # a small file: a full root fails here, before any kernel's connection file
            except OSError:
                continue
            if ipc_works(folder, below=below):
                yield KernelFolder(Path(folder), ["--KernelManager.transport=ipc"], None)
                return
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    elsewhere = f", and neither {' nor '.join(SHORT_ROOTS)} takes them" if os.name == "posix" else ""
    yield KernelFolder(Path(preferred), [], f"echomq-viz: the kernels talk over loopback TCP ports, not Unix "
                       f"sockets: {why}{elsewhere}")


def runtime_dir() -> Path:
    """Where a Jupyter server started in this environment puts its kernels'
    connection files: jupyter_core's runtime folder, made here as the server
    would make it (0700) when it is not there yet."""
    from jupyter_core.paths import jupyter_runtime_dir
    from jupyter_core.utils import ensure_dir_exists

    folder = jupyter_runtime_dir()
    ensure_dir_exists(folder, mode=0o700)
    return Path(folder)


@contextlib.contextmanager
def private_kernel_config() -> Iterator["Config"]:
    """For a kernel we start ourselves (an nbclient run, a KernelManager):
    its connection file in a folder of its own (0700, deleted after), and
    its channels on Unix sockets there where :func:`socket_folder` finds
    room for them. Pass it as ``config=``."""
    from traitlets.config import Config

    from echomq_viz.redis_side._process import owned_tempdir

    with owned_tempdir("echomq-viz-kernel-") as run, socket_folder(run) as folder:
        settings = {"connection_file": str(folder.path / "kernel.json")}
        if folder.options:
            settings["transport"] = "ipc"
        yield Config({"KernelManager": settings})


def _font_cache_folder(env: dict[str, str]) -> Path:
    """Where Matplotlib keeps its cache for kernels started with ``env``, as its documentation
    says: ``$MPLCONFIGDIR``, else ``$XDG_CACHE_HOME/matplotlib``, else ``~/.cache/matplotlib``."""
    if env.get("MPLCONFIGDIR"):
        return Path(env["MPLCONFIGDIR"])
    cache = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(cache) / "matplotlib"


def font_cache_is_current(env: dict[str, str]) -> bool:
    """Whether that folder holds a font list made since Matplotlib was installed (its files
    are as old as its installation): then no kernel has one to build. Where either cannot
    be told, False, and :func:`warm_font_cache` lets Matplotlib decide."""
    try:
        spec = importlib.util.find_spec("matplotlib")  # found, not imported
        installed = os.stat(spec.origin).st_mtime if spec is not None and spec.origin else None
        if installed is None:
            return False
        return any(made.stat().st_mtime >= installed for made in _font_cache_folder(env).glob("fontlist-v*.json"))
    except (OSError, ImportError, ValueError):
        return False


def warm_font_cache(env: dict[str, str], timeout: float = 120) -> bool:
    """Build the Matplotlib font cache that kernels started with ``env`` will
    read (nothing to do when :func:`font_cache_is_current`). Returns whether that
    worked; when it did not, the first kernel builds the cache itself, as it always did."""
    if font_cache_is_current(env):
        return True
    try:
        done = subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
