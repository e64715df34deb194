"""The queue on a real 3-master Redis Cluster (once on 6.2, once on 7.x).

Why the key layout is ``emq:{Q}:<type>``: Redis Cluster hashes only the
``{Q}`` hash tag, so every key of one queue lives in one slot on one node, and
a script that touches nine or eleven of them is allowed to run there. These
tests start three real ``redis-server`` processes in cluster mode on
127.0.0.1 through :class:`echomq_viz.redis_side.cluster.LocalCluster` (each node a third
of the 16384 slots, joined with CLUSTER MEET), check what it promises, and then:

1. add and consume through :class:`Scripts` bound to a
   ``redis.cluster.RedisCluster`` client, for queues owned by each node;
2. find every key of a queue on every node and check that the servers put
   them all in one slot, the slot :func:`key_slot` computes, on its owner;
3. run the same add script with the hash tag left out of the keys, and watch
   the server refuse it with CROSSSLOT, writing nothing.

The cluster is formed by hand (CLUSTER ADDSLOTS, MEET), not with
``redis-cli --cluster create``; ADDSLOTSRANGE is 7.0+, so slots go as lists.
LocalCluster must never leave a server behind, also when forming fails.
"""

from __future__ import annotations

import os
import random
import socket
from dataclasses import dataclass

import pytest
import redis
from redis.cluster import RedisCluster
from redis.exceptions import ClusterCrossSlotError, MovedError, RedisClusterException

from conftest import server_binary
from test_server import as_nobody
from echomq_viz.redis_side.cluster import (
    BUS_OFFSET, MAX_CLUSTER_PORT, ClusterNotReady, LocalCluster, cluster_port, keyslot_table, slot_map,
)
from echomq_viz.core.keys import KEY_TYPES, Keys, QueueContext, key_slot
from echomq_viz.core.score import PRIORITY_LIMIT
from echomq_viz.redis_side.scripts import Scripts
from echomq_viz.redis_side.server import RedisServer, RedisUnavailable

MASTERS = 3
SEED = 20_240_611


@dataclass
class Cluster:
    kind: str
    local: LocalCluster
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


@pytest.fixture(scope="module", params=["bundled", "system"])
def cluster(request: pytest.FixtureRequest):
    """Three masters of one server kind; all three stop when the module is done."""
    local = LocalCluster(MASTERS, server_binary(request.param))
    servers: list[RedisServer] = []
    try:
        local.start()
        servers = list(local.nodes)
        assert len(servers) == MASTERS and local.running
        nodes = [local.node_client(i) for i in range(MASTERS)]
        # What LocalCluster promises once started: ok everywhere, one slot map.
        wanted = {rng: server.port for rng, server in zip(local.ranges, servers)}
        for node in nodes:
            info = node.execute_command("CLUSTER INFO")
            assert info["cluster_state"] == "ok" and int(info["cluster_known_nodes"]) == MASTERS
            assert slot_map(node) == wanted
        assert local.ranges == [(0, 5460), (5461, 10921), (10922, 16383)]
        assert all(server.port <= MAX_CLUSTER_PORT for server in servers)
        yield Cluster(request.param, local, servers, nodes, local.client(), local.ranges)
    finally:
        local.stop()
    assert not local.running and not local.nodes
    assert not any(server.running for server in servers)


@pytest.fixture
def clean(cluster: Cluster) -> Cluster:
    """The module's cluster with every node emptied first."""
    for node in cluster.nodes:
        node.flushall()
    return cluster


# -- 0. LocalCluster itself ---------------------------------------------------------------


def test_cluster_port_leaves_room_for_the_bus():
    for _ in range(20):
        port = cluster_port()
        assert 1024 <= port <= MAX_CLUSTER_PORT
        with socket.socket() as bus:  # the bus port is free (nothing took it meanwhile)
            bus.bind(("127.0.0.1", port + BUS_OFFSET))


@pytest.mark.slow
def test_every_node_wants_the_cluster_password(cluster: Cluster, tmp_path):
    # Another local user on a node's port: NOAUTH for everything, no file written.
    drop = tmp_path / "drop"
    drop.mkdir(mode=0o777)
    os.chmod(tmp_path, 0o755)
    os.chmod(drop, 0o777)
    for server in cluster.servers:
        found = as_nobody(server.port, None, str(drop))
        assert len(found["tcp"]) == 4 and all(line.startswith("-NOAUTH") for line in found["tcp"]), found
        assert server.password == cluster.local.password
        assert server.client().config_get("bind")["bind"].split() == ["127.0.0.1"]
    assert list(drop.iterdir()) == []
    assert cluster.client.ping()  # the cluster client has it, for every node it finds
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=cluster.servers[0].port).ping()


def test_keyslot_table_asks_the_server(cluster: Cluster):
    ctx = QueueContext("slots")
    keys = [*Keys.all_types(ctx).values(), Keys.job(ctx, "7"), Keys.lock(ctx, "7"), "emq:slots:pc"]
    expected = [(key, key_slot(key)) for key in keys]
    assert keyslot_table(cluster.client, keys) == expected
    assert keyslot_table(cluster.nodes[1], keys) == expected
    assert keyslot_table(cluster.servers[2], keys) == expected  # a RedisServer: opens its own client
    assert len({slot for _, slot in expected[:-1]}) == 1 and expected[-1][1] != expected[0][1]
    assert [cluster.local.owner_index(key) for key in keys] == [
        cluster.owner_index(slot) for _, slot in expected
    ]


def test_a_cluster_that_cannot_start_leaves_nothing_behind():
    broken = LocalCluster(MASTERS, "/bin/false")  # exits at once: no node ever answers
    with pytest.raises(RedisUnavailable):
        broken.start()
    assert broken.nodes == [] and not broken.running


def test_a_cluster_that_does_not_form_in_time_stops_its_nodes():
    local = LocalCluster(MASTERS, server_binary("bundled"), form_timeout=0.0)
    with pytest.raises(ClusterNotReady, match="cluster not ok after"):
        local.start()
    assert local.nodes == []
    local.stop()  # safe twice


@pytest.mark.slow
def test_local_cluster_as_context_manager_stops_everything():
    with LocalCluster(1, server_binary("bundled")) as local:
        servers = list(local.nodes)
        client = local.client()
        assert client.set("{one}:x", "1") and client.get("{one}:x") == "1"
        assert repr(local) == "<LocalCluster 1 masters, running>"
    assert not any(server.running for server in servers)
    assert repr(local) == "<LocalCluster 1 masters, stopped>"
    with pytest.raises(RedisUnavailable, match="not running"):
        local.client()


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
    assert {s for _, s in keyslot_table(clean.client, sorted(keys))} == {slot}
    assert {key_slot(key) for key in keys} == {slot}
    assert int(clean.nodes[owner].execute_command("CLUSTER COUNTKEYSINSLOT", slot)) == len(keys)
    assert set(clean.nodes[owner].execute_command("CLUSTER GETKEYSINSLOT", slot, 1000)) == keys
    # Every node names the same owner for that slot: the node holding the keys.
    for node in clean.nodes:
        owners = {port for (lo, hi), port in slot_map(node).items() if lo <= slot <= hi}
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


# -- arguments: the package's one wording --------------------------------------------------------


def test_slot_ranges_take_numpy_ints_like_every_other_count():
    import numpy as np

    from echomq_viz.redis_side.cluster import slot_ranges

    assert slot_ranges(np.int64(2)) == [(0, 8191), (8192, 16383)]


@pytest.mark.parametrize("masters, error, message", [
    (0, ValueError, "masters must be in 1..16,384, got 0"),
    (True, TypeError, "masters must be an int, got bool True"),
    (3.0, TypeError, "masters must be an int, got float 3.0"),
])
def test_a_bad_number_of_masters_is_refused_before_any_server_starts(masters, error, message):
    with pytest.raises(error) as info:
        LocalCluster(masters)
    assert str(info.value) == message


def test_a_slot_outside_the_map_or_a_zero_node_timeout_is_refused():
    import numpy as np

    local = LocalCluster(2)  # not started: the slot map is known before any server runs
    assert local.owner_index(np.int64(16383)) == 1 and local.owner_index(b"{q}") == local.owner_index("{q}")
    with pytest.raises(ValueError) as info:
        local.owner_index(16384)
    assert str(info.value) == "slot must be in 0..16,383, got 16,384"
    with pytest.raises(ValueError) as info:
        LocalCluster(2, node_timeout_ms=0)
    assert str(info.value) == "node_timeout_ms must be 1 or more, got 0"


# -- clean on a cluster: any node's URL reaches every node --------------------------------------


def test_clean_through_one_nodes_url_removes_orphans_on_every_node(clean: Cluster, capsys, monkeypatch):
    from echomq_viz.launcher.cli import main
    from echomq_viz.redis_side.demo_keys import lease_key

    # Demo queues of an owner with no lease (a killed kernel), one on each node; one with a live lease.
    orphans = {}
    for stem in range(200):
        key = f"emq:{{viz-c{stem}@dead0001}}:wait"
        orphans.setdefault(clean.owner_index(key_slot(key)), key)
        if len(orphans) == MASTERS:
            break
    assert len(orphans) == MASTERS, "no orphan on some node: the test proves nothing"
    for key in orphans.values():
        clean.client.rpush(key, "1")
    clean.client.set(lease_key("a11fe001"), "proof", px=60_000)  # a live lease always expires
    clean.client.rpush("emq:{viz-kept@a11fe001}:wait", "1")
    clean.client.set("emq:{orders}:pc", "7")
    monkeypatch.delenv("REDIS_URL", raising=False)
    url = f"redis://:{clean.local.password}@127.0.0.1:{clean.servers[-1].port}/0"
    assert main(["clean", "--url", url]) == 0
    out = capsys.readouterr().out
    port = clean.servers[-1].port
    assert out == f"echomq-viz: removed {MASTERS} orphaned demo key(s) at redis://:***@127.0.0.1:{port}/0\n"
    assert not any(clean.client.exists(key) for key in orphans.values())
    assert clean.client.exists("emq:{viz-kept@a11fe001}:wait", "emq:{orders}:pc", lease_key("a11fe001")) == 3
