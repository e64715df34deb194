"""One student's connection through the gate (:mod:`.gate`): its commands passed to Redis one at a
time, each after its tokens; what Redis answers passed back as it comes.

The student's side and Redis's side are asyncio protocols (a connection costs no task and no
stream buffer), and both parse RESP with hiredis only to find where a command or an answer ends:
what Redis answers is passed on byte for byte.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import hiredis

__all__ = ["Bucket", "StudentConnection", "encode", "INCOMPLETE", "MAX_COMMAND_BYTES", "MAX_LOGIN_BYTES"]

PREFIX = b"-ERR echomq-viz gate: "
INCOMPLETE = object()  # hiredis's "not enough data yet" (False is a RESP3 reply)
# The largest command passed on: above any call of the package (its library takes 64 KiB of
# arguments at most), far below what would fill the gate's memory with a few connections each
# holding one half sent; before a login, a login's size (an AUTH or HELLO is a few dozen bytes).
MAX_COMMAND_BYTES = 2**20
MAX_LOGIN_BYTES = 64 * 2**10
LINGER_S = 2.0  # how long a refused connection's socket is read and dropped before it closes
# Commands after which Redis answers more than once, or answers nothing: they would break the
# gate's one reply per command.
# SCAN walks the whole keyspace, every student's keys: a call asking for 1000 took Redis 0.9 ms on a
# million keys (1,500 GETs' worth). Its COUNT is held to the package's own batch, and each 100 keys
# asked for cost a token more, so one user's loop of them cannot take Redis's time from the others.
MAX_SCAN_COUNT = 1000
SCAN_KEYS_PER_TOKEN = 100
_REFUSED = {
    b"SUBSCRIBE": "Pub/Sub", b"PSUBSCRIBE": "Pub/Sub", b"SSUBSCRIBE": "Pub/Sub", b"MONITOR": "MONITOR",
    b"SYNC": "replication", b"PSYNC": "replication", b"REPLCONF": "replication",
}


class Bucket:
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


def encode(command: list[bytes]) -> bytes:
    parts = [b"*%d\r\n" % len(command)]
    for argument in command:
        parts += (b"$%d\r\n" % len(argument), argument, b"\r\n")
    return b"".join(parts)


def _error(text: str) -> bytes:
    return PREFIX + text.replace("\r", " ").replace("\n", " ").encode("utf-8", "replace") + b"\r\n"


def _hello_logins(command: list[bytes]) -> list[bytes] | None:
    """The users the options of ``HELLO protover [AUTH user pass] [SETNAME name]`` log in as, read
    in Redis's order (AUTH takes two arguments, SETNAME one: a client named AUTH is no login), or
    None where the options do not read so."""
    users, at = [], 2
    while at < len(command):
        option = command[at].upper()
        if option == b"AUTH" and at + 2 < len(command):
            users.append(command[at + 1])
            at += 3
        elif option == b"SETNAME" and at + 1 < len(command):
            at += 2
        else:
            return None
    return users


def _login_user(command: list[bytes]) -> bytes | None:
    """The user a login command names (``AUTH [user] pass``, ``HELLO v AUTH user pass``), else None."""
    name = command[0].upper()
    if name == b"AUTH":
        return command[1] if len(command) == 3 else b"default"
    if name == b"HELLO":
        users = _hello_logins(command)
        return users[0] if users else None
    return None


def _scan_count(command: list[bytes]) -> int | str:
    """The COUNT a ``SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`` asks for (Redis's
    default, 10, without one), or why the gate refuses it. Options that do not read so are Redis's
    to refuse."""
    count, at = 10, 2
    while at + 1 < len(command):
        if command[at].upper() == b"COUNT":
            text = command[at + 1]
            if not (text.isdigit() and len(text) <= 4 and 1 <= int(text) <= MAX_SCAN_COUNT):
                shown = text[:20].decode("utf-8", "replace")
                return (f"SCAN's COUNT must be 1..{MAX_SCAN_COUNT} here (each call walks every student's "
                        f"keys), got {shown!r}")
            count = int(text)
        at += 2
    return count


def _refusal(command: list[bytes]) -> str | None:
    """Why the gate does not pass ``command``, or None."""
    name = command[0].upper()
    if name == b"HELLO":
        # A login is counted against the user it names. Redis logs in at each AUTH of a HELLO in
        # turn, and answers an error for a later one that fails: the connection would then be the
        # first user's while the gate counted nobody. Nor is a HELLO passed that reads otherwise.
        users = _hello_logins(command)
        if users is None or len(users) > 1:
            return "HELLO takes at most one AUTH user password and one SETNAME name here"
    if name in _REFUSED:
        return f"{_REFUSED[name]} ({name.decode('ascii', 'replace')}) is not passed through the gate"
    if _login_user(command) == b"default":
        # the operator's user: reached through the gate, it would be every local user's (loopback)
        return "the gate passes the students' own users only, not Redis's default user (log in as it on Redis itself)"
    if name == b"SCAN" and isinstance(count := _scan_count(command), str):
        return count
    if name == b"CLIENT" and len(command) > 1 and command[1].upper() == b"TRACKING":
        return "CLIENT TRACKING is not passed through the gate"
    return None


def _cost(command: list[bytes]) -> int:
    """The tokens ``command`` takes: one, and one more per 16 KiB begun past the first, so large writes
    count by their bytes (the gate copies them, Redis stores them); a SCAN one more per 100 keys it
    asks Redis to walk."""
    size = sum(map(len, command))
    tokens = 1 + (size - 1) // 16384 if size > 0 else 1
    if command[0].upper() == b"SCAN":
        tokens += _scan_count(command) // SCAN_KEYS_PER_TOKEN  # _refusal has passed it: an int
    return tokens


class StudentConnection(asyncio.Protocol):
    """One student connection and its own connection to Redis: one command in flight at a time.

    Reading from the student pauses when more arrives while a command is in flight or waits for
    tokens (a pipeline), so the rest stays in the student's socket; a student who sends one command
    and waits for its answer never pauses. Writing to the student pauses reading from Redis."""

    def __init__(self, gate: Any) -> None:  # a gate.Gate
        self.gate = gate
        self.client: asyncio.Transport | None = None
        self.redis: asyncio.Transport | None = None
        self.commands = hiredis.Reader(notEnoughData=INCOMPLETE)
        self.replies = hiredis.Reader(notEnoughData=INCOMPLETE)
        # Before a login, the connection's commands count in a bucket of its own: a flood of them must
        # not hold up another connection's login.
        self.anonymous = self.bucket = Bucket(gate.limits.rate, gate.limits.burst)
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
            # Full. Idle sockets that never log in must not lock the students out (opened anew
            # every login_s, a thousand of them held every seat): the oldest not logged in goes
            # (gate.students keeps the order they came in).
            oldest = next((student for student in gate.students if student.bucket is student.anonymous), None)
            if oldest is not None:
                oldest._fail(
                    f"the gate is full ({gate.limits.max_clients} connections) and this one had not logged in: "
                    "log in as you connect")
        if len(gate.students) >= gate.limits.max_clients:
            gate.refused += 1
            transport.write(_error(f"{len(gate.students)} connections are open through the gate, the most it "
                                   f"takes ({gate.limits.max_clients}): try again later"))
            transport.close()
            self.closed = True
            return
        gate.students[self] = None
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
                except (MemoryError, ValueError, OverflowError):  # an array header of billions, say
                    self._fail("what was sent cannot be read as a command")
                    return
                if command is INCOMPLETE:
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
                self.next, self.cost = command, min(_cost(command), self.bucket.burst)
            wait = self.bucket.take(self.cost)
            if wait:
                self.timer = asyncio.get_running_loop().call_later(wait, self._tokens_due)
                return
            self.next, self.in_flight = None, command
            self.held = [] if _login_user(command) is not None else None
            self.redis.write(encode(command))

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
        if reply is INCOMPLETE:
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
        self.gate.students.pop(self, None)
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

    def __init__(self, student: StudentConnection) -> None:
        self.student = student

    def data_received(self, data: bytes) -> None:
        self.student.reply_received(data)

    def connection_lost(self, exc) -> None:
        self.student.redis_lost()
