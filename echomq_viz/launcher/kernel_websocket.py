"""Kernel websockets without Nagle's delay, in JupyterLab as ``echomq-viz lab``
and a hub's servers run it.

A kernel answers one message from the page in several small frames (its busy
status, the answer, its idle status), each a write of its own. Tornado leaves
Nagle's algorithm on, so a frame waits for the page's acknowledgement of the
one before, which the page's TCP may hold back 40 ms (Linux) or more. The
classroom benchmark measured it in the app: a press's p95 of 47 ms against a
p50 of 7; with Nagle off, 11 to 14 ms. The app's own handler turns it off
(:class:`echomq_viz.launcher._app_server.PageWebsocketHandler`); JupyterLab takes
:class:`NoDelayConnection` through Jupyter Server's public setting
``kernel_websocket_connection_class`` (``lab_settings.LAB_NO_DELAY`` names it).
"""

from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

__all__ = ["NoDelayConnection"]


class NoDelayConnection(ZMQChannelsWebsocketConnection):
    """Jupyter Server's kernel websocket connection, with Nagle's algorithm off."""

    def connect(self):  # jupyter_server's own: a future, or None
        self.websocket_handler.set_nodelay(True)
        return super().connect()
