"""Each library's producer and worker process, as its users start them (I/O).

Used by :func:`.workers.run_deployment`, one private Redis per library, so
every library keeps its default key names. Worker output goes to a pipe read
by nobody but this process (stderr of a worker is never shown to a reader).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Sequence

from echomq_viz.redis_side._process import die_with_parent, kill_group
from echomq_viz.peers.base import need
from echomq_viz.peers.workers import Deployment

__all__ = ["CeleryDeployment", "RQDeployment", "HueyDeployment", "NodeDeployment", "BullMQPyDeployment",
           "CELERY_DOCS", "CELERY_DOCS_PRIORITY", "KOMBU_REDIS_DOCS", "celery_settings", "celery_conf",
           "spawn_worker", "stop_spawned_worker", "stop_every_worker", "STOP_GRACE_S"]

CELERY_DOCS = "https://docs.celeryq.dev/en/stable/userguide/configuration.html#"
CELERY_DOCS_PRIORITY = "https://docs.celeryq.dev/en/stable/userguide/routing.html#redis-message-priorities"


KOMBU_REDIS_DOCS = "https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.transport.redis.html"


def celery_settings(*, steps: bool = False, prefetch: int | None = None, max_priority: int | None = None,
                    acks_late: bool = False, no_prefetch: bool = False, default_priority: int | None = None,
                    keyprefix: str | None = None) -> tuple[tuple[str, Any, str], ...]:
    """The Celery settings a run sets: (name, value, where Celery documents it).
    The broker's address is set too, but never shown (it is a private socket)."""
    settings = [("worker_concurrency", 1, CELERY_DOCS + "worker-concurrency"),
                ("task_default_queue", "jobs", CELERY_DOCS + "task-default-queue")]
    if steps:  # what Celery's routing guide gives for priorities on Redis
        settings.append(("broker_transport_options",
                         {"queue_order_strategy": "priority", "priority_steps": list(range(10)), "sep": ":"},
                         CELERY_DOCS_PRIORITY))
    if keyprefix is not None:  # kombu's prefix for every key it names (a cluster needs one hash tag)
        settings.append(("broker_transport_options", {"global_keyprefix": keyprefix}, KOMBU_REDIS_DOCS))
    if prefetch is not None:
        settings.append(("worker_prefetch_multiplier", prefetch, CELERY_DOCS + "worker-prefetch-multiplier"))
    if acks_late:
        settings.append(("task_acks_late", True, CELERY_DOCS + "task-acks-late"))
    if no_prefetch:  # what ``celery worker --disable-prefetch`` sets
        settings.append(("worker_disable_prefetch", True, CELERY_DOCS + "worker-disable-prefetch"))
    if default_priority is not None:
        settings.append(("task_default_priority", default_priority, CELERY_DOCS + "task-default-priority"))
    if max_priority is not None:  # the queues' x-max-priority (a RabbitMQ argument)
        settings.append(("task_queue_max_priority", max_priority, CELERY_DOCS + "task-queue-max-priority"))
    return tuple(settings)


# Every worker this process started and has not stopped, for stop_every_worker.
_WORKERS: set[subprocess.Popen] = set()
_WORKERS_LOCK = threading.Lock()
_WORKERS_STOPPED = False

# A worker still up this long after SIGTERM is killed. The run is recorded by then and its
# private server stops next; RQ's worker sometimes hangs at a warm shutdown, joining its
# pubsub thread (rq/rq#1613, about one stop in five with four runs at once here).
STOP_GRACE_S = 3.0


def _stop_groups(processes: Sequence[subprocess.Popen], grace: float) -> None:
    """SIGTERM to each running process's group; SIGKILL to the groups of those still up ``grace`` s later."""
    running = [p for p in processes if p.poll() is None]
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in running:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            process.wait(5)


def spawn_worker(argv: Sequence[str], env: dict[str, str], output: Any = subprocess.DEVNULL) -> subprocess.Popen:
    """A library's worker as a process of its own, its stdout and stderr to ``output``: in its own
    process group (stopped as a whole), ended by its starter's death too (SIGTERM when the thread
    that started it dies), so no worker outlives the notebook; and known to
    :func:`stop_every_worker`, after which none starts here."""
    with _WORKERS_LOCK:
        if _WORKERS_STOPPED:
            raise RuntimeError("this process is stopping its workers: no new worker starts")
        process = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                   start_new_session=True, preexec_fn=die_with_parent(signal.SIGTERM))
        _WORKERS.difference_update([p for p in _WORKERS if p.poll() is not None])
        _WORKERS.add(process)
    return process


def stop_spawned_worker(process: subprocess.Popen, grace: float = STOP_GRACE_S) -> None:
    """Stop a worker :func:`spawn_worker` started: SIGTERM to its group, SIGKILL ``grace`` s later
    if it is still up (a warm shutdown that hangs never keeps it running)."""
    _stop_groups([process], grace)
    with _WORKERS_LOCK:
        _WORKERS.discard(process)


def stop_every_worker() -> int:
    """Stop every worker this process started and has not stopped, as each run's own stop
    does (SIGTERM, SIGKILL after the grace), all at once; from then on no worker starts here.
    Returns how many were running.

    For a process told to stop while its runs are under way (``python -m
    echomq_viz.peers.findings`` when the app that started it is killed). Without it each worker
    got only the SIGTERM its starter's death sends, and stopped warm after its private Redis was
    gone: Celery's worker went on trying to reach that broker, past 30 s on a loaded machine."""
    global _WORKERS_STOPPED
    with _WORKERS_LOCK:
        _WORKERS_STOPPED = True
        running = [p for p in _WORKERS if p.poll() is None]
        _WORKERS.clear()
    _stop_groups(running, STOP_GRACE_S)
    return len(running)


class _Process(Deployment):
    """A worker that is a process of its own, stopped with SIGTERM (SIGKILL if it lingers)."""

    process: subprocess.Popen | None = None

    def _spawn(self, argv: Sequence[str], socket: str, extra_env: dict | None = None) -> None:
        self.process = spawn_worker(argv, {**os.environ, "ECHOMQ_VIZ_PEER_SOCKET": socket, **(extra_env or {})})

    def _stop_process(self) -> None:
        if self.process is not None:
            stop_spawned_worker(self.process)
        self.process = None

    def stop(self) -> None:
        self._stop_process()


def celery_conf(settings: Sequence[tuple[str, Any, str]], broker_url: str) -> dict:
    """The app's configuration from ``settings`` (transport options merged) and the broker's address."""
    conf: dict = {}
    for name, value, _ in settings:
        conf[name] = {**conf[name], **value} if isinstance(value, dict) and name in conf else value
    conf["broker_url"] = broker_url
    return conf


class CeleryDeployment(_Process):
    """A Celery app and ``celery worker`` (prefork pool), configured only by Celery settings
    (see :func:`celery_settings`). Tasks go out with ``send_task``, or, named in ``via_task``,
    through the producer's own task object (``apply_async``), which applies the task defaults."""

    key = "celery"

    def __init__(self, *, steps: bool = False, label: str | None = None, seconds: float = 0.0,
                 gate: bool = False, via_task: Sequence[str] = (), **settings: Any) -> None:
        self.seconds = seconds  # each task sleeps this long first, to hold the worker busy
        self.gated = gate  # every task waits until :meth:`open_gate`
        self.gate: str | None = None
        self.via_task = frozenset(via_task)
        self.settings = celery_settings(steps=steps, **settings)
        self.key = "celery10" if steps else "celery"
        self.label = label or ("Celery, ten priority steps" if steps
                               else "Celery, default settings")
        self.how = "celery -A echomq_viz.peers.celery_app worker (prefork pool)"
        self.app = None
        self.task = None

    def version(self) -> str:
        return f"celery {need('celery').__version__}, kombu {need('kombu').__version__}"

    def _conf(self, socket: str) -> dict:
        return celery_conf(self.settings, f"redis+socket://{socket}?virtual_host=0")

    def open_producer(self, socket: str) -> None:
        celery = need("celery")
        need("packaging")
        self.app = celery.Celery("viz10-producer")
        self.app.conf.update(self._conf(socket))
        self.task = self.app.task(name="record")(_record_signature)  # the producer's view of the worker's task
        if self.gated:  # beside the socket, in the private server's 0700 folder, which goes with it
            self.gate = os.path.join(os.path.dirname(socket), "celery-gate")
            open(self.gate, "x").close()

    def open_gate(self) -> None:
        """Let the tasks waiting at the gate run (each checks every 5 ms)."""
        if self.gate is not None and os.path.exists(self.gate):
            os.remove(self.gate)

    def add_one(self, name: str, priority: Any) -> None:
        options = {} if priority is None else {"priority": priority}
        if self.gate is not None:
            options["kwargs"] = {"gate": self.gate}
        if name in self.via_task:
            self.task.apply_async(args=(name, self.seconds), **options)
        else:
            self.app.send_task("record", args=(name, self.seconds), **options)

    def start_worker(self, socket: str) -> None:
        self._spawn([sys.executable, "-m", "celery", "-A", "echomq_viz.peers.celery_app", "worker",
                     "--loglevel=WARNING"], socket, {"ECHOMQ_VIZ_CELERY": json.dumps(self._conf(socket))})

    def stop(self) -> None:
        try:
            self._stop_process()
        finally:
            self.open_gate()  # no task waits on a stopped run
            self.gate = None
            if self.app is not None:
                self.app.close()
                self.app = None


def _record_signature(name: str, seconds: float = 0.0, gate: str | None = None) -> None:
    """The producer never runs the task: the worker's ``record`` (:mod:`.celery_app`) does."""
    raise RuntimeError("record runs in the Celery worker, never in the producer")


class RQDeployment(_Process):
    """``Queue(level).enqueue`` and ``rq worker high mid low`` (blocking), or with
    ``burst=True`` ``rq worker --burst high mid low`` (it runs what is queued, then exits),
    with ``strategy`` its ``--dequeue-strategy``. A level written ``"low at_front"`` is
    enqueued with ``at_front=True``. With ``killed=True`` the worker (RQ's own, through
    ``--worker-class``) is killed with SIGKILL the moment its pop returns a job; then
    ``rq worker --burst high mid low`` runs what it finds."""

    LEVELS = ("high", "mid", "low")
    DIES = "echomq_viz.peers.worker_apps.DiesAfterDequeue"

    def __init__(self, *, burst: bool = False, strategy: str | None = None, killed: bool = False) -> None:
        if strategy not in (None, "round_robin", "random"):
            raise ValueError(f"strategy must be None, 'round_robin' or 'random', got {strategy!r}")
        self.burst, self.strategy, self.killed = burst or killed, strategy, killed
        flags = " --burst" * (burst and not killed) + (f" --dequeue-strategy {strategy}" if strategy else "")
        self.key = "rq-killed" if killed else "rq" + "-burst" * burst + f"-{strategy}" * bool(strategy)
        self.label = (f"RQ, rq worker{flags} high mid low" if not killed else
                      "RQ, rq worker high mid low killed (SIGKILL) as its pop returned, then rq worker --burst")
        self.how = f"rq worker{flags} --url unix://<socket> high mid low"
        self.ids: dict[str, str] = {}

    def version(self) -> str:
        return f"rq {need('rq').__version__}"

    def open_producer(self, socket: str) -> None:
        import redis
        from rq import Queue

        self.connection = redis.Redis(unix_socket_path=socket)
        self.queues = {level: Queue(level, connection=self.connection) for level in self.LEVELS}

    def add_one(self, name: str, level: Any) -> None:
        queue, _, front = (level or "low").partition(" ")
        job = self.queues[queue].enqueue("echomq_viz.peers.worker_apps.record", name, at_front=front == "at_front")
        self.ids[name] = job.id

    def _argv(self, *flags: str) -> list[str]:
        rq_bin = shutil.which("rq", path=os.path.dirname(sys.executable)) or "rq"
        strategy = ["--dequeue-strategy", self.strategy] if self.strategy else []
        return [rq_bin, "worker", *flags, *strategy, "--url", f"unix://{self.socket}", *self.LEVELS]

    def start_worker(self, socket: str) -> None:
        self.socket = socket
        if self.killed:  # the dying worker first, to its end, then a burst worker over what it left
            self._spawn(self._argv("--worker-class", self.DIES), socket)
            self.process.wait(30)
            self.process = None
        self._spawn(self._argv(*["--burst"] * self.burst), socket)

    def inspect(self, client: Any) -> dict:
        """For each job added that never ran: its status in its own hash, and every other key that names it."""
        ran = set(client.lrange("viz10:done", 0, -1))
        return {name: {"status": client.hget(f"rq:job:{job_id}", "status"), "held by": held_by(client, job_id)}
                for name, job_id in self.ids.items() if name not in ran}

    def stop(self) -> None:
        try:
            self._stop_process()
        finally:
            self.connection.close()


def held_by(client: Any, member: str) -> list[str]:
    """The lists, sets and sorted sets on ``client``'s server (a private one) that hold ``member``."""
    found = []
    for key in sorted(client.scan_iter(count=1000)):
        kind = client.type(key)
        if (kind == "list" and member in client.lrange(key, 0, -1)) or \
                (kind == "set" and client.sismember(key, member)) or \
                (kind == "zset" and client.zscore(key, member) is not None):
            found.append(key)
    return found


class HueyDeployment(_Process):
    """``PriorityRedisHuey`` tasks and ``huey_consumer`` (one worker thread, blocking reads)."""

    key = "huey"
    label = "huey, PriorityRedisHuey + huey_consumer"
    how = "huey_consumer echomq_viz.peers.worker_apps.huey"

    def version(self) -> str:
        return f"huey {need('huey').__version__}"

    def open_producer(self, socket: str) -> None:
        huey = need("huey")
        self.huey = huey.PriorityRedisHuey("viz", url=f"unix://{socket}")
        from echomq_viz.peers.worker_apps import record_huey

        self.task = self.huey.task(name="record")(record_huey)

    def add_one(self, name: str, priority: Any) -> None:
        self.task(name, priority=priority) if priority is not None else self.task(name)

    def start_worker(self, socket: str) -> None:
        consumer = shutil.which("huey_consumer", path=os.path.dirname(sys.executable)) or "huey_consumer"
        self._spawn([consumer, "echomq_viz.peers.worker_apps.huey", "--workers", "1"], socket)

    def stop(self) -> None:
        try:
            self._stop_process()
        finally:
            self.huey.storage.pool.disconnect()


class NodeDeployment(Deployment):
    """npm ``bull`` (``queue.process``) or ``bullmq`` (``new Worker``), in Node.js."""

    def __init__(self, lib: str, queue: str = "jobs") -> None:
        if lib not in ("bull", "bullmq"):
            raise ValueError(f"lib must be 'bull' or 'bullmq', got {lib!r}")
        self.lib, self.queue = lib, queue
        self.key = lib if lib == "bull" else "bullmq-node"
        self.label = "Bull, queue.process (Node.js)" if lib == "bull" else "BullMQ, new Worker (Node.js)"
        self.how = ("queue.process(1, handler)" if lib == "bull" else "new Worker(name, handler, {concurrency: 1})")
        self.runner = None
        self._version = "?"

    def version(self) -> str:
        return f"{self.lib} {self._version} (npm)"

    def open_producer(self, socket: str) -> None:
        from echomq_viz.peers.node import WORKER, NodeRunner

        self.runner = NodeRunner(script=WORKER)
        self._version = self.runner.request("open", lib=self.lib, path=socket, queue=self.queue)["version"]

    def add(self, jobs: Sequence[tuple[str, Any]]) -> list[str]:
        return self.runner.request("add", jobs=[{"name": name, "priority": priority} for name, priority in jobs])

    def start_worker(self, socket: str) -> None:
        self.runner.request("work")

    def inspect(self, client: Any) -> dict:
        return bull_leftovers(client, self.queue)

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None


class BullMQPyDeployment(Deployment):
    """PyPI ``bullmq``: ``Queue.add`` and a ``Worker`` with a processor, on an event loop of its own."""

    key = "bullmq-py"
    label = "BullMQ, Worker (PyPI client)"
    how = "Worker(name, processor, {'connection': url, 'concurrency': 1})"

    def __init__(self, queue: str = "jobs") -> None:
        self.queue_name = queue

    def version(self) -> str:
        return f"bullmq {need('bullmq').__version__} (PyPI)"

    def open_producer(self, socket: str) -> None:
        from echomq_viz.peers.packed_peers import LoopThread

        bullmq = need("bullmq")
        self.url = f"unix://{socket}"
        self.loop = LoopThread()
        self.worker = None
        self.errors: list[str] = []  # what the worker reported ("error" events), for the runs that lose a job

        async def make():
            return bullmq.Queue(self.queue_name, {"connection": self.url})

        self.queue = self.loop.run(make())

    def add_one(self, name: str, priority: Any) -> None:
        options = {} if priority is None else {"priority": priority}
        self.loop.run(self.queue.add(name, {"name": name}, options))

    def start_worker(self, socket: str) -> None:
        bullmq = need("bullmq")
        import redis.asyncio

        async def make():
            recorder = redis.asyncio.Redis(unix_socket_path=socket)

            async def record(job, token):
                await recorder.rpush("viz10:done", job.name)

            worker = bullmq.Worker(self.queue_name, record, {"connection": self.url, "concurrency": 1})
            worker.on("error", lambda error, *_: self.errors.append(f"{type(error).__name__}: {error}"))
            return worker

        self.worker = self.loop.run(make())

    def inspect(self, client: Any) -> dict:
        found = bull_leftovers(client, self.queue_name)
        return {**found, "worker errors": sorted(set(self.errors))} if self.errors else found

    def stop(self) -> None:
        try:
            if self.worker is not None:
                self.loop.run(self.worker.close(force=True))
            self.loop.run(self.queue.close())
        finally:
            self.loop.stop()


def bull_leftovers(client: Any, queue: str) -> dict:
    """Each job of Bull's or BullMQ's ``queue`` (default prefix ``bull``) that is still in
    Redis and never recorded as run: its name -> the lists and sets holding its id."""
    import json

    ran = set(client.lrange("viz10:done", 0, -1))
    found = {}
    for key in client.scan_iter(match=f"bull:{queue}:*", count=1000):
        job_id = key.rsplit(":", 1)[1]
        if not job_id.isdigit() or client.type(key) != "hash":
            continue
        name = client.hget(key, "name")
        if name == "__default__":  # Bull names the job in its data
            name = json.loads(client.hget(key, "data") or "{}").get("name")
        if name and name not in ran:
            found[name] = held_by(client, job_id)
    return dict(sorted(found.items()))
