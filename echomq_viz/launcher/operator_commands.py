"""The operator's commands on a Redis they name (``--url`` or ``REDIS_URL``): ``echomq-viz clean``
and ``echomq-viz acl add`` with the job caps it takes. Whatever fails is one line on stderr, the
URL's password never shown.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from echomq_viz.core.redaction import first_line_redacted
from echomq_viz.launcher._app_orphans import clean_orphans_at
from echomq_viz.redis_side.server import ENV_URL, RedisUnavailable, redact_url

__all__ = ["named_url", "one_line", "cmd_clean", "job_caps", "cmd_acl"]


def one_line(exc: BaseException, url: str) -> str:
    """``exc`` as its type and first line, with ``url``'s password (and any other) redacted."""
    return f"{type(exc).__name__}: {first_line_redacted(exc, url)}"


def named_url(command: str, args: argparse.Namespace, which: str = "") -> str | None:
    """The Redis ``--url`` or ``REDIS_URL`` names; without one, one line on stderr and None."""
    url = args.url or os.environ.get(ENV_URL)
    if not url:
        print(f"echomq-viz {command}: which Redis? set REDIS_URL{which} or give --url URL", file=sys.stderr)
    return url or None


def _on_named_redis(command: str, args: argparse.Namespace, which: str, action: Callable[[str], object]):
    """``(url, action(url))`` on the Redis :func:`named_url` gives; without one, or when
    ``action`` fails (a bad name, a user without the right), one line on stderr and None."""
    url = named_url(command, args, which)
    if url is None:
        return None
    try:
        return url, action(url)
    except RedisUnavailable:
        raise
    except Exception as exc:  # one line, nothing half done
        print(f"echomq-viz {command}: {one_line(exc, url)}", file=sys.stderr)
        return None


def cmd_clean(args: argparse.Namespace) -> int:
    done = _on_named_redis("clean", args, "", clean_orphans_at)
    if done is None:
        return 2
    url, removed = done
    print(f"echomq-viz: removed {removed} orphaned demo key(s) at {redact_url(url)}")
    return 0


def job_caps(args: argparse.Namespace):
    """The caps --max-queue-jobs and --max-jobs ask for, the defaults where not given (a
    ValueError of one line when they disagree: main says it)."""
    from echomq_viz.redis_side.caps import DEFAULT_CAPS, JobCaps

    return JobCaps(queue_jobs=DEFAULT_CAPS.queue_jobs if args.max_queue_jobs is None else args.max_queue_jobs,
                   student_jobs=DEFAULT_CAPS.student_jobs if args.max_jobs is None else args.max_jobs,
                   student_queues=DEFAULT_CAPS.student_queues, job_bytes=DEFAULT_CAPS.job_bytes)


def cmd_acl(args: argparse.Namespace) -> int:
    """``acl add NAME --out FILE``: a Redis user of the student's own, its URL into FILE, never shown."""
    from echomq_viz.redis_side.acl import write_student_url

    caps = job_caps(args)  # checked before anything is written
    done = _on_named_redis("acl", args, " (an operator's URL)",
                           lambda url: write_student_url(url, args.name, args.out, caps=caps, gate=args.gate))
    if done is None:
        return 2
    through = f", through the gate at {args.gate}" if args.gate else ""
    print(f"echomq-viz: Redis user {args.name!r} can reach only its own demo keys, within {caps.describe()}; "
          f"its REDIS_URL{through} is in {done[1]} (only you can read it)")
    return 0
