"""Who owns which demo keys on a shared Redis.

Many processes share one Redis (app visitors, JupyterLab users, test runs),
so every demo queue belongs to one of them: its name ends in ``@<token>``,
the owning process's random token, as in ``emq:{viz-01-score@3fa9c1d2}:pc``.
The owner's lease key, renewed by a daemon thread, says the process lives.

Namespaces: on a Redis user other than ``default`` (one made by
:mod:`echomq_viz.redis_side.acl`, one per student), the token starts with that user's
name, escaped: ``emq:{viz-01-score@alice.3fa9c1d2}:pc``. One ACL key pattern
then covers exactly one user's demo keys and leases, and no other user's, even
one whose name is a prefix. The keys' names, and the scan that finds them, are
:mod:`echomq_viz.redis_side.demo_keys`.
A process that exits deletes its demo keys and lease; :func:`clean_orphans`
removes the keys of one that died without exiting, once its lease expired.

Fencing: a lease is renewed only while it still holds the owner's random
proof (compare and renew in one step), so a lease that lapsed (a kernel
paused past it) is never taken back, and the keys ``clean`` may have deleted
meanwhile are never written again. :func:`claim`, which every ``Demo`` call
makes first, then hands out a fresh token: fresh queues. The one exception is
a server that restarted empty (its INFO ``run_id`` changed): nobody can have
cleaned what it lost, so the lease is taken again as soon as a connection to it
is set up, before any other command on it. Not on a Redis Cluster: there a lost
lease is always a lapse (a fresh token), so a lease found absent stays absent,
which is what lets ``clean`` check it and delete in two steps (other slots).

``ECHOMQ_VIZ_LEASE_SECONDS`` (1..3600, default 30) sets the lease, read at import.
"""

from __future__ import annotations

import atexit
import math
import os
import re
import secrets
import threading
from pathlib import Path
from typing import Any, Callable

from redis.exceptions import ConnectionError as LostConnection, NoPermissionError, ResponseError

from echomq_viz.redis_side.demo_keys import (
    NAMESPACE_MARK, SCAN_BATCH, lease_key, namespace_of, owners_named_in, registry_key, scan_batches, scan_demo_keys)
from echomq_viz.redis_side.functions import FunctionMissing, ScriptCall, cached_functions

__all__ = ["LEASE_SECONDS", "ENV_LEASE", "LeaseLost", "DemoKeysForbidden", "claim", "clean_orphans", "check_client",
           "other_owners_in", "this_owner"]

ENV_LEASE = "ECHOMQ_VIZ_LEASE_SECONDS"
LEASE_RANGE = (1.0, 3600.0)
LONGEST_LEASE_MS = int(LEASE_RANGE[1] * 1000)  # a lease without expiry, or a longer one, was written by hand


def lease_seconds(environ=os.environ) -> float:
    """The lease length ``ENV_LEASE`` asks for (tests shorten it), 30 s by default."""
    text = environ.get(ENV_LEASE)
    if text is None:
        return 30.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not LEASE_RANGE[0] <= value <= LEASE_RANGE[1]:  # NaN fails too
        raise ValueError(f"{ENV_LEASE} must be a number of seconds in 1..3600, got {text!r}")
    return value


LEASE_SECONDS = lease_seconds()  # an owner's keys turn orphan this long after its last renewal

_LUA = Path(__file__).resolve().parents[1] / "lua" / "owners"
if not _LUA.is_dir():  # a source checkout keeps lua/ at the top level
    _LUA = Path(__file__).resolve().parents[2] / "lua" / "owners"
_RENEW = (_LUA / "renewLease-1.lua").read_text(encoding="utf-8")
_TAKE = (_LUA / "takeLease-1.lua").read_text(encoding="utf-8")
_UNLINK_ORPHANED = (_LUA / "unlinkOrphaned-N.lua").read_text(encoding="utf-8")


class OneLineError:
    """An error IPython shows as its one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class LeaseLost(OneLineError, RuntimeError):
    """This process's lease is gone (expired, evicted or deleted): its demo
    queues may have been cleaned; nothing was written, and it works on fresh
    queues from now on."""


class DemoKeysForbidden(OneLineError, PermissionError):
    """The Redis user may not write demo keys; nothing was written."""


def _user_namespace(client: Any) -> str | None:
    """The namespace of the Redis user ``client`` is logged in as, or None
    for ``default`` (or a server that cannot say: before Redis 6)."""
    twin = _quiet_twin(client.get_primaries()[0].redis_connection if hasattr(client, "get_primaries") else client)
    try:
        user = twin.execute_command("ACL", "WHOAMI")
    except ResponseError:  # no ACL, or not allowed to ask: the namespace of no one
        return None
    finally:
        twin.connection_pool.disconnect()
    user = user.decode("utf-8", "surrogateescape") if isinstance(user, bytes) else str(user)
    return None if user == "default" else namespace_of(user)


def check_client(client: object) -> None:
    """Refuse what is not a redis-py client (``redis.Redis`` or ``RedisCluster``)."""
    if not (hasattr(client, "connection_pool") or hasattr(client, "get_primaries")):
        # the type only: a URL passed by mistake may hold a password
        raise TypeError(f"client must be a redis client (redis.Redis or RedisCluster), "
                        f"got {type(client).__name__}")


def _identity(client: Any) -> tuple:
    """Which server, database and user a client reaches (a cluster: its primaries)."""
    if hasattr(client, "get_primaries"):
        return ("cluster", *sorted(node.name for node in client.get_primaries()))
    kwargs = client.connection_pool.connection_kwargs
    return (kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}", kwargs.get("db", 0),
            kwargs.get("username"))


def _quiet_twin(client: Any, on_connect: Callable[[Any], None] | None = None):
    """A client on the same server and database that returns raw bytes (a
    foreign key need not be UTF-8) and fails at once, without retries: a dead
    server must not stall the renewal thread or the exit. ``on_connect`` runs
    on each new connection, after its handshake and before any other command."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "decode_responses": False, "retry": Retry(NoBackoff(), 0),
              "socket_timeout": 5, "socket_connect_timeout": 2}
    if on_connect is not None:
        def set_up(connection) -> None:
            connection.on_connect()
            on_connect(connection)
        kwargs["redis_connect_func"] = set_up
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))


def _run_id(connection: Any) -> bytes:
    """The server's INFO run_id, asked on a connection being set up."""
    try:
        connection.send_command("INFO", "server")
        info = connection.read_response()
    except ResponseError:  # a user without INFO: no restart is told apart, none re-taken
        return b""
    info = info if isinstance(info, bytes) else str(info).encode()
    found = re.search(rb"^run_id:(\w+)", info, re.M)
    return found.group(1) if found else b""


class _Server:
    """One Redis (or cluster) as the owner machinery reaches it."""

    def __init__(self, client: Any, token: str, watch: Callable[["_Server", Any], None] | None = None) -> None:
        self.cluster = hasattr(client, "get_primaries")
        self.run_id: bytes | None = None  # the server our lease was taken on (not on a cluster)
        self.lost = False  # our lease there lapsed: never renewed again
        hook = None if watch is None or self.cluster else (lambda connection: watch(self, connection))
        if self.cluster:
            self._client = client
            self._by_name = {node.name: _quiet_twin(node.redis_connection) for node in client.get_primaries()}
            self.nodes = tuple(self._by_name.values())
        else:
            self.nodes = (_quiet_twin(client, hook),)
        self.lease_node = self.node_of(lease_key(token))
        self.renew = ScriptCall(self.lease_node, _RENEW)
        self.take = ScriptCall(self.lease_node, _TAKE)

    def node_of(self, key: str):
        """The twin of the node that holds ``key``."""
        if not self.cluster:
            return self.nodes[0]
        return self._by_name[self._client.get_node_from_key(key).name]

    def close(self) -> None:
        for node in self.nodes:
            node.connection_pool.disconnect()


def other_owners_in(text: str) -> set[str]:
    """The owner tokens of other processes' demo queues that ``text`` (a
    key or key base) names: what a shared app must not let a visitor read."""
    return owners_named_in(text) - {this_owner()}


def this_owner() -> str:
    """This process's owner token (its demo queues end in ``@<token>``,
    ``@<namespace>.<hex>`` on a Redis user of its own)."""
    return _OWNER.token


def _unlink_own_keys(server: _Server, token: str) -> int:
    """UNLINK every demo key of ``token``: one UNLINK per queue (one slot)."""
    removed = 0
    for node in server.nodes:
        for owners in scan_demo_keys(node, token):
            for queue_keys in owners.get(token, {}).values():
                removed += node.unlink(*queue_keys)
    return removed


def _unlink_orphaned(server: _Server, node: Any, token: str, queues: dict[str, list[bytes]]) -> int:
    """Delete ``queues`` (one owner's keys on ``node``; none: the lease alone)
    only while it holds no lease: none, or one written by hand (no expiry, or
    longer than any kernel takes), which goes too."""
    lease = lease_key(token)
    if not server.cluster:  # the lease and the keys on one server: check and delete in one step
        keys = [key for queue_keys in queues.values() for key in queue_keys]
        script = ScriptCall(node, _UNLINK_ORPHANED)
        return sum(script(keys=[lease, *keys[start:start + SCAN_BATCH]], args=[LONGEST_LEASE_MS])
                   for start in range(0, max(len(keys), 1), SCAN_BATCH))
    # On a cluster the lease sits in another slot, so this cannot be one step. It is
    # still sound: an owner never takes a lapsed lease back on a cluster (not even
    # after a node restarted), so a lease found absent stays absent for that token.
    lease_node = server.node_of(lease)
    ttl = lease_node.pttl(lease)
    if 0 < ttl <= LONGEST_LEASE_MS:
        return 0
    removed = lease_node.unlink(lease) if ttl != -2 else 0
    return removed + sum(node.unlink(*queue_keys) for queue_keys in queues.values())


def _unlink_by_hand(node: Any, keys: list[bytes]) -> int:
    """Delete keys written by hand in a student's namespace (one at a time: a
    cluster's slots, and a student's clean may reach only its own of them)."""
    removed = 0
    for key in keys:
        try:
            removed += node.unlink(key)
        except NoPermissionError:  # another student's pattern: their clean, or the operator's
            pass
    return removed


def _confined_namespace(client: Any) -> str | None:
    """The namespace of ``client``'s user when that user may touch no other
    namespace's keys (a student's, :mod:`echomq_viz.redis_side.acl`); None for an
    operator's user, who cleans for everyone."""
    namespace = _user_namespace(client)
    if namespace is None:
        return None
    other = lease_key(f"{'y' if namespace == 'x' else 'x'}{NAMESPACE_MARK}{'0' * 8}")
    twin = _quiet_twin(client.get_primaries()[0].redis_connection if hasattr(client, "get_primaries") else client)
    try:
        twin.exists(other)
    except NoPermissionError:
        return namespace
    finally:
        twin.connection_pool.disconnect()
    return None


def clean_orphans(client: Any) -> int:
    """Delete the demo keys (``emq:{viz-...@<token>}:*``) whose owner has no
    live lease: what a process killed without exiting left behind (on a
    student's Redis user, only that student's). A live
    owner's keys, and every key that is not a demo key, stay: each batch is
    deleted only if its owner's lease is still absent, so an owner renewing
    mid-scan stops it.

    :returns: how many keys were deleted.
    """
    check_client(client)
    confined = _confined_namespace(client)
    # a student's user cleans only its own namespace's tokens (demo_owner keeps only real ones)
    ours = None if confined is None else f"{confined}{NAMESPACE_MARK}"
    server = _Server(client, "0" * 8)
    removed = 0
    try:
        for node in server.nodes:
            for owners, leases, by_hand in scan_batches(node, "*" if ours is None else ours + "*"):
                if ours is not None:  # the glob's last * also matches past a '}': another's key
                    # (bob's emq:{viz-q@bob.<hex>}:x@alice.0}:y)
                    owners = {token: queues for token, queues in owners.items() if token.startswith(ours)}
                    leases = {token for token in leases if token.startswith(ours)}
                for token, queues in owners.items():
                    removed += _unlink_orphaned(server, node, token, queues)
                for token in leases - owners.keys():  # a lease written by hand goes even with no keys
                    removed += _unlink_orphaned(server, node, token, {})
                removed += _unlink_by_hand(node, by_hand)
    finally:
        server.close()
    return removed


class _Owner:
    """This process's claim on its demo keys: one random token, and a lease
    on every Redis it made a Demo on, renewed while the process lives."""

    def __init__(self) -> None:
        self.namespace: str | None = None  # of the Redis user of its first lease (see _user_namespace)
        self.token = secrets.token_hex(4)
        self._proof = secrets.token_hex(16).encode()  # the lease's value: ours, not a token twin's
        self._servers: dict[tuple, _Server] = {}
        self._lock = threading.RLock()  # a connection set up under it runs _set_up, which takes it too
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def claim(self, client: Any) -> str:
        """Prove the lease on ``client``'s Redis is still ours, or take one:
        the token to name queues with. A lapsed lease is never taken back:
        this process then takes a fresh token (its old queues are forgotten)."""
        with self._lock:
            server = self._servers.get(_identity(client))
            if server is not None and not server.lost and self._renew(server):
                return self.token
            if server is not None:  # lapsed: nothing of ours is written there again
                server.lost = True
                self._start_afresh()
            try:
                self._take(client)
            except FunctionMissing:  # its own line says whom to ask
                raise
            except NoPermissionError as exc:
                raise DemoKeysForbidden(
                    f"this Redis user may not write the demo keys emq:{{viz-…}}:* ({exc}): log in as a "
                    "user allowed ~emq:* keys and +@write, or unset REDIS_URL for a private server"
                ) from None
            return self.token

    def _fresh_token(self) -> str:
        hex_part = secrets.token_hex(4)
        return hex_part if self.namespace is None else f"{self.namespace}{NAMESPACE_MARK}{hex_part}"

    def _take(self, client: Any) -> None:
        if not self._servers:  # nothing named after the token yet: it may still take a namespace
            self.namespace = _user_namespace(client)
            if self.namespace is not None and not self.token.startswith(self.namespace + NAMESPACE_MARK):
                self.token = self._fresh_token()
        server = _Server(client, self.token, self._set_up)
        try:
            while not server.take(keys=[lease_key(self.token)], args=[self._proof, int(LEASE_SECONDS * 1000)]):
                if server.lease_node.get(lease_key(self.token)) == self._proof:
                    break  # ours already: the same server under another address
                if self._servers:
                    raise RuntimeError(f"another live process owns the token {self.token}: restart this one")
                self.token = self._fresh_token()  # a twin; nothing is named after ours yet
                server.close()
                server = _Server(client, self.token, self._set_up)
        except BaseException:
            server.close()
            raise
        self._servers[_identity(client)] = server
        if self._thread is None:
            self._thread = threading.Thread(target=self._keep_alive, name="echomq-viz-lease", daemon=True)
            self._thread.start()
            atexit.register(_release_at_exit)  # after connect(): runs before an embedded server stops

    def _start_afresh(self) -> None:
        """A new token and proof; the old token's keys go where its lease still holds."""
        servers, self._servers = list(self._servers.values()), {}
        self._release(servers)
        self.token = self._fresh_token()
        self._proof = secrets.token_hex(16).encode()

    def _set_up(self, server: _Server, connection: Any) -> None:
        """On each new connection to ``server``, before any other command: a
        server that restarted empty gets our lease again at once."""
        run_id = _run_id(connection)
        with self._lock:
            if server.run_id is None or server.lost:
                server.run_id = server.run_id or run_id
                return
            if run_id == server.run_id:
                return  # the same server: a lapse there is never taken back
            server.run_id = run_id
            if server.take.name in (cached_functions(server.lease_node) or ()):  # a student may only FCALL
                connection.send_command("FCALL", server.take.name, 1, lease_key(self.token), self._proof,
                                        int(LEASE_SECONDS * 1000))
                try:
                    server.lost = connection.read_response() != 1  # 0: someone holds our token there
                except ResponseError:  # the library went with the restart: nothing of ours is written
                    server.lost = True
                return
            connection.send_command("SET", lease_key(self.token), self._proof, "NX", "PX",
                                    int(LEASE_SECONDS * 1000))
            server.lost = connection.read_response() is None  # None: someone holds our token there

    def _renew(self, server: _Server) -> bool:
        """Compare and renew in one step; True while the lease is ours."""
        args = [self._proof, int(LEASE_SECONDS * 1000)]
        try:
            return server.renew(keys=[lease_key(self.token)], args=args) == 1
        except LostConnection:  # the connection broke (a restart?): once more, on a new one
            return server.renew(keys=[lease_key(self.token)], args=args) == 1

    def _keep_alive(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 3):
            with self._lock:
                if self._stop.is_set():
                    return
                for server in self._servers.values():
                    try:
                        server.lost = server.lost or not self._renew(server)
                    except Exception:  # that Redis is down; a Demo on it claims again
                        pass

    def _release(self, servers: list[_Server]) -> int:
        removed = 0
        for server in servers:
            try:
                if not server.lost and server.lease_node.get(lease_key(self.token)) == self._proof:
                    removed += _unlink_own_keys(server, self.token)
                    server.lease_node.unlink(lease_key(self.token), registry_key(self.token))
            except Exception:  # that Redis is gone already, and our keys with it
                pass
            server.close()
        return removed

    def release(self) -> int:
        """Stop renewing; delete this process's demo keys and leases; how many keys went."""
        self._stop.set()
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
            return self._release(servers)


_OWNER = _Owner()


def claim(client: Any) -> str:
    """This process's owner token, after proving (or taking) its lease on
    ``client``'s Redis: name demo queues with it only after this call. A
    token unlike the one before means the lease lapsed: see :class:`LeaseLost`."""
    return _OWNER.claim(client)


def _release_at_exit() -> None:
    _OWNER.release()


def _new_owner_in_child() -> None:
    # A forked child is another owner: it must neither renew nor delete its parent's keys.
    global _OWNER
    _OWNER = _Owner()


os.register_at_fork(after_in_child=_new_owner_in_child)
