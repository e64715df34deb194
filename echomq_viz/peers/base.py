"""What every queue library's adapter offers, and where it may write (I/O).

A :class:`Peer` drives one real library as its own users call it, on one
demo queue of this kernel: every key it writes matches
``emq:{viz-10-<name>@<owner>}:*``, so the kernel's exit and
``echomq-viz clean`` remove them like any other demo key, and no key of the
library's own global names is ever written on a shared Redis.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Sequence
from urllib.parse import quote

from echomq_viz.redis_side.owners import check_client
from echomq_viz.peers.workload import WorkJob

__all__ = ["Peer", "connection_params", "redis_url_of", "need", "bytes_client"]

Mark = Callable[[str], None]


def need(module: str):
    """Import a peer library, or say in one line how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{module} is needed here: pip install 'echomq-viz[peers]' ({exc})") from None


def bytes_client(client: Any):
    """A client of its own on ``client``'s server that returns bytes, for
    libraries that store pickles (RQ, huey)."""
    import redis

    check_client(client)
    pool = client.connection_pool
    return redis.Redis(connection_pool=redis.ConnectionPool(
        connection_class=pool.connection_class, **{**pool.connection_kwargs, "decode_responses": False}))


def connection_params(client: Any) -> dict:
    """Where ``client`` connects: ``path`` or ``host``/``port``, with
    ``password``, ``username`` and ``db`` when set (never printed)."""
    check_client(client)
    kwargs = client.connection_pool.connection_kwargs
    params = {"db": int(kwargs.get("db") or 0)}
    if kwargs.get("path"):
        params["path"] = kwargs["path"]
    else:
        params.update(host=kwargs.get("host") or "127.0.0.1", port=int(kwargs.get("port") or 6379))
    for name in ("username", "password"):
        if kwargs.get(name):
            params[name] = kwargs[name]
    return params


def redis_url_of(client: Any, *, socket_scheme: str = "unix") -> str:
    """A URL for ``client``'s server, for libraries that take one (it holds the password: never print it)."""
    params = connection_params(client)
    auth = ""
    if "password" in params:
        auth = f"{quote(params.get('username', ''), safe='')}:{quote(params['password'], safe='')}@"
    if "path" in params:  # redis-py reads ?db=, kombu ?virtual_host=
        database = "db" if socket_scheme == "unix" else "virtual_host"
        return f"{socket_scheme}://{auth}{params['path']}?{database}={params['db']}"
    return f"redis://{auth}{params['host']}:{params['port']}/{params['db']}"


class Peer:
    """One library on one demo queue of this kernel.

    Subclasses set ``key`` (short, e.g. ``"rq"``), ``label``, ``library``
    (package and installed version), ``configured`` (what was set to keep
    its keys inside the demo queue) and ``tier_means`` (how a tier reaches
    the library), and implement :meth:`_add` and :meth:`_pop`.
    """

    key = ""
    label = ""
    library = ""
    configured = ""
    tier_means = ""
    default_names = ""  # how the library names the same keys when nothing is configured
    levels = ""  # how many priority levels it keeps apart
    requires = ""  # the Python package it runs, imported (or one clear line) before anything is made

    def __init__(self, client: Any = None) -> None:
        if self.requires:
            self.lib = need(self.requires)
            self.library = f"{self.requires} {self.lib.__version__}"
        # imported here, not at the top: every job of RQ's worker runs in a process forked for it,
        # which imports the job's module (worker_apps) and so this package; the Demo brings numpy
        from echomq_viz.experiments.live import Demo

        self.demo = Demo(f"viz-10-{self.key}", client)
        self.client = self.demo.client
        self.tag = self.demo.queue  # viz-10-<key>@<owner>: the hash tag of every key
        self.prefix = f"emq:{{{self.tag}}}:"

    # -- what subclasses implement -----------------------------------------------------------

    def _add(self, job: WorkJob) -> None:
        raise NotImplementedError

    def _pop(self) -> str | None:
        """Take the next job as the library's worker does; its name, or None when empty."""
        raise NotImplementedError

    def _after_pop(self) -> None:
        """What a user does with a popped job that is not part of taking it (an ack)."""

    def default_key(self, key: str) -> str:
        """``key`` as the library names it when nothing is configured."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of connections the library holds."""

    # -- shared --------------------------------------------------------------------------------

    def reset(self) -> int:
        """Delete this queue's keys (``emq:{viz-10-<key>@<owner>}:*``) and nothing else."""
        self.demo.reset()
        keys = list(self.client.scan_iter(match=f"{self.prefix}*", count=1000))
        removed = self.client.unlink(*keys) if keys else 0
        self._declare()
        return removed

    def _declare(self) -> None:
        """Write again what the library writes once when a queue is opened (kombu's bindings)."""

    def add_all(self, jobs: Sequence[WorkJob], mark: Mark = lambda _: None) -> None:
        for job in jobs:
            mark("add")
            self._add(job)

    def pop_all(self, count: int, mark: Mark = lambda _: None,
                pause: Callable[[], None] = lambda: None) -> list[str]:
        """Pop ``count`` jobs (fewer if the queue runs dry), in the order the library hands them out."""
        order = []
        for _ in range(count):
            mark("pop")
            name = self._pop()
            pause()
            if name is None:
                break
            order.append(name)
            self._after_pop()
        return order

    def _add_level(self, name: str, level: int, count: int) -> None:
        """Add a job at ``level`` of ``count`` (1 most urgent), in the library's terms."""
        self._add(WorkJob(name, level, 0))

    def probe_levels(self, count: int = 10) -> int:
        """How many of ``count`` levels the library keeps apart: one job per
        level, added worst first, popped; 1 + the neighbouring levels that
        came out better first. The queue is emptied before and after."""
        self.reset()
        try:
            for level in range(count, 0, -1):
                self._add_level(f"level-{level}", level, count)
            position = {name: i for i, name in enumerate(self.pop_all(count))}
        finally:
            self.reset()
        return 1 + sum(position.get(f"level-{level}", count) < position.get(f"level-{level + 1}", count)
                       for level in range(1, count))

    def fill(self, jobs: Sequence[WorkJob]) -> None:
        """Add many jobs quickly (the growth measurement's waiting jobs)."""
        for job in jobs:
            self._add(job)

    def time_adds(self, jobs: Sequence[WorkJob]) -> list[float]:
        """Seconds of each add of ``jobs``, each timed alone around the library's call."""
        adds = []
        for job in jobs:
            start = time.perf_counter()
            self._add(job)
            adds.append(time.perf_counter() - start)
        return adds

    def time_pops(self, count: int) -> list[float]:
        """Seconds of each of ``count`` pops, each timed alone (the ack, if any, outside)."""
        pops = []
        for _ in range(count):
            start = time.perf_counter()
            name = self._pop()
            pops.append(time.perf_counter() - start)
            if name is None:
                raise RuntimeError(f"{self.label}: the queue ran dry while timing pops")
            self._after_pop()
        return pops

    def timed(self, jobs: Sequence[WorkJob]) -> tuple[float, float]:
        """Seconds per add of ``jobs``, then per pop of as many jobs: each
        operation timed alone, the median taken (a busy machine's stalls fall out)."""
        return statistics.median(self.time_adds(jobs)), statistics.median(self.time_pops(len(jobs)))

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
