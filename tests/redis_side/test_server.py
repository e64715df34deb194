"""The embedded server: private, persistence off, and never left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from typing import Callable

import psutil
import pytest

from conftest import server_binary
from echomq_viz.redis_side import server as server_mod
from echomq_viz.redis_side._process import _running, cmdline
from echomq_viz.redis_side.server import (
    RedisServer, RedisUnavailable, connect, free_tcp_port, redact_url, url_or_private_server,
)


def _alive(pid: int) -> bool:
    # a zombie is gone for our purposes; so is a process that ends while we look
    try:
        return _running(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False


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
        assert srv.url.endswith(f"@127.0.0.1:{srv.port}/0")
        assert srv.client().config_get("bind")["bind"].split() == ["127.0.0.1"]
        with socket.create_connection(("127.0.0.1", srv.port), timeout=2):
            pass


def test_a_port_taken_before_redis_server_binds_it_is_picked_again(binary, monkeypatch):
    """``port=0``: we pick a free port, redis-server binds it a moment later; another process
    may take it between (here: before we start), and then another port is picked."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        picks = [taken.getsockname()[1]]
        picked_free = server_mod.free_tcp_port
        monkeypatch.setattr(server_mod, "free_tcp_port", lambda **kw: picks.pop() if picks else picked_free(**kw))
        with RedisServer(binary, port=0) as srv:
            assert srv.port != taken.getsockname()[1]
            assert srv.client().ping()


def test_a_port_given_and_taken_fails_in_one_line(binary):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(RedisUnavailable) as info:
            RedisServer(binary, port=taken.getsockname()[1]).start()
    assert "Address already in use" in str(info.value) and "\n" not in str(info.value)


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


def test_a_failed_start_never_shows_the_password(tmp_path):
    # redis-server quotes a bad config line in its log; this one quotes them all.
    fake = tmp_path / "redis-server"
    fake.write_text('#!/bin/sh\ncat "$1"\nexit 3\n')
    fake.chmod(0o755)
    password = "never-on-screen-" + "x" * 16
    with pytest.raises(RedisUnavailable) as info:
        RedisServer(str(fake), port=0, password=password).start(timeout=3)
    assert "exited with 3" in str(info.value) and "requirepass ***" in str(info.value)
    assert password not in str(info.value)


CHILD = textwrap.dedent(
    """
    import sys, time
    from echomq_viz.redis_side.server import RedisServer
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
        ("redis://[::1", "bad Redis URL"),  # urllib itself refuses it: one line, never its traceback
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


# -- private to this user: a password on every TCP port, 0700 on every socket ---------------------

# Run as user ``nobody``: what another local user can do with our servers.
# Standard library only, so any python3 runs it.
NOBODY_PROBE = textwrap.dedent(
    r"""
    import json, socket, sys
    port, socket_path, target = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    found = {}
    if port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"PING\r\nCONFIG SET dir " + target.encode() + b"\r\n"
                         b"CONFIG SET dbfilename pwned.rdb\r\nSAVE\r\n")
            reply = b""
            while reply.count(b"\r\n") < 4:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                reply += chunk
        found["tcp"] = reply.decode(errors="replace").splitlines()
    if socket_path:
        try:
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(socket_path)
            found["unix"] = "connected"
        except OSError as exc:
            found["unix"] = type(exc).__name__
    print(json.dumps(found))
    """
)


def as_nobody(port: int | None, socket_path: str | None, target: str) -> dict:
    """What user ``nobody`` gets from our TCP port and our unix socket."""
    if os.geteuid() != 0:
        pytest.skip("switching to user nobody needs root")
    # The system python: a venv's may live in a home folder nobody cannot enter.
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    done = subprocess.run([python, "-c", NOBODY_PROBE, str(port or 0), socket_path or "", target],
                          user="nobody", group="nogroup", capture_output=True, text=True, timeout=30, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def open_to_nobody(tmp_path):
    """A folder user nobody may write to: where the old attack dropped its file."""
    target = tmp_path / "drop"
    target.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(target, 0o777)
    return target


def test_another_local_user_gets_noauth_on_our_tcp_port(binary, open_to_nobody):
    with RedisServer(binary, port=0) as srv:
        found = as_nobody(srv.port, None, str(open_to_nobody))
        assert len(found["tcp"]) == 4 and all(line.startswith("-NOAUTH") for line in found["tcp"]), found
        assert list(open_to_nobody.iterdir()) == []  # no file written with our rights
        assert srv.client().ping()  # while we get in


def test_another_local_user_cannot_open_our_unix_socket(binary, open_to_nobody):
    with RedisServer(binary) as srv:
        found = as_nobody(None, srv.socket_path, str(open_to_nobody))
        assert found == {"unix": "PermissionError"}
        assert stat.S_IMODE(os.stat(srv.dir).st_mode) == 0o700


@pytest.mark.slow
def test_tcp_password_is_fresh_in_the_url_and_on_no_command_line(binary):
    import redis

    with RedisServer(binary, port=0) as srv, RedisServer(binary, port=0) as other:
        password = srv.password
        assert len(password) >= 32 and password != other.password
        assert srv.url == f"redis://:{password}@127.0.0.1:{srv.port}/0"
        assert redis.Redis.from_url(srv.url).ping() and srv.client().ping()
        assert srv.client().config_get("bind")["bind"].split() == ["127.0.0.1"]
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=srv.port).ping()
        # Other users read every command line (ps): the password must be on none.
        for pid in (srv.pid, srv.supervisor_pid):
            assert password not in cmdline(pid)
        assert password not in repr(srv) and "***" in repr(srv)
        # Dangerous commands nobody here needs are gone.
        for command in ("DEBUG", "MODULE"):
            with pytest.raises(redis.ResponseError, match="unknown command"):
                srv.client().execute_command(command, "HELP")


@pytest.mark.parametrize("url, shown", [
    ("redis://:s3cretPW@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
    ("redis://reader:s3cretPW@h:1/2", "redis://reader:***@h:1/2"),
    ("rediss://s3cretPW@h:1", "rediss://***@h:1"),
    ("unix://reader:s3cretPW@/tmp/x/redis.sock?db=0", "unix://reader:***@/tmp/x/redis.sock?db=0"),
    ("redis://h:1/0?password=s3cretPW&db=1", "redis://h:1/0?password=***&db=1"),
    ("redis://:p@ss@h:1/0", "redis://:***@h:1/0"),
    ("unix:///tmp/x/redis.sock?db=0", "unix:///tmp/x/redis.sock?db=0"),
    ("cannot reach Redis at redis://:s3cretPW@h:1/0: refused", "cannot reach Redis at redis://:***@h:1/0: refused"),
])
def test_redact_url_hides_every_password(url, shown):
    assert redact_url(url) == shown


@pytest.mark.parametrize("url", [
    "redis://:s3cretPW@127.0.0.1:1/0",
    "redis://:s3cretPW@127.0.0.1:notaport/0",
    "redis://user:s3cretPW@127.0.0.1:1/0",
])
def test_connect_errors_never_show_the_password(monkeypatch, url):
    for given in (url, None):
        monkeypatch.setenv("REDIS_URL", url)
        with pytest.raises(RedisUnavailable) as info:
            connect(given, timeout=1)
        message = str(info.value)
        assert "s3cretPW" not in message and ":***@127.0.0.1" in message and len(message.splitlines()) == 1


def test_wrong_password_is_one_clear_line_without_it(binary):
    with RedisServer(binary, port=0) as srv:
        for url in (f"redis://127.0.0.1:{srv.port}/0", f"redis://:wrong-s3cretPW@127.0.0.1:{srv.port}/0"):
            with pytest.raises(RedisUnavailable) as info:
                connect(url, timeout=2)
            message = str(info.value)
            assert "s3cretPW" not in message and srv.password not in message
            assert "refused the login" in message and len(message.splitlines()) == 1, message


@pytest.mark.parametrize("port", [None, 0], ids=["unix", "tcp"])
def test_connect_accepts_a_read_only_acl_user(binary, port):
    # +@read -@write: PING is not in @read, so the server answers it with
    # NOPERM; that is a server which answers, and inspect_queue works.
    import redis

    from echomq_viz.experiments.inspection import inspect_queue

    with RedisServer(binary, port=port) as srv:
        admin = srv.client()
        admin.zadd("emq:{ro}:prioritized", {"1": 4294967297})
        admin.acl_setuser("viewer", enabled=True, reset=True, passwords=["+viewer-s3cretPW"], keys=["*"],
                          commands=["+@read", "-@write"])
        if port is None:
            url = f"unix://viewer:viewer-s3cretPW@{srv.socket_path}?db=0"
        else:
            url = f"redis://viewer:viewer-s3cretPW@127.0.0.1:{srv.port}/0"
        client = connect(url, timeout=2)
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.ping()  # the very command connect() used to insist on
        report = inspect_queue(client, "{ro}")
        assert report.total == 1 and report.tiers.tolist() == [1]
        with pytest.raises(RedisUnavailable) as info:
            connect(url.replace("viewer-s3cretPW", "not-it-s3cretPW"), timeout=2)
        assert "refused the login" in str(info.value) and "s3cretPW" not in str(info.value)


# -- a redis-server that dies is noticed ---------------------------------------------------------


def wait_for(predicate, timeout: float, what: str | Callable[[], str]):
    """The first true value of ``predicate()`` within ``timeout`` seconds; else an
    AssertionError naming ``what`` (a callable: asked then, to say what is still so)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


def test_a_killed_redis_server_is_noticed_not_left_a_zombie(binary):
    srv = RedisServer(binary).start()
    try:
        pid, directory = srv.pid, srv.dir
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not srv.running, 10, "the supervisor to notice redis-server die")
        assert _wait_gone(pid)  # reaped, not a zombie
        assert srv.events() == [f"redis-server (pid {pid}) was killed by signal 9"]
        assert srv.death == f"redis-server (pid {pid}) was killed by signal 9"
        assert not os.path.exists(directory)
    finally:
        srv.stop()


def test_a_killed_redis_server_restarts_at_the_same_address(binary):
    srv = RedisServer(binary, port=0, restarts=1).start()
    try:
        url, first = srv.url, srv.pid
        os.kill(first, signal.SIGKILL)
        news = wait_for(srv.events, 10, "news of the restart")
        assert news[0].startswith(f"redis-server (pid {first}) was killed by signal 9; restarted")
        assert srv.pid != first and srv.running and srv.url == url
        assert connect(url).ping()
        assert _wait_gone(first)
        os.kill(srv.pid, signal.SIGKILL)  # the budget of one restart is spent: it stays dead
        wait_for(lambda: not srv.running, 10, "the supervisor to give up")
    finally:
        srv.stop()


# -- one probe for free ports, one place for "REDIS_URL or a private server" -----------------------


def test_free_tcp_port_with_room_above():
    for _ in range(10):
        port = free_tcp_port(highest=40_000, offsets=(10_000,))
        assert 1 <= port <= 40_000
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", port))
            b.bind(("127.0.0.1", port + 10_000))


def test_url_or_private_server(monkeypatch, redis_server):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    assert url_or_private_server(check=True) == (redis_server.url, None)
    monkeypatch.setenv("REDIS_URL", "redis://:s3cretPW@127.0.0.1:1/0")
    assert url_or_private_server()[1] is None  # not checked: taken as given
    with pytest.raises(RedisUnavailable, match=r"redis://:\*\*\*@127\.0\.0\.1:1/0"):
        url_or_private_server(check=True)
    monkeypatch.delenv("REDIS_URL")
    url, started = url_or_private_server()
    try:
        assert started is not None and started.running and url == started.url and connect(url).ping()
    finally:
        started.stop()


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"port": -1}, ValueError, "port must be an int in 0..65535, got -1"),
    ({"port": True}, TypeError, "port must be"),
    ({"port": 0, "password": "short"}, ValueError, "password must be 16..128 characters"),
    ({"port": 0, "password": "has a space in it, long enough"}, ValueError, "got a str of length 30"),
    ({"password": "long-enough-but-no-port"}, ValueError, "password is for a TCP server (give port)"),
    ({"restarts": -1}, ValueError, "restarts must be an int in 0..100, got -1"),
])
def test_bad_arguments_are_refused_before_anything_starts(kwargs, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)) as info:
        RedisServer(**kwargs)
    assert "has a space" not in str(info.value)  # a password is never shown, not even a bad one


# -- a full disk ------------------------------------------------------------------------------------


@pytest.fixture
def nearly_full(tmp_path):
    """A real file system with one page (4 KB) free: a tmpfs of that size, unmounted afterwards.
    Mounting needs root (CI and this project's test machine run as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root; run as root to test a full disk")
    folder = tmp_path / "full"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=1777", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_full_temp_folder_is_one_line_naming_it_and_nothing_is_left(nearly_full, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(nearly_full))
    with pytest.raises(RedisUnavailable) as info:
        RedisServer().start()
    message = str(info.value)
    assert "\n" not in message and f"no space left in {nearly_full}" in message
    assert f"about {server_mod.ROOM_NEEDED_KB} KB" in message and "TMPDIR" in message
    assert os.listdir(nearly_full) == []  # no echomq-viz-redis-* left for the next run to sweep


@pytest.mark.parametrize("command", [["redis"], ["lab", "--no-browser", "--port", "0"]])
def test_the_launcher_on_a_full_temp_folder_says_one_line_and_leaves_nothing(nearly_full, command):
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": str(nearly_full)}
    result = subprocess.run([sys.executable, "-m", "echomq_viz", *command], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    said = [line for line in result.stderr.splitlines() if "no space left" in line or "Traceback" in line]
    assert len(said) == 1 and f"no space left in {nearly_full}" in said[0]
    assert os.listdir(nearly_full) == []
