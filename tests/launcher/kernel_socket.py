"""A page's websocket to its kernel in ``echomq-viz app``, as a script would
open one: the kernel protocol's JSON frames, with no browser and no widget
manager. What the tests of untrusted pages and of seats send through."""

from __future__ import annotations

import asyncio
import datetime
import json
import re
import uuid
from typing import Any

from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

__all__ = ["KernelSocket", "kernel_id_of", "page_config"]


def page_config(page: str) -> dict:
    """The ``jupyter-config-data`` a Jupyter page (JupyterLab's, Voila's) was served with."""
    config = re.search(r'<script id="jupyter-config-data" type="application/json">\s*(.*?)\s*</script>', page, re.S)
    assert config, page[-2000:]
    return json.loads(config.group(1))


def kernel_id_of(page: str) -> str:
    """The kernel a Voila page was rendered with (its ``jupyter-config-data``)."""
    return page_config(page)["kernelId"]


class KernelSocket:
    """One websocket on ``/api/kernels/<id>/channels``; every message sent is
    a JSON text frame (jupyter_server's legacy framing, which any client gets
    by asking for no subprotocol)."""

    def __init__(self, connection: WebSocketClientConnection, session: str) -> None:
        self.connection, self.session = connection, session
        self.seen: list[dict] = []  # every message read, in order

    @classmethod
    async def open(cls, port: int, kernel_id: str, *, cookie: str | None = None,
                   token: str | None = None) -> "KernelSocket":
        session = uuid.uuid4().hex
        url = f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels?session_id={session}"
        if token:  # JupyterLab's; the app asks for none
            url += f"&token={token}"
        request = HTTPRequest(url, headers={"Cookie": cookie} if cookie else {})
        return cls(await websocket_connect(request, max_message_size=64 * 2**20), session)

    def close(self) -> None:
        self.connection.close()

    def message(self, msg_type: str, content: dict, channel: str = "shell") -> dict:
        return {"header": {"msg_id": uuid.uuid4().hex, "username": "script", "session": self.session,
                           "msg_type": msg_type, "version": "5.3",
                           "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
                "parent_header": {}, "metadata": {}, "content": content, "channel": channel, "buffers": []}

    async def send(self, msg_type: str, content: dict, channel: str = "shell") -> str:
        """Send one message; its id."""
        msg = self.message(msg_type, content, channel)
        await self.connection.write_message(json.dumps(msg))
        return msg["header"]["msg_id"]

    async def send_text(self, text: str) -> None:
        """A frame as given (a crafted one)."""
        await self.connection.write_message(text)

    async def read(self, timeout: float) -> dict | None:
        """The next JSON message, None when the socket closed or nothing came in ``timeout``."""
        while True:
            try:
                frame = await asyncio.wait_for(self.connection.read_message(), timeout)
            except asyncio.TimeoutError:
                return None
            if frame is None:
                return None
            if isinstance(frame, bytes):  # a message with buffers: none of what these tests read
                continue
            msg = json.loads(frame)
            self.seen.append(msg)
            return msg

    async def answers_to(self, msg_id: str, timeout: float = 60) -> list[dict]:
        """Every message the kernel sent in reply to ``msg_id``, until its idle status."""
        found: list[dict] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            msg = await self.read(deadline - loop.time())
            if msg is None:
                break
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            found.append(msg)
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                return found
        raise AssertionError(f"no idle status for {msg_id} within {timeout} s: {found[-5:]}")

    async def widget_comms(self) -> list[str]:
        msg_id = await self.send("comm_info_request", {"target_name": "jupyter.widget"})
        replies = [msg for msg in await self.answers_to(msg_id) if msg["msg_type"] == "comm_info_reply"]
        if not replies:  # the reply comes on the shell channel, possibly after the idle status
            while (msg := await self.read(30)) is not None:
                if msg["msg_type"] == "comm_info_reply" and msg["parent_header"].get("msg_id") == msg_id:
                    replies.append(msg)
                    break
        assert replies, "no comm_info_reply"
        return list(replies[0]["content"]["comms"])

    async def state(self, comm_id: str) -> dict[str, Any]:
        """A widget model's whole state, as its kernel holds it."""
        msg_id = await self.send("comm_msg", {"comm_id": comm_id, "data": {"method": "request_state"}})
        return self._updates(await self.answers_to(msg_id), comm_id)

    async def update(self, comm_id: str, state: dict[str, Any]) -> dict[str, Any]:
        """Send the page's ``update`` of ``state``; what the kernel sent back for it."""
        msg_id = await self.send("comm_msg", {"comm_id": comm_id, "data": {
            "method": "update", "state": state, "buffer_paths": []}})
        return self._updates(await self.answers_to(msg_id), comm_id)

    async def custom(self, comm_id: str, content: dict[str, Any]) -> dict[str, Any]:
        """A custom message (a view's button: ``{"kind": "run", ...}``); the updates it brought."""
        msg_id = await self.send("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        return self._updates(await self.answers_to(msg_id), comm_id)

    @staticmethod
    def _updates(messages: list[dict], comm_id: str) -> dict[str, Any]:
        state: dict[str, Any] = {}
        for msg in messages:
            data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
            if msg["content"].get("comm_id") == comm_id and data.get("method") in ("update", "echo_update"):
                state.update(data.get("state", {}))
        return state

    async def find(self, *traits: str) -> tuple[str, dict[str, Any]]:
        """The first widget model holding every one of ``traits``: (comm id, state)."""
        for comm_id in await self.widget_comms():
            state = await self.state(comm_id)
            if all(trait in state for trait in traits):
                return comm_id, state
        raise AssertionError(f"no widget with {traits}")
