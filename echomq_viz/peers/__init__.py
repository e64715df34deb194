"""Notebook 10: the queues people run, beside the packed score.

Each queue library runs through its own worker process, as its users deploy
it, on a private Redis of its own: :mod:`.workers` (one run, observed),
:mod:`.deployments` (each library's producer and worker), :mod:`.deployed`
(the notebook's runs and probes), :mod:`.cluster_probes` (hash slots, and
local clusters tried), :mod:`.telling` (what the notebook prints of them),
:mod:`.celery_app` and :mod:`.worker_apps` (what the workers import).
:mod:`.findings` makes all of it once per set of installed versions and keeps
it for every kernel. Each library is also called directly, on a demo queue
(``emq:{viz-10-<library>@<owner>}:*``), with the same workload:
:mod:`.workload` (pure), :mod:`.observe` (MONITOR), :mod:`.runs` (one
library through the workload), :mod:`.base` (what every library's module
shares), one module per library (:mod:`.kombu_peer`, :mod:`.rq_peer`,
:mod:`.huey_peer`, :mod:`.bull_peer` through :mod:`.node` and its Node
runner, :mod:`.packed_peers`), :mod:`.growth` (cost as the queue grows),
:mod:`.table` and :mod:`.plots` (pure), :mod:`.view`. :mod:`.npm` fetches the
Node packages once into a cache (the offline pages use it too).

May import: every layer but :mod:`echomq_viz.launcher`.
"""

from __future__ import annotations

from typing import Any, Callable

from echomq_viz.peers.base import Peer, connection_params
from echomq_viz.peers.growth import BENCH_COMMAND, FULL_SIZES, load_growth, measure_all, measure_growth, series
from echomq_viz.peers.node import node_missing
from echomq_viz.peers.runs import PeerRun, observe, observe_all
from echomq_viz.peers.table import closing_rows, closing_table, closing_table_html, details, order_verdict
from echomq_viz.peers.workload import TIERS, WorkJob, correct_order, workload

__all__ = ["Peer", "PeerRun", "WorkJob", "TIERS", "workload", "correct_order", "observe", "observe_all",
           "details", "order_verdict", "closing_rows", "closing_table", "closing_table_html", "node_missing",
           "connection_params", "peer_makers", "PYTHON_PEERS", "NODE_PEERS", "FULL_SIZES",
           "BENCH_COMMAND", "load_growth", "measure_all", "measure_growth", "series"]

PYTHON_PEERS = ("packed", "bullmq", "kombu", "kombu10", "rq", "huey")
NODE_PEERS = ("bull",)


def _maker(key: str, client: Any) -> Callable[[], Peer]:
    if key == "packed":
        from echomq_viz.peers.packed_peers import PackedPeer
        return lambda: PackedPeer(client)
    if key == "bullmq":
        from echomq_viz.peers.packed_peers import BullMQPeer
        return lambda: BullMQPeer(client)
    if key in ("kombu", "kombu10"):
        from echomq_viz.peers.kombu_peer import TEN_STEPS, KombuPeer
        return lambda: KombuPeer(client, TEN_STEPS if key == "kombu10" else None)
    if key == "rq":
        from echomq_viz.peers.rq_peer import RQPeer
        return lambda: RQPeer(client)
    if key == "huey":
        from echomq_viz.peers.huey_peer import HueyPeer
        return lambda: HueyPeer(client)
    if key == "bull":
        from echomq_viz.peers.bull_peer import BullPeer
        return lambda: BullPeer(client)
    raise ValueError(f"peer must be one of {', '.join(PYTHON_PEERS + NODE_PEERS)}, got {key!r}")


def peer_makers(client: Any = None, keys: tuple[str, ...] | None = None) -> list[Callable[[], Peer]]:
    """A maker for each library in ``keys`` (default: every Python one, and
    Bull when Node.js and npm are here), in the notebook's order."""
    if keys is None:
        keys = PYTHON_PEERS[:2] + NODE_PEERS * (node_missing() is None) + PYTHON_PEERS[2:]
    return [_maker(key, client) for key in keys]
