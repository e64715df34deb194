"""A Redis user per student, so nobody's code reaches another's queues.

On one shared Redis, a kernel logged in as a user of its own names its demo
queues after that user (:func:`echomq_viz.redis_side.owners.namespace_of`), and the user
may touch only keys of that namespace (:func:`echomq_viz.redis_side.owners.key_pattern`):
student A's code gets NOPERM on B's jobs and lease, whatever it types.

:func:`add_student` creates or updates such a user from an operator's
connection and returns the student's ``REDIS_URL``; :func:`write_student_url`
writes it to a 0600 file (``echomq-viz acl add NAME --out FILE``), and a
JupyterHub's ``pre_spawn_hook`` gets it from :func:`student_url` and hands it
to the spawner (``deploy/jupyterhub/config.yaml``). The password is random,
new at every call (an old one stops working), and never printed.

The user's commands are what the package runs: reads and writes (without
the ``@dangerous`` ones: no FLUSHALL, KEYS, CONFIG, DEBUG), ``EVALSHA`` and
``SCRIPT LOAD`` for the Lua scripts, ``INFO`` and ``ACL WHOAMI``; no Pub/Sub
channel. SCAN stays allowed (a kernel finds its own keys with it): a student
can list the names of other demo keys, never read or change them.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from echomq_viz.core.checks import check_str
from echomq_viz.redis_side.owners import check_client, key_pattern, namespace_of

__all__ = ["STUDENT_RULES", "student_rules", "add_student", "student_url", "remove_student", "write_student_url"]

# After "reset" (no keys, no channels, no commands, no password, off).
STUDENT_RULES = (
    "-@all", "+@read", "+@write", "+@connection", "+@transaction", "-@dangerous",
    "+eval", "+evalsha", "+script|load", "+script|exists", "+info", "+acl|whoami", "+select", "+ping",
)
_NAME = re.compile(r"[^\s\x00-\x1f\x7f]{1,128}")


def _check_name(name: object) -> str:
    check_str("student name", name, max_length=128)
    if not _NAME.fullmatch(name):
        raise ValueError(f"student name must be 1..128 characters without spaces or control characters, got {name!r}")
    if name == "default":
        raise ValueError("student name must not be 'default': that is the Redis user everybody else logs in as")
    return name


def student_rules(name: str) -> list[str]:
    """The ACL SETUSER rules of ``name``'s user, its password aside."""
    return ["reset", "on", f"~{key_pattern(namespace_of(_check_name(name)))}", *STUDENT_RULES]


def _student_url(operator_url: str, name: str, password: str) -> str:
    """``operator_url`` with its user and password replaced by the student's."""
    parts = urlsplit(operator_url)
    userinfo = f"{quote(name, safe='')}:{password}@"
    if parts.scheme == "unix":
        query = "&".join(item for item in parts.query.split("&")
                         if item and not item.lower().startswith(("password=", "username=")))
        return urlunsplit((parts.scheme, userinfo, parts.path, query, ""))
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, userinfo + host, parts.path, parts.query, ""))


def add_student(operator: Any, name: str, operator_url: str) -> str:
    """Create or update the Redis user ``name`` (a fresh random password) on
    the server ``operator`` (a client logged in as a user allowed ``ACL``)
    reaches; returns the student's ``REDIS_URL`` there: ``operator_url`` (the
    address ``operator`` was made from) with the student's user and password."""
    check_client(operator)
    _check_name(name)
    if not isinstance(operator_url, str) or urlsplit(operator_url).scheme not in ("redis", "rediss", "unix"):
        raise ValueError("operator_url must be a redis://, rediss:// or unix:// URL")  # never echoed: a password
    password = secrets.token_urlsafe(32)
    operator.execute_command("ACL", "SETUSER", name, *student_rules(name), f">{password}")
    return _student_url(operator_url, name, password)


def remove_student(operator: Any, name: str) -> bool:
    """Delete the Redis user ``name``; True if it existed. Its keys stay
    until ``echomq-viz clean`` (its kernels' leases lapse)."""
    check_client(operator)
    return bool(operator.execute_command("ACL", "DELUSER", _check_name(name)))


def student_url(operator_url: str, name: str) -> str:
    """:func:`add_student` on the Redis at ``operator_url``: the student's
    ``REDIS_URL``, for a hub's ``pre_spawn_hook`` to hand to the spawner
    (``deploy/jupyterhub/config.yaml``). Never log it."""
    from echomq_viz.redis_side.server import connect

    _check_name(name)
    operator = connect(operator_url)
    try:
        return add_student(operator, name, operator_url)
    finally:
        operator.close()


def write_student_url(operator_url: str, name: str, out: os.PathLike | str) -> Path:
    """:func:`add_student` on the Redis at ``operator_url``, the student's URL
    written to ``out`` (created 0600, or replaced: a file only its owner can
    read), never shown. Everything is checked before Redis is changed."""
    _check_name(name)
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"--out must name a file, got the folder {out}")
    if not out.parent.is_dir():
        raise ValueError(f"--out must be in a folder that exists, got {out} ({out.parent} does not exist)")
    url = student_url(operator_url, name)
    part = out.with_name(f".{out.name}.{secrets.token_hex(4)}.part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(url + "\n")
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return out
