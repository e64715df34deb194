"""The queue on a real 3-master Redis Cluster (once on 6.2, once on 7.x).

Why the key layout is ``emq:{Q}:<type>``: Redis Cluster hashes only the
``{Q}`` hash tag, so every key of one queue lives in one slot on one node, and
a script that touches nine or eleven of them is allowed to run there. These
tests start three real ``redis-server`` processes in cluster mode on
127.0.0.1, give each a third of the 16384 slots, join them with CLUSTER MEET,
and then:

1. add and consume through :class:`Scripts` bound to a
   ``redis.cluster.RedisCluster`` client, for queues owned by each node;
2. find every key of a queue on every node and check that the servers put
   them all in one slot, the slot :func:`key_slot` computes, on its owner;
3. run the same add script with the hash tag left out of the keys, and watch
   the server refuse it with CROSSSLOT, writing nothing.

The cluster is formed by hand (CLUSTER ADDSLOTS, MEET), not with
``redis-cli --cluster create``; ADDSLOTSRANGE is 7.0+, so slots go as lists.
"""

from __future__ import annotations

import random
import socket
import time
from dataclasses import dataclass

import pytest
import redis
from redis.cluster import RedisCluster
from redis.exceptions import ClusterCrossSlotError, MovedError, RedisClusterException

from conftest import server_binary
from echomq_viz.keys import KEY_TYPES, Keys, QueueContext, key_slot
from echomq_viz.score import PRIORITY_LIMIT
from echomq_viz.scripts import Scripts
from echomq_viz.server import RedisServer, RedisUnavailable

SLOTS = 16384
MASTERS = 3
BUS_OFFSET = 10_000  # the cluster bus listens on port + 10000
FORM_DEADLINE = 20.0  # seconds for CLUSTER INFO to say ok everywhere (about 2 s measured)
SEED = 20_240_611
CLUSTER_ARGS = (
    "--cluster-enabled", "yes",
    # Relative on purpose: redis-server runs with --dir set to its own temp
    # directory (unknown before start), so the file lands there and goes with it.
    "--cluster-config-file", "nodes.conf",
    "--cluster-node-timeout", "5000",
)


# -- forming the cluster -------------------------------------------------------------


def _cluster_port() -> int:
    """A free 127.0.0.1 port whose cluster bus port (port + 10000) is free too.

    ``RedisServer(port=0)`` is not enough here: the kernel's ephemeral range
    reaches 60999, and redis-server in cluster mode (6.2 and 7.0 alike) exits
    with "Your Redis port number must be 55535 or less" above 55535.
    """
    for _ in range(500):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port + BUS_OFFSET > 65535:
            continue
        try:
            with socket.socket() as bus:
                bus.bind(("127.0.0.1", port + BUS_OFFSET))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair (port, port + 10000) on 127.0.0.1")


def _start_node(binary: str) -> RedisServer:
    last: Exception | None = None
    for _ in range(3):  # another process may take a probed port before redis binds it
        try:
            return RedisServer(binary, port=_cluster_port(), extra_args=CLUSTER_ARGS).start()
        except RedisUnavailable as exc:
            last = exc
    raise RedisUnavailable(f"could not start a cluster node: {last}")


def _slot_ranges() -> list[tuple[int, int]]:
    bounds = [SLOTS * i // MASTERS for i in range(MASTERS + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(MASTERS)]


def _cluster_view(node: redis.Redis) -> dict[tuple[int, int], int]:
    """One node's view of the slot map: (first, last) slot -> owner's port."""
    view: dict[tuple[int, int], int] = {}
    for address, info in node.execute_command("CLUSTER NODES").items():
        port = int(address.rsplit(":", 1)[1].split("@")[0])
        for first, *last in info["slots"]:
            view[(int(first), int(last[0]) if last else int(first))] = port
    return view


@dataclass
class Cluster:
    kind: str
    servers: list[RedisServer]
    nodes: list[redis.Redis]  # plain clients, one per node, same order as servers
    client: RedisCluster  # the cluster client, seeded with servers[0] only
    ranges: list[tuple[int, int]]  # the slots servers[i] owns

    def owner_index(self, slot: int) -> int:
        return next(i for i, (lo, hi) in enumerate(self.ranges) if lo <= slot <= hi)

    def owner(self, key: str) -> redis.Redis:
        return self.nodes[self.owner_index(key_slot(key))]

    def snapshot(self) -> dict[tuple[int, bytes], bytes]:
        """Every key on every node with its DUMP, to prove a refused call wrote nothing."""
        found = {}
        for index, server in enumerate(self.servers):
            raw = server.client(decode_responses=False)
            try:
                for key in raw.scan_iter(count=1000):
                    found[(index, key)] = raw.dump(key)
            finally:
                raw.close()
        return found


def _form(servers: list[RedisServer], nodes: list[redis.Redis]) -> list[tuple[int, int]]:
    ranges = _slot_ranges()
    for node, (lo, hi) in zip(nodes, ranges):
        assert node.execute_command("CLUSTER ADDSLOTS", *range(lo, hi + 1))
    for server in servers[1:]:
        assert nodes[0].execute_command("CLUSTER MEET", "127.0.0.1", server.port)
    wanted = {rng: server.port for rng, server in zip(ranges, servers)}
    deadline = time.monotonic() + FORM_DEADLINE
    while True:
        infos = [node.execute_command("CLUSTER INFO") for node in nodes]
        if all(info["cluster_state"] == "ok" and int(info["cluster_known_nodes"]) == MASTERS
               for info in infos) and all(_cluster_view(node) == wanted for node in nodes):
            return ranges
        if time.monotonic() > deadline:
            raise AssertionError(
                f"cluster not ok after {FORM_DEADLINE} s: "
                + "; ".join(f"{s.port}: {i['cluster_state']}, {i['cluster_known_nodes']} nodes"
                            for s, i in zip(servers, infos))
            )
        time.sleep(0.05)


@pytest.fixture(scope="module", params=["bundled", "system"])
def cluster(request: pytest.FixtureRequest):
    """Three masters of one server kind; all three stop when the module is done."""
    binary = server_binary(request.param)
    servers: list[RedisServer] = []
    nodes: list[redis.Redis] = []
    client = None
    try:
        for _ in range(MASTERS):
            servers.append(_start_node(binary))
        nodes = [server.client(socket_timeout=5) for server in servers]
        ranges = _form(servers, nodes)
        client = RedisCluster(
            host="127.0.0.1", port=servers[0].port, decode_responses=True, socket_timeout=5
        )
        yield Cluster(request.param, servers, nodes, client, ranges)
    finally:
        if client is not None:
            client.close()
        for node in nodes:
            node.close()
        for server in servers:
            server.stop()
    assert not any(server.running for server in servers)


@pytest.fixture
def clean(cluster: Cluster) -> Cluster:
    """The module's cluster with every node emptied first."""
    for node in cluster.nodes:
        node.flushall()
    return cluster


def _queue_owned_by(cluster: Cluster, index: int, stem: str) -> QueueContext:
    """The first queue ``stem-N`` whose slot belongs to node ``index``."""
    for n in range(10_000):
        ctx = QueueContext(f"{stem}-{n}")
        if cluster.owner_index(key_slot(Keys.prioritized(ctx))) == index:
            return ctx
    raise AssertionError(f"no queue name for node {index}")


def _batch(size: int = 48) -> list[tuple]:
    """A seeded mix: repeated and extreme priorities, auto and custom ids."""
    rng = random.Random(SEED)
    priorities = [1, 1, 2, 3, 3, 5, 10, 1000, PRIORITY_LIMIT]
    jobs = []
    for i in range(size):
        job = (f"job-{i}", {"i": i}, rng.choice(priorities))
        jobs.append(job + (f"custom-{i}",) if i % 5 == 4 else job)
    return jobs


def _expected_ids(jobs: list[tuple]) -> list[str]:
    # The id counter is INCR'ed for every add, custom ids included.
    return [job[3] if len(job) == 4 else str(n) for n, job in enumerate(jobs, start=1)]


def _drain_and_check(scripts: Scripts, ctx: QueueContext, jobs: list[tuple], ids: list[str]) -> None:
    expected = sorted(range(len(jobs)), key=lambda i: (jobs[i][2], i))  # (priority, arrival)
    taken = []
    for _ in range(len(jobs) + 1):  # bounded: one extra call must find the queue empty
        job = scripts.move_to_active(ctx, "worker-1", 60_000)
        if job is None:
            break
        taken.append(job)
    assert len(taken) == len(jobs)
    assert [job.data["i"] for job in taken] == expected
    assert [job.id for job in taken] == [ids[i] for i in expected]
    assert [job.priority for job in taken] == [jobs[i][2] for i in expected]
    assert all(job.source == "prioritized" for job in taken)
    assert [job.counter for job in taken] == [i + 1 for i in expected]  # pc started at 1
    client = scripts.client
    assert client.zcard(Keys.prioritized(ctx)) == 0
    assert client.exists(Keys.pc(ctx)) == 0  # the empty consume reset the counter
    assert sorted(client.lrange(Keys.active(ctx), 0, -1)) == sorted(ids)
    assert client.get(Keys.lock(ctx, taken[0].id)) == "worker-1"


# -- 1. add and consume through a RedisCluster client ------------------------------------


@pytest.mark.parametrize("owner", range(MASTERS), ids=lambda i: f"queue-on-node{i}")
def test_add_and_consume_through_cluster_client(clean: Cluster, owner: int):
    # Node 0 is the only address the client was given; queues owned by
    # nodes 1 and 2 need the client's slot map.
    ctx = _queue_owned_by(clean, owner, "orders")
    scripts = Scripts(clean.client)
    jobs = _batch()
    ids = [scripts.add_prioritized_job(ctx, *job) for job in jobs]
    assert ids == _expected_ids(jobs)
    assert len(scripts.prioritized(ctx)) == len(jobs)
    _drain_and_check(scripts, ctx, jobs, ids)
    # Everything went to the owner: no other node holds a single key.
    sizes = [node.dbsize() for node in clean.nodes]
    assert sizes[owner] > 0 and sum(sizes) == sizes[owner], sizes


@pytest.mark.parametrize("owner", range(MASTERS), ids=lambda i: f"queue-on-node{i}")
def test_pipelined_add_through_cluster_client(clean: Cluster, owner: int):
    # Scripts.add_prioritized_jobs pipelines EVALSHA through
    # client.pipeline(transaction=False). On a RedisCluster that pipeline is
    # a ClusterPipeline; all of one queue's keys share a slot, so the batch
    # belongs on one node and should work like on a single server.
    ctx = _queue_owned_by(clean, owner, "bulk")
    scripts = Scripts(clean.client)
    jobs = _batch()
    ids = scripts.add_prioritized_jobs(ctx, jobs, chunk_size=16)
    assert ids == _expected_ids(jobs)
    _drain_and_check(scripts, ctx, jobs, ids)


# -- 2. one queue, one slot, one node -----------------------------------------------------


def test_every_key_of_a_queue_is_in_one_slot_on_its_owner(clean: Cluster):
    owner = 2  # not the node the client was seeded with
    ctx = _queue_owned_by(clean, owner, "mail")
    scripts = Scripts(clean.client)
    for n, priority in enumerate([4, 2, 9, 2, 7]):
        scripts.add_prioritized_job(ctx, "send", {"n": n}, priority)
    scripts.add_standard_job(ctx, "now", {})
    assert scripts.move_to_active(ctx, "w").source == "wait"
    assert scripts.move_to_active(ctx, "w").priority == 2
    assert scripts.change_priority(ctx, "3", 1)
    scripts.add_standard_job(ctx, "later", {})
    clean.client.hset(Keys.meta(ctx), "concurrency", 1)

    # Scan every node for everything: after FLUSHALL, all keys are this queue's.
    found = {index: set(node.scan_iter(count=1000)) for index, node in enumerate(clean.nodes)}
    keys = found[owner]
    assert all(not found[index] for index in range(MASTERS) if index != owner), found
    assert keys == set(clean.nodes[owner].scan_iter(match=Keys.pattern(ctx), count=1000))
    base = Keys.base(ctx)
    assert all(key.startswith(base) for key in keys)
    types = {"prioritized", "pc", "id", "marker", "meta", "events", "wait", "active"}
    assert {Keys.all_types(ctx)[t] for t in types} <= keys
    suffixes = {key[len(base):] for key in keys}
    locks = {suffix for suffix in suffixes if suffix.endswith(":lock")}
    assert suffixes - locks - set(KEY_TYPES) == {str(n) for n in range(1, 8)}  # the 7 job hashes
    assert locks == {"6:lock", "2:lock"}  # the two active jobs

    # The servers' own hash function, asked on every node, agrees with ours.
    slot = key_slot(Keys.prioritized(ctx))
    for node in clean.nodes:
        assert {int(node.execute_command("CLUSTER KEYSLOT", key)) for key in keys} == {slot}
    assert {key_slot(key) for key in keys} == {slot}
    assert int(clean.nodes[owner].execute_command("CLUSTER COUNTKEYSINSLOT", slot)) == len(keys)
    assert set(clean.nodes[owner].execute_command("CLUSTER GETKEYSINSLOT", slot, 1000)) == keys
    # Every node names the same owner for that slot: the node holding the keys.
    for node in clean.nodes:
        owners = {port for (lo, hi), port in _cluster_view(node).items() if lo <= slot <= hi}
        assert owners == {clean.servers[owner].port}
    assert clean.client.get_node_from_key(Keys.pc(ctx)).port == clean.servers[owner].port


# -- 3. the same script without the hash tag ------------------------------------------------


def test_untagged_keys_get_crossslot_and_write_nothing(clean: Cluster):
    ctx = QueueContext("Q")
    scripts = Scripts(clean.client)
    script = scripts.sources["addPrioritizedJob"]
    assert scripts.add_prioritized_job(ctx, "first", {}, 5) == "1"  # a tagged queue to keep intact

    untagged = [f"{ctx.prefix}:{ctx.queue}:{key_type}" for key_type in script.key_types]
    assert untagged[0] == "emq:Q:marker" and untagged[3] == "emq:Q:prioritized"
    args = [f"{ctx.prefix}:{ctx.queue}:", "", "job", 1_700_000_000_000, "{}", 3]
    # Without the tag, the nine keys scatter over slots on more than one node.
    server_slots = [int(clean.nodes[0].execute_command("CLUSTER KEYSLOT", k)) for k in untagged]
    assert server_slots == [key_slot(k) for k in untagged]
    assert len({clean.owner_index(s) for s in server_slots}) > 1

    before = clean.snapshot()
    assert before  # the tagged queue's keys

    # The node that owns KEYS[1] refuses the whole script: CROSSSLOT is a
    # server reply (redis-py builds ClusterCrossSlotError only from one).
    first_owner = clean.owner(untagged[0])
    with pytest.raises(ClusterCrossSlotError, match="don't hash to the same slot"):
        first_owner.eval(script.source, len(untagged), *untagged, *args)
    # Every other node refuses it the same way: the check comes before routing.
    for node in clean.nodes:
        with pytest.raises(ClusterCrossSlotError):
            node.eval(script.source, len(untagged), *untagged, *args)
    # The cluster client refuses before sending anything.
    with pytest.raises(RedisClusterException, match="same key slot"):
        clean.client.eval(script.source, len(untagged), *untagged, *args)

    assert clean.snapshot() == before
    for node in clean.nodes:
        assert list(node.scan_iter(match="emq:Q:*", count=1000)) == []

    # Control: the very same source with the tagged keys runs on the owner,
    # and any other node answers MOVED to that owner.
    tagged = script.keys(ctx)
    tagged_args = [Keys.base(ctx), *args[1:]]
    owner = clean.owner_index(key_slot(tagged[0]))
    assert clean.nodes[owner].eval(script.source, len(tagged), *tagged, *tagged_args) == "2"
    other = (owner + 1) % MASTERS
    with pytest.raises(MovedError) as moved:
        clean.nodes[other].eval(script.source, len(tagged), *tagged, *tagged_args)
    assert moved.value.port == clean.servers[owner].port
    assert moved.value.slot_id == key_slot(tagged[0])
    assert clean.client.zcard(Keys.prioritized(ctx)) == 2
