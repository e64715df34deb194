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

1. reads exactly one command from the student (hiredis parses it; the rest of
   a pipeline stays unread, in the student's socket, so a flood costs the gate
   nothing and the student's process blocks in its own send);
2. takes a token from that Redis user's bucket (``rate`` a second, ``burst``
   at once, shared by all of the user's connections), waiting when empty;
3. sends the command to Redis and passes its one reply back.

So Redis never holds more than one command of a connection, and a user at most
``max_connections`` of them at once: another student's command waits behind at
most one of each, whatever the hostile one sends. The login stays Redis's:
``AUTH`` and ``HELLO ... AUTH`` go through unchanged, and their answer names
the user whose bucket counts from then on (before a login, the ``default``
user's). Commands that would make Redis answer other than once per command
(Pub/Sub, ``MONITOR``, replication, ``CLIENT TRACKING``) are refused by
the gate in one line; the student's ACL refuses them anyway.

Every refusal is one error line starting ``ERR echomq-viz gate:``; the gate
prints no password and no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
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
# The largest command passed on: far above any call of the package (its library takes 64 KiB of
# arguments at most) and a student's writes by hand, far below what would fill the gate's memory.
MAX_COMMAND_BYTES = 8 * 2**20
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
    through the gate in all (logged in or not), so nobody exhausts Redis's own ``maxclients``."""

    rate: int = 2000
    burst: int = 400
    max_connections: int = 16
    max_clients: int = 1000

    def __post_init__(self) -> None:
        check_int("rate", self.rate, 1, 1_000_000, why="commands a second per user")
        check_int("burst", self.burst, 1, 1_000_000, why="commands at once per user")
        check_int("max_connections", self.max_connections, 1, 10_000, why="connections per user")
        check_int("max_clients", self.max_clients, 1, 100_000, why="connections through the gate")


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
    """One Redis user's tokens: ``rate`` a second, at most ``burst`` saved; its waiters served in turn."""

    def __init__(self, rate: int, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = float(burst), time.monotonic()
        self.turn = asyncio.Lock()
        self.connections = 0

    async def take(self) -> None:
        async with self.turn:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens < 1:
                await asyncio.sleep((1 - self.tokens) / self.rate)
                self.tokens, self.stamp = 1.0, time.monotonic()
            self.tokens -= 1


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
    clients: int = 0
    refused: int = 0  # commands and connections refused, for the tests and the benchmark

    def bucket(self, user: bytes) -> _Bucket:
        if user not in self.buckets:
            self.buckets[user] = _Bucket(self.limits.rate, self.limits.burst)
        return self.buckets[user]

    async def _open_upstream(self):
        kind, where = self.upstream
        if kind == "unix":
            return await asyncio.open_unix_connection(where, limit=_CHUNK)
        return await asyncio.open_connection(*where, limit=_CHUNK)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One student connection, from its first byte to its close."""
        if self.clients >= self.limits.max_clients:
            self.refused += 1
            writer.write(_error(f"{self.clients} connections are open through the gate, the most it takes "
                                f"({self.limits.max_clients}): try again later"))
            await _close(writer)
            return
        self.clients += 1
        user, bucket, anonymous = b"default", None, None
        upstream_writer = None
        try:
            try:
                upstream_reader, upstream_writer = await self._open_upstream()
            except OSError:
                writer.write(_error("the course's Redis cannot be reached from the gate"))
                return
            commands, replies = hiredis.Reader(notEnoughData=_INCOMPLETE), hiredis.Reader(notEnoughData=_INCOMPLETE)
            # Before a login, a connection's commands count in a bucket of its own: a flood of them
            # must not hold up another connection's login.
            anonymous = bucket = _Bucket(self.limits.rate, self.limits.burst)
            while True:
                command, waiting = commands.gets(), 0
                while command is _INCOMPLETE:
                    data = await reader.read(_CHUNK)
                    if not data:
                        return
                    waiting += len(data)
                    if waiting > MAX_COMMAND_BYTES:
                        self.refused += 1
                        writer.write(_error(f"a command may take at most {MAX_COMMAND_BYTES // 2**20} MiB here"))
                        return
                    commands.feed(data)
                    command = commands.gets()
                if not (isinstance(command, list) and command and all(isinstance(a, bytes) for a in command)):
                    self.refused += 1
                    writer.write(_error("a command must be a RESP array of bulk strings"))
                    return
                refusal = _refusal(command)
                if refusal:
                    self.refused += 1
                    writer.write(_error(refusal))
                    continue
                await bucket.take()
                upstream_writer.write(_encode(command))
                login = _login_user(command)
                held = [] if login is not None else None  # a login's answer waits for the connections count
                reply = _INCOMPLETE
                while reply is _INCOMPLETE:
                    data = await upstream_reader.read(_CHUNK)
                    if not data:
                        writer.write(_error("the course's Redis closed the connection"))
                        return
                    if held is None:
                        writer.write(data)  # passed on as it comes: a large reply is never held whole
                    else:
                        held.append(data)
                    replies.feed(data)
                    reply = replies.gets()
                if login is not None and not isinstance(reply, Exception) and login != user:
                    if bucket is not anonymous:
                        bucket.connections -= 1
                    user, bucket = login, self.bucket(login)
                    bucket.connections += 1
                    if bucket.connections > self.limits.max_connections:
                        self.refused += 1
                        writer.write(_error(
                            f"user {login.decode('utf-8', 'replace')[:64]} holds the {self.limits.max_connections} "
                            "connections one user may have open through the gate: close one first"))
                        return
                if held:
                    writer.write(b"".join(held))
                if writer.transport.get_write_buffer_size() > _CHUNK:
                    await writer.drain()
                name = command[0].upper()
                if name == b"RESET" and bucket is not anonymous:  # logged out again
                    bucket.connections -= 1
                    user, bucket = b"default", anonymous
                if name == b"QUIT":
                    return
        except (ConnectionError, hiredis.ProtocolError):
            pass  # the student or Redis went away, or sent what is not RESP: this connection ends
        except asyncio.CancelledError:
            pass  # the gate stopping: the handler ends as any other (asyncio's stream callback on 3.11
            # would log a cancelled handler as an error)
        finally:
            self.clients -= 1
            if bucket is not None and bucket is not anonymous:
                bucket.connections -= 1
            if upstream_writer is not None:
                await _close(upstream_writer)
            await _close(writer)


async def _close(writer: asyncio.StreamWriter) -> None:
    """Send what is queued and close; on a cancelled handler (the gate stopping), just close."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await writer.drain()
    writer.close()


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
                self._server = loop.run_until_complete(asyncio.start_server(
                    self.gate.handle, self.host, self.port, limit=_CHUNK, reuse_address=True))
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
                tasks = asyncio.all_tasks(loop)
                for task in tasks:  # each connection's handler closes both its sockets on the way out
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
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

