"""Where our kernels' channels go, and the font cache they find ready.

The app's, JupyterLab's and the export's kernels are checked on their
Unix sockets in ``test_cli.py`` and ``test_export.py``; here, the rules."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from echomq_viz.launcher._kernel_channels import IPC_PATH_MAX, ipc_options, ipc_works, runtime_dir, warm_font_cache

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


def test_a_font_cache_that_cannot_be_built_is_reported_not_raised(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    assert warm_font_cache(env) is False
