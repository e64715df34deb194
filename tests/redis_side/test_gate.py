"""The fair gate (echomq_viz.redis_side.gate) in front of a real Redis 7: students work through it
as they would directly, Redis still judges every login and command, and the gate holds each
connection to one command at a time and each user to its rate and connections."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest
import redis

from conftest import one_clear_line, server_binary, wait_until
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.acl import check_gate, remove_student, write_student_url
from echomq_viz.redis_side import owners
from echomq_viz.redis_side.gate import GateLimits, GateThread, upstream_address, upstream_problem
from echomq_viz.redis_side.server import RedisServer, connect

pytestmark = pytest.mark.slow  # servers of their own


@pytest.fixture
def own_owner(monkeypatch):
    """This process as a kernel that has made no Demo yet: its first lease, as alice through the
    gate, names its token (an earlier test in this worker may have taken one on another server)."""
    fresh = owners._Owner()
    monkeypatch.setattr(owners, "_OWNER", fresh)
    yield fresh
    fresh.release()


def test_a_student_works_through_the_gate_and_redis_still_judges(course, students, own_owner):
    with GateThread(course.url) as gate:
        alice = connect(gate.url_for(students["alice"]))
        demo = Demo("viz-gate", client=alice)
        ids = demo.add_batch([3, 1, 2] * 20)  # pipelined: the gate passes it one command at a time
        assert len(ids) == 60 and demo.pop().priority == 1
        assert [entry.priority for entry in demo.entries()][:3] == [1, 1, 1]
        with pytest.raises(redis.exceptions.NoPermissionError):  # Redis's ACL, as without the gate
            alice.execute_command("EVAL", "while true do end", 0)
        with pytest.raises(Exception, match=r"at most 500 jobs here \(the operator's queue_jobs cap\)") as refused:
            demo.add_batch([1] * 600)  # past the cap: the Lua's one line, passed on
        assert one_clear_line(str(refused.value)) and len(demo.entries()) == 500 - 1  # one was popped
        with pytest.raises(redis.AuthenticationError):  # a wrong password: Redis says so, through the gate
            connect_raw(gate, b"alice", b"not-her-password")
        assert set(gate.gate.buckets) >= {b"alice"}
        alice.close()


def connect_raw(gate: GateThread, user: bytes, password: bytes) -> None:
    client = redis.Redis(host=gate.host, port=gate.port, username=user.decode(), password=password.decode(),
                         protocol=2, socket_timeout=5)
    try:
        client.ping()
    finally:
        client.close()


def password_of(url: str) -> str:
    return urlsplit(url).password


def as_user(gate: GateThread, url: str) -> redis.Redis:
    """A client of the student ``url`` names, through ``gate``, one connection per pool."""
    return redis.Redis(host=gate.host, port=gate.port, username=urlsplit(url).username, password=password_of(url),
                       decode_responses=True, socket_timeout=10)


def test_commands_that_answer_more_than_once_are_refused_in_one_line_and_the_connection_goes_on(course, students):
    with GateThread(course.url) as gate:
        alice = connect(gate.url_for(students["alice"]))
        for command in (("SUBSCRIBE", "x"), ("PSUBSCRIBE", "*"), ("MONITOR",), ("CLIENT", "TRACKING", "on")):
            with pytest.raises(redis.ResponseError) as refused:
                alice.execute_command(*command)
            assert str(refused.value).startswith("echomq-viz gate: ") and one_clear_line(str(refused.value))
        assert alice.execute_command("ACL", "WHOAMI") == "alice"
        alice.close()


def test_a_user_gets_its_rate_and_no_more(course, students):
    """40 pipelined commands at 20 a second with 10 at once cannot take less than 1.5 s (a lower bound:
    a slower machine only takes longer); another user meanwhile is not held to alice's bucket."""
    with GateThread(course.url, limits=GateLimits(rate=20, burst=10)) as gate:
        alice, bob = connect(gate.url_for(students["alice"])), connect(gate.url_for(students["bob"]))
        alice.execute_command("ACL", "WHOAMI")
        time.sleep(0.6)  # the bucket full again: 10
        pipe = alice.pipeline(transaction=False)
        for _ in range(40):
            pipe.execute_command("ACL", "WHOAMI")
        started = time.monotonic()
        done = threading.Event()
        answers: list = []
        worker = threading.Thread(target=lambda: (answers.extend(pipe.execute()), done.set()))
        worker.start()
        assert bob.execute_command("ACL", "WHOAMI") == "bob"
        assert not done.is_set(), "bob's command should have been answered while alice's queue waits its turn"
        worker.join(30)
        assert answers == ["alice"] * 40 and time.monotonic() - started >= 1.5 - 0.05
        alice.close(), bob.close()


def test_a_user_holds_at_most_its_connections(course, students):
    with GateThread(course.url, limits=GateLimits(max_connections=3)) as gate:
        held = [as_user(gate, students["alice"]) for _ in range(4)]
        for client in held[:3]:
            assert client.execute_command("ACL", "WHOAMI") == "alice"
        with pytest.raises(redis.ResponseError, match="^echomq-viz gate: user alice holds the 3 connections one "
                           "user may have open through the gate: close one first$"):
            held[3].execute_command("ACL", "WHOAMI")
        assert gate.gate.refused >= 1
        held[0].close()
        assert wait_until(lambda: gate.gate.buckets[b"alice"].connections == 2, 5)
        late = as_user(gate, students["alice"])
        assert late.execute_command("ACL", "WHOAMI") == "alice"  # a seat given back is a seat to take
        for client in (*held, late):
            client.close()


def test_the_refusal_past_the_connections_is_one_line(course, students):
    password = password_of(students["alice"]).encode()
    with GateThread(course.url, limits=GateLimits(max_connections=1)) as gate:
        first = socket.create_connection((gate.host, gate.port))
        second = socket.create_connection((gate.host, gate.port))
        login = b"*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n$%d\r\n%s\r\n" % (len(password), password)
        first.sendall(login)
        assert first.recv(100) == b"+OK\r\n"
        second.sendall(login)
        second.settimeout(5)
        assert second.recv(1000) == (b"-ERR echomq-viz gate: user alice holds the 1 connections one user may have "
                                     b"open through the gate: close one first\r\n")
        assert second.recv(100) == b""  # then closed
        first.close(), second.close()


class _CountingUpstream:
    """A stand-in for Redis that answers each command after a pause and records how many commands
    of one connection it ever held unanswered at once: what the gate passes on, not what Redis does
    (the real Redis is in the tests above). It wants a login, as the gate requires: PING gets NOAUTH."""

    def __init__(self) -> None:
        self.most_waiting = 0

    async def handle(self, reader, writer) -> None:
        import hiredis

        parser = hiredis.Reader()
        while data := await reader.read(65536):
            parser.feed(data)
            answers = []
            while (command := parser.gets()) is not False:
                answers.append(b"-NOAUTH Authentication required.\r\n" if command[0] == b"PING" else b"+OK\r\n")
            self.most_waiting = max(self.most_waiting, len(answers))
            await asyncio.sleep(0.002)
            writer.write(b"".join(answers))
            await writer.drain()


def test_redis_never_holds_two_commands_of_one_connection(tmp_path):
    path = str(tmp_path / "upstream.sock")
    upstream = _CountingUpstream()
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(asyncio.start_unix_server(upstream.handle, path))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with GateThread(f"unix://{path}") as gate:
            client = socket.create_connection((gate.host, gate.port))
            client.sendall(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" * 300)  # a pipeline of 300
            got = b""
            while got.count(b"\r\n") < 300:
                got += client.recv(65536)
            client.close()
        assert got == b"+OK\r\n" * 300 and upstream.most_waiting == 1
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        server.close()


def test_the_gate_refuses_a_redis_open_to_all(tmp_path):
    with RedisServer(server_binary("system")) as open_server:  # a unix socket server: no password
        problem = upstream_problem(upstream_address(open_server.url))
        assert problem and one_clear_line(problem) and "default user" in problem
        with pytest.raises(ValueError, match="answers without a login"):
            GateThread(open_server.url).start()
    assert "cannot be reached" in upstream_problem(("unix", str(tmp_path / "nothing.sock")))


def test_garbage_gets_one_line_and_a_close(course):
    with GateThread(course.url) as gate:
        sock = socket.create_connection((gate.host, gate.port))
        sock.sendall(b":12\r\n")  # an integer, not a command
        sock.settimeout(5)
        assert sock.recv(1000) == b"-ERR echomq-viz gate: a command must be a RESP array of bulk strings\r\n"
        assert sock.recv(100) == b""
        sock.close()


@pytest.mark.parametrize("bad", ["", "host", "host:0", "host:70000", "a b:1", ":6380", "h:6380/x", 6380])
def test_a_bad_gate_address_is_one_line(bad):
    with pytest.raises(ValueError) as refused:
        check_gate(bad)
    assert one_clear_line(str(refused.value)) and "HOST:PORT" in str(refused.value)


def test_acl_add_writes_a_url_through_the_gate(course, tmp_path):
    out = tmp_path / "carol.url"
    write_student_url(course.url, "carol", out, gate="127.0.0.1:6380")
    url = out.read_text().strip()
    assert url.startswith("redis://carol:") and url.endswith("@127.0.0.1:6380/0") and oct(out.stat().st_mode)[-3:] == "600"
    operator = course.client()
    remove_student(operator, "carol")
    operator.close()


def test_a_connection_that_never_logs_in_is_closed_with_one_line(course):
    with GateThread(course.url, limits=GateLimits(login_s=1)) as gate:
        idle = socket.create_connection((gate.host, gate.port))
        idle.settimeout(10)
        started = time.monotonic()
        assert idle.recv(1000) == (b"-ERR echomq-viz gate: no login within 1 s: each connection through the gate "
                                   b"logs in as its own Redis user\r\n")
        assert idle.recv(100) == b"" and time.monotonic() - started >= 0.9
        idle.close()
        assert wait_until(lambda: not gate.gate.students, 5)


def test_a_command_larger_than_the_burst_still_goes_at_a_full_bucket(course, students):
    with GateThread(course.url, limits=GateLimits(burst=2)) as gate:
        alice = connect(gate.url_for(students["alice"]))
        with pytest.raises(redis.exceptions.NoPermissionError):  # 7 tokens' worth of key, 2 in the bucket
            alice.execute_command("GET", "x" * 100_000)
        alice.close()


def test_a_command_too_large_is_one_line_and_a_close(course, students):
    password = password_of(students["alice"]).encode()
    with GateThread(course.url) as gate:
        before = socket.create_connection((gate.host, gate.port))  # no login yet: 64 KiB at most
        before.settimeout(10)
        before.sendall(b"*2\r\n$4\r\nECHO\r\n$100000\r\n" + b"x" * 70_000)
        assert before.recv(1000) == b"-ERR echomq-viz gate: a command may take at most 64 KiB here before a login\r\n"
        after = socket.create_connection((gate.host, gate.port))  # logged in: 1 MiB at most
        after.settimeout(10)
        after.sendall(b"*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n$%d\r\n%s\r\n" % (len(password), password))
        assert after.recv(100) == b"+OK\r\n"
        after.sendall(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n" + b"x" * 1_100_000)
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += after.recv(1000)
        assert reply == b"-ERR echomq-viz gate: a command may take at most 1024 KiB here\r\n"
        before.close(), after.close()


def _hello(*arguments: bytes) -> bytes:
    return b"*%d\r\n" % (len(arguments) + 1) + b"".join(
        b"$%d\r\n%s\r\n" % (len(argument), argument) for argument in (b"HELLO", *arguments))


def test_a_hello_is_counted_against_the_user_redis_logs_it_in_as(course, students):
    """HELLO's AUTH was read as the first "AUTH" anywhere after the version: a client named AUTH
    (``SETNAME AUTH AUTH alice pass``) logged in as alice counted against a user "AUTH", and a
    second AUTH that failed (``AUTH alice pass AUTH nobody x``) left the connection alice's with an
    error answered, counted against nobody: ten connections of alice's where she may hold one."""
    password = password_of(students["alice"]).encode()
    with GateThread(course.url, limits=GateLimits(max_connections=1)) as gate:
        first = socket.create_connection((gate.host, gate.port))
        first.sendall(_hello(b"2", b"AUTH", b"alice", password))
        first.settimeout(5)
        assert first.recv(1000).startswith(b"*")  # HELLO's map: alice logged in, her one connection
        held = (b"-ERR echomq-viz gate: user alice holds the 1 connections one user may have open through the "
                b"gate: close one first\r\n")
        refused = b"-ERR echomq-viz gate: HELLO takes at most one AUTH user password and one SETNAME name here\r\n"
        for crafted, answer in [((b"2", b"SETNAME", b"AUTH", b"AUTH", b"alice", password), held),  # alice's login
                                ((b"2", b"AUTH", b"alice", password, b"SETNAME", b"AUTH"), held),
                                ((b"2", b"AUTH", b"alice", password, b"AUTH", b"nobody", b"x"), refused),
                                ((b"2", b"AUTH", b"alice"), refused)]:
            sock = socket.create_connection((gate.host, gate.port))
            sock.sendall(_hello(*crafted) + b"*2\r\n$3\r\nACL\r\n$6\r\nWHOAMI\r\n")
            sock.settimeout(5)
            said = sock.recv(1000)
            assert said.startswith(answer) and b"alice" not in said[len(answer):], (crafted, said)  # nor WHOAMI
            sock.close()
        first.close()


def test_an_array_of_billions_is_one_line_and_a_close(course):
    """hiredis answers such a header with a MemoryError, which went up as the gate's traceback."""
    with GateThread(course.url) as gate:
        sock = socket.create_connection((gate.host, gate.port))
        sock.sendall(b"*4294967295\r\n")
        sock.settimeout(5)
        assert sock.recv(1000) == b"-ERR echomq-viz gate: what was sent cannot be read as a command\r\n"
        assert sock.recv(100) == b""
        sock.close()


def test_sockets_that_never_log_in_cannot_hold_every_seat(course, students):
    """Anyone who reaches the port could hold all max_clients seats with idle sockets, opened anew
    every login_s: a student then got "try again later". The oldest not logged in now makes room;
    a gate full of logged-in connections still refuses in one line."""
    with GateThread(course.url, limits=GateLimits(max_clients=3)) as gate:
        idle = [socket.create_connection((gate.host, gate.port)) for _ in range(3)]
        assert wait_until(lambda: len(gate.gate.students) == 3, 5)
        alice = as_user(gate, students["alice"])
        assert alice.execute_command("ACL", "WHOAMI") == "alice"
        idle[0].settimeout(5)
        assert idle[0].recv(1000) == (b"-ERR echomq-viz gate: the gate is full (3 connections) and this one had not "
                                      b"logged in: log in as you connect\r\n")
        more = [as_user(gate, students[name]) for name in ("bob", "alice")]  # the two idle ones make way
        assert [client.execute_command("ACL", "WHOAMI") for client in more] == ["bob", "alice"]
        late = socket.create_connection((gate.host, gate.port))
        late.settimeout(5)
        assert late.recv(1000) == (b"-ERR echomq-viz gate: 3 connections are open through the gate, the most it "
                                   b"takes (3): try again later\r\n")
        for client in (*idle, late):
            client.close()
        for client in (alice, *more):
            client.close()


def test_a_scan_walks_at_most_a_thousand_keys_a_call_and_pays_for_them(course, students):
    """SCAN walks every student's keys: a COUNT past 1000 is refused in one line (the connection goes
    on), and 4 SCANs of COUNT 1000 (11 tokens each) at 110 tokens a second with 11 at once cannot take
    less than 0.3 s (a lower bound), where 4 plain SCANs take a token each."""
    with GateThread(course.url, limits=GateLimits(rate=110, burst=11)) as gate:
        alice = connect(gate.url_for(students["alice"]))
        for count in ("1001", "0", "-5", "many", "1" * 5000):
            with pytest.raises(redis.ResponseError) as refused:
                alice.execute_command("SCAN", "0", "MATCH", "*", "COUNT", count)
            assert str(refused.value).startswith("echomq-viz gate: SCAN's COUNT must be 1..1000 here")
            assert one_clear_line(str(refused.value)) and len(str(refused.value)) < 200
        time.sleep(0.2)  # the bucket full again: 11
        for _ in range(4):
            alice.execute_command("SCAN", "0")
        assert gate.gate.buckets[b"alice"].tokens >= 11 - 4  # one each (it only refills meanwhile)
        time.sleep(0.2)
        pipe = alice.pipeline(transaction=False)
        for _ in range(4):
            pipe.execute_command("SCAN", "0", "COUNT", "1000")
        started = time.monotonic()
        assert len(pipe.execute()) == 4
        assert time.monotonic() - started >= 0.3 - 0.05
        assert alice.execute_command("ACL", "WHOAMI") == "alice"
        alice.close()


def test_a_command_costs_a_token_and_one_more_per_16_kib_begun_and_a_scan_one_per_100_keys():
    """The cost rule as docs/sharing-a-redis.md states it, at its edges: a write of 1 MiB must not
    cost what a PING does, and a SCAN pays for the keys it asks Redis to walk."""
    from echomq_viz.redis_side._gate_connection import _cost

    def command(total: int) -> list[bytes]:  # a SET whose arguments take `total` bytes in all
        return [b"SET", b"k", b"x" * (total - 4)]

    assert [_cost(command(n)) for n in (16384, 16385, 32768, 32769, 2**20)] == [1, 2, 2, 3, 64]
    assert _cost([b"PING"]) == 1
    assert _cost([b"SCAN", b"0"]) == 1  # Redis's own COUNT, 10
    assert _cost([b"SCAN", b"0", b"COUNT", b"99"]) == 1
    assert _cost([b"scan", b"0", b"MATCH", b"emq:*", b"COUNT", b"1000"]) == 11
