"""The app's Voila server doing less per kernel message (see :mod:`echomq_viz._voila`).

In a class dragging sliders the server relays about seven messages per move.
Two costs there were not relaying: the activity watcher's parsing of each
message, and debug log records built only to be dropped.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from voila.app import Voila

__all__ = ["AppKernelManager", "AppVoila"]


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
    """

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
