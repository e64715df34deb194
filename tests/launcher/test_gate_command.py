"""``echomq-viz gate`` (echomq_viz.launcher.gate_command) as an operator runs it, in front of a real
Redis 7: one line where it listens, students through it, Ctrl-C stops it; what it cannot do is one
line, with no password."""

from __future__ import annotations

import signal
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
import redis

from conftest import clean_env, one_clear_line
from echomq_viz.redis_side.acl import remove_student

pytestmark = pytest.mark.slow  # a server and commands of their own


def test_the_gate_command_serves_until_stopped(course, students, tmp_path):
    env = {**clean_env(), "REDIS_URL": course.url}
    process = subprocess.Popen([sys.executable, "-m", "echomq_viz", "gate", "--port", "0"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        assert first.startswith("echomq-viz gate: students reach redis://:***@127.0.0.1:") and one_clear_line(first)
        assert course.password not in first
        port = int(first.split(" through 127.0.0.1:")[1].split(",")[0])
        alice = redis.Redis(host="127.0.0.1", port=port, username="alice", password=urlsplit(students["alice"]).password,
                            decode_responses=True)
        assert alice.execute_command("ACL", "WHOAMI") == "alice"
        alice.close()
        # the operator's password, should it leak, opens nothing through the gate, which every local user reaches
        for username in (None, "default"):
            operator = redis.Redis(host="127.0.0.1", port=port, username=username, password=course.password)
            with pytest.raises(redis.ResponseError, match="not Redis's default user") as info:
                operator.execute_command("CONFIG", "GET", "maxmemory")
            assert one_clear_line(str(info.value))
            operator.close()
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    assert process.returncode == 0 and out.strip() == "echomq-viz gate: stopped" and err == ""


@pytest.mark.parametrize("argv, says", [
    (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1: 192.0.2.1 is not an address of this machine"),
    (["--rate", "0"], "rate must be in 1..1,000,000 (commands a second per user), got 0"),
    (["--url", "rediss://127.0.0.1:1"], "TLS is not passed through"),
])
def test_the_gate_command_refuses_in_one_line(course, argv, says):
    env = {**clean_env(), "REDIS_URL": course.url}
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "gate", "--port", "0", *argv], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and one_clear_line(done.stderr) and says in done.stderr
    assert course.password not in done.stderr


def test_the_gate_refuses_a_password_on_its_command_line(course):
    """Only the address is used, and every user of the machine reads a command's arguments."""
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "gate", "--port", "0", "--url", course.url],
                          env=clean_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and one_clear_line(done.stderr)
    assert "leave the password out of --url" in done.stderr and course.password not in done.stderr


def test_acl_add_through_the_gate_says_so_and_writes_the_gates_address(course, tmp_path):
    env = {**clean_env(), "REDIS_URL": course.url}
    out = tmp_path / "carol.url"
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "acl", "add", "carol", "--out", str(out),
                           "--gate", "127.0.0.1:6380"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and one_clear_line(done.stdout) and "through the gate at 127.0.0.1:6380" in done.stdout
    assert urlsplit(out.read_text().strip()).netloc.endswith("@127.0.0.1:6380")
    bad = subprocess.run([sys.executable, "-m", "echomq_viz", "acl", "add", "dave", "--out", str(tmp_path / "d"),
                          "--gate", "127.0.0.1"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and one_clear_line(bad.stderr) and "HOST:PORT" in bad.stderr
    assert not (tmp_path / "d").exists()
    operator = course.client()
    assert operator.execute_command("ACL", "GETUSER", "dave") is None  # refused before Redis changed
    remove_student(operator, "carol")
    operator.close()
