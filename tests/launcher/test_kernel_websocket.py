"""The kernel websockets the app and ``echomq-viz lab`` serve have Nagle's
algorithm off (launcher/kernel_websocket.py says why: each frame of a kernel's
answer after the first could wait 40 ms for the page's ACK).

The option is read on the server's own end of a real page's websocket: the
test takes a copy of that socket from the server process (``pidfd_getfd``,
Linux 5.6+, allowed on one's own child processes) and asks it for
``TCP_NODELAY``. Without the setting, the answer is 0."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import socket
from pathlib import Path

import pytest

from conftest import tiny_notebooks
from kernel_socket import KernelSocket, kernel_id_of
from test_cli import TOKEN, Launched

pytestmark = pytest.mark.slow

SYS_PIDFD_GETFD = 438  # one number on every Linux architecture but alpha (new calls share one table)


def _server_socket_option(pids: list[int], server_port: int, client_port: int, option: int) -> int:
    """``option`` (IPPROTO_TCP) of the server's end of the loopback connection
    ``client_port`` -> ``server_port``, read in whichever of ``pids`` holds it."""
    wanted = (f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}")
    inodes = [fields[9] for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
              if (fields[1], fields[2]) == wanted]
    assert len(inodes) == 1, f"the server's end of 127.0.0.1:{client_port} -> {server_port}: {inodes}"
    libc = ctypes.CDLL(None, use_errno=True)
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") != f"socket:[{inodes[0]}]":
                    continue
            except OSError:
                continue
            pidfd = os.pidfd_open(pid)
            try:
                copy = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(fd), 0)
                assert copy >= 0, f"pidfd_getfd: {os.strerror(ctypes.get_errno())}"
            finally:
                os.close(pidfd)
            with socket.socket(fileno=copy) as held:  # closes the copy only: the server's stays open
                return held.getsockopt(socket.IPPROTO_TCP, option)
    raise AssertionError(f"no process of {pids} holds the socket {inodes[0]}")


def _nodelay_of_a_page_socket(server: Launched, kernel_id: str) -> int:
    async def visit() -> int:
        page = await KernelSocket.open(server.port, kernel_id, token=TOKEN if server.mode == "lab" else None)
        try:
            await page.answers_to(await page.send("kernel_info_request", {}))  # open() has run by now
            client_port = page.connection.stream.socket.getsockname()[1]
            pids = [server.proc.pid, *server.family()]
            return _server_socket_option(pids, server.port, client_port, socket.TCP_NODELAY)
        finally:
            page.close()

    return asyncio.run(visit())


@pytest.mark.parametrize("mode", ["app", "lab"])
def test_a_pages_kernel_websocket_has_nagle_off(tmp_path, mode):
    notebooks = tiny_notebooks(tmp_path / "notebooks", "x = 1")
    server = Launched(mode, notebooks, log=tmp_path / f"{mode}.log")
    try:
        if mode == "app":  # a page's kernel, as a visitor's browser gets one
            kernel_id = kernel_id_of(server.request("GET", "/voila/render/tiny.ipynb", timeout=120).decode())
        else:
            kernel_id = json.loads(server.request("POST", "/api/kernels", {"name": "python3"}))["id"]
        assert _nodelay_of_a_page_socket(server, kernel_id) == 1, f"{mode}: Nagle is on for a page's kernel websocket"
    finally:
        server.stop_and_check()
