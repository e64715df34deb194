"""The app's Voila server: its activity watcher keeps what jupyter_server's
keeps, and its culler leaves a page that is still loading its kernel."""

from __future__ import annotations

import asyncio
import logging

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

from echomq_viz import _app_server
from echomq_viz._app_server import AppKernelManager, AppVoila

pytestmark = pytest.mark.slow

# What a Voila page does to its kernel: info, the notebook's cells (one
# fails), a widget's comm message; then the kernel sits idle.
STEPS = [("kernel_info", None), ("execute", "x = 1"), ("execute", "1 / 0"),
         ("execute", "import time; time.sleep(0.3)"), ("comm", None)]


async def _states(manager_class: type, tmp_path) -> list[tuple[str, str, bool]]:
    """(step, execution state once the kernel is idle, last activity moved on) per step."""
    tmp_path.mkdir()
    manager = manager_class(connection_dir=str(tmp_path))
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


def test_a_kernel_whose_page_never_connected_gets_the_grace_then_goes(tmp_path, monkeypatch):
    """Idle past the cull timeout: the kernel of a page that came and left
    goes; the kernel of a page still loading stays, until the grace is over."""

    async def scenario():
        manager = AppKernelManager(connection_dir=str(tmp_path), cull_idle_timeout=1)
        loading, left = [await manager.start_kernel(kernel_name="python3") for _ in range(2)]
        try:
            for kernel_id in (loading, left):
                client = manager.get_kernel(kernel_id).client()
                client.start_channels()
                await client.wait_for_ready(timeout=60)
                client.stop_channels()
            manager.notify_connect(left)  # its page came, then the tab closed
            manager.notify_disconnect(left)
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
        manager = AppKernelManager(parent=app, connection_dir=str(tmp_path), cull_idle_timeout=1)
        kernel_id = await manager.start_kernel(kernel_name="python3")
        try:
            client = manager.get_kernel(kernel_id).client()
            client.start_channels()
            await client.wait_for_ready(timeout=60)
            client.stop_channels()
            manager.notify_connect(kernel_id)  # its page came, then the tab closed
            manager.notify_disconnect(kernel_id)
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
    assert {(record.levelname, record.levelno) for record in culled} == {("INFO", logging.INFO)}
