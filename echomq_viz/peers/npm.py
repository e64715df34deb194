"""npm, run once into a cache folder this user owns.

Two things need packages from the npm registry: notebook 10's Node workers
(Bull and BullMQ, :mod:`echomq_viz.peers.node`) and the widget JavaScript the
offline pages carry (:mod:`echomq_viz.launcher.export`). Both fetch into
:func:`cache_root`, one process at a time, and need no network afterwards.
It lives with the peers, the lower of its two users, so imports run one way.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from pathlib import Path
from typing import Iterator, Sequence

__all__ = ["cache_root", "one_process_at_a_time", "run_npm"]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/echomq-viz`` (``~/.cache/echomq-viz``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "echomq-viz"


@contextlib.contextmanager
def one_process_at_a_time(folder: Path) -> Iterator[None]:
    """Two exports at once (two terminals, test workers) share the cache: the
    second waits for the first, then finds the files there. Notebook 10's
    Node packages use the same lock (:mod:`echomq_viz.peers.node`)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def run_npm(npm: str, args: Sequence[str], *, cwd: Path, what: str,
            error: type[Exception] = RuntimeError) -> str:
    """``npm <args>`` in ``cwd``, its standard output; a failure raises
    ``error`` saying ``what`` failed, with npm's last three lines."""
    result = subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = " | ".join((result.stderr or result.stdout).strip().splitlines()[-3:])
        raise error(f"{what} failed: {tail}")
    return result.stdout
