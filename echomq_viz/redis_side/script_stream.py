"""Many calls of one Lua script down one Redis connection, pipelined.

:class:`ScriptStream` writes the calls in the Redis protocol itself, the fixed
part (FCALL and the library's function, or EVALSHA and the sha; the KEYS) once, and keeps a chunk in flight ahead of the
replies it reads, so Redis runs one chunk while Python reads the last.
:mod:`echomq_viz.redis_side.scripts` uses it for bulk adds and drains.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Any, Sequence

from redis.exceptions import ResponseError

__all__ = ["ScriptStream"]


class ScriptStream:
    """Calls of one script with fixed KEYS, sent in chunks on a connection
    of its own (a context manager: ``with ScriptStream(...) as stream``).

    With ``function``, the name of the server's library function for this
    source (:mod:`.functions`), each call is an FCALL of it; else each chunk
    opens with SCRIPT LOAD on the same connection, so its EVALSHA calls find
    the script even after a SCRIPT FLUSH. A connection left with unread
    replies is closed, never handed back to the pool.
    """

    def __init__(self, client: Any, source: str, keys: Sequence[str], *, function: str | None = None) -> None:
        self._pool = client.connection_pool
        try:
            self._connection = self._pool.get_connection()
        except TypeError:  # redis-py before 5.3 asks for a command name
            self._connection = self._pool.get_connection("EVALSHA")
        sha = hashlib.sha1(source.encode()).hexdigest()
        self._load = b"" if function else self._command(("SCRIPT", "LOAD", source))
        head = ("FCALL", function, len(keys), *keys) if function else ("EVALSHA", sha, len(keys), *keys)
        self._head, self._head_size = b"".join(map(self._bulk, head)), len(head)
        self._sizes: deque[int] = deque()

    @staticmethod
    def _bulk(value: str | int) -> bytes:
        data = value.encode() if isinstance(value, str) else str(int(value)).encode()
        return b"$%d\r\n%s\r\n" % (len(data), data)

    def _command(self, parts: Sequence[str | int]) -> bytes:
        return b"*%d\r\n" % len(parts) + b"".join(map(self._bulk, parts))

    def call(self, args: Sequence[str | int]) -> bytes:
        """One call of the script with ``args`` (str or int) as ARGV, ready to send."""
        return b"*%d\r\n%s%s" % (self._head_size + len(args), self._head, b"".join(map(self._bulk, args)))

    @property
    def in_flight(self) -> int:
        """How many chunks were sent and not yet read."""
        return len(self._sizes)

    def send(self, calls: Sequence[bytes]) -> None:
        """Send one chunk of calls made by :meth:`call`."""
        self._connection.send_packed_command([b"".join([self._load, *calls])])
        self._sizes.append(len(calls))

    def receive(self) -> list[Any]:
        """The replies of the oldest chunk sent, in order; a refused call's
        reply is its ResponseError."""
        replies = []
        loads = 1 if self._load else 0  # SCRIPT LOAD's reply first
        for _ in range(self._sizes.popleft() + loads):
            try:
                replies.append(self._connection.read_response())
            except ResponseError as error:
                replies.append(error)
        return replies[loads:]

    def __enter__(self) -> "ScriptStream":
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._sizes:
            self._connection.disconnect()
        self._pool.release(self._connection)
