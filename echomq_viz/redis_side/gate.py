"""A fair gate in front of a course's shared Redis: each student's commands one at a time, at a rate.

Theory of operation. Redis serves its clients from one thread, and per turn of
its event loop it runs every complete command a client's socket holds, up to
16 KiB read. A student who pipelines thousands of calls (a loop, or a script
written to hurt) therefore makes every other student wait behind each of those
turns; Redis has no per-user rate to stop that, and the ACL (:mod:`.acl`)
decides only *what* a user may run, not *how much*.

The gate is a small proxy that speaks RESP (each connection:
:mod:`._gate_connection`). Students' ``REDIS_URL`` names the
gate; the course's Redis listens where only the gate (the operator) reaches it,
a 0700 Unix socket. For each student connection the gate opens one connection
to Redis and then, per command:

1. takes one command from what the student sent (hiredis parses it); when more
   arrives while a command is out, the gate stops reading that socket, so the
   rest of a pipeline stays there, a flood costs the gate nothing and the
   student's process blocks in its own send;
2. takes its tokens from that Redis user's bucket (``rate`` a second, ``burst``
   at once, shared by all of the user's connections; one token a command and
   one more per 16 KiB begun past the first, and for a ``SCAN``, which walks
   every student's keys, one more per 100 keys its ``COUNT`` asks for, at most
   1000; a command is at most 1 MiB, and 64 KiB before a login), waiting when
   they are not there;
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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import hiredis

from echomq_viz.core.checks import check_int
from echomq_viz.redis_side._gate_connection import INCOMPLETE, Bucket, StudentConnection, encode

__all__ = ["GateLimits", "DEFAULT_LIMITS", "Gate", "GateThread", "upstream_address", "upstream_problem"]


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
            probe.sendall(encode([b"PING"]))
            reader = hiredis.Reader(notEnoughData=INCOMPLETE)
            reply = INCOMPLETE
            while reply is INCOMPLETE:
                data = probe.recv(65536)
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


@dataclass
class Gate:
    """The gate's state: the upstream address, the limits, each user's bucket."""

    upstream: tuple[str, Any]
    limits: GateLimits = DEFAULT_LIMITS
    buckets: dict[bytes, Bucket] = field(default_factory=dict)
    # the open connections, in the order they came in (keys; a dict keeps it), closed when the gate stops
    students: dict = field(default_factory=dict)
    lingering: set = field(default_factory=set)  # refused connections' sockets, read and dropped a moment
    refused: int = 0  # commands and connections refused, for the tests and the benchmark

    def bucket(self, user: bytes) -> Bucket:
        if user not in self.buckets:
            self.buckets[user] = Bucket(self.limits.rate, self.limits.burst)
        return self.buckets[user]


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
                    lambda: StudentConnection(self.gate), self.host, self.port, reuse_address=True))
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

