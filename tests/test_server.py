"""The embedded server: private, persistence off, and never left behind."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import server_binary
from echomq_viz import server as server_mod
from echomq_viz.server import RedisServer, RedisUnavailable, connect


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is gone for our purposes
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split()[2] != "Z"


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(params=["bundled", "system"])
def binary(request):
    return server_binary(request.param)


def test_private_socket_no_tcp_no_persistence(binary):
    with RedisServer(binary) as srv:
        client = srv.client()
        assert client.ping()
        assert stat.S_IMODE(os.stat(srv.socket_path).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(srv.dir).st_mode) == 0o700
        assert client.config_get("port")["port"] == "0"  # no TCP listener at all
        assert client.config_get("save")["save"] == ""
        assert client.config_get("appendonly")["appendonly"] == "no"
        assert srv.url.startswith("unix://")
        pid, directory = srv.pid, srv.dir
        assert srv.version().split(".")[0] in {"6", "7"}
    assert _wait_gone(pid)
    assert not os.path.exists(directory)


def test_tcp_mode_binds_loopback_only(binary):
    with RedisServer(binary, port=0) as srv:
        assert srv.url == f"redis://127.0.0.1:{srv.port}/0"
        assert srv.client().config_get("bind")["bind"].split() == ["127.0.0.1"]
        with socket.create_connection(("127.0.0.1", srv.port), timeout=2):
            pass


def test_stop_is_idempotent_and_start_failure_is_one_clear_line(tmp_path):
    srv = RedisServer().start()
    srv.stop()
    srv.stop()
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'not really redis' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(RedisUnavailable) as info:
        RedisServer(str(fake)).start(timeout=3)
    assert "exited with 3" in str(info.value) and "not really redis" in str(info.value)


CHILD = textwrap.dedent(
    """
    import sys, time
    from echomq_viz.server import RedisServer
    srv = RedisServer(sys.argv[1]).start()
    print(srv.pid, srv.dir, flush=True)
    time.sleep(120)
    """
)


def test_sigkill_of_the_parent_leaves_no_orphan(binary):
    # nbval kills kernels with SIGKILL: atexit never runs, the server must still go.
    child = subprocess.Popen([sys.executable, "-c", CHILD, binary], stdout=subprocess.PIPE, text=True)
    pid_text, directory = child.stdout.readline().split()
    redis_pid = int(pid_text)
    assert _alive(redis_pid)
    child.kill()
    child.wait()
    assert _wait_gone(redis_pid), "redis-server outlived its SIGKILLed parent"
    deadline = time.monotonic() + 5
    while os.path.exists(directory) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(directory)


def test_interrupting_the_parent_group_keeps_the_server(binary):
    # A Jupyter kernel interrupt sends SIGINT to the kernel's process group;
    # the kernel survives it, and so must its server.
    script = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n" + CHILD
    child = subprocess.Popen(
        [sys.executable, "-c", script, binary], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        redis_pid = int(child.stdout.readline().split()[0])
        os.killpg(child.pid, signal.SIGINT)
        time.sleep(0.3)
        assert _alive(redis_pid)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()
    assert _wait_gone(redis_pid)


def test_connect_uses_redis_url(monkeypatch, redis_server):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    client = connect()
    client.set("via-url", "1")
    assert redis_server.client().get("via-url") == "1"
    client.delete("via-url")


@pytest.mark.parametrize(
    "url, fragment",
    [
        ("htp://localhost:6379", "bad Redis URL"),
        ("redis://127.0.0.1:1/0", "cannot reach Redis at"),
        ("unix:///nonexistent/dir/redis.sock", "cannot reach Redis at"),
    ],
)
def test_connect_errors_are_one_clear_line(monkeypatch, url, fragment):
    monkeypatch.setenv("REDIS_URL", url)
    with pytest.raises(RedisUnavailable) as info:
        connect(timeout=1)
    message = str(info.value)
    assert fragment in message and url in message and len(message.splitlines()) == 1


def test_connect_to_something_that_is_not_redis():
    # A listener that answers like an HTTP server.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        import threading

        def answer():
            conn, _ = listener.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        with pytest.raises(RedisUnavailable) as info:
            connect(f"redis://127.0.0.1:{port}/0", timeout=2)
    assert "cannot reach Redis at" in str(info.value)


def test_bad_server_override_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv(server_mod.ENV_SERVER, str(tmp_path / "missing"))
    with pytest.raises(RedisUnavailable, match="not an executable file"):
        server_mod.find_redis_server()


def test_connect_without_url_starts_one_embedded_server(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    first, second = connect(), connect()
    assert first.ping() and second.ping()
    assert server_mod.embedded_server() is server_mod.embedded_server()
    assert first.connection_pool.connection_kwargs["path"] == server_mod.embedded_server().socket_path
