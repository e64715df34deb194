"""One library through the workload, observed: pop order, keys, commands (I/O)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from echomq_viz.peers.base import Peer
from echomq_viz.peers.observe import CommandLog, OpSummary, key_types, summarize, write_commands
from echomq_viz.peers.workload import (
    WorkJob, correct_order, fifo_breaks, is_job_key, key_shape, slot_count, tier_breaks,
)

__all__ = ["PeerRun", "observe", "observe_all", "LEVELS_TRIED"]

LEVELS_TRIED = 10


@dataclass(frozen=True)
class PeerRun:
    """What one library did with the workload, every field measured."""

    key: str
    label: str
    library: str
    configured: str
    tier_means: str
    jobs: tuple[WorkJob, ...]
    order: tuple[str, ...]  # names in the order the library handed them out
    keys: dict  # key -> Redis type, after every job was added
    add: OpSummary
    pop: OpSummary
    slots_configured: int  # hash slots of the keys as configured here
    slots_default: int  # hash slots of the same keys under the library's default names
    queue_slots_default: int  # the same for the queue's own keys, every job's key set aside
    job_keys: bool  # whether each job has a key of its own (named by its id)
    default_names: str
    levels: str
    levels_kept: int  # of LEVELS_TRIED levels, added worst first, how many came out apart
    operations: tuple = ()  # (kind, ((command, ran inside Lua, text), ...)) per add and pop, in order

    def commands_of(self, kind: str) -> list[list[tuple[str, bool]]]:
        """The commands of each ``kind`` operation (``"add"`` or ``"pop"``), in order."""
        return [[(name, lua) for name, lua, _ in lines] for op_kind, lines in self.operations if op_kind == kind]

    def texts_of(self, kind: str) -> list[list[str]]:
        """What MONITOR showed of each ``kind`` operation's commands, in order."""
        return [[text for _, _, text in lines] for op_kind, lines in self.operations if op_kind == kind]

    @property
    def key_tag(self) -> str:
        """The hash tag of the queue's keys, ``viz-10-<key>@<owner>``."""
        first = next(iter(self.keys))
        return first[first.index("{") + 1:first.index("}")]

    @property
    def right(self) -> tuple[str, ...]:
        return tuple(correct_order(self.jobs))

    @property
    def correct(self) -> bool:
        return self.order == self.right

    @property
    def fifo_breaks(self) -> int:
        return fifo_breaks(self.jobs, self.order)

    @property
    def tier_breaks(self) -> int:
        return tier_breaks(self.jobs, self.order)

    @property
    def prefix(self) -> str:
        return f"emq:{{viz-10-{self.key}@"

    def key_layout(self) -> dict[tuple[str, str], int]:
        """``(key shape, type) -> how many keys``, job ids written ``<id>``."""
        cut = {key: key[key.index("}:") + 2:] for key in self.keys}
        return dict(sorted(Counter((key_shape(cut[key], ""), kind) for key, kind in self.keys.items()).items()))

    def type_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(self.keys.values()).items()))


def observe(peer: Peer, jobs: Sequence[WorkJob]) -> PeerRun:
    """Empty ``peer``'s queue, add ``jobs`` one by one, read its keys, pop them
    all; MONITOR files every command under its add or pop. The workload runs
    once before, unobserved, so one-time work (loading scripts, naming
    connections) is not counted as the cost of an add or a pop."""
    if not isinstance(peer, Peer):
        raise TypeError(f"peer must be a Peer (e.g. peer_makers()[0]()), got {type(peer).__name__}")
    jobs = list(jobs) if isinstance(jobs, (list, tuple)) else jobs
    if not isinstance(jobs, list) or not jobs or not all(isinstance(job, WorkJob) for job in jobs):
        raise TypeError("jobs must be a non-empty list of WorkJob, as workload() returns")
    peer.reset()
    peer.add_all(jobs)  # once unobserved: scripts get loaded, connections named
    peer.pop_all(len(jobs))
    peer.reset()
    with CommandLog(peer.client, peer.tag) as log:
        peer.add_all(jobs, log.mark)
        log.pause()
        keys = key_types(peer.client, peer.tag)
        order = peer.pop_all(len(jobs), log.mark, log.pause)
    levels_kept = peer.probe_levels(LEVELS_TRIED)
    writes = write_commands(peer.client, {line.name for op in log.operations for line in op.lines})
    return PeerRun(
        key=peer.key, label=peer.label, library=peer.library, configured=peer.configured,
        tier_means=peer.tier_means, jobs=tuple(jobs), order=tuple(order), keys=keys,
        add=summarize(log.operations, "add", writes), pop=summarize(log.operations, "pop", writes),
        slots_configured=slot_count(keys), slots_default=slot_count(peer.default_key(k) for k in keys),
        queue_slots_default=slot_count(peer.default_key(k) for k in keys if not is_job_key(k)),
        job_keys=any(is_job_key(k) for k in keys),
        default_names=peer.default_names, levels=peer.levels, levels_kept=levels_kept,
        operations=tuple((op.kind, tuple((line.name, line.in_script, line.text) for line in op.lines))
                         for op in log.operations),
    )


def observe_all(makers: Sequence, jobs: Sequence[WorkJob]) -> list[PeerRun]:
    """:func:`observe` each peer ``makers`` make (callables), closing each after its run."""
    runs = []
    for make in makers:
        with make() as peer:
            runs.append(observe(peer, jobs))
    return runs
