"""The reader's copy of the notebooks: two launchers starting at once in one
folder copy them without a race, and ``echomq-viz lab`` on a clone saves into
the copy, never into a committed notebook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from echomq_viz.launcher.notebook_copies import COPY_RECORD, USER_FOLDER, shipped_notebooks
from echomq_viz.redis_side.server import free_tcp_port
from processes import stop_group

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "echomq-viz-copies"

# what `echomq-viz lab` does first without --notebooks, started on a signal so two start at once
LAB_COPY = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    go = Path(sys.argv[1])
    while not go.exists():
        time.sleep(0.001)
    from echomq_viz.launcher.notebook_copies import lab_notebooks
    lab_notebooks(say=print)
    """
)


def _shipped() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in shipped_notebooks().iterdir()
            if p.is_file() and not p.name.startswith(".")}


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_two_launchers_at_once_in_one_empty_folder_copy_every_notebook_whole(tmp_path):
    for run in range(20):
        shipped = _shipped()
        folder = tmp_path / f"run-{run}"
        folder.mkdir()
        go = folder / "go"
        procs = [subprocess.Popen([sys.executable, "-c", LAB_COPY, str(go)], cwd=folder, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        time.sleep(0.3)  # both imported and waiting
        go.touch()
        outs = [proc.communicate(timeout=120) for proc in procs]
        assert [proc.returncode for proc in procs] == [0, 0], outs
        copy = folder / USER_FOLDER
        said = sorted(out.strip() for out, _ in outs)
        assert said == [f"notebooks in {copy} (your copy: edits stay yours)",  # took its turn second: all there
                        f"notebooks in {copy} (your copy: edits stay yours; copied {len(shipped)}, "
                        f"updated 0 unedited)"], (run, outs)
        files = {p.name: p.read_bytes() for p in copy.iterdir() if not p.name.startswith(".")}
        assert files == shipped, run
        assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".")) == sorted(
            [COPY_RECORD, ".echomq-viz-copying.lock"]), run  # no half-written file left
        assert sorted(json.loads((copy / COPY_RECORD).read_text())) == sorted(shipped)


# -- lab on a clone ---------------------------------------------------------------------------------


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def clone(tmp_path) -> Path:
    """A git repository holding this working tree as its one commit (what a reader's clone is)."""
    repo = tmp_path / "echomq-viz"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".hypothesis", "*.egg-info",
        "__pycache__", ".ipynb_checkpoints", USER_FOLDER))
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "clone", cwd=repo)
    assert _git("status", "--porcelain", cwd=repo) == ""
    return repo


def _api(port: int, path: str, method: str = "GET", body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/contents/{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read().decode())


@pytest.mark.slow
def test_lab_on_a_clone_saves_into_the_readers_copy_and_git_stays_clean(clone, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTHONPATH")}
    env["TMPDIR"] = tempfile.mkdtemp(prefix="emq-c-")  # the launcher sweeps dead runs' leftovers there
    port = free_tcp_port()
    log = tmp_path / "lab.log"
    # python -m runs the clone's own package (the current folder comes first on sys.path)
    argv = [sys.executable, "-m", "echomq_viz", "lab", "--no-browser", "--port", str(port),
            f"--IdentityProvider.token={TOKEN}"]
    with open(log, "wb") as sink:
        proc = subprocess.Popen(argv, cwd=clone, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                listing = _api(port, "")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.3)
        committed = sorted(p.name for p in (clone / "notebooks").glob("*.ipynb"))
        assert sorted(item["name"] for item in listing["content"] if item["type"] == "notebook") == committed
        name = committed[0]
        model = _api(port, f"{name}?content=1")
        model["content"]["cells"].insert(0, {"cell_type": "markdown", "id": "readers-note", "metadata": {},
                                             "source": "a reader's note"})
        _api(port, name, "PUT", {"type": "notebook", "format": "json", "content": model["content"]})
        assert "a reader's note" in (clone / USER_FOLDER / name).read_text()  # saved, in the copy
        assert "a reader's note" not in (clone / "notebooks" / name).read_text()
        assert _git("status", "--porcelain", "--untracked-files=all", cwd=clone) == ""
    finally:
        stop_group(proc)
        shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    assert f"notebooks in {clone / USER_FOLDER} (your copy: edits stay yours; copied" in log.read_text()


@pytest.mark.slow  # a launcher of its own
def test_lab_in_a_full_folder_leaves_no_partial_copy_and_says_why_before_stopped(tmp_path):
    """A working folder with room for two notebooks of eleven: once a partial copy and a lock
    file were left, and ``stopped`` came before the reason."""
    from test_preflight import tmpfs

    short = tempfile.mkdtemp(prefix="emq-full-", dir="/tmp")  # the private Redis's socket path must stay short
    try:
        with tmpfs(tmp_path / "full", "200k") as full:
            env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": short}
            done = subprocess.run([sys.executable, "-m", "echomq_viz", "lab", "--no-browser", "--port", "0"],
                                  cwd=full, env=env, capture_output=True, text=True, timeout=180,
                                  stdin=subprocess.DEVNULL)
            left = sorted(os.listdir(full))
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-2:] == [
        f"echomq-viz: cannot keep your copy of the notebooks in {full / USER_FOLDER}: No space left on device "
        "(what this run had copied is removed); free some room there or pass --notebooks DIR",
        "echomq-viz: stopped"]
    assert left == []
