"""What ``echomq-viz`` refuses before it starts anything, each in one line:
a temp folder that is full or missing (never quietly replaced by ``/tmp``),
a ``REDIS_URL`` that is no URL, a replica as the notebooks' Redis."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from echomq_viz.launcher.preflight import RUN_ROOM_KB, redis_url_problem, temp_folder_problem
from echomq_viz.redis_side.server import RedisServer, free_tcp_port

LAUNCHER = [sys.executable, "-m", "echomq_viz"]


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``echomq-viz ARGS`` in ``cwd``, its environment without REDIS_URL unless given."""
    full = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "TMPDIR")}, **env}
    return subprocess.run([*LAUNCHER, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


def _one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return lines[0]


# -- the temp folder ----------------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """``folder`` (made now) as a real file system of ``size`` ("4k"), unmounted afterwards.
    Mounting needs root (CI and this project's test machine run as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root; run as root to test a full disk")
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=1777", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@pytest.fixture
def full_folder(tmp_path):
    """A real file system with 0 bytes free: a tiny tmpfs, filled."""
    with tmpfs(tmp_path / "full", "4k") as folder:
        fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:  # ENOSPC: full
            pass
        finally:
            os.close(fd)
        assert os.statvfs(folder).f_bavail == 0
        yield folder


def test_a_temp_folder_that_is_missing_or_unwritable_is_named(tmp_path):
    missing = tmp_path / "nowhere"
    assert temp_folder_problem({"TMPDIR": str(missing)}) == (
        f"echomq-viz: TMPDIR={missing} is not a folder this user can write in (No such file or directory): make it, "
        "or set TMPDIR to one")
    assert temp_folder_problem({"TMP": str(tmp_path)}) is None  # TMP when TMPDIR and TEMP are not set, as tempfile
    assert os.listdir(tmp_path) == []  # the probe is gone


@pytest.mark.parametrize("command", [["app", "--no-browser"], ["lab", "--no-browser"], ["redis"],
                                     ["export", "--out", "pages"]])
def test_a_full_temp_folder_is_refused_not_replaced_by_tmp(full_folder, tmp_path, command):
    """With 0 bytes free, Python's tempfile quietly takes /tmp instead: the run would go on there."""
    line = _one_line(_run(command, tmp_path, TMPDIR=str(full_folder)))
    assert line == (f"echomq-viz: no space left in {full_folder}: free some there (a run needs about {RUN_ROOM_KB} "
                    "KB), or set TMPDIR to a folder with room")
    assert os.listdir(full_folder) == ["filler"]
    assert sorted(os.listdir(tmp_path)) == ["full"]  # no copy of the notebooks, no pages


# -- REDIS_URL -------------------------------------------------------------------------------------------


def test_a_redis_url_that_is_no_url_is_named_without_its_password():
    assert redis_url_problem({"REDIS_URL": "redis://127.0.0.1:6379/0"}) is None
    assert redis_url_problem({}) is None
    line = redis_url_problem({"REDIS_URL": "redis://:s3cretPW@[::1"})
    assert line.startswith("echomq-viz: bad Redis URL 'REDIS_URL=redis://:***@[::1': Invalid IPv6 URL (e.g. ")
    assert "s3cretPW" not in line


@pytest.mark.parametrize("command", ["app", "lab"])
def test_a_redis_url_that_is_no_url_is_one_line_and_nothing_starts(tmp_path, command):
    """``REDIS_URL='redis://[::1'`` was a traceback from urllib."""
    done = _run([command, "--no-browser", "--notebooks", str(tmp_path)], tmp_path,
                REDIS_URL="redis://:s3cretPW@[::1", TMPDIR=str(tmp_path))
    line = _one_line(done)
    assert line.startswith("echomq-viz: bad Redis URL 'REDIS_URL=redis://:***@[::1': Invalid IPv6 URL")
    assert "s3cretPW" not in done.stderr + done.stdout and done.stdout == ""
    assert os.listdir(tmp_path) == []


# -- a replica --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["app", "lab"])
def test_a_replica_is_refused_at_start_in_one_line(tmp_path, command):
    """``app`` on a replica once served every page with Voila's generic cell error."""
    with RedisServer(extra_args=("--replicaof", "127.0.0.1", str(free_tcp_port()))) as replica:  # never synced
        done = _run([command, "--no-browser", "--notebooks", str(tmp_path)], tmp_path, REDIS_URL=replica.url,
                    TMPDIR=str(tmp_path))
        assert replica.client().dbsize() == 0
    line = _one_line(done)
    assert line.startswith("echomq-viz: Redis at REDIS_URL=unix://") and line.endswith(
        "is a read-only replica: every notebook writes its demo queue; set REDIS_URL to its primary, or unset it "
        "for a private server; nothing was started")
    assert done.stdout == "" and os.listdir(tmp_path) == []
