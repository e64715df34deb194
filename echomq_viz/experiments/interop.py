"""Stock BullMQ (the PyPI ``bullmq`` client) on our queues, from plain code.

BullMQ builds its keys as ``<prefix>:<queue name>:<type>``. Name a BullMQ
queue ``{Q}`` and give it the prefix ``emq``, and its keys are exactly ours,
``emq:{Q}:<type>``: BullMQ and EchoMQ's scripts then share one queue. These
helpers let a notebook or a test drive that BullMQ queue without writing any
asyncio:

- :func:`bullmq_keys`: the key names BullMQ builds for a queue;
- :func:`bullmq_add`: add jobs the way a BullMQ producer does;
- :func:`bullmq_process_order`: run a stock BullMQ ``Worker`` (concurrency 1)
  until it has completed the queue's jobs, then close it, and report the
  order in which it processed them.

Each call runs its coroutine in a private event loop (on a helper thread
when the calling thread already runs one, as a Jupyter kernel does), closes
every BullMQ queue and worker it opened, and checks that no task it started
is still running. A Redis error comes out as its one line (what happened,
what to do), as a ``Demo``'s do: a student's Redis user, which runs only
the course's functions, is refused the stock client's own scripts, and
says so. Every BullMQ connection carries the client name
:data:`CLIENT_NAME` (workers rename theirs to ``<prefix>:<queue>``), so a
``CLIENT LIST`` shows whether any is left.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Sequence, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

from redis.exceptions import RedisError

from echomq_viz.core.checks import check_bool, check_int, check_str, describe
from echomq_viz.core.keys import QueueContext, validate_job_id
from echomq_viz.redis_side.redis_errors import one_line
from echomq_viz.redis_side.scripts import validate_priority
from echomq_viz.redis_side.server import ENV_URL, embedded_server

__all__ = [
    "CLIENT_NAME",
    "DEFAULT_TIMEOUT",
    "ProcessedJob",
    "redis_url",
    "bullmq_name",
    "bullmq_keys",
    "bullmq_add",
    "bullmq_process_order",
    "bullmq_change_priority",
    "run_sync",
]

CLIENT_NAME = "echomq-viz-interop"
DEFAULT_TIMEOUT = 20.0  # seconds for a worker to finish its batch, and for tasks to end

T = TypeVar("T")


@dataclass(frozen=True)
class ProcessedJob:
    """One job as a stock BullMQ worker's processor received it."""

    id: str
    name: str
    data: Any
    priority: int


def redis_url() -> str:
    """``$REDIS_URL``, else the URL of this process's embedded server."""
    return os.environ.get(ENV_URL) or embedded_server().url


def bullmq_name(ctx: QueueContext) -> str:
    """The BullMQ queue name whose keys are our queue's: ``{Q}``."""
    return f"{{{ctx.queue}}}"


def _named(url: str) -> str:
    """The URL with ``client_name`` set, so our BullMQ connections can be found."""
    # Not urlunsplit: it turns unix:///path into unix:/path.
    base, _, query = url.partition("?")
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "client_name"]
    return base + "?" + urlencode([*pairs, ("client_name", CLIENT_NAME)])


def _bullmq():
    try:
        import bullmq
    except ImportError as exc:  # pragma: no cover - bullmq is a dependency
        raise ImportError(f"the stock BullMQ client is needed here: `pip install bullmq` ({exc})") from None
    return bullmq


def _check_queue(queue: object, prefix: object) -> None:
    check_str("queue", queue)
    check_str("prefix", prefix)


def _options(url: str, prefix: str, **extra: Any) -> dict:
    return {"connection": _named(url), "prefix": prefix, **extra}


def _where(url: object) -> str:
    """Which Redis ``url`` reaches, for an error line: its socket path or host and port, never a password."""
    try:
        parts = urlsplit(str(url))
        return parts.path if parts.scheme == "unix" else f"{parts.hostname}:{parts.port or 6379}"
    except ValueError:
        return "the Redis"


STUDENT_HINT = ("stock BullMQ runs its own Lua scripts (EVALSHA), and a student's Redis user runs only the "
                "course's functions: run this cell on a Redis of your own (unset REDIS_URL for the embedded one)")


def _in_one_line(call: Callable[..., T]) -> Callable[..., T]:
    """``call`` with a Redis error raised as its one line, the student's case named (NOPERM)."""
    @functools.wraps(call)
    def said(url, *args, **kwargs):
        try:
            return call(url, *args, **kwargs)
        except RedisError as exc:
            error = one_line(exc, _where(url))
            if "NOPERM" in str(exc) or type(exc).__name__ == "NoPermissionError":
                error.args = (f"{error.args[0].split(': a student', 1)[0]}: {STUDENT_HINT}",)
            raise error from exc
    return said


def run_sync(make: Callable[[], Awaitable[T]], timeout: float = DEFAULT_TIMEOUT) -> T:
    """Run ``make()`` to completion in a fresh event loop and return its result.

    On a helper thread when this thread already runs a loop (a Jupyter
    kernel does), directly otherwise. Fails if a task the coroutine started
    is still running ``timeout`` seconds after it returned.
    """

    async def checked() -> T:
        result = await make()
        me = asyncio.current_task()
        others = [task for task in asyncio.all_tasks() if task is not me]
        if others:
            _, pending = await asyncio.wait(others, timeout=timeout)
            if pending:
                for task in pending:
                    task.cancel()
                raise RuntimeError(f"BullMQ left {len(pending)} task(s) running: {pending}")
        return result

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(checked())

    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = asyncio.run(checked())
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="echomq-viz-bullmq", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


async def _settle(timeout: float) -> None:
    """Wait until every other task of this (private) event loop has finished."""
    me = asyncio.current_task()
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        others = [task for task in asyncio.all_tasks() if task is not me and not task.done()]
        left = deadline - asyncio.get_running_loop().time()
        if not others or left <= 0:
            return
        await asyncio.wait(others, timeout=left)


# -- the calls -------------------------------------------------------------------------


@_in_one_line
def bullmq_keys(url: str, queue: str, prefix: str = "emq") -> dict[str, str]:
    """The keys BullMQ builds for a queue, by type (``""`` is the key prefix)."""
    bullmq = _bullmq()
    _check_queue(queue, prefix)

    async def main() -> dict[str, str]:
        q = bullmq.Queue(queue, _options(url, prefix))
        try:
            return dict(q.keys)
        finally:
            await q.close()

    return run_sync(main)


@_in_one_line
def bullmq_add(url: str, queue: str, prefix: str, jobs: Iterable[Sequence]) -> list[str]:
    """Add jobs with BullMQ's ``Queue.add``, one at a time, in order.

    :param jobs: ``(name, data, priority)`` tuples; priority 0 means none
        (BullMQ then puts the job on the wait list).
    :returns: the job ids BullMQ gave them.
    """
    bullmq = _bullmq()
    _check_queue(queue, prefix)
    batch = list(jobs)
    for job in batch:
        if not isinstance(job, (tuple, list)) or len(job) != 3:
            error = ValueError if isinstance(job, (tuple, list)) else TypeError
            raise error(f"each job must be a (name, data, priority) tuple, got {describe(job)}")

    async def main() -> list[str]:
        q = bullmq.Queue(queue, _options(url, prefix))
        try:
            ids = []
            for name, data, priority in batch:
                opts = {"priority": priority} if priority else {}
                ids.append(str((await q.add(name, data, opts)).id))
            return ids
        finally:
            await q.close()

    return run_sync(main)


@_in_one_line
def bullmq_process_order(
    url: str, queue: str, prefix: str = "emq", timeout: float = DEFAULT_TIMEOUT,
    count: int | None = None,
) -> list[ProcessedJob]:
    """Let a stock BullMQ ``Worker`` (concurrency 1) process the queue's jobs.

    :param count: how many jobs to wait for; by default every job waiting
        when the call starts (the wait list plus the prioritized set).
    :returns: the jobs in the order the worker's processor received them.
    :raises TimeoutError: when they are not all completed within ``timeout`` s.
    :raises RuntimeError: when a job failed or the worker reported an error.

    The worker is closed before this returns, whatever happens.
    """
    bullmq = _bullmq()
    _check_queue(queue, prefix)
    count = None if count is None else check_int("count", count, 0)

    async def main() -> list[ProcessedJob]:
        expected = count
        if expected is None:
            q = bullmq.Queue(queue, _options(url, prefix))
            try:
                expected = await q.getJobCountByTypes("wait", "prioritized")
            finally:
                await q.close()
        processed: list[ProcessedJob] = []
        completed: list[str] = []
        problems: list[str] = []
        done = asyncio.Event()
        if expected == 0:
            return processed

        async def process(job, token):
            processed.append(ProcessedJob(str(job.id), job.name, job.data, int(job.priority or 0)))
            return {"processed": len(processed)}

        def on_completed(job, *rest) -> None:
            completed.append(str(job.id))
            if len(completed) >= expected:
                done.set()

        refused: list[RedisError] = []  # a worker's error from Redis: raised as itself, in its one line

        def on_problem(kind: str) -> Callable[..., None]:
            def record(*args) -> None:
                problems.append(f"{kind}: {args!r}")
                refused.extend(arg for arg in args if isinstance(arg, RedisError))
                done.set()
            return record

        worker = bullmq.Worker(queue, process, _options(url, prefix, concurrency=1))
        worker.on("completed", on_completed)
        worker.on("failed", on_problem("failed"))
        worker.on("error", on_problem("error"))
        finished = False
        try:
            try:
                await asyncio.wait_for(done.wait(), timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(
                    f"the BullMQ worker completed {len(completed)} of {expected} jobs in {timeout} s"
                ) from None
            if refused:
                raise refused[0]
            if problems:
                raise RuntimeError("the BullMQ worker reported: " + "; ".join(problems))
            finished = True
        finally:
            await worker.close(force=not finished)
            # close() does not wait for the worker's run loop: a job it fetched
            # just before closing may still be processed, on a connection the
            # pool reopens. This loop is private, so wait for all of its other
            # tasks, then close the connections once more.
            await _settle(timeout)
            backend = getattr(worker, "backend", None)
            if backend is not None:
                await backend.close(force=True)
        return processed

    return run_sync(main, timeout)


@_in_one_line
def bullmq_change_priority(url: str, queue: str, prefix: str, job_id: str, priority: int, *,
                           lifo: bool = False) -> None:
    """Stock BullMQ's ``Job.changePriority`` (PyPI ``bullmq``) on a job of ``queue``.

    :raises LookupError: when BullMQ finds no such job.
    """
    check_str("url", url)
    _check_queue(queue, prefix)
    validate_job_id(job_id, existing=True)
    priority = validate_priority(priority, lowest=0)
    check_bool("lifo", lifo)
    bullmq = _bullmq()

    async def main() -> None:
        q = bullmq.Queue(queue, _options(url, prefix))
        try:
            job = await bullmq.Job.fromId(q, job_id)
            if job is None:
                raise LookupError(f"BullMQ found no job {job_id!r} in queue {queue!r}")
            await job.changePriority({"priority": priority, "lifo": lifo})
        finally:
            await q.close()

    run_sync(main)
