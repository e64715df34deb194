"""Notebook 10's growth run: seconds per add and per pop with n jobs waiting,
for every queue library, on one private Redis; stored for the notebook.

    python benchmarks/peers.py [--sizes 100,1000,10000,100000] [--per-size 30]

Writes ``echomq_viz/peers/growth.json`` (what notebook 10 shows as the stored
run) and returns, per library:

- ``peers_add_growth_<library>``, ``peers_pop_growth_<library>``: the cost at
  the largest size divided by the cost at the smallest (10^5 / 10^2), one run;
- ``peers_add_vs_packed_at_1e5_<library>``: its add at the largest size over
  the packed score's add there.

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
from echomq_viz.peers.growth import save_growth  # noqa: E402
from echomq_viz.server import RedisServer  # noqa: E402

QUICK_SIZES = (100, 1_000)


def keys_of(record: dict) -> dict[str, float]:
    """The benchmark keys of one growth record."""
    results = {}
    packed = record["libraries"].get("packed")
    for key, entry in record["libraries"].items():
        points = sorted(entry["points"])
        (_, add_low, pop_low), (_, add_high, pop_high) = points[0], points[-1]
        results[f"peers_add_growth_{key}"] = round(add_high / add_low, 2)
        results[f"peers_pop_growth_{key}"] = round(pop_high / pop_low, 2)
        if packed:
            results[f"peers_add_vs_packed_at_1e5_{key}"] = round(add_high / sorted(packed["points"])[-1][1], 2)
    return results


def bench_peers(sizes=FULL_SIZES, per_size: int = 30, store: bool = True) -> dict:
    server = RedisServer()
    server.start()
    try:
        record = measure_all(peer_makers(server.client()), sizes, per_size, log=lambda line: print("peers:", line))
    finally:
        server.stop()
    if store:
        save_growth(record)
    return keys_of(record)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, FULL_SIZES)))
    parser.add_argument("--per-size", type=int, default=30)
    args = parser.parse_args()
    sizes = tuple(int(part) for part in args.sizes.split(","))
    print(json.dumps(bench_peers(sizes, args.per_size), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
