"""A fair gate in front of a course's shared Redis: each student's commands one at a time, at a rate.

Theory of operation. Redis serves its clients from one thread, and per turn of
its event loop it runs every complete command a client's socket holds, up to
16 KiB read. A student who pipelines thousands of calls (a loop, or a script
written to hurt) therefore makes every other student wait behind each of those
turns; Redis has no per-user rate to stop that, and the ACL (:mod:`.acl`)
decides only *what* a user may run, not *how much*.

The gate is a small proxy that speaks RESP. Students' ``REDIS_URL`` names the
gate; the course's Redis listens where only the gate (the operator) reaches it,
a 0700 Unix socket. For each student connection the gate opens one connection
to Redis and then, per command:

1. takes one command from what the student sent (hiredis parses it); when more
   arrives while a command is out, the gate stops reading that socket, so the
   rest of a pipeline stays there, a flood costs the gate nothing and the
   student's process blocks in its own send;
2. takes its tokens from that Redis user's bucket (``rate`` a second, ``burst``
   at once, shared by all of the user's connections; one token a command and
   one more per 16 KiB begun past the first; a command is at most 1 MiB, and
   64 KiB before a login), waiting when they are not there;
3. sends the command to Redis and passes its one reply back as it comes.

So Redis never holds more than one command of a connection, and a user at most
``max_connections`` of them at once: another student's command waits behind at
most one of each, whatever the hostile one sends. The login stays Redis's:
``AUTH`` and ``HELLO ... AUTH`` go through unchanged, and their answer names
the user whose bucket counts from then on (before a login, a bucket of the
connection's own), and past ``max_connections`` of one user the login is
refused. Commands that would make Redis answer other than once per command
(Pub/Sub, ``MONITOR``, replication, ``CLIENT TRACKING``) are refused by
the gate in one line; the student's ACL refuses them anyway.

Every refusal is one error line starting ``ERR echomq-viz gate:``; the gate
prints no password and no traceback.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import hiredis

from echomq_viz.core.checks import check_int

__all__ = ["GateLimits", "DEFAULT_LIMITS", "Gate", "GateThread", "upstream_address", "upstream_problem"]

PREFIX = b"-ERR echomq-viz gate: "
_INCOMPLETE = object()  # hiredis's "not enough data yet" (False is a RESP3 reply)
_CHUNK = 65536
# The largest command passed on: above any call of the package (its library takes 64 KiB of
# arguments at most), far below what would fill the gate's memory with a few connections each
# holding one half sent; before a login, a login's size (an AUTH or HELLO is a few dozen bytes).
MAX_COMMAND_BYTES = 2**20
MAX_LOGIN_BYTES = 64 * 2**10
LINGER_S = 2.0  # how long a refused connection's socket is read and dropped before it closes
# Commands after which Redis answers more than once, or answers nothing: they would break the
# gate's one reply per command.
_REFUSED = {
    b"SUBSCRIBE": "Pub/Sub", b"PSUBSCRIBE": "Pub/Sub", b"SSUBSCRIBE": "Pub/Sub", b"MONITOR": "MONITOR",
    b"SYNC": "replication", b"PSYNC": "replication", b"REPLCONF": "replication",
}


@dataclass(frozen=True)
class GateLimits:
    """What one Redis user gets through the gate.

    ``rate`` commands a second on average and ``burst`` at once (a token bucket shared by all the
    user's connections), ``max_connections`` connections open at once; ``max_clients`` connections
    through the gate in all (logged in or not), so nobody exhausts Redis's own ``maxclients``, and
    ``login_s`` seconds for a connection to log in, so nobody holds those with idle sockets."""

    rate: int = 1000
    burst: int = 1000
    max_connections: int = 16
    max_clients: int = 1000
    login_s: int = 10

    def __post_init__(self) -> None:
        check_int("rate", self.rate, 1, 1_000_000, why="commands a second per user")
        check_int("burst", self.burst, 1, 1_000_000, why="commands at once per user")
        check_int("max_connections", self.max_connections, 1, 10_000, why="connections per user")
        check_int("max_clients", self.max_clients, 1, 100_000, why="connections through the gate")
        check_int("login_s", self.login_s, 1, 3600, why="seconds for a connection to log in")


DEFAULT_LIMITS = GateLimits()


def upstream_address(url: str) -> tuple[str, Any]:
    """Where the course's Redis listens: ``("unix", path)`` or ``("tcp", (host, port))``.
    Only the address: the gate logs in nobody; each student's own ``AUTH`` goes through."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError("a unix:// Redis URL needs a socket path, e.g. unix:///run/redis/redis.sock")
        return "unix", unquote(parts.path)
    if parts.scheme == "redis":
        return "tcp", (parts.hostname or "127.0.0.1", parts.port or 6379)
    raise ValueError(f"the gate reaches Redis by redis:// or unix://, got {parts.scheme or 'no'} scheme "
                     "(TLS is not passed through)")


def upstream_problem(upstream: tuple[str, Any], timeout: float = 5.0) -> str | None:
    """Why the gate must not stand in front of this Redis, in one line, or None.

    The gate is open to whoever reaches its port; it is safe because every
    connection must log in to Redis as its own user. A Redis whose ``default``
    user answers without a password would be open to all of them."""
    kind, where = upstream
    try:
        if kind == "unix":
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.settimeout(timeout)
            probe.connect(where)
        else:
            probe = socket.create_connection(where, timeout=timeout)
        with probe:
            probe.sendall(_encode([b"PING"]))
            reader = hiredis.Reader(notEnoughData=_INCOMPLETE)
            reply = _INCOMPLETE
            while reply is _INCOMPLETE:
                data = probe.recv(_CHUNK)
                if not data:
                    return "the course's Redis closed the connection before answering"
                reader.feed(data)
                reply = reader.gets()
    except OSError as exc:
        return f"the course's Redis cannot be reached: {exc.strerror or exc}"
    if isinstance(reply, Exception) and str(reply).startswith(("NOAUTH", "NOPERM")):
        return None
    return ("the course's Redis answers without a login (its default user is on with no password): the gate "
            "would pass that on to anyone who reaches it; give the default user a password or turn it off")


class _Bucket:
    """One Redis user's tokens: ``rate`` a second, at most ``burst`` saved, shared by its connections."""

    def __init__(self, rate: int, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = float(burst), time.monotonic()
        self.connections = 0

    def take(self, cost: int) -> float:
        """Take ``cost`` tokens and return 0, or take none and return the seconds until they are there."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return 0.0
        return (cost - self.tokens) / self.rate


def _encode(command: list[bytes]) -> bytes:
    parts = [b"*%d\r\n" % len(command)]
    for argument in command:
        parts += (b"$%d\r\n" % len(argument), argument, b"\r\n")
    return b"".join(parts)


def _error(text: str) -> bytes:
    return PREFIX + text.replace("\r", " ").replace("\n", " ").encode("utf-8", "replace") + b"\r\n"


def _login_user(command: list[bytes]) -> bytes | None:
    """The user a login command names (``AUTH [user] pass``, ``HELLO v AUTH user pass``), else None."""
    name = command[0].upper()
    if name == b"AUTH":
        return command[1] if len(command) == 3 else b"default"
    if name == b"HELLO":
        upper = [argument.upper() for argument in command]
        if b"AUTH" in upper[2:]:
            at = upper.index(b"AUTH", 2)
            return command[at + 1] if at + 1 < len(command) else None
    return None


def _refusal(command: list[bytes]) -> str | None:
    """Why the gate does not pass ``command``, or None."""
    name = command[0].upper()
    if name in _REFUSED:
        return f"{_REFUSED[name]} ({name.decode('ascii', 'replace')}) is not passed through the gate"
    if name == b"CLIENT" and len(command) > 1 and command[1].upper() == b"TRACKING":
        return "CLIENT TRACKING is not passed through the gate"
    return None


@dataclass
class Gate:
    """The gate's state: the upstream address, the limits, each user's bucket."""

    upstream: tuple[str, Any]
    limits: GateLimits = DEFAULT_LIMITS
    buckets: dict[bytes, _Bucket] = field(default_factory=dict)
    students: set = field(default_factory=set)  # the open connections, closed when the gate stops
    lingering: set = field(default_factory=set)  # refused connections' sockets, read and dropped a moment
    refused: int = 0  # commands and connections refused, for the tests and the benchmark

    def bucket(self, user: bytes) -> _Bucket:
        if user not in self.buckets:
            self.buckets[user] = _Bucket(self.limits.rate, self.limits.burst)
        return self.buckets[user]


def _cost(size: int) -> int:
    """The tokens a command of ``size`` bytes takes: one, and one more per 16 KiB begun past the first,
    so large writes count by their bytes (the gate copies them, Redis stores them)."""
    return 1 + (size - 1) // 16384 if size > 0 else 1


class _Student(asyncio.Protocol):
    """One student connection and its own connection to Redis: one command in flight at a time.

    Reading from the student pauses when more arrives while a command is in flight or waits for
    tokens (a pipeline), so the rest stays in the student's socket; a student who sends one command
    and waits for its answer never pauses. Writing to the student pauses reading from Redis."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.client: asyncio.Transport | None = None
        self.redis: asyncio.Transport | None = None
        self.commands = hiredis.Reader(notEnoughData=_INCOMPLETE)
        self.replies = hiredis.Reader(notEnoughData=_INCOMPLETE)
        # Before a login, the connection's commands count in a bucket of its own: a flood of them must
        # not hold up another connection's login.
        self.anonymous = self.bucket = _Bucket(gate.limits.rate, gate.limits.burst)
        self.user = b"default"
        self.waiting_bytes = 0  # bytes of a command not yet whole
        self.next: list[bytes] | None = None  # the command whose tokens are awaited
        self.in_flight: list[bytes] | None = None  # the command Redis is answering
        self.held: list[bytes] | None = None  # a login's answer, kept until the connections are counted
        self.cost = 1  # the tokens of self.next
        self.timer: asyncio.TimerHandle | None = None
        self.login_timer: asyncio.TimerHandle | None = None
        self.closed = False

    # -- the student's side -----------------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self.client = transport
        gate = self.gate
        if len(gate.students) >= gate.limits.max_clients:
            gate.refused += 1
            transport.write(_error(f"{len(gate.students)} connections are open through the gate, the most it "
                                   f"takes ({gate.limits.max_clients}): try again later"))
            transport.close()
            self.closed = True
            return
        gate.students.add(self)
        transport.pause_reading()  # until Redis is reached
        loop = asyncio.get_running_loop()
        self.login_timer = loop.call_later(gate.limits.login_s, self._login_due)
        loop.create_task(self._reach_redis())

    def _login_due(self) -> None:
        self.login_timer = None
        if self.bucket is self.anonymous:
            self._fail(f"no login within {self.gate.limits.login_s} s: each connection through the gate logs in "
                       "as its own Redis user")

    async def _reach_redis(self) -> None:
        loop = asyncio.get_running_loop()
        kind, where = self.gate.upstream
        try:
            if kind == "unix":
                transport, _ = await loop.create_unix_connection(lambda: _Redis(self), where)
            else:
                transport, _ = await loop.create_connection(lambda: _Redis(self), *where)
        except OSError:
            self._fail("the course's Redis cannot be reached from the gate")
            return
        if self.closed:
            transport.close()
            return
        self.redis = transport
        self.client.resume_reading()

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return  # after a refusal, what the student still sends is read and dropped (see _fail)
        self.waiting_bytes += len(data)
        self.commands.feed(data)
        if self.in_flight is not None or self.timer is not None:
            self.client.pause_reading()  # a pipeline: the rest stays in the student's socket
        self._pump()

    def connection_lost(self, exc) -> None:
        self._close()

    def pause_writing(self) -> None:  # the student reads slowly: so does the gate from Redis
        if self.redis is not None:
            self.redis.pause_reading()

    def resume_writing(self) -> None:
        if self.redis is not None:
            self.redis.resume_reading()

    # -- one command at a time --------------------------------------------------------------------

    def _pump(self) -> None:
        """Send the next command when none is in flight and its tokens are there."""
        while not self.closed and self.redis is not None and self.in_flight is None and self.timer is None:
            command = self.next
            if command is None:
                try:
                    command = self.commands.gets()
                except hiredis.ProtocolError:
                    self._fail("what was sent is not Redis's protocol (RESP)")
                    return
                if command is _INCOMPLETE:
                    most = MAX_LOGIN_BYTES if self.bucket is self.anonymous else MAX_COMMAND_BYTES
                    if self.waiting_bytes > most:
                        before = " before a login" if most == MAX_LOGIN_BYTES else ""
                        self._fail(f"a command may take at most {most // 1024} KiB here{before}")
                        return
                    self.client.resume_reading()
                    return
                self.waiting_bytes = 0
                if not (isinstance(command, list) and command and all(isinstance(a, bytes) for a in command)):
                    self._fail("a command must be a RESP array of bulk strings")
                    return
                refusal = _refusal(command)
                if refusal:
                    self.gate.refused += 1
                    self.client.write(_error(refusal))
                    continue
                # never more than a full bucket, or a command larger than --burst allows would wait forever
                self.next, self.cost = command, min(_cost(sum(map(len, command))), self.bucket.burst)
            wait = self.bucket.take(self.cost)
            if wait:
                self.timer = asyncio.get_running_loop().call_later(wait, self._tokens_due)
                return
            self.next, self.in_flight = None, command
            self.held = [] if _login_user(command) is not None else None
            self.redis.write(_encode(command))

    def _tokens_due(self) -> None:
        self.timer = None
        self._pump()

    # -- Redis's side -----------------------------------------------------------------------------

    def reply_received(self, data: bytes) -> None:
        if self.closed:
            return
        if self.in_flight is None:  # Redis spoke unasked (it closes a connection so): pass it on
            self.client.write(data)
            return
        if self.held is None:
            self.client.write(data)  # passed on as it comes: a large reply is never held whole
        else:
            self.held.append(data)
        self.replies.feed(data)
        reply = self.replies.gets()
        if reply is _INCOMPLETE:
            return
        command, self.in_flight = self.in_flight, None
        if self.held is not None:
            held, self.held = self.held, None
            if not self._logged_in(_login_user(command), reply):
                return
            self.client.write(b"".join(held))
        name = command[0].upper()
        if name == b"RESET" and self.bucket is not self.anonymous:  # logged out again: the clock restarts
            self.bucket.connections -= 1
            self.user, self.bucket = b"default", self.anonymous
            self.login_timer = asyncio.get_running_loop().call_later(self.gate.limits.login_s, self._login_due)
        if name == b"QUIT":
            self._close()
            return
        self._pump()

    def _logged_in(self, login: bytes | None, reply: object) -> bool:
        """Count a login Redis accepted against its user's connections; False (and closed) past them."""
        if login is None or isinstance(reply, Exception):
            return True
        if self.login_timer is not None:
            self.login_timer.cancel()
            self.login_timer = None
        if self.bucket is not self.anonymous:
            if login == self.user:
                return True
            self.bucket.connections -= 1
        self.user, self.bucket = login, self.gate.bucket(login)
        self.bucket.connections += 1
        if self.bucket.connections > self.gate.limits.max_connections:
            self._fail(f"user {login.decode('utf-8', 'replace')[:64]} holds the {self.gate.limits.max_connections} "
                       "connections one user may have open through the gate: close one first")
            return False
        return True

    def redis_lost(self) -> None:
        if not self.closed:
            self._fail("the course's Redis closed the connection")

    # -- the end ----------------------------------------------------------------------------------

    def _fail(self, why: str) -> None:
        """Say ``why`` in one line and end the connection. The student's socket is then shut for
        writing and read and dropped for a moment before it closes: closing on unread bytes would
        reset the connection, and the student might never read the line."""
        self.gate.refused += 1
        client = self.client
        if client is None or client.is_closing() or self.closed:
            self._close()
            return
        client.write(_error(why))
        self._close(keep_client=True)
        if client.can_write_eof():
            client.write_eof()
        client.resume_reading()
        self.gate.lingering.add(client)

        def close() -> None:
            self.gate.lingering.discard(client)
            client.close()
        asyncio.get_running_loop().call_later(LINGER_S, close)

    def _close(self, keep_client: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        self.gate.students.discard(self)
        if self.bucket is not self.anonymous:
            self.bucket.connections -= 1
        for timer in (self.timer, self.login_timer):
            if timer is not None:
                timer.cancel()
        for transport in (self.redis,) if keep_client else (self.client, self.redis):
            if transport is not None:
                transport.close()  # after what is queued is sent


class _Redis(asyncio.Protocol):
    """The gate's connection to Redis for one student: what Redis sends goes to that student."""

    def __init__(self, student: _Student) -> None:
        self.student = student

    def data_received(self, data: bytes) -> None:
        self.student.reply_received(data)

    def connection_lost(self, exc) -> None:
        self.student.redis_lost()


class GateThread:
    """The gate on ``host:port`` (loopback by default; port 0 picks one) in a thread of its own.

    ``with GateThread(url) as gate:`` students connect to ``gate.port``; the gate stops at the end."""

    def __init__(self, upstream_url: str, *, host: str = "127.0.0.1", port: int = 0,
                 limits: GateLimits = DEFAULT_LIMITS) -> None:
        self.gate = Gate(upstream_address(upstream_url), limits)
        self.host, self.port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "GateThread":
        """Listen, after checking that the course's Redis wants a login (:func:`upstream_problem`:
        a ValueError of one line otherwise)."""
        problem = upstream_problem(self.gate.upstream)
        if problem:
            raise ValueError(problem)
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                self._server = loop.run_until_complete(loop.create_server(
                    lambda: _Student(self.gate), self.host, self.port, reuse_address=True))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 - handed to start()
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                self._server.close()
                for student in list(self.gate.students):
                    student._close()
                for transport in list(self.gate.lingering):
                    transport.close()
                loop.run_until_complete(asyncio.sleep(0.05))  # the closes sent
                for task in asyncio.all_tasks(loop):  # a connection still reaching Redis
                    task.cancel()
                loop.run_until_complete(asyncio.sleep(0))
                loop.close()

        self._thread = threading.Thread(target=run, name="echomq-viz-gate", daemon=True)
        self._thread.start()
        started.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def url_for(self, student_url: str) -> str:
        """``student_url`` (its user and password) pointed at the gate instead."""
        parts = urlsplit(student_url)
        login = parts.netloc.rpartition("@")[0]
        return f"redis://{login + '@' if login else ''}{self.host}:{self.port}/0"

    def __enter__(self) -> "GateThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

