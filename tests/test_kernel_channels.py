"""Where our kernels' channels go, and the font cache they find ready.

The app's, JupyterLab's and the export's kernels are checked on their
Unix sockets in ``test_cli.py`` and ``test_export.py``; here, the rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

from echomq_viz._kernel_channels import IPC_PATH_MAX, ipc_fits, ipc_options, runtime_dir, warm_font_cache


def test_kernels_go_on_unix_sockets_only_where_their_paths_fit():
    short = Path("/tmp/echomq-viz-app-abcdefgh/voila_12345678")
    # a macOS temp folder: the socket paths would pass 103 bytes
    long = Path("/var/folders/zz/abcdefghijklmnopqrstuvwx0000gn/T/echomq-viz-app-abcdefgh/voila_12345678")
    assert ipc_fits(short) and ipc_options(short) == ["--KernelManager.transport=ipc"]
    assert ipc_fits(Path("/tmp/" + "d" * 45)) and not ipc_fits(Path("/tmp/" + "d" * 45) / "voila_12345678")
    assert not ipc_fits(long) and ipc_options(long) == []
    # the edge: the longest socket name, "kernel-<uuid>-ipc-5", exactly at the limit
    edge = "/" + "d" * (IPC_PATH_MAX - len("/kernel-") - 36 - len("-ipc-5") - 1)
    assert ipc_fits(edge) and not ipc_fits(edge + "d")


def test_the_runtime_folder_is_jupyters_own(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    assert runtime_dir() == tmp_path / "runtime"


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
