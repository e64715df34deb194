"""Bull (npm ``bull`` 4.x), in Node.js: a wait list kept in priority order by ``LINSERT``.

``queue.add(data, {priority})`` runs Bull's ``addJob`` script: it adds the job
to a priority sorted set, counts the jobs of equal or better priority there
(``ZCOUNT``), and ``LINSERT``s the job into the wait list at that position;
a worker takes from the list's end. BullMQ 4 replaced this insert with the
prioritized sorted set and its packed score. Configured with
``prefix: 'emq'`` and the queue named ``{viz-10-bull@…}``, Bull's keys are
``emq:{viz-10-bull@…}:<type>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from echomq_viz.peers.base import Peer, connection_params
from echomq_viz.peers.node import NodeRunner
from echomq_viz.peers.workload import WorkJob

__all__ = ["BullPeer", "bull_source"]


class BullPeer(Peer):
    key = "bull"
    label = "Bull (Node.js)"
    tier_means = "priority=tier (1 is served first)"
    levels = "positive numbers (ZCOUNT over the priority set); 0 means none, served last"
    default_names = "bull:<queue>:<type>"
    configured = "prefix: 'emq', queue name '{viz-10-bull@…}' (Bull's own advice for Redis Cluster)"

    def __init__(self, client: Any = None, cache_dir: Path | None = None) -> None:
        super().__init__(client)
        self.runner = NodeRunner(cache_dir)
        try:
            opened = self.runner.request("open", redis=connection_params(self.client), prefix="emq",
                                         queue=f"{{{self.tag}}}")
        except BaseException:
            self.runner.close()
            raise
        self.library = f"bull {opened['bull']} (npm)"

    def _add(self, job: WorkJob) -> None:
        self.runner.request("add", job={"name": job.name, "priority": job.tier})

    def _pop(self) -> str | None:
        return self.runner.request("pop")

    def fill(self, jobs: Sequence[WorkJob]) -> None:
        self.runner.request("fill", jobs=[{"name": j.name, "priority": j.tier} for j in jobs])

    def timed(self, jobs: Sequence[WorkJob]) -> tuple[float, float]:
        result = self.runner.request("timed", jobs=[{"name": j.name, "priority": j.tier} for j in jobs])
        return result["add"], result["pop"]

    def time_adds(self, jobs: Sequence[WorkJob]) -> list[float]:
        # timed in Node.js, so the pipe to the runner is not counted
        return self.runner.request("timed_adds", jobs=[{"name": j.name, "priority": j.tier} for j in jobs])

    def time_pops(self, count: int) -> list[float]:
        return self.runner.request("timed_pops", count=count)

    def default_key(self, key: str) -> str:
        return "bull:queue:" + key[len(self.prefix):]

    def close(self) -> None:
        self.runner.close()


def bull_source(relative: str = "includes/addJobWithPriority.lua", cache_dir: Path | None = None) -> str:
    """A Lua file of the installed ``bull`` package (under ``lib/commands/``), as Bull runs it."""
    from echomq_viz.peers.node import install_node_packages

    root = install_node_packages(cache_dir) / "node_modules" / "bull" / "lib" / "commands"
    path = (root / relative).resolve()
    if root.resolve() not in path.parents or path.suffix != ".lua":
        raise ValueError(f"relative must name a .lua file under bull's lib/commands/, got {relative!r}")
    return path.read_text(encoding="utf-8")
