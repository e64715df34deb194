"""Each library's producer and worker process, as its users start them (I/O).

Used by :func:`.workers.run_deployment`, one private Redis per library, so
every library keeps its default key names. Worker output goes to a pipe read
by nobody but this process (stderr of a worker is never shown to a reader).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Any, Sequence

from echomq_viz.redis_side._process import die_with_parent
from echomq_viz.peers.base import need
from echomq_viz.peers.workers import Deployment

__all__ = ["CeleryDeployment", "RQDeployment", "HueyDeployment", "NodeDeployment", "BullMQPyDeployment",
           "CELERY_DOCS", "CELERY_DOCS_PRIORITY", "celery_settings"]

CELERY_DOCS = "https://docs.celeryq.dev/en/stable/userguide/configuration.html#"
CELERY_DOCS_PRIORITY = "https://docs.celeryq.dev/en/stable/userguide/routing.html#redis-message-priorities"


def celery_settings(*, steps: bool = False, prefetch: int | None = None,
                    max_priority: int | None = None) -> tuple[tuple[str, Any, str], ...]:
    """The Celery settings a run sets: (name, value, where Celery documents it).
    The broker's address is set too, but never shown (it is a private socket)."""
    settings = [("worker_concurrency", 1, CELERY_DOCS + "worker-concurrency"),
                ("task_default_queue", "jobs", CELERY_DOCS + "task-default-queue")]
    if steps:  # what Celery's routing guide gives for priorities on Redis
        settings.append(("broker_transport_options",
                         {"queue_order_strategy": "priority", "priority_steps": list(range(10)), "sep": ":"},
                         CELERY_DOCS_PRIORITY))
    if prefetch is not None:
        settings.append(("worker_prefetch_multiplier", prefetch, CELERY_DOCS + "worker-prefetch-multiplier"))
    if max_priority is not None:  # the queues' x-max-priority (a RabbitMQ argument)
        settings.append(("task_queue_max_priority", max_priority, CELERY_DOCS + "task-queue-max-priority"))
    return tuple(settings)


class _Process(Deployment):
    """A worker that is a process of its own, stopped with SIGTERM (SIGKILL if it lingers)."""

    process: subprocess.Popen | None = None

    def _spawn(self, argv: Sequence[str], socket: str, extra_env: dict | None = None) -> None:
        env = {**os.environ, "ECHOMQ_VIZ_PEER_SOCKET": socket, **(extra_env or {})}
        # its own process group (stopped as a whole), ended by the kernel's death too (SIGTERM
        # when the thread that started it dies), so no worker outlives the notebook
        self.process = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=die_with_parent(signal.SIGTERM))

    # A worker still up this long after SIGTERM is killed. The run is recorded by then and its
    # private server stops next; RQ's worker sometimes hangs at a warm shutdown, joining its
    # pubsub thread (rq/rq#1613, about one stop in five with four runs at once here).
    STOP_GRACE_S = 3.0

    def _stop_process(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(self.STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        self.process = None

    def stop(self) -> None:
        self._stop_process()


class CeleryDeployment(_Process):
    """A Celery app and ``celery worker`` (prefork pool), configured only by Celery settings."""

    key = "celery"

    def __init__(self, *, steps: bool = False, prefetch: int | None = None, label: str | None = None,
                 seconds: float = 0.0, max_priority: int | None = None, gate: bool = False) -> None:
        self.seconds = seconds  # each task sleeps this long first, to hold the worker busy
        self.gated = gate  # every task but the first waits until :meth:`open_gate`
        self.gate: str | None = None
        self.settings = celery_settings(steps=steps, prefetch=prefetch, max_priority=max_priority)
        self.key = "celery10" if steps else "celery"
        self.label = label or ("Celery, priority steps 0..9 (its docs' Redis settings)" if steps
                               else "Celery, default settings")
        self.how = "celery -A echomq_viz.peers.celery_app worker (prefork pool)"
        self.app = None

    def version(self) -> str:
        return f"celery {need('celery').__version__}, kombu {need('kombu').__version__}"

    def _conf(self, socket: str) -> dict:
        conf = {name: value for name, value, _ in self.settings}
        conf["broker_url"] = f"redis+socket://{socket}?virtual_host=0"
        return conf

    def open_producer(self, socket: str) -> None:
        celery = need("celery")
        need("packaging")
        self.app = celery.Celery("viz10-producer")
        self.app.conf.update(self._conf(socket))
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


class RQDeployment(_Process):
    """``Queue(level).enqueue`` and ``rq worker high mid low`` (blocking), or with
    ``burst=True`` ``rq worker --burst high mid low`` (it runs what is queued, then exits)."""

    LEVELS = ("high", "mid", "low")

    def __init__(self, *, burst: bool = False) -> None:
        self.burst = burst
        flag = " --burst" if burst else ""
        self.key = "rq-burst" if burst else "rq"
        self.label = f"RQ, rq worker{flag} high mid low"
        self.how = f"rq worker{flag} --url unix://<socket> high mid low"

    def version(self) -> str:
        return f"rq {need('rq').__version__}"

    def open_producer(self, socket: str) -> None:
        import redis
        from rq import Queue

        self.connection = redis.Redis(unix_socket_path=socket)
        self.queues = {level: Queue(level, connection=self.connection) for level in self.LEVELS}

    def add_one(self, name: str, level: Any) -> None:
        self.queues[level or "low"].enqueue("echomq_viz.peers.worker_apps.record", name)

    def start_worker(self, socket: str) -> None:
        rq_bin = shutil.which("rq", path=os.path.dirname(sys.executable)) or "rq"
        self._spawn([rq_bin, "worker", *(["--burst"] * self.burst), "--url", f"unix://{socket}", *self.LEVELS],
                    socket)

    def stop(self) -> None:
        try:
            self._stop_process()
        finally:
            self.connection.close()


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

            return bullmq.Worker(self.queue_name, record, {"connection": self.url, "concurrency": 1})

        self.worker = self.loop.run(make())

    def stop(self) -> None:
        try:
            if self.worker is not None:
                self.loop.run(self.worker.close(force=True))
            self.loop.run(self.queue.close())
        finally:
            self.loop.stop()
