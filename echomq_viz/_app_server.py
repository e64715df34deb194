"""The app's Voila server doing less per kernel message (see :mod:`echomq_viz._voila`),
and culling only kernels whose page has left.

In a class dragging sliders the server relays about seven messages per move.
Two costs there were not relaying: the activity watcher's parsing of each
message, and debug log records built only to be dropped.

The app culls a kernel idle for 10 s with no page connected, so a closed
tab frees its memory at once. A page still loading has no connection yet:
its notebook still running on a busy server, or its browser still fetching
the page's scripts. Such a kernel gets :data:`PAGE_LOAD_GRACE_S` before it is
culled as a page that never came.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from voila.app import Voila

from . import app_index
from .notebook_copies import shipped_notebooks
from .trust import trust_shipped

__all__ = ["AppKernelManager", "AppVoila", "PAGE_LOAD_GRACE_S"]

# How long a kernel whose page never connected may sit idle before it is culled.
PAGE_LOAD_GRACE_S = 120


def utcnow() -> datetime:
    return datetime.now(timezone.utc)  # as jupyter_server stamps activity


class AppKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager with a cheaper activity watcher.

    The watcher reads every message a kernel publishes, to keep the kernel's
    last activity and execution state (what culling goes by).
    jupyter_server's checks each message's signature and parses its dates,
    a status message twice over: about a quarter of the server's CPU in a
    class dragging sliders. This one parses the header, the parent header
    and a status's content, and keeps the same two fields by the same rules.
    Its socket only listens to the kernel, and nothing it reads is passed on.

    Culling skips a kernel still starting (jupyter_server's culler fails on
    it, with a traceback in the log) and gives one whose page never
    connected :data:`PAGE_LOAD_GRACE_S` (see the module's docstring).
    """

    def notify_connect(self, kernel_id: str) -> None:
        super().notify_connect(kernel_id)
        kernel = self._kernels.get(kernel_id)
        if kernel is not None:
            kernel.page_connected = True

    async def cull_kernel_if_idle(self, kernel_id: str) -> None:
        kernel = self._kernels.get(kernel_id)
        if kernel is None or not kernel.trait_has_value("last_activity"):
            return  # still starting: its activity is not watched yet
        if (not getattr(kernel, "page_connected", False) and kernel.execution_state != "dead"
                and utcnow() - kernel.last_activity < timedelta(seconds=PAGE_LOAD_GRACE_S)):
            return  # its page is still loading
        await super().cull_kernel_if_idle(kernel_id)

    def start_watching_activity(self, kernel_id: str) -> None:
        kernel = self._kernels[kernel_id]
        kernel.reason = ""
        kernel.last_activity = utcnow()
        kernel._activity_stream = kernel.connect_iopub()
        unpack = kernel.session.unpack  # jupyter_client's JSON reader (orjson when installed)

        def record_activity(msg_list: list) -> None:
            _, parts = kernel.session.feed_identities(msg_list)  # signature, header, parent, metadata, content
            msg_type = unpack(parts[1]).get("msg_type")
            parent_type = unpack(parts[2]).get("msg_type")
            if (self.track_message_type(msg_type) or self.track_message_type(parent_type)
                    or kernel.execution_state == "busy"):
                self.last_kernel_activity = kernel.last_activity = utcnow()
            if msg_type == "status":
                state = unpack(parts[4]).get("execution_state")
                if self.track_message_type(parent_type):
                    kernel.execution_state = state
                elif kernel.execution_state == "starting" and state != "starting":
                    kernel.execution_state = "idle"

        kernel._activity_stream.on_recv(record_activity)


class AppVoila(Voila):
    """Voila, its logger filtering at its own level: traitlets keeps an
    application's logger at DEBUG and filters in the handler, so every debug
    call (one per kernel message) built a record only to drop it."""

    def initialize(self, argv: Any = None) -> None:
        super().initialize(argv)
        self.log.setLevel(self.log_level)
        self.log.addFilter(culling_as_info)

    def init_settings(self) -> dict:
        settings = super().init_settings()
        app_index.install(settings["voila_jinja2_env"], self.root_dir)  # the front page's cards
        with contextlib.suppress(SystemExit):  # an installation without notebooks: nothing to trust
            trust_shipped(Path(self.root_dir), shipped_notebooks(), say=self.log.warning)
        return settings


def culling_as_info(record: logging.LogRecord) -> bool:
    """A culled kernel is news, not a warning: its page has gone, as expected
    (jupyter_server logs it as a WARNING, which alarms whoever reads the terminal)."""
    if record.levelno == logging.WARNING and str(record.msg).startswith("Culling "):
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
    return True
