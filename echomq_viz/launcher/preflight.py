"""What ``echomq-viz`` checks before it starts anything: each a one-line refusal, or None.

- :func:`temp_folder_problem`: the temp folder asked for (``TMPDIR``, else
  ``TEMP``, ``TMP``) is usable and has room. Python's ``tempfile`` silently
  takes the next candidate (``/tmp``) when the one asked for is full or not
  writable: a run would then put its private Redis, its kernels' folders and
  its files where nobody asked.
- :func:`redis_url_problem`: ``REDIS_URL`` is a URL at all (``redis://[::1``
  is not one: ``urllib`` cannot split it).
- :func:`replica_problem`: the Redis given is no replica. Every notebook
  writes its demo queue first thing; on a replica each page would show only
  that a cell failed.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from typing import Any, Mapping

__all__ = ["RUN_ROOM_KB", "TEMP_VARIABLES", "temp_folder_problem", "redis_url_problem", "replica_problem"]

RUN_ROOM_KB = 100  # a run's temp files: the private Redis's folder (16 KB), connection files, tokens
TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")  # tempfile's order


def no_room_line(folder: str, variable: str = "TMPDIR") -> str:
    """The line for a temp folder without room."""
    return (f"echomq-viz: no space left in {folder}: free some there (a run needs about {RUN_ROOM_KB} KB), "
            f"or set {variable} to a folder with room")


def temp_folder_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the temp folder asked for cannot hold a run, in one line; None when it can.

    With no variable set, the folder Python picks is checked for room only.
    """
    variable = next((name for name in TEMP_VARIABLES if environ.get(name)), None)
    folder = os.path.abspath(environ[variable]) if variable else tempfile.gettempdir()
    why = _write_problem(folder)
    if why is not None and why.errno not in (errno.ENOSPC, errno.EDQUOT):
        return (f"echomq-viz: {variable}={environ[variable]} is not a folder this user can write in "
                f"({why.strerror}): make it, or set {variable} to one" if variable else
                f"echomq-viz: the temp folder {folder} is not writable ({why.strerror}): set TMPDIR to a folder "
                "you can write in")
    if why is not None or shutil.disk_usage(folder).free < RUN_ROOM_KB * 1024:
        return no_room_line(folder, variable or "TMPDIR")
    return None


def _write_problem(folder: str) -> OSError | None:
    """The error writing a small file in ``folder`` gives (the file removed), or None."""
    try:
        fd, path = tempfile.mkstemp(prefix=".echomq-viz-probe-", dir=folder)
    except OSError as exc:
        return exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(b"\0" * 4096)  # a page: a full file system refuses it here or on close
    except OSError as exc:
        return exc
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return None


def redis_url_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why ``REDIS_URL`` cannot be read as a URL at all, in one line (no password shown); None when it can."""
    from urllib.parse import urlsplit

    from echomq_viz.core.redaction import redact_url
    from echomq_viz.redis_side.server import ENV_URL

    url = environ.get(ENV_URL)
    if not url:
        return None
    try:
        urlsplit(url).port  # noqa: B018 (the port is read only when asked for: a bad one fails here)
    except ValueError as exc:
        return (f"echomq-viz: bad Redis URL {redact_url(f'{ENV_URL}={url}', (url,))!r}: {exc} "
                "(e.g. redis://127.0.0.1:6379/0, redis://[::1]:6379/0 or unix:///path/redis.sock)")
    return None


def replica_problem(client: Any, where: str) -> str | None:
    """Why the notebooks cannot run on the Redis ``client`` reaches: it is a
    replica (read-only, or writable and losing what is written at its next
    sync); None otherwise, or when this user may not ask (``INFO``, ``ROLE``)."""
    import redis

    try:
        role = str(client.info("replication").get("role", ""))
    except redis.RedisError:
        try:
            role = str(client.execute_command("ROLE")[0])
        except (redis.RedisError, IndexError, TypeError):
            return None
    if role not in ("slave", "replica"):
        return None
    try:
        writable = client.config_get("replica-read-only").get("replica-read-only") == "no"
    except redis.RedisError:  # not this user's to ask: the default, read-only
        writable = False
    kind = "replica that drops what is written at its next sync" if writable else "read-only replica"
    return (f"echomq-viz: Redis at {where} is a {kind}: every notebook writes its demo queue; "
            "set REDIS_URL to its primary, or unset it for a private server; nothing was started")
