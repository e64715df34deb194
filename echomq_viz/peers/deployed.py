"""What notebook 10 runs through each library's own worker, and how it reads the results (I/O, then pure).

:func:`run_workers` runs the workload through every library's worker, and
the probes: what each library does with priorities at and just past the
edges of its range. Every sentence the notebook prints about a library is
made by the functions here from those runs (never typed).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Sequence

from echomq_viz.peers.deployments import (
    BullMQPyDeployment, CeleryDeployment, HueyDeployment, NodeDeployment, RQDeployment,
)
from echomq_viz.peers.node import node_missing
from echomq_viz.peers.workers import BLOCKING, WorkerRun, before_each_record, run_all
from echomq_viz.peers.workload import WorkJob, correct_order

__all__ = ["run_workers", "plans", "CELERY_PROBE", "BULL_ZERO", "BULL_NEGATIVE", "BULLMQ_NODE_PROBE",
           "BULLMQ_PY_PROBE", "BULLMQ_PY_FIFO", "accepted", "versions_rows", "take_text", "slots_of",
           "huey_plain_priority", "before", "settings_text", "worker_text", "cluster_text", "multi_key_commands",
           "huey_storage_slots", "burst_takes", "burst_text",
           "PREFETCH_LOW", "first_take", "score_lines", "try_on_cluster"]

RQ_LEVELS = ("high", "mid", "low")
CELERY_PROBE = (("nine", 9), ("no-priority", None), ("zero", 0), ("ten", 10), ("twelve", 12), ("fifteen", 15),
                ("minus-three", -3), ("five", 5))
BULL_ZERO = (("zero", 0), ("no-priority", None), ("two", 2), ("one", 1))
BULL_NEGATIVE = (("one", 1), ("minus-one", -1), ("one-and-a-half", 1.5))
BULLMQ_NODE_PROBE = (("two", 2), ("2²¹", 2**21), ("2²¹ − 1", 2**21 - 1), ("minus-one", -1), ("one", 1),
                     ("zero", 0), ("no-priority", None))
BULLMQ_PY_PROBE = (("two", 2), ("2²¹", 2**21), ("2³¹", 2**31), ("one-and-a-half", 1.5), ("minus-one", -1),
                   ("one", 1), ("zero", 0), ("no-priority", None))
MAX_PRIORITY_PROBE = (("nine", 9), ("five", 5), ("four", 4), ("zero", 0))
PROBE = {"late": None, "patience": 5.0}  # a job the worker never takes is a finding, not a hang
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
    probes.append(("celery-max-priority",
                   lambda: CeleryDeployment(steps=True, max_priority=3,
                                            label="Celery, ten steps and task_queue_max_priority=3"),
                   list(MAX_PRIORITY_PROBE), PROBE))
    prefetch = [(f"celery-prefetch-{multiplier}",
                 lambda m=multiplier: CeleryDeployment(prefetch=m, gate=True,
                                                       label=f"Celery, worker_prefetch_multiplier={m}"),
                 list(PREFETCH_LOW), {"late": None, "expect": len(PREFETCH_LOW) + 1, "between": _send_urgent})
                for multiplier in (4, 1)]  # the default, and one
    if node:
        main[4:4] = [("bull", lambda: NodeDeployment("bull"), tier, {}),
                     ("bullmq-node", lambda: NodeDeployment("bullmq"), tier, {})]
        probes += [("bull-zero", lambda: NodeDeployment("bull"), list(BULL_ZERO), PROBE),
                   ("bull-negative", lambda: NodeDeployment("bull"), list(BULL_NEGATIVE), PROBE),
                   ("bullmq-node-probe", lambda: NodeDeployment("bullmq"), list(BULLMQ_NODE_PROBE), PROBE)]
    # rq worker --burst runs what is queued, then exits (no late job)
    burst = [("rq-burst", lambda: RQDeployment(burst=True), [(job.name, RQ_LEVELS[job.tier - 1]) for job in jobs],
              {"late": None})]
    # The longest runs start first: BullMQ's Python probe waits out PROBE's patience (a job its
    # worker never takes), RQ forks a process per job, the prefetch runs wait on their second task.
    patient = [plan for plan in probes if plan[0] == "bullmq-py-probe"]
    return patient + burst + prefetch + main + [plan for plan in probes if plan not in patient]


PREFETCH_LOW = tuple((f"low{i}", 9) for i in range(1, 9))


def _send_urgent(client: Any, deployment: Any) -> None:
    """Once the first low task ran, the next runs (it waits at the deployment's gate) and the
    worker holds as many more as it prefetches (with one process, ``worker_prefetch_multiplier``
    of them in kombu's ``unacked`` hash, the rest still in the priority-9 list): one urgent
    task (priority 0), then the gate opens and the worker goes on at its own pace."""
    held = next(value for name, value, _ in deployment.settings if name == "worker_prefetch_multiplier")
    waiting = len(PREFETCH_LOW) - 2 - held  # one ran, one runs, ``held`` are held
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (client.hlen("unacked") == held
                                                and client.llen("jobs\x06\x169") == waiting):
        time.sleep(0.005)
    try:
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


def versions_rows(runs: dict[str, WorkerRun]) -> list[tuple[str, str, str]]:
    """(library, version, how it was called) for each worker run of the workload."""
    return [(run.label, run.version, run.how) for name, run in runs.items() if "-" not in name or name in
            ("bullmq-py", "bullmq-node")]


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX = re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{16,}\b")
# ISO dates, unix seconds (with or without a fraction) and milliseconds of these years, and
# numbers of 15 digits or more (BullMQ's delayed-set bound, a clock reading times 4096)
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT[0-9:.+Z-]+|\b1[6-9]\d{8}(\d{3})?(\.\d+)?\b|\b\d{15,}\b")
# A job lock's value: the worker's token (Bull's a UUID; BullMQ's its worker id and a count of
# its fetches, which turns on timing: its fetches that came back empty count too)
_LOCK_TOKEN = re.compile(r"^(SET \S+:lock )\S+", re.IGNORECASE)


def _short(text: str, width: int = 64) -> str:
    """A MONITOR line as printed: a lock's token, ids, hashes and clock readings written <token>,
    <id>, <sha>, <time> (they differ on every run), bytes past the first escape cut, long lines cut."""
    text = _LOCK_TOKEN.sub(r"\1<token>", text)
    text = _UUID.sub("<id>", text)
    text = _HEX.sub("<sha>", text)
    text = _TIME.sub("<time>", text)
    if "\\x" in text:
        text = text[:text.index("\\x")] + "<bytes>"
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


_POPS = {"LPOP", "RPOP", "ZPOPMIN", "LMOVE", "RPOPLPUSH"} | BLOCKING


def burst_takes(run: WorkerRun) -> list[tuple[str, tuple[str, ...]]]:
    """For each job the worker ran, in order: its name, and the pop commands the worker sent
    since the job before it finished (each a MONITOR line), then the command after the last pop
    (RQ's ``HGETALL`` of the job it got). Pure."""
    takes = []
    for name, part in zip(run.order, before_each_record(run.worker)):
        texts = [text for text, lua in part if not lua]
        pops = [i for i, text in enumerate(texts) if text.split(" ", 1)[0].upper() in _POPS]
        takes.append((name, tuple(texts[pops[0]:pops[-1] + 2]) if pops else ()))
    return takes


def burst_text(run: WorkerRun, jobs: Sequence[WorkJob]) -> str:
    """RQ's burst worker: how many ``LPOP`` it sent before each job, by the job's tier, and how
    it took the first job of the least urgent tier, as MONITOR saw it. Pure."""
    tier = {job.name: job.tier for job in jobs}
    counts: dict[int, set[int]] = {}
    for name, take in burst_takes(run):
        counts.setdefault(tier[name], set()).add(sum(text.split(" ", 1)[0].upper() == "LPOP" for text in take))
    verdict = "the right order" if list(run.order) == correct_order(jobs) else "NOT the right order"
    lines = [f"{run.label} · {run.version} · {run.how}",
             f"  ran   {' '.join(run.order)}  ({verdict})",
             "  LPOPs sent for each job, by its tier: " + ", ".join(
                 f"tier {t}: {' or '.join(map(str, sorted(n)))}" for t, n in sorted(counts.items()))]
    first = next(((name, take) for name, take in burst_takes(run) if tier[name] == max(tier.values())), None)
    if first is not None:
        lines += [f"  how it took {first[0]} (tier {tier[first[0]]}), as MONITOR saw it:",
                  take_text([(text, False) for text in first[1]])]
    return "\n".join(lines)


def settings_text(run: WorkerRun) -> str:
    """The Celery settings a run set, one a line, each with where Celery documents it."""
    return "\n".join(f"  {name} = {value!r}\n      ({source})" for name, value, source in run.settings)


def first_take(lines: Sequence[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The take in ``lines``: the blocking command, then the next step (one command, a
    ``MULTI``/``EXEC`` block, or a script call with its Lua lines). Pure."""
    lines = list(lines)
    start = next((i for i, (text, lua) in enumerate(lines) if not lua
                  and text.split(" ", 1)[0].upper() in BLOCKING), 0)
    end = start + 1
    if end < len(lines):
        verb = lines[end][0].split(" ", 1)[0].upper()
        end += 1
        if verb == "MULTI":
            while end < len(lines) and lines[end - 1][0].split(" ", 1)[0].upper() != "EXEC":
                end += 1
        while end < len(lines) and lines[end][1]:
            end += 1
    return lines[start:end]


def worker_text(run: WorkerRun, right: Sequence[str]) -> str:
    """One worker run of the workload: its order against the right one, and how it took a job."""
    verdict = "the right order" if list(run.order[:len(right)]) == list(right) else "NOT the right order"
    lines = [f"{run.label} · {run.version} · {run.how}",
             f"  ran   {' '.join(run.order[:len(right)])}  ({verdict})",
             f"  right {' '.join(right)}",
             "  one add, as MONITOR saw it:", take_text(run.add),
             "  taking a job after the queue ran empty (the worker waiting on it), its first two steps:",
             take_text(first_take(run.late))]
    return "\n".join(lines)


def _names_one(key: str) -> bool:
    """Whether ``key`` belongs to one job or one worker (a part is a number, a UUID or a long hex id)."""
    return any(part.isdigit() or _UUID.fullmatch(part) or _HEX.fullmatch(part)
               for part in re.split(r"[:.]", key))


def cluster_text(run: WorkerRun) -> str:
    """How many hash slots the keys of one add and one take fall in (the keys named by a job's
    or a worker's id set aside: those spread over slots by their random ids)."""
    known = {_escaped(key): key for key in run.keys}
    named = {key for text, lua in tuple(run.add) + tuple(first_take(run.late)) if not lua
             for key in _keys_named(text.split(" "), known) if not _names_one(key)}
    slots = len(set(slots_of(sorted(named)).values()))
    return (f"{run.label}: one add and one take name {len(named)} key{'s' * (len(named) != 1)} "
            f"(ids set aside), in {slots} hash slot{'s' * (slots != 1)}")


def huey_storage_slots() -> dict[str, int]:
    """The keys huey's Redis storage names by default (``PriorityRedisHuey("viz")``), with their slots."""
    import huey

    storage = huey.PriorityRedisHuey("viz", url="unix:///nonexistent/redis.sock").storage
    return slots_of([storage.queue_key, storage.schedule_key, storage.result_key, storage.counter_key])


def _escaped(key: str) -> str:
    """``key`` as MONITOR prints it (a byte outside printable ASCII as ``\\xNN``)."""
    return "".join(c if c.isprintable() and ord(c) < 127 and c != '"' else f"\\x{ord(c):02x}" for c in key)


_ONE_KEY = {"LPUSH", "RPUSH", "LPOP", "RPOP", "LLEN", "ZADD", "ZREM", "ZCARD", "ZPOPMIN", "HSET", "HMSET", "HGET",
            "HMGET", "HGETALL", "HDEL", "HINCRBY", "HINCRBYFLOAT", "SADD", "SREM", "SMEMBERS", "EXPIRE", "PERSIST",
            "GET", "SET", "INCR", "EXISTS", "XADD"}


_MOVES = {"RPOPLPUSH", "BRPOPLPUSH", "LMOVE", "BLMOVE", "SMOVE"}  # source, destination, ...


def _unescaped(word: str) -> str:
    """A key as Redis holds it, from MONITOR's text (``\\xNN`` back to its byte)."""
    return re.sub(r"\\x([0-9a-f]{2})", lambda match: chr(int(match.group(1), 16)), word)


def _keys_named(words: Sequence[str], known: dict[str, str]) -> list[str]:
    """The keys a command (its MONITOR words) names: a script's by its key count, a blocking
    pop's every argument but the timeout, a move's source and destination, a one-key command's
    first argument, any other's the arguments that are keys the library wrote."""
    verb, args = words[0].upper(), [_unescaped(word) for word in words[1:]]
    if verb in ("EVAL", "EVALSHA") and len(args) > 1 and args[1].isdigit():
        return args[2:2 + int(args[1])]
    if verb in ("BRPOP", "BLPOP", "BZPOPMIN", "BZPOPMAX"):
        return args[:-1]
    if verb in _MOVES:  # named whether or not either list exists when the run's keys are read
        return args[:2]
    if verb in _ONE_KEY:
        return args[:1]
    return [known[word] for word in words[1:] if word in known]


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
        named = _keys_named(words, known)
        if block is not None:
            block.extend(named)
        elif len({key_slot(k.encode("utf-8", "surrogateescape")) for k in named}) > 1:
            found.add(verb)
    return sorted(found)


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


def try_on_cluster() -> dict[str, str]:
    """Each Python library's add (and huey's pop) tried on a one-master local Redis Cluster
    (every slot on one node, so keys of two slots in one command get CROSSSLOT, as on any
    cluster): label -> "ok" or the first line of the error."""
    import redis
    from celery import Celery
    from huey import PriorityRedisHuey
    from rq import Queue

    from echomq_viz.redis_side.cluster import LocalCluster
    from echomq_viz.peers.worker_apps import record_huey

    outcomes = {}
    with LocalCluster(1) as cluster:
        node = cluster.node_client(0, decode_responses=False)
        url = f"redis://:{cluster.password}@127.0.0.1:{cluster.nodes[0].port}/0"  # never printed

        def attempt(label, action):
            try:
                action()
                outcomes[label] = "ok"
            except (redis.exceptions.RedisError, OSError) as error:
                outcomes[label] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
            except Exception as error:  # kombu wraps the error it got from Redis
                outcomes[label] = f"{type(error).__name__}: {str(error).splitlines()[0]}"

        app = Celery("viz-cluster", broker=url)
        attempt("Celery, send_task(priority=3)", lambda: app.send_task("record", args=("x",), priority=3))
        app.close()
        attempt("RQ, Queue('mid').enqueue", lambda: Queue("mid", connection=node).enqueue(
            "echomq_viz.peers.worker_apps.record", "x"))
        huey = PriorityRedisHuey("viz", url=url)
        task = huey.task(name="record")(record_huey)
        attempt("huey, a task with priority=2, then the consumer's pop",
                lambda: (task("x", priority=2), huey.dequeue()))
        huey.storage.pool.disconnect()
    return outcomes
