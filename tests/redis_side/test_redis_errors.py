"""Every way a real Redis fails a Demo call is one line: a read-only
replica, a server out of memory, a user without the right, a server gone or
never there, one still loading its data, a cluster without its slots. The
error keeps its redis-py class; in a kernel the notebook gets the one line
and the traceback goes to the kernel's stderr (the terminal's log)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import redis

from conftest import one_clear_line
from echomq_viz.redis_side import owners
from echomq_viz.redis_side.acl import add_student
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import RedisServer, RedisUnavailable, connect, find_redis_server, free_tcp_port


def said_in_one_line(error: BaseException, kind: type, *words: str) -> None:
    """``error`` is a ``kind``, IPython shows it as one line, and that line says ``words``."""
    assert isinstance(error, kind), type(error)
    shown = error._render_traceback_()
    assert len(shown) == 1 and one_clear_line(shown[0]), shown
    for word in words:
        assert word in shown[0], (word, shown[0])
    assert "Traceback" not in shown[0]


def test_a_read_only_replica(tmp_path):
    with RedisServer(extra_args=("--replicaof", "127.0.0.1", str(free_tcp_port()))) as replica:  # never synced
        with pytest.raises(redis.exceptions.ReadOnlyError) as info:
            Demo("viz-01-score", client=replica.client())
        said_in_one_line(info.value, redis.exceptions.ReadOnlyError, "read-only replica", "REDIS_URL")
        assert replica.client().dbsize() == 0


def test_a_server_turned_replica_under_a_demo(tmp_path):
    with RedisServer() as server:
        demo = Demo("viz-01-score", client=server.client())
        demo.add("a", 1)
        server.client().execute_command("REPLICAOF", "127.0.0.1", str(free_tcp_port()))
        with pytest.raises(redis.exceptions.RedisError) as info:
            demo.add("b", 1)
        said_in_one_line(info.value, redis.exceptions.RedisError, "read-only replica")


def test_a_server_out_of_memory():
    with RedisServer(extra_args=("--maxmemory-policy", "noeviction")) as server:
        demo = Demo("viz-01-score", client=server.client())
        server.client().config_set("maxmemory", 1)
        with pytest.raises(redis.exceptions.RedisError) as info:
            demo.add("a", 1)
        said_in_one_line(info.value, redis.exceptions.RedisError, "out of memory", "nothing was written")
        assert demo.reset() >= 0  # deleting still works, as the line says


@pytest.fixture
def own_owner(monkeypatch):
    """This process as a kernel that has made no Demo yet: its first Redis user names its token."""
    fresh = owners._Owner()
    monkeypatch.setattr(owners, "_OWNER", fresh)
    yield fresh
    fresh.release()


def test_a_user_whose_rights_were_taken_away(own_owner):
    with RedisServer(port=0) as server:
        operator = server.client()
        demo = Demo("viz-01-score", client=connect(add_student(operator, "alice", server.url)))
        demo.add("a", 1)
        operator.execute_command("ACL", "SETUSER", "alice", "-fcall", "-fcall_ro")
        with pytest.raises(redis.exceptions.NoPermissionError) as info:
            demo.add("b", 1)
        said_in_one_line(info.value, redis.exceptions.NoPermissionError, "may not", "nothing was done")


def test_a_server_that_is_not_there(monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_tcp_port()}/0")
    with pytest.raises(RedisUnavailable) as info:
        Demo("viz-01-score")
    said_in_one_line(info.value, RedisUnavailable, "cannot reach Redis")


def test_a_server_that_went_away_under_a_demo():
    with RedisServer() as server:
        demo = Demo("viz-01-score", client=server.client(retry=None))
        demo.add("a", 1)
    with pytest.raises(redis.exceptions.ConnectionError) as info:
        demo.entries()
    said_in_one_line(info.value, redis.exceptions.ConnectionError, "cannot reach Redis", "is it running?")


@pytest.fixture
def loading(tmp_path):
    """A real redis-server still loading a large RDB (slowed down per key), on a unix socket."""
    with RedisServer(directory=tmp_path) as writer:
        client = writer.client()
        client.eval("for i = 1, 20000 do redis.call('SET', 'k' .. i, 'v') end", 0)
        client.save()
    socket_path = tmp_path / "loading.sock"
    process = subprocess.Popen(
        [find_redis_server(), "--port", "0", "--unixsocket", str(socket_path), "--unixsocketperm", "700",
         "--dir", str(tmp_path), "--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no",
         "--key-load-delay", "1000", "--loading-process-events-interval-bytes", "1024"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        client = redis.Redis(unix_socket_path=str(socket_path), decode_responses=True, retry=None)
        with pytest.raises(redis.exceptions.BusyLoadingError):
            client.ping()  # still loading: 20 000 keys at 1 ms each
        yield client
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_a_server_still_loading_its_data(loading):
    with pytest.raises(redis.exceptions.BusyLoadingError) as info:
        Demo("viz-01-score", client=loading)
    said_in_one_line(info.value, redis.exceptions.BusyLoadingError, "still loading", "try again")


def test_a_cluster_node_without_its_slots():
    port = free_tcp_port(highest=55535, offsets=(10000,))
    with RedisServer(port=port, extra_args=("--cluster-enabled", "yes")) as node:  # no slot assigned: down
        with pytest.raises(redis.exceptions.RedisError) as info:
            Demo("viz-01-score", client=node.client())
        said_in_one_line(info.value, redis.exceptions.RedisError, "Redis Cluster", "down")


# -- in a real kernel ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_in_a_kernel_the_notebook_gets_one_line_and_the_log_the_traceback(tmp_path):
    from jupyter_client import KernelManager

    from echomq_viz.launcher._kernel_channels import private_kernel_config

    with RedisServer(extra_args=("--replicaof", "127.0.0.1", str(free_tcp_port()))) as replica, \
            private_kernel_config() as config:
        log = open(tmp_path / "kernel.log", "wb")
        manager = KernelManager(kernel_name="python3", config=config)
        env = {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"}
        manager.start_kernel(stderr=log, env={**env, "REDIS_URL": replica.url})  # fd 2 watched, as in a class
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            msg_id = client.execute("from echomq_viz.experiments.live import Demo\nDemo('viz-01-score')")
            errors, streams = [], []
            while True:
                msg = client.get_iopub_msg(timeout=60)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "error":
                    errors.append(msg["content"])
                elif msg["msg_type"] == "stream":
                    streams.append(msg["content"]["text"])
                elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    break
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
            log.close()
    assert len(errors) == 1 and errors[0]["ename"] == "ReadOnlyError"
    assert len(errors[0]["traceback"]) == 1 and "read-only replica" in errors[0]["traceback"][0]
    assert "Traceback" not in "".join(streams)
    details = Path(tmp_path / "kernel.log").read_text(errors="replace")
    assert "Traceback" in details and "ReadOnlyError" in details
