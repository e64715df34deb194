"""The app's Voila server: its activity watcher keeps what jupyter_server's
keeps, and its culler leaves a page that is still loading its kernel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

from echomq_viz.launcher import _app_server
from echomq_viz.launcher._app_server import AppKernelManager, AppVoila
from echomq_viz.launcher._kernel_channels import socket_folder
from conftest import tiny_notebooks, wait_until

pytestmark = pytest.mark.slow

# What a Voila page does to its kernel: info, the notebook's cells (one
# fails), a widget's comm message; then the kernel sits idle.
STEPS = [("kernel_info", None), ("execute", "x = 1"), ("execute", "1 / 0"),
         ("execute", "import time; time.sleep(0.3)"), ("comm", None)]


@contextlib.contextmanager
def _kernel_sockets(tmp_path):
    """Where a manager's kernels go, and its options: on Unix sockets, as the app's kernels are, so
    no other process of the suite takes a kernel's port before it binds it (``socket_folder``)."""
    from traitlets.config import Config

    with socket_folder(tmp_path) as folder:
        yield {"connection_dir": str(folder.path),
               "config": Config({"KernelManager": {"transport": "ipc"}} if folder.options else {})}


async def _states(manager_class: type, tmp_path) -> list[tuple[str, str, bool]]:
    """(step, execution state once the kernel is idle, last activity moved on) per step."""
    tmp_path.mkdir()
    with _kernel_sockets(tmp_path) as where:
        return await _steps(manager_class(**where))


async def _steps(manager) -> list[tuple[str, str, bool]]:
    kernel_id = await manager.start_kernel(kernel_name="python3")
    kernel = manager.get_kernel(kernel_id)
    client = kernel.client()
    client.start_channels()
    seen = []
    try:
        await client.wait_for_ready(timeout=60)
        await asyncio.sleep(0.3)
        for step, code in STEPS:
            before = kernel.last_activity
            if step == "kernel_info":
                client.kernel_info()
            elif step == "execute":
                client.execute(code)
            else:
                client.shell_channel.send(client.session.msg("comm_msg", {"comm_id": "none", "data": {}}))
            for _ in range(100):  # the watcher reads on the server's loop: let it
                await asyncio.sleep(0.05)
                if kernel.execution_state == "idle" and kernel.last_activity != before:
                    break
            await asyncio.sleep(0.2)
            seen.append((step, kernel.execution_state, kernel.last_activity > before))
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(kernel_id, now=True)
    return seen


async def _ready(manager, kernel_id: str) -> None:
    """The kernel answers (as when its page's widgets load)."""
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    client.stop_channels()


async def _page_came_and_closed(manager, kernel_id: str) -> None:
    await _ready(manager, kernel_id)
    manager.notify_connect(kernel_id)  # its page came, then the tab closed
    manager.notify_disconnect(kernel_id)


def test_the_watcher_keeps_the_state_and_activity_jupyter_servers_keeps(tmp_path):
    ours = asyncio.run(_states(AppKernelManager, tmp_path / "ours"))
    theirs = asyncio.run(_states(AsyncMappingKernelManager, tmp_path / "theirs"))
    assert ours == theirs
    # a kernel_info request is not activity (jupyter_server's untracked_message_types); the rest is
    assert ours == [(step, "idle", step != "kernel_info") for step, _ in STEPS]


def test_the_app_logger_drops_debug_calls_before_building_a_record(tmp_path):
    app = AppVoila()
    app.initialize(["--no-browser", str(tmp_path)])
    assert app.log.level == app.log_level == logging.INFO
    assert not app.log.isEnabledFor(logging.DEBUG)
    debug = AppVoila()
    debug.initialize(["--no-browser", "--debug", str(tmp_path)])
    assert debug.log.isEnabledFor(logging.DEBUG)  # --debug still shows everything


def test_a_stop_before_voila_serves_exits_quietly_and_one_after_stops_its_loop():
    """A Ctrl-C in the app's first seconds reached Voila's SIGTERM handler before its loop
    existed: an AttributeError, a traceback and exit code 1, for a stop that was asked for."""
    app = AppVoila()
    with pytest.raises(SystemExit) as info:
        app._handle_signal_stop(signal.SIGTERM, None)
    assert info.value.code == 0

    class Loop:
        def __init__(self) -> None:
            self.asked: list = []

        def add_callback_from_signal(self, callback) -> None:
            self.asked.append(callback)

        def stop(self) -> None:
            pass

    app.ioloop = Loop()
    app._handle_signal_stop(signal.SIGTERM, None)  # serving: Voila's own stop, its loop's
    assert app.ioloop.asked == [app.ioloop.stop]


def test_a_kernel_whose_page_never_connected_gets_the_grace_then_goes(tmp_path, monkeypatch):
    """Idle past the cull timeout: the kernel of a page that came and left
    goes; the kernel of a page still loading stays, until the grace is over."""

    async def scenario():
        with _kernel_sockets(tmp_path) as where:
            return await cull(AppKernelManager(**where, cull_idle_timeout=1))

    async def cull(manager):
        loading, left = [await manager.start_kernel(kernel_name="python3") for _ in range(2)]
        try:
            await _ready(manager, loading)
            await _page_came_and_closed(manager, left)
            await asyncio.sleep(2.5)  # both idle past the 1 s timeout
            for kernel_id in (loading, left):
                await manager.cull_kernel_if_idle(kernel_id)
            kept = (loading in manager, left in manager)
            monkeypatch.setattr(_app_server, "PAGE_LOAD_GRACE_S", 2)  # now past the grace too
            await manager.cull_kernel_if_idle(loading)
            return kept, loading in manager
        finally:
            await manager.shutdown_all(now=True)

    assert asyncio.run(scenario()) == ((True, False), False)


def test_a_culled_kernel_is_an_info_line_not_a_warning(tmp_path):
    """A page closed, its kernel culled: news for the terminal, not an alarm."""
    app = AppVoila()
    app.initialize(["--no-browser", str(tmp_path)])
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    app.log.addHandler(handler)

    async def scenario():
        with _kernel_sockets(tmp_path) as where:
            return await cull(AppKernelManager(parent=app, **where, cull_idle_timeout=1))

    async def cull(manager):
        kernel_id = await manager.start_kernel(kernel_name="python3")
        try:
            await _page_came_and_closed(manager, kernel_id)
            await asyncio.sleep(2.5)
            await manager.cull_kernel_if_idle(kernel_id)
            return kernel_id in manager
        finally:
            await manager.shutdown_all(now=True)

    try:
        assert asyncio.run(scenario()) is False
    finally:
        app.log.removeHandler(handler)
    culled = [record for record in records if str(record.msg).startswith("Culling ")]
    assert culled, "no culling line"
    for note, args in (("Starting buffering for %s", ("k:s",)), ("Discarding %s buffered messages for %s", (13, "k:s")),
                       ("Replaying %s buffered messages", (3,))):  # a closed page's buffering: nothing to act on
        assert not _app_server.culling_as_info(logging.LogRecord("AppVoila", logging.INFO, __file__, 1, note, args, None))
    assert {(record.levelname, record.levelno) for record in culled} == {("INFO", logging.INFO)}


# -- the running app: a cap on kernels, template paths --------------------------------------------


class RunningApp:
    """``echomq-viz app`` on a folder with one tiny notebook, its log kept."""

    def __init__(self, tmp_path, *options: str) -> None:
        import os
        import subprocess
        import sys

        from echomq_viz.redis_side.server import free_tcp_port

        folder = tiny_notebooks(tmp_path / "notebooks", "x = 1")
        (tmp_path / "tmp").mkdir()
        self.port = free_tcp_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "app.log"
        env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTEST_CURRENT_TEST")},
               "TMPDIR": str(tmp_path / "tmp")}
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "echomq_viz", "app", "--no-browser", "--port", str(self.port), "--notebooks",
             str(folder), "--Voila.token=", *options], stdout=self.log, stderr=subprocess.STDOUT, env=env)
        if not wait_until(lambda: self.get("/")[0] == 200, 120, step=0.2):
            self.stop()
            raise RuntimeError(f"the app never answered: {self.text()[-2000:]}")

    def get(self, path: str) -> tuple[int, str]:
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(self.base + path, timeout=120) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError:
            return 0, ""

    def kernels(self) -> int:
        import psutil

        def command(child: psutil.Process) -> str:
            try:
                return " ".join(child.cmdline())
            except psutil.Error:  # gone, or exited and not yet reaped: no kernel
                return ""

        return sum("echomq_viz.launcher._app_kernel" in command(child)
                   for child in psutil.Process(self.process.pid).children(recursive=True))

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        import signal

        self.process.send_signal(signal.SIGTERM)
        self.process.wait(60)
        self.log.close()


@pytest.fixture
def app():
    # A short folder of its own: the private Redis's unix socket lives under its TMPDIR, and a
    # socket path must stay under 108 bytes (pytest's tmp_path holds the long test name).
    import shutil
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="emq-cap-", dir="/tmp"))
    try:
        running = RunningApp(folder, "--max-kernels", "2")
        yield running
        running.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_page_over_the_cap_gets_one_friendly_line_and_starts_no_kernel(app):
    assert "at most 2 visitors' kernels at once (--max-kernels)" in app.text()
    for _ in range(2):
        status, page = app.get("/voila/render/tiny.ipynb")
        assert status == 200 and "the class is full" not in page
    assert app.kernels() == 2
    status, page = app.get("/voila/render/tiny.ipynb")
    assert status == 503
    assert "The class is full: 2 of 2 seats taken; try again in a minute." in page
    assert app.kernels() == 2
    assert "Traceback" not in app.text()


def test_template_paths_that_are_no_static_file_answer_404_without_a_traceback(app):
    for path in ("conf.json", "index.html.j2", "static", "nothing/here", "static/../conf.json"):
        status, _ = app.get(f"/voila/templates/echomq-viz/{path}")
        assert status == 404, path
    log = app.text()
    assert "Traceback" not in log and "ValueError" not in log and "AssertionError" not in log
