"""Stopping a process the tests started in a process group of its own.

Standard library only: ``exposure_probe.py`` runs it outside pytest, in a
network namespace of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(proc: subprocess.Popen, timeout: float = 60, signum: int = signal.SIGINT) -> int:
    """Ctrl-C (SIGINT) to ``proc``'s whole process group, as a terminal sends
    it, or ``signum``; SIGKILL to the group if it is still running after
    ``timeout`` s. Returns its exit code. ``proc`` must have been started with
    ``start_new_session=True``: its pid is then its group's id."""
    if proc.poll() is None:
        os.killpg(proc.pid, signum)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()
