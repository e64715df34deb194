"""Notebook 10's growth run: time per add and per pop with n jobs waiting, for
every queue library, on one private Redis that logs every command's duration
(so Redis's own time per operation is kept beside the client's); five batches
a size, each batch's median kept, so the spread between batches is stored too.

    python benchmarks/peers.py [--sizes 100,1000,10000,100000] [--per-size 30] [--batches 5]

Writes ``echomq_viz/peers/growth.json`` (what notebook 10 shows as the stored
run) and returns, per library (``<kind>`` is ``add``, the most urgent add,
``add_least``, the least urgent add, or ``pop``):

- ``peers_<kind>_growth_<library>``: the median cost at the largest size over
  the median at the smallest (10^5 / 10^2), from the client's timing;
- ``peers_<kind>_growth_low_<library>`` / ``_high_``: the same ratio at its
  least and most, batch against batch (the spread);
- ``peers_server_<kind>_growth_<library>``: the ratio from Redis's own time
  (SLOWLOG durations of the top-level commands: a script's inner commands are
  inside its own), where the client's noise does not reach;
- ``peers_add_vs_packed_at_1e5_<library>``: its add at the largest size over
  the packed score's add there;
- ``peers_lindex_us_<place>`` and ``peers_linsert_us_<place>``: Redis's own time
  for ``LINDEX`` and for ``LINSERT`` before an element at the head, the middle
  and the tail of a list of 10^5 (the two commands of Bull's add), stored in
  the record as ``list_walk``. ``--list-walk`` measures only these, keeping
  the rest of the stored record.

Bull joins when Node.js and npm are installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from echomq_viz.peers import FULL_SIZES, measure_all, peer_makers  # noqa: E402
from echomq_viz.peers.growth import (  # noqa: E402
    BATCHES, KINDS, SLOWLOG_ARGS, load_growth, measure_list_walk, save_growth, series,
)
from echomq_viz.redis_side.server import RedisServer  # noqa: E402

QUICK_SIZES = (100, 1_000)


def keys_of(record: dict) -> dict[str, float]:
    """The benchmark keys of one growth record."""
    results = {}
    packed = None
    for prefix, kind in [("", k) for k in KINDS] + [("server_", k) for k in KINDS]:
        for label, points in series(record, prefix + kind).items():
            key = next(k for k, entry in record["libraries"].items() if entry["label"] == label)
            (_, low_med, low_lo, low_hi), (_, high_med, high_lo, high_hi) = points[0], points[-1]
            results[f"peers_{prefix}{kind}_growth_{key}"] = round(high_med / low_med, 2)
            if not prefix:
                results[f"peers_{kind}_growth_low_{key}"] = round(high_lo / low_hi, 2)
                results[f"peers_{kind}_growth_high_{key}"] = round(high_hi / low_lo, 2)
            if prefix == "" and kind == "add":
                if key == "packed":
                    packed = high_med
                results[f"peers_add_us_at_largest_{key}"] = round(high_med * 1e6, 1)
    if packed:
        for key in record["libraries"]:
            results[f"peers_add_vs_packed_at_1e5_{key}"] = round(
                results[f"peers_add_us_at_largest_{key}"] / (packed * 1e6), 2)
    return {**results, **walk_keys(record.get("list_walk"))}


def walk_keys(walk: dict | None) -> dict[str, float]:
    """The benchmark keys of a list-walk measurement (none without one)."""
    if not walk:
        return {}
    return {f"peers_{command}_us_{place}": value for command in ("lindex", "linsert")
            for place, value in walk[f"{command}_us"].items()}


def bench_list_walk(store: bool = True) -> dict:
    """Only the list walk, on a private server that logs every command; stored into the
    record already kept (its growth run untouched)."""
    server = RedisServer(extra_args=SLOWLOG_ARGS)
    server.start()
    try:
        walk = measure_list_walk(server.client())
    finally:
        server.stop()
    if store:
        save_growth({**load_growth(), "list_walk": walk})
    return walk_keys(walk)


def bench_peers(sizes=FULL_SIZES, per_size: int = 30, store: bool = True, batches: int = BATCHES) -> dict:
    server = RedisServer(extra_args=SLOWLOG_ARGS)
    server.start()
    try:
        record = measure_all(peer_makers(server.client()), sizes, per_size, batches,
                             log=lambda line: print("peers:", line))
        record["list_walk"] = measure_list_walk(server.client())
    finally:
        server.stop()
    if store:
        save_growth(record)
    return keys_of(record)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, FULL_SIZES)))
    parser.add_argument("--per-size", type=int, default=30)
    parser.add_argument("--batches", type=int, default=BATCHES)
    parser.add_argument("--list-walk", action="store_true", help="measure only LINDEX and LINSERT on a long list")
    args = parser.parse_args()
    if args.list_walk:
        print(json.dumps(bench_list_walk(), indent=2))
        return 0
    sizes = tuple(int(part) for part in args.sizes.split(","))
    print(json.dumps(bench_peers(sizes, args.per_size, batches=args.batches), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
