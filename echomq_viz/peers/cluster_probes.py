"""Notebook 10's libraries on a Redis Cluster: which keys their commands name, in
which hash slots, and what a real local cluster answers them (I/O for the tries).

A cluster refuses a command, a ``MULTI``/``EXEC`` block or a script whose keys
sit in more than one hash slot (``CROSSSLOT``), and a node answers ``MOVED`` for
a key whose slot another node serves. :func:`slot_rows` reads, from the
``MONITOR`` lines of each worker run (:mod:`.workers`), the keys each library
names and the commands that name keys of two slots; :func:`try_on_cluster`
calls each Python library, and Celery's worker, on local clusters of one and
of three masters (:class:`~echomq_viz.redis_side.cluster.LocalCluster`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Sequence

from echomq_viz.peers.workers import WorkerRun

__all__ = ["slots_of", "keys_named", "names_one", "multi_key_commands", "named_keys", "slot_rows", "huey_storage_slots",
           "try_on_cluster", "library_path", "BRACED_PREFIX"]

BRACED_PREFIX = "{jobs}:"  # kombu's global_keyprefix for a cluster: one hash tag, so one slot

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX = re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{16,}\b")
_ONE_KEY = {"LPUSH", "RPUSH", "LPOP", "RPOP", "LLEN", "ZADD", "ZREM", "ZCARD", "ZPOPMIN", "HSET", "HMSET", "HGET",
            "HMGET", "HGETALL", "HDEL", "HINCRBY", "HINCRBYFLOAT", "SADD", "SREM", "SMEMBERS", "EXPIRE", "PERSIST",
            "GET", "SET", "INCR", "EXISTS", "XADD"}
_MOVES = {"RPOPLPUSH", "BRPOPLPUSH", "LMOVE", "BLMOVE", "SMOVE"}  # source, destination, ...


def slots_of(keys: Sequence[str]) -> dict[str, int]:
    """key -> its Redis Cluster hash slot (CRC16 of the key or its braced tag, as CLUSTER KEYSLOT computes)."""
    from redis.crc import key_slot

    return {key: key_slot(key.encode("utf-8", "surrogateescape")) for key in keys}


def _escaped(key: str) -> str:
    """``key`` as MONITOR prints it (a byte outside printable ASCII as ``\\xNN``)."""
    return "".join(c if c.isprintable() and ord(c) < 127 and c != '"' else f"\\x{ord(c):02x}" for c in key)


def _unescaped(word: str) -> str:
    """A key as Redis holds it, from MONITOR's text (``\\xNN`` back to its byte)."""
    return re.sub(r"\\x([0-9a-f]{2})", lambda match: chr(int(match.group(1), 16)), word)


def keys_named(words: Sequence[str], known: dict[str, str]) -> list[str]:
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


def names_one(key: str) -> bool:
    """Whether ``key`` belongs to one job or one worker: a part is a UUID or a long hex id
    (RQ's jobs and workers), or a number after a prefix and a queue name (Bull's and
    BullMQ's ``bull:<queue>:<id>``; kombu's ``jobs:1``, a step's list, is no job's)."""
    parts = re.split(r"[:.]", key)
    return any(_UUID.fullmatch(part) or _HEX.fullmatch(part) or (part.isdigit() and i >= 2)
               for i, part in enumerate(parts))


def _client_lines(run: WorkerRun) -> list[tuple[str, bool]]:
    """What the library sent (Lua's own lines left out): one add, the take after an empty
    queue, and a take in the middle of the run."""
    return [line for line in tuple(run.add) + tuple(run.late) + tuple(run.steady) if not line[1]]


def named_keys(run: WorkerRun) -> list[str]:
    """The keys the library's commands named in one add and its takes, those of one job
    or one worker (named by its id) set aside. Pure."""
    known = {_escaped(key): key for key in run.keys}
    return sorted({key for text, _ in _client_lines(run) for key in keys_named(text.split(" "), known)
                   if not names_one(key)})


def multi_key_commands(run: WorkerRun) -> list[str]:
    """What the library sent, outside Lua, that names keys in more than one hash
    slot, which a cluster refuses with CROSSSLOT: a command, a ``MULTI``/``EXEC``
    block (named ``MULTI/EXEC``), or a script by the keys it was given. Pure."""
    known = {_escaped(key): key for key in run.keys}
    found, block = set(), None
    for text, _ in _client_lines(run):
        words = text.split(" ")
        verb = words[0].upper()
        if verb == "MULTI":
            block = []
            continue
        if verb in ("EXEC", "DISCARD"):
            if block is not None and len(set(slots_of(block).values())) > 1:
                found.add("MULTI/EXEC")
            block = None
            continue
        named = keys_named(words, known)
        if block is not None:
            block.extend(named)
        elif len(set(slots_of(named).values())) > 1:
            found.add(verb)
    return sorted(found)


def slot_rows(runs: Sequence[WorkerRun]) -> list[tuple[str, int, int, str]]:
    """One row a run: (library, keys its commands named, hash slots they fall in, what names
    keys of two slots or "nothing"). Pure."""
    rows = []
    for run in runs:
        keys = named_keys(run)
        across = multi_key_commands(run)
        rows.append((run.label, len(keys), len(set(slots_of(keys).values())), ", ".join(across) or "nothing"))
    return rows


def huey_storage_slots() -> dict[str, int]:
    """The keys huey's Redis storage names by default (``PriorityRedisHuey("viz")``), with their slots."""
    import huey

    storage = huey.PriorityRedisHuey("viz", url="unix:///nonexistent/redis.sock").storage
    return slots_of([storage.queue_key, storage.schedule_key, storage.result_key, storage.counter_key])


# -- tried on real local clusters ---------------------------------------------------------------------


def library_path(error: BaseException, packages: Sequence[str] = ("kombu", "rq", "huey", "celery"),
                 last: int = 3) -> str:
    """Where in the library ``error`` arose: the last ``last`` function names of the deepest
    error's traceback that lie in ``packages`` (e.g. ``maybe_declare → queue_declare → _size``)."""
    while (error.__cause__ or error.__context__) is not None:
        error = error.__cause__ or error.__context__
    names = [frame.name for frame in traceback.extract_tb(error.__traceback__)
             if any(f"{os.sep}{package}{os.sep}" in frame.filename for package in packages)]
    return _path(names, last)


def _path(names: Sequence[str], last: int = 3) -> str:
    """The last ``last`` of ``names``, a name repeated at once (a wrapper of the same name) said once."""
    kept = [name for i, name in enumerate(names) if i == 0 or names[i - 1] != name]
    return " → ".join(kept[-last:])


def _outcome(action: Callable[[], Any]) -> str:
    """``"ok"``, or the error's class and first line and where in the library it arose."""
    try:
        action()
    except Exception as error:  # the library's own error, reported as it is
        line = (str(error).splitlines() or [""])[0]
        path = library_path(error)
        return f"{type(error).__name__}: {line}" + (f" (in {path})" if path else "")
    return "ok"


def _celery_worker(url: str, settings: dict, seconds: float = 20.0) -> str:
    """``celery worker`` on the cluster node at ``url`` (its password stays in the
    environment, never printed): "ran <names>" once it ran what was sent, else how it ended,
    read from its log (the error's class and where in kombu, nothing else of it)."""
    from echomq_viz.peers.celery_app import DONE
    from echomq_viz.peers.deployments import spawn_worker, stop_spawned_worker

    import redis

    conf = {**settings, "broker_url": url}
    env = {**os.environ, "ECHOMQ_VIZ_CELERY": json.dumps(conf), "ECHOMQ_VIZ_PEER_URL": url}
    done = redis.Redis.from_url(url, decode_responses=True)
    with tempfile.TemporaryDirectory(prefix="echomq-viz-celery-") as folder, \
            open(os.path.join(folder, "log"), "w+", encoding="utf-8") as log:
        worker = spawn_worker([sys.executable, "-m", "celery", "-A", "echomq_viz.peers.celery_app", "worker",
                               "--loglevel=WARNING"], env, output=log)
        try:
            deadline = time.monotonic() + seconds
            while worker.poll() is None and not done.llen(DONE) and time.monotonic() < deadline:
                time.sleep(0.05)
            ran = done.lrange(DONE, 0, -1)
        finally:
            stop_spawned_worker(worker)  # SIGKILL if its warm shutdown hangs: the probe has what it needs
            done.close()
        if ran:
            return "ok: the worker ran it"
        log.seek(0)
        text = log.read()
    errors = re.findall(r"^[\w.]+\.(\w+(?:Error|Exception)): (.*)$", text, re.M)
    frames = re.findall(r'File "[^"]*/kombu/[^"]*", line \d+, in (\w+)', text)
    if not errors:
        return f"the worker ran nothing in {seconds:.0f} s (exit code {worker.returncode})"
    name, line = errors[-1]
    return f"{name}: {line} (in {_path(frames)}); the worker exited (code {worker.returncode})"


def try_on_cluster() -> list[tuple[str, str]]:
    """Each Python library tried as its users call it on a local cluster of one master (every
    slot on one node, so keys of two slots in one command get CROSSSLOT, as on any cluster),
    and huey on one of three masters: (what was tried, "ok" or the error and where it arose)."""
    import redis
    from celery import Celery
    from huey import PriorityRedisHuey
    from rq import Queue

    from echomq_viz.peers.deployments import celery_settings, celery_conf
    from echomq_viz.peers.worker_apps import record_huey
    from echomq_viz.redis_side.cluster import LocalCluster

    outcomes = []
    with LocalCluster(1) as cluster:
        url = f"redis://:{cluster.password}@127.0.0.1:{cluster.nodes[0].port}/0"  # never printed
        plain = celery_conf(celery_settings(), url)
        braced = celery_conf(celery_settings(keyprefix=BRACED_PREFIX), url)
        for label, conf in (("Celery", plain), (f"Celery, global_keyprefix '{BRACED_PREFIX}'", braced)):
            app = Celery("viz-cluster")
            app.conf.update(conf)
            outcomes.append((f"{label}: send_task(priority=3)",
                             _outcome(lambda: app.send_task("record", args=("sent",), priority=3))))
            app.close()
            outcomes.append((f"{label}: celery worker", _celery_worker(url, conf)))
        node = cluster.node_client(0, decode_responses=False)
        outcomes.append(("RQ: Queue('mid').enqueue",
                         _outcome(lambda: Queue("mid", connection=node).enqueue(
                             "echomq_viz.peers.worker_apps.record", "x"))))
        node.close()
        huey = PriorityRedisHuey("viz", url=url)
        task = huey.task(name="record")(record_huey)
        outcomes.append(("huey, one master: add (priority=2) and pop",
                         _outcome(lambda: (task("x", priority=2), huey.dequeue()))))
        huey.storage.pool.disconnect()
    with LocalCluster(3) as cluster:
        queue_key = PriorityRedisHuey("viz", url="unix:///nonexistent").storage.queue_key
        other = next(i for i in range(3) if i != cluster.owner_index(queue_key))
        url = f"redis://:{cluster.password}@127.0.0.1:{cluster.nodes[other].port}/0"
        huey = PriorityRedisHuey("viz", url=url)
        task = huey.task(name="record")(record_huey)
        outcome = _outcome(lambda: task("x", priority=2))
        outcomes.append((f"huey, three masters: add through node {other + 1} (its queue's slot is on node "
                         f"{cluster.owner_index(queue_key) + 1})",
                         re.sub(r" \d+\.\d+\.\d+\.\d+:\d+", " <node>", outcome)))
        huey.storage.pool.disconnect()
    return outcomes
