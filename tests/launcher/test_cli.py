"""The ``echomq-viz`` launcher as people use it: started as a command, stopped
with Ctrl-C (SIGINT) or SIGTERM, and nothing it started may be left behind:
no redis-server, no kernel, no jupyter or voila process, no private Redis
folder.

:class:`Launched` (a running ``echomq-viz lab`` / ``app``) is shared with
``test_browser.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import psutil
import pytest

from echomq_viz.launcher._kernel_channels import KERNEL_FOLDER_PREFIX, ipc_works
from echomq_viz.redis_side._process import claim, cmdline, descendants
from echomq_viz.launcher.cli import ENV_INSPECT, app_environment, build_parser, kernel_transport, main
from echomq_viz.redis_side.server import RedisServer, free_tcp_port
from kernel_socket import kernel_id_of, page_config
from test_server import as_nobody, wait_for

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = [sys.executable, "-m", "echomq_viz"]
TOKEN = "echomq-viz-test"

TINY_NOTEBOOK = {
    "cells": [{
        "cell_type": "code", "execution_count": None, "id": "tiny", "metadata": {}, "outputs": [],
        "source": "import os\nfrom echomq_viz.redis_side.server import connect\n"
                  "print('REDIS_URL', os.environ['REDIS_URL'], 'PING', connect().ping())\n"
                  "print('INSPECT', os.environ.get('ECHOMQ_VIZ_INSPECT'))",
    }],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def free_port() -> int:
    return free_tcp_port()


# A notebook whose cell fails with a secret in its error and on stderr,
# both made at run time (so the secret is in no cell source).
FAILING_NOTEBOOK = {
    **TINY_NOTEBOOK,
    "cells": [{
        "cell_type": "code", "execution_count": None, "id": "fails", "metadata": {}, "outputs": [],
        "source": "import sys\nsecret = 's3cret' + 'PW'\nprint('on stderr', secret, file=sys.stderr)\n"
                  "raise RuntimeError(f'cannot reach Redis at redis://:{secret}@127.0.0.1:1/0')",
    }],
}


def _stat(pid: int) -> tuple[str, float] | None:
    """(status, start time) of a process, None when it is gone."""
    try:
        proc = psutil.Process(pid)
        return proc.status(), proc.create_time()
    except psutil.Error:
        return None


class Launched:
    """``echomq-viz lab|app --no-browser --port P`` running in a subprocess.

    :param notebooks: the notebooks folder it serves.
    """

    def __init__(self, mode: str, notebooks: Path, *, log: Path, extra: tuple[str, ...] = (),
                 env: dict[str, str] | None = None) -> None:
        self.mode = mode
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        argv = [*LAUNCHER, mode, "--no-browser", "--port", str(self.port), "--notebooks", str(notebooks)]
        if mode == "lab":
            argv.append(f"--IdentityProvider.token={TOKEN}")
        else:  # what is tested here is the app's pages and processes; its login: test_exposure
            argv.append("--Voila.token=")
        argv += list(extra)
        env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, **(env or {})}  # its own Redis
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

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 60,
                headers: dict[str, str] | None = None):
        headers = {**({"Authorization": f"token {TOKEN}"} if self.mode == "lab" else {}), **(headers or {})}
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

    def family(self) -> dict[int, tuple[float, str]]:
        """Every process below the launcher: pid -> (start time, command line)."""
        found = {}
        for pid in descendants(self.proc.pid):
            stat = _stat(pid)
            if stat:
                found[pid] = (stat[1], cmdline(pid))
        return found

    @staticmethod
    def still_running(family: dict[int, tuple[float, str]]) -> list[str]:
        left = []
        for pid, (start, command) in family.items():
            stat = _stat(pid)
            if stat and stat[1] == start and stat[0] not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
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
    (folder / "fails.ipynb").write_text(json.dumps(FAILING_NOTEBOOK))
    return folder


@contextlib.contextmanager
def running_redis(*args: str, env: dict[str, str] | None = None, stderr=subprocess.PIPE):
    """``echomq-viz redis ARGS`` on its own embedded server; killed at the end if still running."""
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, **(env or {})}
    with own_tmpdir(env):
        proc = subprocess.Popen([*LAUNCHER, "redis", *args], stdout=subprocess.PIPE, stderr=stderr, text=True,
                                env=env)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


@contextlib.contextmanager
def own_tmpdir(env: dict[str, str]) -> Iterator[Path]:
    """A fresh TMPDIR in ``env`` unless it names one: the launcher deletes the
    leftovers of dead runs it finds there at start, and a test in another
    worker may just have killed one. Short, as a unix socket path must stay
    under 108 bytes."""
    if "TMPDIR" in env:
        yield Path(env["TMPDIR"])
        return
    tmp = tempfile.mkdtemp(prefix="emq-t-")
    env["TMPDIR"] = tmp
    try:
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _kernels(family: dict[int, tuple[float, str]]) -> list[int]:
    """Kernels, by the connection file on their command line (the app's run
    ``-m echomq_viz.launcher._app_kernel``, JupyterLab's ``-m ipykernel_launcher``)."""
    return [pid for pid, (_, cmdline) in family.items() if re.search(r"kernel-[0-9a-f-]+\.json", cmdline)]


def _redis_servers(family: dict[int, tuple[float, str]]) -> list[int]:
    return [pid for pid, (_, cmdline) in family.items() if "redis-server" in cmdline.split(" ", 1)[0]]


@pytest.mark.slow
def test_lab_stops_everything_it_started(tiny_notebooks, tmp_path):
    """SIGTERM, as a service manager stops it; Ctrl-C (SIGINT to the whole group, a kernel
    running) is the next test's stop, with the terminal's last line."""
    signum = signal.SIGTERM
    lab = Launched("lab", tiny_notebooks, log=tmp_path / "lab.log")
    try:
        session = json.loads(lab.request("POST", "/api/sessions", {
            "path": "tiny.ipynb", "type": "notebook", "name": "tiny.ipynb", "kernel": {"name": "python3"}}))
        assert session["kernel"]["id"]
        family = wait_for(lambda: (f := lab.family()) and _kernels(f) and f, 30, "a kernel process")
        assert _redis_servers(family), f"no redis-server under the launcher: {family}"
        assert any("jupyterlab" in cmd for _, cmd in family.values())
        assert all(ENV_INSPECT not in psutil.Process(pid).environ() for pid in _kernels(family))  # lab: unset
        # the news toast and the build check are switched off for this run only
        page = lab.request("GET", f"/lab?token={TOKEN}").decode()
        config = page_config(page)
        assert config["disabledExtensions"] == ["@jupyterlab/apputils-extension:announcements"]
        assert (config["buildCheck"], config["buildAvailable"]) == (False, False)
        assert os.path.isdir(lab.redis_dir)
        for pid in _kernels(family):
            _assert_on_private_unix_sockets(pid)
    finally:
        lab.stop_and_check(signum)
    assert "deprecated" not in (tmp_path / "lab.log").read_text()  # not the false ServerApp.token warning


@pytest.mark.slow
def test_lab_says_only_what_a_user_can_act_on_and_stopped_last(tmp_path):
    """The shipped notebooks open trusted, a kernel connects, one Ctrl-C stops it all; the terminal
    never offers a second Ctrl-C, lists missing language servers, warns about websocket pings or
    calls a shipped notebook untrusted, and its last line says it stopped."""
    import asyncio

    from tornado.websocket import websocket_connect

    folder = tmp_path / "notebooks"
    folder.mkdir()
    shipped = Path(__file__).resolve().parents[2] / "notebooks" / "00-start-here.ipynb"
    shutil.copy(shipped, folder / shipped.name)
    (folder / "tiny.ipynb").write_text(json.dumps(TINY_NOTEBOOK))  # not shipped: left untrusted
    lab = Launched("lab", folder, log=tmp_path / "lab.log", env={"JUPYTER_DATA_DIR": str(tmp_path / "data")})
    try:
        for name in (shipped.name, "tiny.ipynb"):
            lab.request("GET", f"/api/contents/{name}")
        session = json.loads(lab.request("POST", "/api/sessions", {
            "path": "tiny.ipynb", "type": "notebook", "name": "tiny.ipynb", "kernel": {"name": "python3"}}))

        async def connect() -> None:
            url = f"ws://127.0.0.1:{lab.port}/api/kernels/{session['kernel']['id']}/channels?token={TOKEN}"
            socket = await websocket_connect(url)
            await asyncio.sleep(1)
            socket.close()

        asyncio.run(connect())
        _wait_for_text(lab.log, "Connecting to kernel")
        assert _kernels(lab.family()), "Ctrl-C is checked with a kernel running"
    finally:
        lab.stop_and_check(signal.SIGINT)
    log = (tmp_path / "lab.log").read_text()
    for unactionable in ("twice to skip confirmation", "Skipped non-installed", "websocket_ping_timeout",
                         "Starting buffering", "Adapting from protocol", "received signal",
                         "extension was successfully", "JupyterLab extension loaded",
                         f"{shipped.name} is not trusted"):
        assert unactionable not in log, f"{unactionable!r} in:\n{log[-3000:]}"
    assert "tiny.ipynb is not trusted" in log  # the filter is no blanket: a notebook of yours is still named
    assert log.strip().splitlines()[-1] == "echomq-viz: stopped", log[-1500:]


@pytest.mark.slow
def test_the_app_says_only_what_a_teacher_can_act_on_and_stopped_last(tmp_path):
    """A shipped notebook served, a page's kernel connected, then left and culled, one Ctrl-C:
    no option warning, no ping warning, no buffering note, no untrusted shipped notebook, the
    culling an info line, and the last line says it stopped."""
    import asyncio

    from tornado.websocket import websocket_connect

    folder = tmp_path / "notebooks"
    folder.mkdir()
    shipped = Path(__file__).resolve().parents[2] / "notebooks" / "00-start-here.ipynb"
    shutil.copy(shipped, folder / shipped.name)
    app = Launched("app", folder, log=tmp_path / "app.log", env={"JUPYTER_DATA_DIR": str(tmp_path / "data")})
    try:
        page = app.request("GET", f"/voila/render/{shipped.name}", timeout=180).decode()
        kernel_id = kernel_id_of(page)

        async def visit() -> None:  # the page's websocket: opened, then the tab closed
            socket = await websocket_connect(
                f"ws://127.0.0.1:{app.port}/api/kernels/{kernel_id}/channels?session_id=a-visitor")
            await asyncio.sleep(1)
            socket.close()

        asyncio.run(visit())
        _wait_for_text(app.log, "Culling 'idle' kernel", timeout=60)
    finally:
        app.stop_and_check(signal.SIGINT)
    log = (tmp_path / "app.log").read_text()
    for unactionable in ("Warning", "WARNING", "websocket_ping_timeout", "Starting buffering", "Adapting from protocol",
                         "is not trusted", "Handle signal"):
        assert unactionable not in log, f"{unactionable!r} in:\n{log[-3000:]}"
    assert re.search(r"^\[AppVoila\] Culling 'idle' kernel", log, re.M), log[-3000:]
    assert log.strip().splitlines()[-1] == "echomq-viz: stopped", log[-1500:]


@pytest.mark.slow
def test_the_app_shows_a_tagged_cells_source_and_never_a_traceback_or_secret(tiny_notebooks, tmp_path):
    """What a visitor's page shows, two pages of one app: a cell tagged ``show-in-app`` with its
    source (the others output only), and a cell that fails said so, without its traceback, its
    stderr or the password in its message."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# 01 · Tagged\n\nThe next cell does it from code:"},
             {"cell_type": "code", "metadata": {"tags": ["show-in-app"]}, "execution_count": None, "outputs": [],
              "source": "shown_in_the_app = 6 * 7\nprint(shown_in_the_app)"},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": "hidden_in_the_app = 1\nprint('the hidden cell ran')"}]
    (tiny_notebooks / "tagged.ipynb").write_text(json.dumps({**TINY_NOTEBOOK, "cells": cells}))
    app = Launched("app", tiny_notebooks, log=tmp_path / "app.log")
    try:
        page = app.request("GET", "/voila/render/tagged.ipynb", timeout=120).decode()
        failed = app.request("GET", "/voila/render/fails.ipynb", timeout=120).decode()
    finally:
        app.stop_and_check()
    assert "shown_in_the_app" in page and "42" in page
    assert "hidden_in_the_app" not in page and "the hidden cell ran" in page
    assert 'document.title = "01 \\u00b7 Tagged \\u00b7 echomq-viz"' in page  # the tab names the notebook
    assert "There was an error when executing cell" in failed  # the visitor learns that it failed
    for hidden in ("s3cretPW", "Traceback", "RuntimeError", "on stderr", "show_tracebacks"):
        assert hidden not in failed, hidden


@pytest.mark.parametrize("signum, extra, inspect", [
    (signal.SIGTERM, (), "own"),
    (signal.SIGINT, ("--inspect-any",), "any"),
], ids=["SIGTERM", "SIGINT-inspect-any"])
@pytest.mark.slow
def test_app_stops_everything_it_started(tiny_notebooks, tmp_path, signum, extra, inspect):
    app = Launched("app", tiny_notebooks, log=tmp_path / "app.log", extra=extra)
    try:
        page = app.request("GET", "/voila/render/tiny.ipynb", timeout=120).decode()
        # the kernel Voila started ran the notebook against the launcher's Redis
        assert f"REDIS_URL {app.redis_url} PING True" in page, page[-2000:]
        assert f"INSPECT {inspect}" in page
        family = app.family()
        assert _kernels(family), f"no kernel after a page load: {family}"
        assert _redis_servers(family)
        assert "--MappingKernelManager.cull_idle_timeout=10" in " ".join(cmd for _, cmd in family.values())
        assert "--VoilaExecutor.iopub_timeout=30" in " ".join(cmd for _, cmd in family.values())
        for pid in _kernels(family):
            _assert_on_private_unix_sockets(pid)
    finally:
        app.stop_and_check(signum)


def _assert_on_private_unix_sockets(kernel_pid: int) -> None:
    """A kernel of the app or lab has its channels on socket files in a folder only
    its owner can enter, as its connection file says: no port to lose to
    another process between picking it and binding it. (ipykernel's own pipe
    for forked subprocesses' output still binds a loopback port, atomically,
    and checks a random token on each message.)"""
    connection_file = Path(re.search(r"(\S+kernel-[0-9a-f-]+\.json)", cmdline(kernel_pid)).group(1))
    info = json.loads(connection_file.read_text())
    assert info["transport"] == "ipc"
    folder = Path(info["ip"]).parent
    assert folder == connection_file.parent
    assert folder.stat().st_mode & 0o077 == 0  # the owner only (jupyter_core adds the sticky bit)
    sockets = [f"{info['ip']}-{info[name]}" for name in ("shell_port", "iopub_port", "control_port", "hb_port")]
    # the connection file is written before the kernel binds: give it time to start
    wait_for(lambda: all(os.path.exists(path) for path in sockets), 60, f"the kernel's sockets {sockets}")
    assert all(stat.S_ISSOCK(os.stat(path).st_mode) for path in sockets), sockets


def test_the_app_puts_kernels_on_unix_sockets_in_a_short_folder_whatever_tmpdir(tmp_path):
    """Voila's connection folder inside the run's: its name counts too. Where the run's folder
    leaves no room for it, the kernels get a short folder of the run's own."""
    run_dir = Path(tempfile.mkdtemp(prefix="echomq-viz-app-", dir="/tmp"))
    try:
        with kernel_transport(run_dir) as kernels:
            assert (kernels.path, kernels.options, kernels.why_tcp) == (run_dir, ["--KernelManager.transport=ipc"], None)
        # 100 bytes for the longest socket without Voila's folder, over with it
        long = run_dir / ("d" * (100 - len(str(run_dir)) - len("/kernel-") - 36 - len("-ipc-5") - 1))
        long.mkdir()
        assert ipc_works(long)
        with kernel_transport(long) as kernels:
            assert kernels.path.parent == Path("/tmp") and kernels.options == ["--KernelManager.transport=ipc"]
            assert kernels.why_tcp is None and ipc_works(kernels.path, below="voila_12345678")
        assert not kernels.path.exists()
    finally:
        shutil.rmtree(run_dir)


@pytest.mark.slow
def test_a_killed_server_still_leaves_nothing(tiny_notebooks, tmp_path):
    """JupyterLab dying hard (SIGKILL) orphans its kernels: the launcher ends them."""
    lab = Launched("lab", tiny_notebooks, log=tmp_path / "lab.log")
    try:
        lab.request("POST", "/api/sessions", {
            "path": "tiny.ipynb", "type": "notebook", "name": "tiny.ipynb", "kernel": {"name": "python3"}})
        family = wait_for(lambda: (f := lab.family()) and _kernels(f) and f, 30, "a kernel process")
        # the oldest: a process the server forks (a kernel, say) shows the server's command line until it execs
        server = min((start, pid) for pid, (start, cmd) in family.items() if "jupyterlab" in cmd)[1]
        os.kill(server, signal.SIGKILL)
        code = lab.proc.wait(30)
        assert code != 0  # the server died: not a clean stop
        time.sleep(0.5)
        assert not lab.still_running(family), lab.still_running(family)
        assert not os.path.exists(lab.redis_dir)
    finally:
        lab.stop()


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_redis_runs_in_the_foreground_and_says_how_to_connect(tmp_path):
    with running_redis() as proc:
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


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_redis_on_a_tcp_port_keeps_the_password_off_the_screen(tmp_path):
    # The password goes to a 0600 file in the server's 0700 folder; the screen
    # (and any log the output goes to) shows only how to load it.
    with running_redis("--port", "0") as proc:
        text = "".join(proc.stdout.readline() for _ in range(5))
        env_file = Path(re.search(r"^  \. (\S+/connect\.env)$", text, re.M).group(1))
        port = int(re.search(r"^  redis-cli -p (\d+)$", text, re.M).group(1))
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(env_file.parent.stat().st_mode) == 0o700
        exported = dict(re.findall(r"^export (\w+)='(.*)'$", env_file.read_text(), re.M))
        url, password = exported["REDIS_URL"], exported["REDISCLI_AUTH"]
        assert url == f"redis://:{password}@127.0.0.1:{port}/0" and len(password) >= 32
        assert password not in text and "redis://" not in text

        import redis

        assert redis.Redis.from_url(url).ping()
        if shutil.which("redis-cli"):  # the two printed lines, as a person runs them
            done = subprocess.run(["sh", "-c", f". {env_file} && redis-cli -p {port} ping"],
                                  capture_output=True, text=True, timeout=20)
            assert done.stdout.strip() == "PONG", done
        found = as_nobody(port, None, str(tmp_path))
        assert all(line.startswith("-NOAUTH") for line in found["tcp"]), found
        assert subprocess.run(["cat", str(env_file)], user="nobody", capture_output=True).returncode != 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert password not in proc.stderr.read()


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
    for command in ("lab", "app", "redis", "clean", "export"):
        assert command in result.stdout
    app_help = subprocess.run([*LAUNCHER, "app", "--help"], capture_output=True, text=True, check=True).stdout
    assert "--inspect-any" in app_help and f"{ENV_INSPECT}=own" in " ".join(app_help.split())
    console = shutil.which("echomq-viz", path=str(Path(sys.executable).parent))
    if console:  # the console script, as installed by pip
        assert subprocess.run([console, "--help"], capture_output=True, text=True).returncode == 0


# -- secrets and tracebacks -------------------------------------------------------------------------


@pytest.mark.slow
def test_your_redis_is_named_without_its_password(tmp_path):
    # lab with REDIS_URL on a password-protected server; JupyterLab only
    # prints its version, so the run is short. Cleaning orphans at the start
    # is never fatal, whatever it finds.
    with RedisServer(port=0) as server:
        env = {**os.environ, "REDIS_URL": server.url}
        done = subprocess.run([*LAUNCHER, "lab", "--no-browser", "--notebooks", str(tmp_path), "--version"],
                              env=env, capture_output=True, text=True, timeout=120)
    first = done.stdout.splitlines()[0]
    assert first == f"echomq-viz: notebooks use your Redis at redis://:***@127.0.0.1:{server.port}/0"
    assert server.password not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr


# -- a redis-server that dies ------------------------------------------------------------------------


def _wait_for_text(path_or_stream, needle: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = Path(path_or_stream).read_text(errors="replace")
        if needle in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"no {needle!r} within {timeout}s in:\n{Path(path_or_stream).read_text()[-2000:]}")


@pytest.mark.slow
def test_lab_restarts_a_killed_redis_server_at_the_same_address(tiny_notebooks, tmp_path):
    import redis

    lab = Launched("lab", tiny_notebooks, log=tmp_path / "lab.log")
    try:
        (old,) = _redis_servers(lab.family())
        os.kill(old, signal.SIGKILL)
        log = _wait_for_text(lab.log, "restarted it at the same address")
        line = next(line for line in log.splitlines() if "restarted" in line)
        assert line.startswith(f"echomq-viz: redis-server (pid {old}) was killed by signal 9; restarted")
        assert redis.Redis.from_url(lab.redis_url).ping()
        assert old not in _redis_servers(lab.family())
    finally:
        lab.stop_and_check()


SUPERVISE_WATCHED = textwrap.dedent(
    """
    import sys, time
    from echomq_viz.redis_side._process import supervise
    started = time.monotonic()
    code = supervise([sys.executable, "-c", "import time; time.sleep(60)"], {},
                     watch=lambda: time.monotonic() - started < 1.0, grace=5)
    print(code, round(time.monotonic() - started))
    """
)


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_supervise_stops_the_server_when_watch_says_so():
    # What lab and app do once their embedded Redis is gone for good.
    done = subprocess.run([sys.executable, "-c", SUPERVISE_WATCHED], capture_output=True, text=True, timeout=60)
    code, seconds = done.stdout.split()
    assert code == "1" and int(seconds) < 5, done
    assert "stopping the server and its kernels" in done.stderr


# A server that ignores SIGTERM: the first stop waits out its grace, a second stop does not.
SUPERVISE_STUBBORN = textwrap.dedent(
    """
    import sys, time
    from echomq_viz.redis_side._process import supervise
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(60)"
    started = time.monotonic()
    code = supervise([sys.executable, "-c", stubborn], {}, grace=30)
    print(code, round(time.monotonic() - started, 1), flush=True)
    """
)


@pytest.mark.slow  # a process of its own
def test_supervise_stops_at_once_when_asked_twice():
    proc = subprocess.Popen([sys.executable, "-c", SUPERVISE_STUBBORN], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "\n"  # the server runs, and ignores SIGTERM
        proc.send_signal(signal.SIGINT)
        time.sleep(1.5)
        assert proc.poll() is None, "one stop waits out the grace of a server that ignores SIGTERM"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    code, seconds = out.split()
    assert code == "0" and float(seconds) < 10, (out, err)
    assert err.count("stopping the server and its kernels") == 1, err


@pytest.mark.slow
def test_redis_says_in_one_line_when_its_server_stays_dead(tmp_path):
    import redis

    err_path = tmp_path / "redis.err"
    with open(err_path, "w") as err, running_redis(stderr=err) as proc:
        text = "".join(proc.stdout.readline() for _ in range(5))
        url = re.search(r"export REDIS_URL='(unix://\S+)'", text).group(1)
        for restart in range(1, 7):  # five restarts, then it stays dead
            (pid,) = [p for p in descendants(proc.pid) if "redis-server" in cmdline(p).split(" ", 1)[0]]
            os.kill(pid, signal.SIGKILL)
            if restart <= 5:
                _wait_for_text(err_path, f"(pid {pid}) was killed by signal 9; restarted")
                assert redis.Redis.from_url(url).ping()
        assert proc.wait(20) == 1
    lines = err_path.read_text().splitlines()
    assert lines[-1] == f"echomq-viz: redis-server (pid {pid}) was killed by signal 9; stopping"
    assert len(lines) == 6


def test_the_watch_says_why_redis_died_even_when_it_spoke_after_the_first_look(monkeypatch, capsys):
    # The race: the watch looks (nothing yet), then the supervisor writes "died" and exits.
    from echomq_viz.launcher.cli import _redis_watch

    with RedisServer(restarts=0) as server:
        pid = server.pid
        os.kill(pid, signal.SIGKILL)
        server._supervisor.wait(20)  # it has said "died" and gone
        real_events, looks = server.events, []

        def events():  # the first look saw nothing; later ones read the pipe
            looks.append(1)
            return [] if len(looks) == 1 else real_events()

        monkeypatch.setattr(server, "events", events)
        assert _redis_watch(server)() is False
    said = capsys.readouterr().err.strip().splitlines()
    assert said == [f"echomq-viz: redis-server (pid {pid}) was killed by signal 9; stopping"]


def test_the_watch_stops_on_died_even_while_the_supervisor_still_runs(monkeypatch, capsys):
    # The other race: the watch reads "died" while the supervisor is still cleaning up.
    from echomq_viz.launcher.cli import _redis_watch

    with RedisServer(restarts=0) as server:
        pid = server.pid
        os.kill(pid, signal.SIGKILL)
        server._supervisor.wait(20)
        monkeypatch.setattr(RedisServer, "running", property(lambda self: True))  # as if not yet exited
        assert _redis_watch(server)() is False
    said = capsys.readouterr().err.strip().splitlines()
    assert said == [f"echomq-viz: redis-server (pid {pid}) was killed by signal 9; stopping"]


# -- what a killed run leaves, the next run deletes ----------------------------------------------------


def _dead_process_claim(directory: Path) -> None:
    """Mark ``directory`` as owned by a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    claim(directory, child.pid)
    child.communicate()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lab", "app"])
def test_a_killed_launcher_leaves_a_folder_the_next_run_deletes(tiny_notebooks, tmp_path, mode):
    env: dict[str, str] = {}
    with own_tmpdir(env) as tmp:
        run = Launched(mode, tiny_notebooks, log=tmp_path / f"{mode}.log", env=env)
        kernels_dir = None
        try:
            (run_dir,) = tmp.glob(f"echomq-viz-{mode}-*")
            if mode == "app":  # a kernel: Voila's connection files now live in the run's folder, or in a
                run.request("GET", "/voila/render/tiny.ipynb", timeout=120)  # short one of its own (socket_folder)
                connection = Path(re.search(r"-f (\S+)", cmdline(_kernels(run.family())[0])).group(1))
                kernels_dir = connection.parents[1]
                assert kernels_dir == run_dir or kernels_dir.name.startswith(KERNEL_FOLDER_PREFIX), connection
            family = run.family()
        finally:
            os.kill(run.proc.pid, signal.SIGKILL)
            run.proc.wait(30)
            run.stop()
        wait_for(lambda: not Launched.still_running(family), 30, lambda: "the killed run's processes to end; "
                 "still running:\n" + "\n".join(Launched.still_running(family)))
        assert run_dir.is_dir(), "nothing was left behind: the test shows nothing"

        others = tmp / "echomq-viz-lab-nobody"  # another user's, its owner dead too
        others.mkdir()
        _dead_process_claim(others)
        os.chown(others, 65534, 65534)
        live = tmp / "echomq-viz-app-live"  # a live run's (ours)
        live.mkdir()
        claim(live)
        unnamed = tmp / "echomq-viz-lab-unnamed"  # names no owner
        unnamed.mkdir()

        with running_redis(env=env) as proc:
            assert "running" in proc.stdout.readline()
            assert not run_dir.exists()
            assert others.is_dir() and live.is_dir() and unnamed.is_dir()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(20) == 0
            assert f"echomq-viz: deleted {run_dir}, left by a run that was killed" in proc.stderr.read()
            assert kernels_dir is None or not kernels_dir.exists()  # swept too, quietly


# -- echomq-viz clean, and the clean at the start of lab and app ------------------------------------
# The stub below tests the plumbing (which server, which message); the first
# test runs the real clean_orphans on a killed kernel's keys.


@pytest.mark.slow
def test_clean_removes_a_killed_kernels_demo_keys_and_nothing_else(redis_server, r, capsys, monkeypatch):
    from test_live import DemoProcess
    from echomq_viz.redis_side.demo_keys import lease_key

    r.set("emq:{orders}:pc", "7")
    with DemoProcess(redis_server.url, lease_seconds=1) as killed, \
            DemoProcess(redis_server.url, lease_seconds=30) as alive:
        killed.ask("add 3")
        alive.ask("add 2")
        killed.kill()
        deadline = time.monotonic() + 10
        while r.exists(lease_key(killed.token)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = sorted(r.scan_iter(match=f"*@{killed.token}}}:*"))
        assert left, "the killed kernel left no demo keys: the test proves nothing"
        monkeypatch.setenv("REDIS_URL", redis_server.url)
        assert main(["clean"]) == 0
        assert f"removed {len(left)} orphaned demo key(s)" in capsys.readouterr().out
        assert list(r.scan_iter(match=f"*@{killed.token}}}:*")) == []
        assert alive.ask("entries") == ["1", "2"] and r.get("emq:{orders}:pc") == "7"


@pytest.fixture
def orphans_stub(monkeypatch):
    import echomq_viz.redis_side.owners as owners

    calls = []

    def clean_orphans(client):
        calls.append(client.connection_pool.connection_kwargs)
        client.ping()
        return 3

    monkeypatch.setattr(owners, "clean_orphans", clean_orphans)
    return calls


def test_clean_calls_clean_orphans_on_the_url(orphans_stub, redis_server, capsys, monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    with RedisServer(port=0) as server:
        assert main(["clean", "--url", server.url]) == 0
        assert orphans_stub[-1]["port"] == server.port and orphans_stub[-1]["password"] == server.password
        out = capsys.readouterr().out
        assert out == f"echomq-viz: removed 3 orphaned demo key(s) at redis://:***@127.0.0.1:{server.port}/0\n"
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    assert main(["clean"]) == 0 and orphans_stub[-1]["path"] == redis_server.socket_path


def test_clean_needs_a_redis_and_says_so(capsys, monkeypatch, orphans_stub):
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert main(["clean"]) == 2
    assert capsys.readouterr().err == "echomq-viz clean: which Redis? set REDIS_URL or give --url URL\n"
    assert main(["clean", "--url", "redis://:s3cretPW@127.0.0.1:1/0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("echomq-viz: cannot reach Redis at redis://:***@127.0.0.1:1/0") and "s3cretPW" not in err
    assert err.count("\n") == 1 and orphans_stub == []


def test_clean_at_start_is_one_line_and_never_fatal(monkeypatch, capsys, redis_server):
    import echomq_viz.redis_side.owners as owners
    from echomq_viz.launcher import cli

    def broken(client):
        raise RuntimeError("NOPERM this user has no permissions\nsecond line")

    monkeypatch.setattr(owners, "clean_orphans", broken)
    cli._clean_at_start(redis_server.url)  # clean_orphans fails: one line, and on we go
    cli._clean_at_start(redis_server.url.replace("unix://", "unix://viewer:s3cretPW@"))  # login refused
    monkeypatch.setattr(owners, "clean_orphans", lambda client: 0)
    cli._clean_at_start(redis_server.url)  # nothing removed: nothing said
    monkeypatch.setattr(owners, "clean_orphans", lambda client: 2)
    cli._clean_at_start(redis_server.url)
    cli._clean_at_start("redis://:s3cretPW@127.0.0.1:1/0")  # unreachable
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4 and "s3cretPW" not in "\n".join(lines)
    assert lines[0] == (f"echomq-viz: could not clean orphaned demo keys at {redis_server.url}: "
                        "RuntimeError: NOPERM this user has no permissions")
    assert lines[1].startswith("echomq-viz: could not clean orphaned demo keys at unix://viewer:***@")
    assert "refused the login" in lines[1]
    assert lines[2] == f"echomq-viz: removed 2 orphaned demo key(s) at {redis_server.url}"
    assert lines[3].startswith("echomq-viz: could not clean orphaned demo keys at redis://:***@127.0.0.1:1/0: "
                               "RedisUnavailable: cannot reach Redis")


def test_inspect_any_is_the_apps_choice_only():
    parser = build_parser()
    args, _ = parser.parse_known_args(["app"])
    assert app_environment(args.inspect_any) == {ENV_INSPECT: "own"}
    args, _ = parser.parse_known_args(["app", "--inspect-any"])
    assert app_environment(args.inspect_any) == {ENV_INSPECT: "any"}
    args, extra = parser.parse_known_args(["lab", "--inspect-any"])
    assert extra == ["--inspect-any"] and not hasattr(args, "inspect_any")  # lab knows no such option


# -- bad input: one line, exit 2, nothing started ------------------------------------------------------
# (imports of the tests below sit here so this section merges apart from edits above)

from conftest import not_redis_server, one_clear_line  # noqa: E402


def run_cli(args: list[str], env_changes: dict[str, str | None], timeout: float = 60) -> tuple[int, str]:
    """``python -m echomq_viz ARGS`` in its own session; (exit code, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    with own_tmpdir(env):
        proc = subprocess.Popen([*LAUNCHER, *args], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AssertionError(f"echomq-viz {' '.join(args)} did not exit within {timeout} s") from None
    return proc.returncode, err


def test_cli_bad_port_is_a_usage_error():
    code, err = run_cli(["redis", "--port", "notanumber"], {})
    assert code == 2
    assert err.startswith("usage: echomq-viz redis")
    assert "argument --port: invalid int value: 'notanumber'" in err and "Traceback" not in err


@pytest.mark.parametrize("port", ["70000", "-5"])
def test_cli_port_outside_0_to_65535_is_named(port):
    code, err = run_cli(["redis", "--port", port], {})
    assert code == 2 and "Traceback" not in err
    assert "port" in err and port in err and "65535" in err, err


def _cli_cases(http_port: int, dead_port: int) -> dict[str, tuple[list[str], dict, list[str]]]:
    return {
        "REDIS_URL with a bad scheme": (
            ["lab", "--no-browser"], {"REDIS_URL": "htp://x"},
            ["echomq-viz: bad Redis URL 'REDIS_URL=htp://x'", "redis://, rediss://, unix://"]),
        "REDIS_URL with a bad port": (
            ["app", "--no-browser"], {"REDIS_URL": "redis://127.0.0.1:notaport/0"},
            ["echomq-viz: bad Redis URL 'REDIS_URL=redis://127.0.0.1:notaport/0'", "notaport"]),
        "REDIS_URL with a database that is no number": (
            ["app", "--no-browser"], {"REDIS_URL": f"redis://127.0.0.1:{dead_port}/abc"},
            [f"echomq-viz: bad Redis URL 'REDIS_URL=redis://127.0.0.1:{dead_port}/abc'", "/<database number>"]),
        "REDIS_URL with an unencoded / in its password": (
            ["clean"], {"REDIS_URL": f"redis://u:Top/Secret99@127.0.0.1:{dead_port}/0"},
            [f"echomq-viz: bad Redis URL 'REDIS_URL=redis://u:***@127.0.0.1:{dead_port}/0'", "%2F"]),
        "REDIS_URL at a dead port": (
            ["lab", "--no-browser"], {"REDIS_URL": f"redis://127.0.0.1:{dead_port}/0"},
            [f"echomq-viz: cannot reach Redis at REDIS_URL=redis://127.0.0.1:{dead_port}/0", "refused"]),
        "REDIS_URL at a server that is not Redis": (
            ["lab", "--no-browser"], {"REDIS_URL": f"redis://127.0.0.1:{http_port}/0"},
            [f"echomq-viz: cannot reach Redis at REDIS_URL=redis://127.0.0.1:{http_port}/0", "Protocol error"]),
        "ECHOMQ_VIZ_REDIS_SERVER missing": (
            ["redis"], {"ECHOMQ_VIZ_REDIS_SERVER": "/nonexistent"},
            ["echomq-viz: ECHOMQ_VIZ_REDIS_SERVER='/nonexistent' is not an executable file"]),
        "ECHOMQ_VIZ_REDIS_SERVER not a redis-server": (
            ["redis"], {"ECHOMQ_VIZ_REDIS_SERVER": shutil.which("false") or "/bin/false"},
            ["echomq-viz: could not start", "exited with 1"]),
    }


@pytest.mark.parametrize("case", list(_cli_cases(0, 0)))
def test_cli_bad_environment_is_exit_2_and_one_clear_line(case):
    with not_redis_server() as http_port:
        args, env, fragments = _cli_cases(http_port, free_port())[case]
        started = time.monotonic()
        code, err = run_cli(args, env)
    assert code == 2, err
    assert one_clear_line(err), err
    for fragment in fragments:
        assert fragment in err, err
    assert time.monotonic() - started < 30  # refused up front, JupyterLab never started
