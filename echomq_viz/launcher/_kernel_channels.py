"""Where the kernels we start put their channels, and what they find ready.

A kernel on loopback ports gets them picked free by jupyter_client, then
binds them a moment later, once Python has started. When many kernels start
at once (a class joining, a test suite), another process's connection can
take such a port in between; that kernel dies ("Address already in use") and
its page or notebook is left without one. A kernel on Unix sockets
(``transport=ipc``) has socket files named after itself, next to its
connection file, which nobody else can take. We use them where the socket
paths fit and the folder's file system takes sockets (some network and FUSE
file systems do not), and jupyter_client's loopback ports elsewhere.

A new home has no Matplotlib font cache: the first kernel builds it, and
past five seconds (a loaded machine) says so on its stderr, in the
notebook. :func:`warm_font_cache` builds it before any kernel starts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from traitlets.config import Config

__all__ = ["IPC_PATH_MAX", "ipc_works", "ipc_options", "private_kernel_config", "runtime_dir", "warm_font_cache"]

# A Unix socket's path holds at most 103 bytes on macOS, 107 on Linux.
IPC_PATH_MAX = 100
# The longest socket a kernel makes in its connection folder: "kernel-<uuid>-ipc-N".
_SOCKET_NAME = "/kernel-" + "0" * 36 + "-ipc-5"


def ipc_works(folder: str | os.PathLike, *, below: str = "") -> bool:
    """Whether kernels whose connection files go to ``folder`` (or to a
    folder ``below`` it, named so) can have their channels on Unix sockets
    there: the paths fit, and ``folder`` (which exists) takes a socket."""
    longest = len(os.path.join(str(folder), below) if below else str(folder)) + len(_SOCKET_NAME)
    if os.name != "posix" or longest > IPC_PATH_MAX:
        return False
    probe = os.path.join(str(folder), f".echomq-viz-socket-probe-{os.getpid()}-{threading.get_ident()}")
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(probe)
        os.unlink(probe)
    except OSError:
        return False
    return True


def ipc_options(folder: str | os.PathLike, *, below: str = "") -> list[str]:
    """A Jupyter server's options putting its kernels on Unix sockets, when
    :func:`ipc_works` says they can; else none (loopback ports)."""
    return ["--KernelManager.transport=ipc"] if ipc_works(folder, below=below) else []


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
    its channels on Unix sockets there where :func:`ipc_works` says they can
    be. Pass it as ``config=``."""
    from traitlets.config import Config

    from echomq_viz.redis_side._process import owned_tempdir

    with owned_tempdir("echomq-viz-kernel-") as folder:
        settings = {"connection_file": str(folder / "kernel.json")}
        if ipc_works(folder):
            settings["transport"] = "ipc"
        yield Config({"KernelManager": settings})


def warm_font_cache(env: dict[str, str], timeout: float = 120) -> bool:
    """Build the Matplotlib font cache that kernels started with ``env`` will
    read (a no-op when it is there). Returns whether that worked; when it did
    not, the first kernel builds the cache itself, as it always did."""
    try:
        done = subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
