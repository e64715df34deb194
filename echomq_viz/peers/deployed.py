"""What notebook 10 runs through each library's own worker, and how it reads the results (I/O, then pure).

:func:`run_workers` runs the workload through every library's worker, and
the probes: what each library does with priorities at and just past the
edges of its range. Every sentence the notebook prints about a library is
made by the functions here from those runs (never typed).
"""

from __future__ import annotations

from typing import Any, Sequence

from .deployments import BullMQPyDeployment, CeleryDeployment, HueyDeployment, NodeDeployment, RQDeployment
from .node import node_missing
from .workers import WorkerRun, run_all
from .workload import WorkJob

__all__ = ["run_workers", "plans", "CELERY_PROBE", "BULL_ZERO", "BULL_NEGATIVE", "BULLMQ_NODE_PROBE",
           "BULLMQ_PY_PROBE", "BULLMQ_PY_FIFO", "accepted", "versions_rows", "take_text", "slots_of",
           "huey_plain_priority", "before", "settings_text", "worker_text", "cluster_text", "multi_key_commands"]

RQ_LEVELS = ("high", "mid", "low")
CELERY_PROBE = (("nine", 9), ("no-priority", None), ("zero", 0), ("ten", 10), ("twelve", 12), ("fifteen", 15),
                ("minus-three", -3), ("five", 5))
BULL_ZERO = (("zero", 0), ("no-priority", None), ("two", 2), ("one", 1))
BULL_NEGATIVE = (("one", 1), ("minus-one", -1), ("one-and-a-half", 1.5))
BULLMQ_NODE_PROBE = (("two", 2), ("2^21", 2**21), ("2^21-1", 2**21 - 1), ("minus-one", -1), ("one", 1),
                     ("no-priority", None))
BULLMQ_PY_PROBE = (("two", 2), ("2^21", 2**21), ("2^31", 2**31), ("one-and-a-half", 1.5), ("minus-one", -1),
                   ("one", 1), ("no-priority", None))
PROBE = {"late": None, "patience": 3.0}  # a job the worker never takes is a finding, not a hang
BULLMQ_PY_FIFO = tuple((f"a{i:02d}", 2**31) for i in range(1, 13))


def plans(jobs: Sequence[WorkJob], *, node: bool = True) -> list[tuple[str, Any, list, dict]]:
    """``(name, make, jobs, options)`` for every run: the workload through each worker, then the probes."""
    tier = [(job.name, job.tier) for job in jobs]
    main = [
        ("celery", lambda: CeleryDeployment(), tier, {}),
        ("celery10", lambda: CeleryDeployment(steps=True), tier, {}),
        ("rq", lambda: RQDeployment(), [(job.name, RQ_LEVELS[job.tier - 1]) for job in jobs], {}),
        ("huey", lambda: HueyDeployment(), [(job.name, 4 - job.tier) for job in jobs], {}),
        ("bullmq-py", lambda: BullMQPyDeployment(), tier, {}),
    ]
    probes = [
        ("celery-probe", lambda: CeleryDeployment(label="Celery, priorities 0..9 and past them"),
         list(CELERY_PROBE), PROBE),
        ("bullmq-py-probe", lambda: BullMQPyDeployment(), list(BULLMQ_PY_PROBE), PROBE),
        ("bullmq-py-fifo", lambda: BullMQPyDeployment(), list(BULLMQ_PY_FIFO), PROBE),
    ]
    if node:
        main[4:4] = [("bull", lambda: NodeDeployment("bull"), tier, {}),
                     ("bullmq-node", lambda: NodeDeployment("bullmq"), tier, {})]
        probes += [("bull-zero", lambda: NodeDeployment("bull"), list(BULL_ZERO), PROBE),
                   ("bull-negative", lambda: NodeDeployment("bull"), list(BULL_NEGATIVE), PROBE),
                   ("bullmq-node-probe", lambda: NodeDeployment("bullmq"), list(BULLMQ_NODE_PROBE), PROBE)]
    return main + probes


def run_workers(jobs: Sequence[WorkJob], workers: int = 4) -> dict[str, WorkerRun]:
    """Every plan of :func:`plans`, each on its own private Redis; name -> run."""
    chosen = plans(jobs, node=node_missing() is None)
    runs = run_all([(make, jobs_, options) for _, make, jobs_, options in chosen], workers=workers)
    return {name: run for (name, *_), run in zip(chosen, runs)}


# -- reading the runs (pure) ------------------------------------------------------------------------


def accepted(run: WorkerRun) -> dict[str, str]:
    """name -> "ok" or the library's refusal, for each job the producer tried."""
    return {sent.name: sent.outcome for sent in run.sent}


def before(run: WorkerRun, first: str, second: str) -> bool:
    """Whether the worker ran ``first`` before ``second`` (both must have run)."""
    if first not in run.order or second not in run.order:
        raise ValueError(f"{first!r} and {second!r} must both have run, got {run.order}")
    return run.order.index(first) < run.order.index(second)


def versions_rows(runs: dict[str, WorkerRun]) -> list[tuple[str, str, str]]:
    """(library, version, how it was called) for each worker run of the workload."""
    return [(run.label, run.version, run.how) for name, run in runs.items() if "-" not in name or name in
            ("bullmq-py", "bullmq-node")]


def _short(text: str, width: int = 70) -> str:
    text = text.encode("unicode_escape").decode("ascii").replace("\\\\", "\\")
    return text if len(text) <= width else text[:width - 1] + "…"


def take_text(lines: Sequence[tuple[str, bool]]) -> str:
    """MONITOR lines as the notebook prints them: one a line, Lua's indented."""
    return "\n".join(("      in Lua: " if lua else "  ") + _short(text) for text, lua in lines)


def slots_of(keys: Sequence[str]) -> dict[str, int]:
    """key -> its Redis Cluster hash slot (CRC16 of the key or its braced tag, as CLUSTER KEYSLOT computes)."""
    from redis.crc import key_slot

    return {key: key_slot(key.encode("utf-8", "surrogateescape")) for key in keys}


def huey_plain_priority() -> str:
    """What huey's plain ``RedisHuey`` says to a task given a priority (no server needed: it refuses first)."""
    import huey

    plain = huey.RedisHuey("viz-plain", url="unix:///nonexistent/redis.sock")
    task = plain.task()(_noop)
    try:
        task(priority=1)
    except NotImplementedError as error:
        return f"NotImplementedError: {error}" if str(error) else "NotImplementedError"
    except Exception as error:  # anything else is reported as it is
        return f"{type(error).__name__}: {error}"
    return "accepted"


def _noop() -> None:
    return None


def settings_text(run: WorkerRun) -> str:
    """The Celery settings a run set, one a line, each with where Celery documents it."""
    return "\n".join(f"  {name} = {value!r}\n      ({source})" for name, value, source in run.settings)


def worker_text(run: WorkerRun, right: Sequence[str]) -> str:
    """One worker run of the workload: its order against the right one, and how it took a job."""
    verdict = "the right order" if list(run.order[:len(right)]) == list(right) else "NOT the right order"
    lines = [f"{run.label} · {run.version} · {run.how}",
             f"  ran   {' '.join(run.order[:len(right)])}  ({verdict})",
             f"  right {' '.join(right)}",
             "  one add, as MONITOR saw it:", take_text(run.add),
             "  taking a job after the queue ran empty (the worker waiting on it):", take_text(run.late)]
    return "\n".join(lines)


def cluster_text(run: WorkerRun) -> str:
    """How many hash slots the keys the library wrote fall in, and which keys share a command."""
    slots = slots_of(list(run.keys))
    queue_keys = {key: slot for key, slot in slots.items() if not any(part.isdigit() or len(part) == 36
                                                                       for part in key.replace(":", ".").split("."))}
    return (f"{run.label}: {len(run.keys)} keys written in {len(set(slots.values()))} hash slots; "
            f"its keys other than per-job ones: {len(queue_keys)} in {len(set(queue_keys.values()))} slots")


def _escaped(key: str) -> str:
    """``key`` as MONITOR prints it (a byte outside printable ASCII as ``\\xNN``)."""
    return "".join(c if c.isprintable() and ord(c) < 127 and c != '"' else f"\\x{ord(c):02x}" for c in key)


def multi_key_commands(run: WorkerRun) -> list[str]:
    """What the library sent, outside Lua, that names keys in more than one hash
    slot, which a cluster refuses with CROSSSLOT: a command, a ``MULTI``/``EXEC``
    block (named ``MULTI/EXEC``), or a script by the keys it was given. Pure."""
    from redis.crc import key_slot

    known = {_escaped(key): key for key in run.keys}
    found, block = set(), None
    for text, lua in tuple(run.add) + tuple(run.late) + tuple(run.steady):
        if lua:
            continue
        words = text.split(" ")
        verb = words[0].upper()
        if verb == "MULTI":
            block = []
            continue
        if verb in ("EXEC", "DISCARD"):
            if block is not None and len({key_slot(k.encode()) for k in block}) > 1:
                found.add("MULTI/EXEC")
            block = None
            continue
        args = words[1:]
        if verb in ("EVAL", "EVALSHA") and len(args) > 1 and args[1].isdigit():
            named = args[2:2 + int(args[1])]
        elif verb in ("BRPOP", "BLPOP", "BZPOPMIN", "BZPOPMAX"):
            named = args[:-1]  # every argument but the timeout is a key
        else:
            named = [known[word] for word in args if word in known]
        if block is not None:
            block.extend(named)
        elif len({key_slot(k.encode("utf-8", "surrogateescape")) for k in named}) > 1:
            found.add(verb)
    return sorted(found)
