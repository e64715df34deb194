"""A small real Redis Cluster on 127.0.0.1, for the cluster notebook and tests.

Every key of queue ``Q`` is ``emq:{Q}:<type>`` and Redis Cluster hashes only
the ``{Q}`` hash tag, so a queue's keys share one slot on one node and a Lua
script touching nine or eleven of them may run. :class:`LocalCluster` shows
that on real servers: N masters (3 by default), each a private
:class:`~echomq_viz.redis_side.server.RedisServer` in cluster mode on 127.0.0.1 with one
shared random password (the cluster bus, port + 10000, has no authentication
in Redis), given contiguous slot shares with CLUSTER ADDSLOTS, joined with
CLUSTER MEET, and waited for until every node agrees on one healthy slot map.
Formed by hand rather than by ``redis-cli --cluster create``, it needs only
``redis-server``, 6.2 or 7.x; forming takes about 2 s.

:func:`keyslot_table` asks a server (not our own CRC16) which slot keys hash to.
:func:`connect_any` is :func:`~echomq_viz.redis_side.server.connect` that also reaches a
cluster through any one of its nodes.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Iterable, Sequence

from echomq_viz.core.checks import check_int
from echomq_viz.core.keys import key_slot
from echomq_viz.redis_side.server import (
    ENV_URL, RedisServer, RedisUnavailable, connect, find_redis_server, free_tcp_port, redact_url,
)

__all__ = [
    "SLOTS",
    "BUS_OFFSET",
    "MAX_CLUSTER_PORT",
    "cluster_port",
    "slot_ranges",
    "slot_map",
    "keyslot_table",
    "connect_any",
    "ClusterNotReady",
    "LocalCluster",
]

SLOTS = 16384
BUS_OFFSET = 10_000  # a node's cluster bus listens on its port + 10000
MAX_CLUSTER_PORT = 55_535  # redis-server refuses a larger port in cluster mode


class ClusterNotReady(RedisUnavailable):
    """The nodes started but did not agree on one healthy cluster in time."""


def connect_any(url: str | None = None, *, timeout: float = 5.0):
    """:func:`~echomq_viz.redis_side.server.connect`'s client, or, when the server at
    ``url`` is a Redis Cluster node, a ``RedisCluster`` client seeded with it:
    a plain client on one node gets MOVED for every key another node owns.

    :raises RedisUnavailable: as ``connect`` does, or when the cluster cannot
        be reached through that node (one line, no password).
    """
    import os

    import redis
    from redis.cluster import RedisCluster

    client = connect(url, timeout=timeout)
    try:
        enabled = int(client.info("cluster").get("cluster_enabled", 0))
    except redis.RedisError:  # no INFO for this user (an ACL): take it as one server
        enabled = 0
    if not enabled:
        return client
    client.close()
    url = url or os.environ[ENV_URL]  # the embedded server is never a cluster node
    try:
        return RedisCluster.from_url(url, decode_responses=True, socket_timeout=timeout,
                                     socket_connect_timeout=timeout)
    except (redis.RedisError, ValueError) as exc:
        raise RedisUnavailable(f"cannot reach the cluster of the node at {redact_url(url, (url,))}: "
                               f"{redact_url(str(exc), (url,))}") from None


def cluster_port() -> int:
    """A free 127.0.0.1 port ``p <= 55535`` whose bus port ``p + 10000`` is free too.

    ``RedisServer(port=0)`` is not enough for a cluster node: the kernel's
    ephemeral range reaches 60999, and redis-server in cluster mode (6.2 and
    7.0 alike) exits with "Your Redis port number must be 55535 or less".
    """
    return free_tcp_port(highest=MAX_CLUSTER_PORT, offsets=(BUS_OFFSET,))


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The slots master ``i`` gets: ``masters`` contiguous, near-equal ranges."""
    masters = check_int("masters", masters, 1, SLOTS)
    bounds = [SLOTS * i // masters for i in range(masters + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(masters)]


def slot_map(node) -> dict[tuple[int, int], int]:
    """One node's view of the cluster: ``(first, last)`` slot range -> owner's port.

    :param node: a plain redis-py client on one node (not the cluster client).
    """
    view: dict[tuple[int, int], int] = {}
    for address, info in node.execute_command("CLUSTER NODES").items():
        port = int(address.rsplit(":", 1)[1].split("@")[0])
        for first, *last in info["slots"]:
            view[(int(first), int(last[0]) if last else int(first))] = port
    return view


def keyslot_table(client_or_node: Any, keys: Iterable[str]) -> list[tuple[str, int]]:
    """``(key, slot)`` for each key, as the server's ``CLUSTER KEYSLOT`` says.

    :param client_or_node: a ``RedisCluster`` client, a plain client on one
        node, or a :class:`RedisServer` (a client is opened and closed).
    """
    if isinstance(client_or_node, RedisServer):
        client = client_or_node.client()
        try:
            return keyslot_table(client, keys)
        finally:
            client.close()
    return [(key, int(client_or_node.execute_command("CLUSTER KEYSLOT", key))) for key in keys]


class LocalCluster:
    """N real redis-server masters on 127.0.0.1 forming one Redis Cluster.

    :param masters: how many masters (3 by default).
    :param executable: the redis-server binary; :func:`find_redis_server` by default.
    :param node_timeout_ms: ``cluster-node-timeout`` of every node.
    :param form_timeout: seconds to wait for the cluster to be ok everywhere.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`
    (safe to call twice). Node ``i`` owns ``ranges[i]``.
    """

    def __init__(
        self, masters: int = 3, executable: str | None = None, *,
        node_timeout_ms: int = 5000, form_timeout: float = 20.0,
    ) -> None:
        self.ranges = slot_ranges(masters)
        self.masters = len(self.ranges)
        self.executable = executable or find_redis_server()
        self.node_timeout_ms = check_int("node_timeout_ms", node_timeout_ms, 1)
        self.form_timeout = form_timeout
        self.password = secrets.token_urlsafe(32)  # fresh for each cluster, never shown
        self.nodes: list[RedisServer] = []
        self._clients: list[Any] = []  # every client we handed out, closed by stop()

    @property
    def node_args(self) -> tuple[str, ...]:
        return (
            "--cluster-enabled", "yes",
            # Relative on purpose: each redis-server runs with --dir set to its
            # own temp directory, so the file lands there and goes with it.
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self.node_timeout_ms),
        )

    @property
    def running(self) -> bool:
        return len(self.nodes) == self.masters and all(node.running for node in self.nodes)

    # -- life cycle --------------------------------------------------------------

    def start(self) -> "LocalCluster":
        """Start the nodes, assign the slots, join them, wait until ok everywhere."""
        if self.nodes:
            return self
        try:
            for _ in range(self.masters):
                self.nodes.append(self._start_node())
            self._form()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self) -> RedisServer:
        last: Exception | None = None
        for _ in range(3):  # another process may take a probed port before redis binds it
            try:
                return RedisServer(self.executable, port=cluster_port(), extra_args=self.node_args,
                                   password=self.password).start()
            except RedisUnavailable as exc:
                last = exc
        raise RedisUnavailable(f"could not start a cluster node: {last}")

    def _form(self) -> None:
        clients = [self.node_client(i) for i in range(self.masters)]
        try:
            for client, (first, last) in zip(clients, self.ranges):
                client.execute_command("CLUSTER ADDSLOTS", *range(first, last + 1))
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER MEET", "127.0.0.1", node.port)
            wanted = {rng: node.port for rng, node in zip(self.ranges, self.nodes)}
            deadline = time.monotonic() + self.form_timeout
            while True:
                infos = [client.execute_command("CLUSTER INFO") for client in clients]
                if all(info["cluster_state"] == "ok" and int(info["cluster_known_nodes"]) == self.masters
                       for info in infos) and all(slot_map(client) == wanted for client in clients):
                    return
                if time.monotonic() > deadline:
                    raise ClusterNotReady(
                        f"cluster not ok after {self.form_timeout} s: " + "; ".join(
                            f"node {i}: {info['cluster_state']}, {info['cluster_known_nodes']} known"
                            for i, info in enumerate(infos))
                    )
                time.sleep(0.05)
        finally:
            for client in clients:
                client.close()

    def stop(self) -> None:
        """Close the clients handed out and stop every node. Safe to call twice."""
        clients, self._clients = self._clients, []
        for client in clients:
            try:
                client.close()
            except Exception:  # a client of a node already gone
                pass
        nodes, self.nodes = self.nodes, []
        for node in nodes:
            node.stop()

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients and lookups ----------------------------------------------------

    def _require_running(self) -> None:
        if not self.nodes:
            raise RedisUnavailable("the cluster is not running: call start() first")

    def client(self, **kwargs: Any):
        """A ``redis.cluster.RedisCluster`` (decoding replies by default),
        seeded with node 0 only; it learns the other nodes from the cluster.
        :meth:`stop` closes it."""
        from redis.cluster import RedisCluster

        self._require_running()
        kwargs.setdefault("decode_responses", True)
        kwargs.setdefault("socket_timeout", 5)
        kwargs.setdefault("password", self.password)
        client = RedisCluster(host="127.0.0.1", port=self.nodes[0].port, **kwargs)
        self._clients.append(client)
        return client

    def node_client(self, index: int, **kwargs: Any):
        """A plain redis-py client on node ``index`` only (no redirects
        followed). :meth:`stop` closes it."""
        self._require_running()
        kwargs.setdefault("socket_timeout", 5)
        client = self.nodes[index].client(**kwargs)
        self._clients.append(client)
        return client

    def owner_index(self, key_or_slot: str | int) -> int:
        """Which node (index into :attr:`nodes`) owns a slot, or a key's slot."""
        if isinstance(key_or_slot, (str, bytes)):
            slot = key_slot(key_or_slot)
        else:
            slot = check_int("slot", key_or_slot, 0, SLOTS - 1)
        return next(index for index, (first, last) in enumerate(self.ranges) if first <= slot <= last)

    def owners(self, keys: Sequence[str]) -> list[int]:
        """The owning node of each key."""
        return [self.owner_index(key) for key in keys]

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<LocalCluster {self.masters} masters, {state}>"
