"""Where the kernels we start put their channels, and what they find ready.

A kernel on loopback ports gets them picked free by jupyter_client, then
binds them a moment later, once Python has started. When many kernels start
at once (a class joining, a test suite), another process's connection can
take such a port in between; that kernel dies ("Address already in use") and
its page or notebook is left without one. A kernel on Unix sockets
(``transport=ipc``) has socket files named after itself, next to its
connection file, which nobody else can take. We use them wherever the
socket paths fit, and jupyter_client's loopback ports elsewhere.

A new home has no Matplotlib font cache: the first kernel builds it, and
past five seconds (a loaded machine) says so on its stderr, in the
notebook. :func:`warm_font_cache` builds it before any kernel starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["IPC_PATH_MAX", "ipc_fits", "ipc_options", "runtime_dir", "warm_font_cache"]

# A Unix socket's path holds at most 103 bytes on macOS, 107 on Linux.
IPC_PATH_MAX = 100
# The longest socket a kernel makes in its connection folder: "kernel-<uuid>-ipc-N".
_SOCKET_NAME = "/kernel-" + "0" * 36 + "-ipc-5"


def ipc_fits(connection_dir: str | os.PathLike) -> bool:
    """Whether kernels whose connection files are in ``connection_dir`` can
    have their channels on Unix sockets there."""
    return os.name == "posix" and len(str(connection_dir)) + len(_SOCKET_NAME) <= IPC_PATH_MAX


def ipc_options(connection_dir: str | os.PathLike) -> list[str]:
    """A Jupyter server's options putting its kernels on Unix sockets, when
    their connection files go to ``connection_dir`` and the paths fit; else none."""
    return ["--KernelManager.transport=ipc"] if ipc_fits(connection_dir) else []


def runtime_dir() -> Path:
    """Where a Jupyter server started in this environment puts its kernels'
    connection files: jupyter_core's runtime folder, which it creates 0700."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


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
