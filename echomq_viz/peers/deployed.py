"""What notebook 10 runs through each library's own worker (I/O).

:func:`run_workers` runs the workload through every library's worker, and
the probes: what each library does with priorities at and just past the
edges of its range, with the settings its users reach for, and when its
worker dies at the wrong moment. Each run is on a private Redis of its own
(:mod:`.workers`); the sentences the notebook prints about them are made
from the runs by :mod:`.telling` (never typed).
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Sequence

from echomq_viz.peers.deployments import (
    BullMQPyDeployment, CeleryDeployment, HueyDeployment, NodeDeployment, RQDeployment,
)
from echomq_viz.peers.node import node_missing
from echomq_viz.peers.workers import WorkerRun, run_all
from echomq_viz.peers.workload import WorkJob

__all__ = ["run_workers", "plans", "MAIN", "CELERY_PROBE", "CELERY_STEPS_PROBE", "CELERY_DEFAULT_PROBE",
           "MAX_PRIORITY_PROBE", "PREFETCH_LOW", "PREFETCH_RUNS", "BULL_ZERO", "BULL_NEGATIVE", "BULLMQ_NODE_PROBE",
           "BULLMQ_PY_PROBE", "FIFO_NAMES", "RQ_AT_FRONT", "RQ_KILLED", "accepted", "before", "unacked_names",
           "huey_plain_priority", "score_lines"]

RQ_LEVELS = ("high", "mid", "low")
MAIN = ("celery", "celery10", "rq", "huey", "bull", "bullmq-node", "bullmq-py")  # the workload, as deployed
CELERY_PROBE = (("one", 1), ("no-priority", None), ("nine", 9), ("zero", 0), ("ten", 10), ("twelve", 12),
                ("fifteen", 15), ("minus-three", -3), ("five", 5))
CELERY_STEPS_PROBE = (("two", 2), ("one-and-a-half", 1.5), ("one", 1), ("no-priority", None))
CELERY_DEFAULT_PROBE = (("five", 5), ("send_task", None), ("apply_async", None))  # task_default_priority=9
MAX_PRIORITY_PROBE = (("nine", 9), ("five", 5), ("four", 4), ("zero", 0))
PREFETCH_LOW = tuple((f"low{i}", 9) for i in range(1, 9))
# The settings a Celery user reaches for when an urgent task waits: run key -> (label, settings)
PREFETCH_RUNS = {
    "celery-prefetch-4": ("worker_prefetch_multiplier=4 (the default, not set)", {}),
    "celery-prefetch-1": ("worker_prefetch_multiplier=1", {"prefetch": 1}),
    "celery-prefetch-1-late": ("worker_prefetch_multiplier=1, task_acks_late=True", {"prefetch": 1, "acks_late": True}),
    "celery-no-prefetch": ("worker_disable_prefetch=True (celery worker --disable-prefetch)", {"no_prefetch": True}),
}
BULL_ZERO = (("zero", 0), ("no-priority", None), ("two", 2), ("one", 1))
BULL_NEGATIVE = (("one", 1), ("minus-one", -1), ("one-and-a-half", 1.5))
BULLMQ_NODE_PROBE = (("two", 2), ("2²¹", 2**21), ("2²¹−1", 2**21 - 1), ("minus-one", -1), ("one", 1),
                     ("zero", 0), ("no-priority", None), ("−2³¹", -2**31), ("−2³¹−1", -2**31 - 1))
BULLMQ_PY_PROBE = (("two", 2), ("2²¹", 2**21), ("2³¹", 2**31), ("one-and-a-half", 1.5), ("minus-one", -1),
                   ("one", 1), ("zero", 0), ("no-priority", None))
FIFO_NAMES = tuple(f"a{i:02d}" for i in range(1, 13))  # twelve jobs of one priority, added a01..a12
RQ_AT_FRONT = (("a", "low"), ("b", "low"), ("m", "mid"), ("urgent", "low at_front"))
RQ_KILLED = (("lost", "high"), ("next", "mid"))
PROBE = {"late": None, "patience": 5.0}  # a job the worker never takes is a finding, not a hang


def plans(jobs: Sequence[WorkJob], *, node: bool = True) -> list[tuple[str, Any, list, dict]]:
    """``(name, make, jobs, options)`` for every run: the workload through each worker, then the probes."""
    tier = [(job.name, job.tier) for job in jobs]
    levels = [(job.name, RQ_LEVELS[job.tier - 1]) for job in jobs]
    main = [
        ("celery", lambda: CeleryDeployment(), tier, {}),
        ("celery10", lambda: CeleryDeployment(steps=True), tier, {}),
        ("rq", lambda: RQDeployment(), levels, {}),
        ("huey", lambda: HueyDeployment(), [(job.name, 4 - job.tier) for job in jobs], {}),
        ("bullmq-py", lambda: BullMQPyDeployment(), tier, {}),
    ]
    celery = [
        ("celery-probe", lambda: CeleryDeployment(label="Celery, default settings"), list(CELERY_PROBE), PROBE),
        ("celery10-probe", lambda: CeleryDeployment(steps=True), list(CELERY_STEPS_PROBE), PROBE),
        ("celery-default-priority",
         lambda: CeleryDeployment(steps=True, default_priority=9, via_task=["apply_async"],
                                  label="Celery, ten steps and task_default_priority=9"),
         list(CELERY_DEFAULT_PROBE), PROBE),
        ("celery-max-priority",
         lambda: CeleryDeployment(steps=True, max_priority=3, label="Celery, ten steps and task_queue_max_priority=3"),
         list(MAX_PRIORITY_PROBE), PROBE),
    ]
    prefetch = [(key, lambda label=label, options=options: CeleryDeployment(gate=True, label=f"Celery, {label}",
                                                                             **options),
                 list(PREFETCH_LOW), {"late": None, "expect": len(PREFETCH_LOW) + 1, "between": _send_urgent})
                for key, (label, options) in PREFETCH_RUNS.items()]
    rq = [(f"rq-{name}", make, levels, {"late": None}) for name, make in (
        ("burst", lambda: RQDeployment(burst=True)),
        ("round_robin", lambda: RQDeployment(burst=True, strategy="round_robin")),
        ("random", lambda: RQDeployment(burst=True, strategy="random")))]
    rq += [("rq-at-front", lambda: RQDeployment(burst=True), list(RQ_AT_FRONT), {"late": None}),
           ("rq-killed", lambda: RQDeployment(killed=True), list(RQ_KILLED), {"late": None, "expect": 1})]
    bullmq = [("bullmq-py-probe", lambda: BullMQPyDeployment(), list(BULLMQ_PY_PROBE), PROBE),
              ("bullmq-py-fifo", lambda: BullMQPyDeployment(), [(name, 2**31) for name in FIFO_NAMES], PROBE)]
    if node:
        main[4:4] = [("bull", lambda: NodeDeployment("bull"), tier, {}),
                     ("bullmq-node", lambda: NodeDeployment("bullmq"), tier, {})]
        bullmq += [("bull-zero", lambda: NodeDeployment("bull"), list(BULL_ZERO), PROBE),
                   ("bull-negative", lambda: NodeDeployment("bull"), list(BULL_NEGATIVE), PROBE),
                   ("bullmq-node-probe", lambda: NodeDeployment("bullmq"), list(BULLMQ_NODE_PROBE), PROBE),
                   ("bullmq-node-fifo", lambda: NodeDeployment("bullmq"), [(name, -2**31) for name in FIFO_NAMES],
                    PROBE)]
    # The longest first: BullMQ's Python probe waits out PROBE's patience (a job its worker never
    # takes), RQ forks a process per job, the prefetch runs hold their first task at a gate.
    patient = [plan for plan in bullmq if plan[0] == "bullmq-py-probe"]
    return patient + rq + prefetch + main + celery + [plan for plan in bullmq if plan not in patient]


def unacked_names(client: Any) -> list[str]:
    """The tasks kombu holds as unacknowledged (its ``unacked`` hash), by the name each was sent with."""
    names = []
    for value in client.hvals("unacked"):
        message = json.loads(value)[0]
        args = json.loads(base64.b64decode(message["body"]))[0]
        names.append(args[0])
    return sorted(names)


def _send_urgent(client: Any, deployment: Any, settle: float = 1.0, timeout: float = 20.0) -> None:
    """Once the first low task runs (held at the deployment's gate), and the worker holds,
    unchanged for ``settle`` seconds, what its settings let it take ahead: note what it
    holds, send one urgent task (priority 0), then open the gate."""
    deadline = time.monotonic() + timeout
    try:
        while not client.llen("viz10:started"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{deployment.label}: the first task did not start within {timeout:.0f} s")
            time.sleep(0.01)
        held, since = None, time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < settle:
            now = unacked_names(client)
            if now != held:
                held, since = now, time.monotonic()
            time.sleep(0.02)
        deployment.notes = {"running": client.lindex("viz10:started", 0), "unacked": held}
        deployment.add([("urgent", 0)])
    finally:
        deployment.open_gate()


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


# -- what needs no worker -----------------------------------------------------------------------------


def huey_plain_priority(priority: int) -> str:
    """What huey's plain ``RedisHuey`` (no priority storage) does with a task given ``priority``,
    on a private Redis: "accepted, stored in <key> (<type>)" or its refusal."""
    import huey

    from echomq_viz.redis_side.server import RedisServer

    with RedisServer() as server:
        plain = huey.RedisHuey("viz", url=f"unix://{server.socket_path}")
        task = plain.task()(_noop)
        try:
            task(priority=priority)
        except Exception as error:  # the library's own refusal, as it says it
            return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        finally:
            plain.storage.pool.disconnect()
        client = server.client()
        stored = {key: client.type(key) for key in client.scan_iter()}
        return "accepted, stored in " + ", ".join(f"{key} ({kind})" for key, kind in sorted(stored.items()))


def _noop() -> None:
    return None


def score_lines() -> dict[str, str]:
    """The line of each installed BullMQ that computes a prioritized job's score: the PyPI
    client's Lua (``addPrioritizedJob-9.lua``) and, with Node.js, npm bullmq's
    ``getPriorityScore.lua``. Read from the packages as installed."""
    from pathlib import Path

    import bullmq

    found = {}
    sources = {f"bullmq {bullmq.__version__} (PyPI)": Path(bullmq.__file__).parent / "commands"
               / "addPrioritizedJob-9.lua"}
    if node_missing() is None:
        from echomq_viz.peers.node import install_node_packages

        modules = install_node_packages() / "node_modules" / "bullmq"
        version = json.loads((modules / "package.json").read_text(encoding="utf-8"))["version"]
        sources[f"bullmq {version} (npm)"] = modules / "dist" / "cjs" / "commands" / "includes" / "getPriorityScore.lua"
    for label, path in sources.items():
        text = path.read_text(encoding="utf-8")
        found[label] = next(line.strip() for line in text.splitlines() if "0x100000000" in line and "prio" in line)
    return found
