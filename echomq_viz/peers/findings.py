"""Everything notebook 10 runs, made once per set of installed versions and read by every kernel (I/O).

The runs take half a minute of two cores (each library's worker on a private
Redis of its own, the probes, two local clusters); what they find depends only
on the installed libraries, Node.js, redis-server and this package's own code.
So :func:`peer_findings` makes them once for those versions, keeps them as JSON
in this user's cache folder (``~/.cache/echomq-viz/peers-runs/``, 0700), and
every later kernel (a JupyterLab Run All, each visitor of ``echomq-viz app``,
an export) reads the same file. A second kernel asking while the first makes
them waits for it (one process at a time), then reads. ``fresh=True`` makes
them again. ``python -m echomq_viz.peers.findings`` makes them (and draws the
growth figure, :func:`~echomq_viz.peers.view.growth_png`) ahead of any visitor;
:func:`prepare_in_background` starts that, for the app's start.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from echomq_viz.peers.npm import cache_root, one_process_at_a_time
from echomq_viz.peers.observe import OpSummary
from echomq_viz.peers.runs import PeerRun
from echomq_viz.peers.workers import Sent, WorkerRun
from echomq_viz.peers.workload import WorkJob, workload

__all__ = ["Findings", "peer_findings", "make_findings", "cache_key", "cache_path", "encode", "decode",
           "kombu_takes", "prepare_in_background", "main", "FORMAT"]

FORMAT = 1  # the file's layout: a change makes every kept file stale
KEEP = 4  # files of other versions kept beside the current one (two environments may share the folder)
PACKAGE = Path(__file__).resolve().parents[1]
# What the runs' results depend on in this package: a change to any of these files makes them anew
SOURCES = ("peers", "experiments", "redis_side", "core")
# ... but for the peers' modules that only read the runs (a change to what is made here bumps FORMAT)
READERS = {"telling.py", "table.py", "view.py", "plots.py", "growth.py", "growth.json", "findings.py"}
KEEP_EVERY_LINE = ("rq-burst",)
LIBRARIES = ("celery", "kombu", "rq", "huey", "bullmq", "redis", "hiredis")


@dataclass
class Findings:
    """What notebook 10 reads: every worker run (name -> run), the workload called directly
    through each library's take function (for the pop orders and the table), the cluster
    tries, the installed BullMQs' score lines, plain huey's answer to a priority, and kombu's
    two ways to take a message."""

    workers: dict
    runs: list
    cluster: list  # (what was tried, its outcome)
    scores: dict  # package -> the line computing a prioritized job's score
    huey_plain: dict  # priority -> what RedisHuey did with it
    kombu: dict  # "get()" / "get_nowait()" -> the commands of one take
    versions: dict = field(default_factory=dict)  # what the key was made of, for the curious


def kombu_takes(client: Any) -> dict[str, list[str]]:
    """kombu's ``SimpleQueue`` on ``client``'s server (priority order, default steps), a message
    of priority 5 waiting: the commands of one ``get()`` (which blocks) and one ``get_nowait()``,
    as MONITOR saw them (keys without this queue's prefix)."""
    from echomq_viz.peers.kombu_peer import KombuPeer
    from echomq_viz.peers.observe import CommandLog

    taken = {}
    with KombuPeer(client) as peer:
        peer.reset()
        with CommandLog(client, peer.tag) as log:
            for kind, take in (("get()", lambda: peer.queue.get(timeout=2)),
                               ("get_nowait()", lambda: peer.queue.get_nowait())):
                peer.queue.put({"name": kind}, priority=5)
                log.mark(kind)
                message = take()
                log.pause()
                message.ack()
        for operation in log.operations:
            taken[operation.kind] = [line.text.replace(peer.prefix, "") for line in operation.lines
                                     if not line.in_script]
        peer.reset()
    return taken


def make_findings(jobs: Sequence[WorkJob]) -> Findings:
    """Every run, now: the workers and probes, then the direct calls and kombu's takes on a
    private Redis, then the clusters."""
    from echomq_viz.peers import observe_all, peer_makers
    from echomq_viz.peers.cluster_probes import try_on_cluster
    from echomq_viz.peers.deployed import huey_plain_priority, run_workers, score_lines
    from echomq_viz.redis_side.server import RedisServer

    workers = run_workers(jobs)
    with RedisServer() as server:
        client = server.client()
        runs = observe_all(peer_makers(client), jobs)
        kombu = kombu_takes(client)
    # kept small, so every kernel reads it fast: a run's every MONITOR line only where the
    # notebook reads it (RQ's burst worker, its pops job by job), no direct call's command log
    workers = {name: run if name in KEEP_EVERY_LINE else dataclasses.replace(run, worker=())
               for name, run in workers.items()}
    runs = [dataclasses.replace(run, operations=()) for run in runs]
    return Findings(workers=workers, runs=runs, cluster=try_on_cluster(), scores=score_lines(),
                    huey_plain={str(p): huey_plain_priority(p) for p in (1, 0)}, kombu=kombu,
                    versions=_versions())


# -- the key: what the findings depend on ---------------------------------------------------------------


def _tool_version(argv: Sequence[str]) -> str:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "absent"


def _versions() -> dict[str, str]:
    """Every version the findings depend on, and a digest of this package's sources they run."""
    from echomq_viz.redis_side.lua_loader import LUA_DIR
    from echomq_viz.redis_side.server import find_redis_server

    found = {"format": str(FORMAT), "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "absent"
    server = find_redis_server()
    found["redis-server"] = f"{server}: {_tool_version([server, '--version'])}"
    node = shutil.which("node")
    found["node"] = _tool_version([node, "--version"]) if node and shutil.which("npm") else "absent"
    digest = hashlib.sha256()
    files = [path for folder in SOURCES for path in sorted((PACKAGE / folder).rglob("*"))
             if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".js", ".json", ".lua")
             and not (path.parent.name == "peers" and path.name in READERS)]
    for path in files + sorted(Path(LUA_DIR).rglob("*.lua")):
        digest.update(str(path.relative_to(path.parents[1])).encode() + b"\0" + path.read_bytes() + b"\0")
    found["sources"] = digest.hexdigest()[:16]
    return found


def cache_key(versions: dict[str, str] | None = None) -> str:
    versions = _versions() if versions is None else versions
    return hashlib.sha256(json.dumps(versions, sort_keys=True).encode()).hexdigest()[:20]


def _folder(cache_dir: Path | None = None) -> Path:
    folder = (cache_dir or cache_root()) / "peers-runs"
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)  # MONITOR lines of this user's runs: nobody else's to read
    return folder


def cache_path(jobs: Sequence[WorkJob], cache_dir: Path | None = None, key: str | None = None) -> Path:
    """The file of the findings for ``jobs`` and the installed versions."""
    workload_id = hashlib.sha256(repr([dataclasses.astuple(job) for job in jobs]).encode()).hexdigest()[:8]
    return _folder(cache_dir) / f"{key or cache_key()}-{workload_id}.json"


# -- JSON, both ways ---------------------------------------------------------------------------------------

_TYPES = {cls.__name__: cls for cls in (Findings, WorkerRun, PeerRun, Sent, WorkJob, OpSummary)}


def encode(value: Any) -> Any:
    """``value`` as JSON data: a dataclass of this module's kinds, a tuple and a dict with keys
    that are not text each marked, so :func:`decode` gives back an equal value."""
    if dataclasses.is_dataclass(value) and type(value).__name__ in _TYPES:
        return {"__type__": type(value).__name__,
                **{f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            if "__type__" in value or "__tuple__" in value or "__items__" in value:
                raise ValueError("a dict key may not be __type__, __tuple__ or __items__")
            return {key: encode(item) for key, item in value.items()}
        return {"__items__": [[encode(key), encode(item)] for key, item in value.items()]}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"cannot keep a {type(value).__name__} in the findings")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(item) for item in data]
    if isinstance(data, dict):
        if "__tuple__" in data:
            return tuple(decode(item) for item in data["__tuple__"])
        if "__items__" in data:
            return {decode(key): decode(item) for key, item in data["__items__"]}
        if "__type__" in data:
            kind = _TYPES.get(data["__type__"])
            if kind is None:
                raise ValueError(f"unknown kind {data['__type__']!r} in the findings")
            return kind(**{key: decode(item) for key, item in data.items() if key != "__type__"})
        return {key: decode(item) for key, item in data.items()}
    return data


def _read(path: Path) -> Findings | None:
    try:
        found = decode(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):  # absent, half written by a killed run, or old
        return None
    return found if isinstance(found, Findings) else None


def _write(path: Path, findings: Findings) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(encode(findings), handle)
    partial.replace(path)
    others = sorted((p for p in path.parent.glob("*.json") if p != path), key=lambda p: p.stat().st_mtime)
    for old in others[:-KEEP] if len(others) > KEEP else []:
        old.unlink(missing_ok=True)


def peer_findings(jobs: Sequence[WorkJob] | None = None, *, fresh: bool = False,
                  cache_dir: Path | None = None) -> Findings:
    """The findings for ``jobs`` (default: the notebook's workload) and the installed versions:
    read from the cache, or made now (about half a minute) and kept. ``fresh=True`` makes
    them again whatever is kept. One process at a time makes them; the others wait, then read.
    Without a cache folder to write (a read-only home) they are made for this call alone."""
    jobs = list(workload() if jobs is None else jobs)
    if not jobs or not all(isinstance(job, WorkJob) for job in jobs):
        raise TypeError("jobs must be a non-empty list of WorkJob, as workload() returns")
    versions = _versions()
    try:
        path = cache_path(jobs, cache_dir, cache_key(versions))
    except OSError:  # no cache folder to be had (a read-only home): made here, kept nowhere
        found = make_findings(jobs)
        found.versions = versions
        return found
    if not fresh and (found := _read(path)) is not None:
        return found
    with one_process_at_a_time(path.parent):
        if not fresh and (found := _read(path)) is not None:  # made by another process meanwhile
            return found
        found = make_findings(jobs)
        found.versions = versions
        _write(path, found)
    return found


def prepare_in_background() -> subprocess.Popen:
    """``python -m echomq_viz.peers.findings`` as a child of this process (its own session,
    ended with SIGTERM when the thread that started it ends, so it never outlives its
    starter): the findings are made before the first visitor of notebook 10 asks."""
    from echomq_viz.redis_side._process import die_with_parent

    return subprocess.Popen([sys.executable, "-m", "echomq_viz.peers.findings"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=die_with_parent(signal.SIGTERM))


def _make(fresh: bool) -> None:
    """The runs (made, or found kept) and the growth figure, drawn once: no visitor's kernel loads matplotlib."""
    peer_findings(fresh=fresh)
    from echomq_viz.peers.growth import load_growth
    from echomq_viz.peers.view import growth_png

    growth_png(load_growth())


def main(argv: Sequence[str] | None = None) -> int:
    """Make (or find) the findings for the notebook's workload, and the growth figure; one line says where.

    The work runs in a thread of its own while this (the main) thread listens for a stop: Ctrl-C,
    or the SIGTERM this process gets when the app that started it ends, kill -9 included. A stop
    ends every worker the runs started, SIGKILL after a grace (:func:`.deployments.stop_every_worker`),
    then this process at once; the private servers go with it (their supervisors watch it)."""
    import argparse
    import threading

    from echomq_viz.redis_side._process import StopSignals

    parser = argparse.ArgumentParser(prog="python -m echomq_viz.peers.findings",
                                     description="Make notebook 10's runs once for the installed versions.")
    parser.add_argument("--fresh", action="store_true", help="make them again even if kept")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    path = cache_path(workload())
    failed: list[BaseException] = []

    def work() -> None:
        try:
            _make(args.fresh)
        except BaseException as error:  # raised again in the main thread
            failed.append(error)

    with StopSignals() as stop:
        making = threading.Thread(target=work, name="echomq-viz-findings", daemon=True)
        making.start()
        while making.is_alive():
            if stop.wait(0.25):
                from echomq_viz.peers.deployments import stop_every_worker

                stopped = stop_every_worker()
                print(f"notebook 10's runs: stopped before they were made ({stopped} worker(s) ended)",
                      file=sys.stderr, flush=True)
                # at once: the runs' threads would wait for workers that are gone
                os._exit(128 + stop.received[0])
    if failed:
        raise failed[0]
    print(f"notebook 10's runs: {path} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
