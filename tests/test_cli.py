"""The ``echomq-viz`` launcher as people use it: started as a command, stopped
with Ctrl-C (SIGINT) or SIGTERM, and nothing it started may be left behind:
no redis-server, no kernel, no jupyter or voila process, no private Redis
folder.

:class:`Launched` (a running ``echomq-viz lab`` / ``app``) is shared with
``test_browser.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from echomq_viz.cli import cmdline, descendants, main

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = [sys.executable, "-m", "echomq_viz"]
TOKEN = "echomq-viz-test"

TINY_NOTEBOOK = {
    "cells": [{
        "cell_type": "code", "execution_count": None, "id": "tiny", "metadata": {}, "outputs": [],
        "source": "import os\nfrom echomq_viz.server import connect\n"
                  "print('REDIS_URL', os.environ['REDIS_URL'], 'PING', connect().ping())",
    }],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    return fields[0].decode(), fields[19].decode()


class Launched:
    """``echomq-viz lab|app --no-browser --port P`` running in a subprocess.

    :param notebooks: the notebooks folder it serves.
    """

    def __init__(self, mode: str, notebooks: Path, *, log: Path, extra: tuple[str, ...] = ()) -> None:
        self.mode = mode
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        argv = [*LAUNCHER, mode, "--no-browser", "--port", str(self.port), "--notebooks", str(notebooks)]
        if mode == "lab":
            argv.append(f"--IdentityProvider.token={TOKEN}")
        argv += list(extra)
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # its own embedded Redis
        self.log = log
        self._log_handle = open(log, "wb")
        # Its own process group, like a command in a terminal: Ctrl-C there
        # sends SIGINT to the whole group, which stop() does too.
        self.proc = subprocess.Popen(argv, cwd=notebooks.parent, env=env, stdout=subprocess.PIPE,
                                     stderr=self._log_handle, start_new_session=True)
        first = self.proc.stdout.readline().decode()
        match = re.search(r"Redis at (unix://(\S+)/redis\.sock\S*)", first)
        if not match:
            self.stop()
            raise AssertionError(f"unexpected first line from echomq-viz {mode}: {first!r}\n{self.log_tail()}")
        self.redis_url, self.redis_dir = match.group(1), match.group(2)
        self._wait_ready()

    # -- talking to it ------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 60):
        headers = {"Authorization": f"token {TOKEN}"} if self.mode == "lab" else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as response:
            payload = response.read()
        return payload

    def _wait_ready(self, timeout: float = 60) -> None:
        probe = "/api/status" if self.mode == "lab" else "/"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"echomq-viz {self.mode} exited with {self.proc.returncode}\n"
                                     f"{self.log_tail()}")
            try:
                self.request("GET", probe, timeout=2)
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        raise AssertionError(f"echomq-viz {self.mode} did not serve within {timeout}s\n{self.log_tail()}")

    def sessions(self) -> list[dict]:
        return json.loads(self.request("GET", "/api/sessions"))

    def delete_sessions(self) -> None:
        """Shut every kernel of a JupyterLab down: the next notebook starts fresh."""
        for session in self.sessions():
            self.request("DELETE", f"/api/sessions/{session['id']}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- its processes ------------------------------------------------------------------

    def family(self) -> dict[int, tuple[str, str]]:
        """Every process below the launcher: pid -> (start time, command line)."""
        found = {}
        for pid in descendants(self.proc.pid):
            stat = _stat(pid)
            if stat:
                found[pid] = (stat[1], cmdline(pid))
        return found

    @staticmethod
    def still_running(family: dict[int, tuple[str, str]]) -> list[str]:
        left = []
        for pid, (start, command) in family.items():
            stat = _stat(pid)
            if stat and stat[1] == start and stat[0] not in ("Z", "X"):
                left.append(f"{pid} {command[:160]}")
        return left

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            if signum == signal.SIGINT:
                os.killpg(self.proc.pid, signum)  # as a terminal's Ctrl-C does
            else:
                self.proc.send_signal(signum)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"echomq-viz {self.mode} did not stop within {timeout}s "
                                     f"after signal {signum}\n{self.log_tail()}")
        self.proc.stdout.close()
        self._log_handle.close()
        return self.proc.returncode

    def stop_and_check(self, signum: int = signal.SIGTERM) -> None:
        """Stop it and assert that nothing it started is left."""
        family = self.family()
        code = self.stop(signum)
        deadline = time.monotonic() + 5
        while self.still_running(family) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = self.still_running(family)
        assert not left, f"left behind after signal {signum}:\n" + "\n".join(left)
        assert not os.path.exists(self.redis_dir), f"the private Redis folder {self.redis_dir} is still there"
        assert code == 0, f"exit code {code}\n{self.log_tail()}"


@pytest.fixture
def tiny_notebooks(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "tiny.ipynb").write_text(json.dumps(TINY_NOTEBOOK))
    return folder


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _kernels(family: dict[int, tuple[str, str]]) -> list[int]:
    return [pid for pid, (_, cmdline) in family.items() if "ipykernel" in cmdline]


def _redis_servers(family: dict[int, tuple[str, str]]) -> list[int]:
    return [pid for pid, (_, cmdline) in family.items() if "redis-server" in cmdline.split(" ", 1)[0]]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_lab_stops_everything_it_started(tiny_notebooks, tmp_path, signum):
    lab = Launched("lab", tiny_notebooks, log=tmp_path / "lab.log")
    try:
        session = json.loads(lab.request("POST", "/api/sessions", {
            "path": "tiny.ipynb", "type": "notebook", "name": "tiny.ipynb", "kernel": {"name": "python3"}}))
        assert session["kernel"]["id"]
        family = _wait_for(lambda: (f := lab.family()) and _kernels(f) and f, 30, "a kernel process")
        assert _redis_servers(family), f"no redis-server under the launcher: {family}"
        assert any("jupyterlab" in cmd for _, cmd in family.values())
        # the news toast is switched off for this run only
        page = lab.request("GET", f"/lab?token={TOKEN}").decode()
        assert "@jupyterlab/apputils-extension:announcements" in page
        assert os.path.isdir(lab.redis_dir)
    finally:
        lab.stop_and_check(signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_app_stops_everything_it_started(tiny_notebooks, tmp_path, signum):
    app = Launched("app", tiny_notebooks, log=tmp_path / "app.log")
    try:
        page = app.request("GET", "/voila/render/tiny.ipynb", timeout=120).decode()
        # the kernel Voila started ran the notebook against the launcher's Redis
        assert f"REDIS_URL {app.redis_url} PING True" in page, page[-2000:]
        family = app.family()
        assert _kernels(family), f"no kernel after a page load: {family}"
        assert _redis_servers(family)
        assert "--MappingKernelManager.cull_idle_timeout=10" in " ".join(cmd for _, cmd in family.values())
    finally:
        app.stop_and_check(signum)


def test_a_killed_server_still_leaves_nothing(tiny_notebooks, tmp_path):
    """JupyterLab dying hard (SIGKILL) orphans its kernels: the launcher ends them."""
    lab = Launched("lab", tiny_notebooks, log=tmp_path / "lab.log")
    try:
        lab.request("POST", "/api/sessions", {
            "path": "tiny.ipynb", "type": "notebook", "name": "tiny.ipynb", "kernel": {"name": "python3"}})
        family = _wait_for(lambda: (f := lab.family()) and _kernels(f) and f, 30, "a kernel process")
        (server,) = [pid for pid, (_, cmd) in family.items() if "jupyterlab" in cmd]
        os.kill(server, signal.SIGKILL)
        code = lab.proc.wait(30)
        assert code != 0  # the server died: not a clean stop
        time.sleep(0.5)
        assert not lab.still_running(family), lab.still_running(family)
        assert not os.path.exists(lab.redis_dir)
    finally:
        lab.stop()


def test_redis_runs_in_the_foreground_and_says_how_to_connect(tmp_path):
    proc = subprocess.Popen([*LAUNCHER, "redis"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "REDIS_URL"})
    try:
        lines = [proc.stdout.readline() for _ in range(5)]
        text = "".join(lines)
        url = re.search(r"export REDIS_URL='(unix://\S+)'", text).group(1)
        assert re.search(r"redis-cli -s \S+redis\.sock", text), text
        assert "Ctrl-C stops it" in text
        import redis

        client = redis.Redis.from_url(url)
        assert client.ping()
        client.close()
        folder = url[len("unix://"):].rsplit("/", 1)[0]
        family = {pid: (_stat(pid)[1], cmdline(pid)) for pid in descendants(proc.pid) if _stat(pid)}
        assert _redis_servers(family)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
        time.sleep(0.2)
        assert not Launched.still_running(family)
        assert not os.path.exists(folder)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_redis_on_a_tcp_port():
    proc = subprocess.Popen([*LAUNCHER, "redis", "--port", "0"], stdout=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "REDIS_URL"})
    try:
        text = "".join(proc.stdout.readline() for _ in range(5))
        port = int(re.search(r"redis://127\.0\.0\.1:(\d+)/0", text).group(1))
        assert f"redis-cli -p {port}" in text
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            conn.sendall(b"PING\r\n")
            assert conn.recv(16).startswith(b"+PONG")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_bad_redis_url_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"unix://{tmp_path}/nothing-here.sock")
    (tmp_path / "notebooks").mkdir()
    code = main(["app", "--no-browser", "--notebooks", str(tmp_path / "notebooks")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("echomq-viz: cannot reach Redis at REDIS_URL=") and err.count("\n") == 1


def test_missing_notebooks_folder_is_reported(tmp_path):
    with pytest.raises(SystemExit, match="is not a folder"):
        main(["lab", "--notebooks", str(tmp_path / "absent")])


def test_unknown_options_only_for_lab_and_app(capsys):
    with pytest.raises(SystemExit):
        main(["redis", "--theme=dark"])
    assert "unrecognized arguments: --theme=dark" in capsys.readouterr().err


def test_help_lists_every_command():
    result = subprocess.run([*LAUNCHER, "--help"], capture_output=True, text=True, check=True)
    for command in ("lab", "app", "redis", "export"):
        assert command in result.stdout
    console = shutil.which("echomq-viz", path=str(Path(sys.executable).parent))
    if console:  # the console script, as installed by pip
        assert subprocess.run([console, "--help"], capture_output=True, text=True).returncode == 0
