"""Where our kernels' channels go, and the font cache they find ready.

The app's, JupyterLab's and the export's kernels are checked on their
Unix sockets in ``test_cli.py`` and ``test_export.py``; here, the rules."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from echomq_viz.launcher import _kernel_channels as kernel_channels
from echomq_viz.launcher._kernel_channels import (IPC_PATH_MAX, KERNEL_FOLDER_PREFIX, SHORT_ROOTS, ipc_options,
                                                  font_cache_is_current, ipc_problem, ipc_works, runtime_dir,
                                                  socket_folder, warm_font_cache)
from echomq_viz.redis_side._process import OWNER_FILE, cmdline

SOCKET_NAME = len("/kernel-") + 36 + len("-ipc-5")  # a kernel's longest socket name


@pytest.fixture
def short_folder():
    """A real folder with a short path, as a run's temp folder is."""
    folder = tempfile.mkdtemp(prefix="kc-", dir="/tmp")
    yield Path(folder)
    shutil.rmtree(folder)


def test_kernels_go_on_unix_sockets_only_where_their_paths_fit(short_folder):
    assert ipc_works(short_folder) and ipc_options(short_folder) == ["--KernelManager.transport=ipc"]
    # the edge: the longest socket path exactly at the limit, then one byte over
    room = IPC_PATH_MAX - len(str(short_folder)) - SOCKET_NAME - 1
    assert ipc_works(short_folder, below="d" * room)
    assert not ipc_works(short_folder, below="d" * (room + 1))
    assert ipc_options(short_folder, below="d" * (room + 1)) == []
    assert os.listdir(short_folder) == []  # the probe socket is gone


def test_no_unix_sockets_where_the_file_system_takes_none():
    assert sys.platform.startswith("linux") and Path("/sys/kernel").is_dir()
    assert not ipc_works("/sys/kernel")  # sysfs: a socket cannot be made there, even by root
    assert ipc_options("/sys/kernel") == []


def test_the_runtime_folder_is_jupyters_own_made_private(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    assert runtime_dir() == tmp_path / "runtime"
    assert (tmp_path / "runtime").stat().st_mode & 0o777 == 0o700


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_the_font_cache_is_built_before_any_kernel_needs_it(tmp_path):
    """A new home gets Matplotlib's font list; its first kernel then has
    nothing to build (and nothing to say about it in the notebook)."""
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}
    assert warm_font_cache(env)
    fontlists = list((tmp_path / "mpl").glob("fontlist-v*.json"))
    assert len(fontlists) == 1
    assert json.loads(fontlists[0].read_text())["ttflist"]


def test_a_font_cache_made_since_matplotlib_was_installed_starts_no_process(tmp_path, monkeypatch):
    """The warm-up's process costs a third of a second of CPU at every launcher start: where the
    cache is there and newer than Matplotlib's files, none starts; where it is older, one does."""
    started = []
    monkeypatch.setattr(kernel_channels.subprocess, "run", lambda argv, **kwargs: started.append(argv) or
                        subprocess.CompletedProcess(argv, 0))
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}
    assert not font_cache_is_current(env)  # a new home
    assert warm_font_cache(env) and len(started) == 1
    (tmp_path / "mpl").mkdir()
    fontlist = tmp_path / "mpl" / "fontlist-v390.json"
    fontlist.write_text("{}")
    assert font_cache_is_current(env)
    assert warm_font_cache(env) and len(started) == 1
    os.utime(fontlist, (0, 0))  # made before this Matplotlib was installed
    assert not font_cache_is_current(env)
    assert warm_font_cache(env) and len(started) == 2
    # the folder Matplotlib documents, when MPLCONFIGDIR is not set
    plain = {k: v for k, v in env.items() if k != "MPLCONFIGDIR"}
    assert kernel_channels._font_cache_folder({**plain, "XDG_CACHE_HOME": "/c"}) == Path("/c/matplotlib")
    bare = {k: v for k, v in plain.items() if k != "XDG_CACHE_HOME"}
    assert kernel_channels._font_cache_folder({**bare, "HOME": "/h"}) == Path("/h/.cache/matplotlib")


def test_a_font_cache_that_cannot_be_built_is_reported_not_raised(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "new-home")}
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    assert warm_font_cache(env) is False


# -- a folder for the kernels whatever TMPDIR is -----------------------------------------------------


def test_a_folder_too_long_for_sockets_gives_the_kernels_a_short_one_of_their_own(short_folder):
    long = short_folder / ("d" * (IPC_PATH_MAX - len(str(short_folder)) - SOCKET_NAME))  # one byte over
    long.mkdir()
    assert ipc_problem(long) == (f"their socket paths in {long} would be {IPC_PATH_MAX + 1} bytes long, and at "
                                 f"most {IPC_PATH_MAX} fit")
    with socket_folder(long) as kernels:
        folder = kernels.path
        assert folder.parent == Path(SHORT_ROOTS[0]) and folder.name.startswith(KERNEL_FOLDER_PREFIX)
        assert kernels.options == ["--KernelManager.transport=ipc"] and kernels.why_tcp is None
        assert folder.stat().st_mode & 0o777 == 0o700
        assert json.loads((folder / OWNER_FILE).read_text())["pid"] == os.getpid()  # swept if this run is killed
    assert not folder.exists()
    with socket_folder(short_folder) as kernels:  # where they fit: the run's own folder
        assert kernels.path == short_folder and kernels.why_tcp is None


def test_where_no_folder_takes_sockets_one_line_says_why_tcp(short_folder, monkeypatch):
    monkeypatch.setattr(kernel_channels, "SHORT_ROOTS", ("/sys/kernel",))  # sysfs: no folder can be made there
    long = short_folder / ("d" * IPC_PATH_MAX)
    long.mkdir()
    with socket_folder(long) as kernels:
        assert kernels.path == long and kernels.options == []
        assert kernels.why_tcp == (f"echomq-viz: the kernels talk over loopback TCP ports, not Unix sockets: their "
                                   f"socket paths in {long} would be {len(str(long)) + SOCKET_NAME} bytes long, and "
                                   f"at most {IPC_PATH_MAX} fit, and neither /sys/kernel takes them")
    assert os.listdir(long) == []


@pytest.mark.slow
def test_the_app_under_a_long_tmpdir_keeps_its_kernels_on_unix_sockets_and_says_nothing_of_tcp(tmp_path):
    """TMPDIR's length once sent every app kernel over TCP, each saying so in the terminal."""
    from test_cli import Launched, _assert_on_private_unix_sockets, _kernels

    tmpdir = Path(tempfile.mkdtemp(prefix="a-temp-folder-far-longer-than-eleven-", dir="/tmp"))
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "tiny.ipynb").write_text(json.dumps(TINY))
    try:
        app = Launched("app", folder, log=tmp_path / "app.log", env={"TMPDIR": str(tmpdir)})
        try:
            app.request("GET", "/voila/render/tiny.ipynb", timeout=120)
            kernels = _kernels(app.family())
            assert kernels
            for pid in kernels:
                _assert_on_private_unix_sockets(pid)
            connection_file = Path(re.search(r"-f (\S+)", cmdline(kernels[0])).group(1))
            ours = connection_file.parents[1]  # <root>/echomq-viz-k-XXXXXXXX/voila_XXXXXXXX/kernel-....json
            assert ours.parent == Path(SHORT_ROOTS[0]) and ours.name.startswith(KERNEL_FOLDER_PREFIX)
        finally:
            app.stop_and_check()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    log = (tmp_path / "app.log").read_text()
    assert "over TCP" not in log and "TCP ports" not in log, log[-2000:]
    assert not ours.exists()  # gone with the run


TINY = {"cells": [{"cell_type": "code", "execution_count": None, "id": "t", "metadata": {}, "outputs": [],
                   "source": "x = 1"}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}
