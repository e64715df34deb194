"""Who owns which demo keys on a shared Redis.

Many processes share one Redis (app visitors, JupyterLab users, test runs),
so every demo queue belongs to one of them: its name ends in ``@<token>``,
the owning process's random token, as in ``emq:{viz-01-score@3fa9c1d2}:pc``.
The owner's lease key, renewed by a daemon thread, says the process lives.
A process that exits deletes its demo keys and lease; :func:`clean_orphans`
removes the keys of one that died without exiting, once its lease expired.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Callable

from .checks import check_str
from .keys import MAX_NAME_LENGTH

__all__ = ["DEMO_PREFIX", "OWNER_MARK", "LEASE_SECONDS", "lease_key", "claim", "clean_orphans", "check_client",
           "other_owners_in", "this_owner"]

DEMO_PREFIX = "viz-"
OWNER_MARK = "@"  # between a demo queue's base name and its owner's token
LEASE_SECONDS = 30.0  # an owner's keys turn orphan this long after its last renewal

_TOKEN = re.compile(r"[0-9a-f]{8}")
# A demo key: emq:{viz-<base>@<token>}:..., the base as QueueContext allows it, without '@'.
_DEMO_KEY = re.compile(r"emq:\{(viz-[^{}:@\s\x00-\x1f\x7f]+@([0-9a-f]{8}))\}:")
# Any text naming an owner's queue or lease (an empty base too: the lease), for other_owners_in.
_DEMO_NAME = re.compile(r"(viz-[^{}:@\s\x00-\x1f\x7f]*@([0-9a-f]{8}))")
_SCAN_BATCH = 1000


def lease_key(token: str) -> str:
    """The key whose existence says the owner ``token`` lives,
    ``emq:{viz-@<token>}:lease``: no demo queue's keys can match it, as a
    demo name holds at least one character after ``viz-``."""
    if not _TOKEN.fullmatch(check_str("owner token", token)):
        raise ValueError(f"owner token must be 8 lowercase hex digits, got {token!r}")
    return f"emq:{{{DEMO_PREFIX}{OWNER_MARK}{token}}}:lease"


def check_client(client: object) -> None:
    """Refuse what is not a redis-py client (``redis.Redis`` or ``RedisCluster``)."""
    if not (hasattr(client, "connection_pool") or hasattr(client, "get_primaries")):
        # the type only: a URL passed by mistake may hold a password
        raise TypeError(f"client must be a redis client (redis.Redis or RedisCluster), "
                        f"got {type(client).__name__}")


def _identity(client: Any) -> tuple:
    """Which server and database a client reaches (a cluster: its primaries)."""
    if hasattr(client, "get_primaries"):
        return ("cluster", *sorted(node.name for node in client.get_primaries()))
    kwargs = client.connection_pool.connection_kwargs
    return (kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}", kwargs.get("db", 0))


def _quiet_twin(client: Any):
    """A client on the same server and database that returns raw bytes (a
    foreign key need not be UTF-8) and fails at once, without retries: a dead
    server must not stall the renewal thread or the exit."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "decode_responses": False, "retry": Retry(NoBackoff(), 0),
              "socket_timeout": 5, "socket_connect_timeout": 2}
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))


@dataclass(frozen=True)
class _Server:
    """One Redis (or cluster) as the owner machinery reaches it."""

    lease_node: Any  # the node holding the owner's lease
    nodes: tuple  # every primary, to SCAN and UNLINK on

    @classmethod
    def of(cls, client: Any, token: str) -> "_Server":
        if hasattr(client, "get_primaries"):
            nodes = {node.name: _quiet_twin(node.redis_connection) for node in client.get_primaries()}
            return cls(nodes[client.get_node_from_key(lease_key(token)).name], tuple(nodes.values()))
        twin = _quiet_twin(client)
        return cls(twin, (twin,))

    def close(self) -> None:
        for node in self.nodes:
            node.connection_pool.disconnect()


def _demo_owner(key: bytes) -> tuple[str, str] | None:
    """``(queue, token)`` of a demo key; None for any other key."""
    try:
        match = _DEMO_KEY.match(key.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if match is None or len(match.group(1)) > MAX_NAME_LENGTH:
        return None
    return match.group(1), match.group(2)


def other_owners_in(text: str) -> set[str]:
    """The owner tokens of other processes' demo queues that ``text`` (a
    key or key base) names: what a shared app must not let a visitor read."""
    named = {match.group(2) for match in _DEMO_NAME.finditer(check_str("text", text, empty=True))}
    return named - {this_owner()}


def this_owner() -> str:
    """This process's owner token (its demo queues end in ``@<token>``)."""
    return _OWNER.token


def _unlink_demo_keys(server: _Server, token_glob: str, doomed: Callable[[str], bool]) -> int:
    """UNLINK the demo keys of the owners matching ``token_glob`` that
    ``doomed`` names, a SCAN batch at a time, one UNLINK per queue (one slot)."""
    pattern = f"emq:{{{DEMO_PREFIX}*{OWNER_MARK}{token_glob}}}:*"  # no glob character in the fixed parts
    removed = 0
    for node in server.nodes:
        cursor = None
        while cursor != 0:
            cursor, keys = node.scan(cursor or 0, match=pattern, count=_SCAN_BATCH)
            queues: dict[str, list[bytes]] = {}
            for key in keys:
                owner = _demo_owner(key)
                if owner is not None and doomed(owner[1]):
                    queues.setdefault(owner[0], []).append(key)
            if queues:
                with node.pipeline(transaction=False) as pipe:
                    for batch in queues.values():
                        pipe.unlink(*batch)
                    removed += sum(pipe.execute())
    return removed


def clean_orphans(client: Any) -> int:
    """Delete the demo keys (``emq:{viz-...@<token>}:*``) whose owner has no
    live lease: what a process killed without exiting left behind. A live
    owner's keys, and every key that is not a demo key, stay.

    :returns: how many keys were deleted.
    """
    check_client(client)
    orphaned: dict[str, bool] = {}

    def is_orphaned(token: str) -> bool:
        if token not in orphaned:  # asked once per owner and call
            orphaned[token] = not client.exists(lease_key(token))
        return orphaned[token]

    server = _Server.of(client, "0" * 8)
    try:
        return _unlink_demo_keys(server, "[0-9a-f]" * 8, is_orphaned)
    finally:
        server.close()


class _Owner:
    """This process's claim on its demo keys: one random token, and a lease
    on every Redis it made a Demo on, renewed while the process lives."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(4)
        self._proof = secrets.token_hex(16).encode()  # the lease's value: ours, not a token twin's
        self._servers: dict[tuple, _Server] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def claim(self, client: Any) -> str:
        """Hold the lease on ``client``'s Redis; the token to name queues with."""
        with self._lock:
            known = self._servers.get(_identity(client))
            if known is not None:
                self._renew(known)
                return self.token
            server = _Server.of(client, self.token)
            while not server.lease_node.set(lease_key(self.token), self._proof, nx=True,
                                             px=int(LEASE_SECONDS * 1000)):
                if server.lease_node.get(lease_key(self.token)) == self._proof:
                    break  # ours already: the same server under another address
                if self._servers:
                    raise RuntimeError(f"another live process owns the token {self.token}: restart this one")
                self.token = secrets.token_hex(4)  # a twin; nothing is named after ours yet
                server.close()
                server = _Server.of(client, self.token)
            self._servers[_identity(client)] = server
            if self._thread is None:
                self._thread = threading.Thread(target=self._keep_alive, name="echomq-viz-lease", daemon=True)
                self._thread.start()
                atexit.register(_release_at_exit)  # after connect(): runs before an embedded server stops
            return self.token

    def _renew(self, server: _Server) -> None:
        server.lease_node.set(lease_key(self.token), self._proof, px=int(LEASE_SECONDS * 1000))

    def _keep_alive(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 3):
            for server in list(self._servers.values()):
                with self._lock:
                    if self._stop.is_set():
                        return
                    try:
                        self._renew(server)
                    except Exception:  # that Redis is down; a Demo on it claims again
                        pass

    def release(self) -> int:
        """Stop renewing; delete this process's demo keys and leases; how many keys went."""
        self._stop.set()
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        removed = 0
        for server in servers:
            try:
                removed += _unlink_demo_keys(server, self.token, lambda token: token == self.token)
                server.lease_node.unlink(lease_key(self.token))
            except Exception:  # that Redis is gone already, and our keys with it
                pass
            server.close()
        return removed


_OWNER = _Owner()


def claim(client: Any) -> str:
    """This process's owner token, after taking (or renewing) its lease on
    ``client``'s Redis: name demo queues with it only after this call."""
    return _OWNER.claim(client)


def _release_at_exit() -> None:
    _OWNER.release()


def _new_owner_in_child() -> None:
    # A forked child is another owner: it must neither renew nor delete its parent's keys.
    global _OWNER
    _OWNER = _Owner()


os.register_at_fork(after_in_child=_new_owner_in_child)
