"""A Redis user per student, so nobody's code reaches another's queues.

On one shared Redis, a kernel logged in as a user of its own names its demo
queues after that user (:func:`echomq_viz.redis_side.demo_keys.namespace_of`), and the user
may touch only keys of that namespace (:func:`echomq_viz.redis_side.demo_keys.key_pattern`):
student A's code gets NOPERM on B's jobs and lease, whatever it types.

:func:`add_student` creates or updates such a user from an operator's
connection and returns the student's ``REDIS_URL``; :func:`write_student_url`
writes it to a 0600 file (``echomq-viz acl add NAME --out FILE``), and a
JupyterHub's ``pre_spawn_hook`` gets it from :func:`student_url` and hands it
to the spawner (``deploy/jupyterhub/config.yaml``). The password is random,
new at every call (an old one stops working), and never printed.

The user runs the package's code and no code of its own: the scripts are the
operator's function library (:mod:`.functions`, loaded by :func:`add_student`
on Redis 7 or newer; an older server is refused in one line), called with
``FCALL``/``FCALL_RO``; no ``EVAL``, ``EVALSHA``, ``SCRIPT``, ``FUNCTION``,
``SELECT`` (its keys stay in the database ``clean`` scans), ``MULTI`` or Pub/Sub,
and nothing of ``@dangerous`` (no FLUSHALL, KEYS, CONFIG, DEBUG). Reads are
free on its keys; SCAN too (a kernel finds its own keys with it): a student can
list the names of other demo keys, never read or change them. Its caps
(:mod:`.caps`) are written beside it, readable by it and by nobody's writes.

Redis checks every command a function calls against the caller's own rights,
so the write commands the functions call are the user's to send by hand as
well: :data:`STUDENT_WRITES` names each and why, none more; ``SET`` only on a
job's lock and a queue's ``pc``, ``PSETEX`` only on its leases (so every lease
it writes expires). What it writes by hand stays in its own keys, which
``clean`` finds, and under ``maxmemory``; the caps hold on everything written
through the package (docs/sharing-a-redis.md).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from echomq_viz.core.checks import check_str
from echomq_viz.redis_side.caps import DEFAULT_CAPS, JobCaps, caps_key, clear_caps, set_caps
from echomq_viz.redis_side.functions import (
    check_version, function_name, load_library, loaded_functions, package_sources,
)
from echomq_viz.redis_side.demo_keys import key_pattern, namespace_of
from echomq_viz.redis_side.owners import check_client

__all__ = ["STUDENT_RULES", "STUDENT_WRITES", "student_rules", "add_student", "student_url", "remove_student",
           "write_student_url", "ensure_library", "check_gate"]

# Every write command a function of the library calls (Redis checks a function's commands against
# the caller's rights), and the one a kernel sends itself; each with who needs it.
STUDENT_WRITES = {
    "hset": "every add writes its job hash; moveToActive, changePriority and retryJob update it; "
            "recordJobCap keeps the student's count of jobs",
    "hdel": "recordJobCap forgets a queue with no job left from the student's count",
    "hincrby": "moveToActive and retryJob count a job's attempts",
    "incr": "every add takes the next job id ('id') and arrival counter ('pc')",
    "lpush": "a job without priority joins the wait list, a taken job 'active'",
    "rpush": "retryJob and changePriority put a job at the front of the wait list (lifo)",
    "lrem": "changePriority and retryJob take a job out of the wait list or 'active'",
    "rpoplpush": "moveToActive takes the next job of the wait list into 'active'",
    "zadd": "a job is filed in the prioritized or delayed set; the marker wakes workers",
    "zrem": "changePriority and promote take a job out of its sorted set",
    "zpopmin": "moveToActive takes the smallest score",
    "zpopmax": "notebook 09's wrong design takes the largest",
    "xadd": "every script tells the queue's events stream what it did",
    "srem": "retryJob takes a job out of 'stalled'",
    "del": "moveToActive deletes 'pc' when the queue is empty; retryJob a job's lock",
    "unlink": "Demo.reset() and a kernel's exit delete its own queues' keys (found with SCAN); the "
              "student's clean, a dead kernel's; unlinkOrphaned-N the same",
    "pexpire": "renewLease renews a kernel's lease",
}
# Writes granted on a few key shapes only (an ACL selector each): the glob after the
# namespace's pattern, and why.
SELECTED_WRITES = {
    "set": (("*:lock", "pc"), "moveToActive locks the job it hands out (with an expiry); Demo.set_counter "
                              "and add_at_counter set 'pc' itself, to show the counter's wrap"),
    "psetex": (("lease",), "takeLease takes a kernel's lease: only with an expiry"),
}
# Reads whose work a few bytes of input set, not the size of what the student stored: LCS is
# quadratic in its strings (two of 11 KB held Redis 0.5 s), and a negative count makes
# ZRANDMEMBER, HRANDFIELD and SRANDMEMBER build a reply of that many elements from one member.
# One student's loop of them held every other student's calls for seconds. LOLWUT too: its
# arguments alone size its drawing (15 MB, 50 ms of Redis a call). The package calls none.
COSTLY_READS = ("lcs", "zrandmember", "hrandfield", "srandmember", "lolwut")
# Reads that name other students' keys. SCAN does too (Redis's key patterns do not filter it),
# but Demo.reset and clean find a queue's own keys with it; RANDOMKEY no code of ours needs.
OTHERS_KEY_NAMES = ("randomkey",)
# After "reset" (no keys, no channels, no commands, no password, off); the keys come in student_rules.
STUDENT_RULES = (
    "-@all", "+@read", "+@connection", "-@dangerous", "+info", "+acl|whoami", "+ping", "+fcall", "+fcall_ro",
    *(f"+{command}" for command in STUDENT_WRITES),
    "-select", "-eval", "-evalsha", "-eval_ro", "-evalsha_ro", "-script", "-function",
    *(f"-{command}" for command in (*COSTLY_READS, *OTHERS_KEY_NAMES)),
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
    namespace = namespace_of(_check_name(name))
    pattern = key_pattern(namespace)  # emq:{viz-*@<namespace>.????????}:*
    lease = pattern.replace("{viz-*@", "{viz-@", 1)[:-1]  # emq:{viz-@<namespace>.????????}:
    selectors = []
    for command, (shapes, _why) in SELECTED_WRITES.items():
        base = lease if shapes == ("lease",) else pattern[:-1]
        selectors.append("(" + " ".join(f"~{base}{shape}" for shape in shapes) + f" +{command})")
    return ["reset", "on", f"~{pattern}", f"%R~{caps_key(namespace)}", f"%R~{caps_key()}", *STUDENT_RULES,
            *selectors]


def check_gate(gate: str | None) -> str | None:
    """``gate`` as ``host:port`` (a host name, an IPv4 address or a bracketed IPv6 one; a port in
    1..65535), or None; else a ValueError of one line."""
    if gate is None:
        return None
    match = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253}):([0-9]{1,5})", gate) if isinstance(gate, str) else None
    if match is None or not 1 <= int(match[2]) <= 65535:
        raise ValueError(f"the gate must be HOST:PORT with a port in 1..65535, e.g. 127.0.0.1:6380, got {gate!r:.60}")
    return gate


def _student_url(operator_url: str, name: str, password: str, gate: str | None = None) -> str:
    """``operator_url`` with its user and password replaced by the student's; through ``gate``
    (``host:port`` of ``echomq-viz gate``), that address instead of the Redis's."""
    parts = urlsplit(operator_url)
    userinfo = f"{quote(name, safe='')}:{password}@"
    if gate is not None:
        return f"redis://{userinfo}{gate}/0"
    if parts.scheme == "unix":
        query = "&".join(item for item in parts.query.split("&")
                         if item and not item.lower().startswith(("password=", "username=")))
        return urlunsplit((parts.scheme, userinfo, parts.path, query, ""))
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, userinfo + host, parts.path, parts.query, ""))


def ensure_library(operator: Any) -> bool:
    """Load the package's function library on ``operator``'s server unless it
    holds every function already; True when it was loaded.

    :raises RedisTooOld: before Redis 7.0 (one line), nothing changed.
    """
    check_version(operator)
    wanted = {function_name(source) for source in package_sources()}
    present = loaded_functions(operator, refresh=True)
    if present is not None and wanted <= present:
        return False
    load_library(operator)
    return True


def add_student(operator: Any, name: str, operator_url: str, *, caps: JobCaps = DEFAULT_CAPS,
                gate: str | None = None) -> str:
    """Create or update the Redis user ``name`` (a fresh random password) on
    the server ``operator`` (a client logged in as a user allowed ``ACL``,
    ``FUNCTION`` and writes to ``emq:caps*``) reaches, with its ``caps``
    (:class:`echomq_viz.redis_side.caps.JobCaps`), the package's function library
    loaded first if it is missing; returns the student's ``REDIS_URL`` there:
    ``operator_url`` (the address ``operator`` was made from) with the
    student's user and password, or with ``gate`` (``host:port`` of
    ``echomq-viz gate``, :mod:`.gate`) for its address.

    :raises RedisTooOld: before Redis 7.0, in one line, nothing changed.
    """
    check_client(operator)
    _check_name(name)
    if not isinstance(operator_url, str) or urlsplit(operator_url).scheme not in ("redis", "rediss", "unix"):
        raise ValueError("operator_url must be a redis://, rediss:// or unix:// URL")  # never echoed: a password
    if not isinstance(caps, JobCaps):
        raise TypeError(f"caps must be a JobCaps, e.g. JobCaps(queue_jobs=5000), got {type(caps).__name__}")
    check_gate(gate)
    if hasattr(operator, "get_primaries"):
        raise ValueError("a Redis shared by students must be one server, not a cluster: its users, caps and "
                         "function library would live on each node apart")
    ensure_library(operator)
    set_caps(operator, caps, namespace=namespace_of(name))
    password = secrets.token_urlsafe(32)
    operator.execute_command("ACL", "SETUSER", name, *student_rules(name), f">{password}")
    return _student_url(operator_url, name, password, gate)


def remove_student(operator: Any, name: str) -> bool:
    """Delete the Redis user ``name`` and its caps; True if it existed. Its
    keys stay until ``echomq-viz clean`` (its kernels' leases lapse)."""
    check_client(operator)
    existed = bool(operator.execute_command("ACL", "DELUSER", _check_name(name)))
    clear_caps(operator, namespace=namespace_of(name))
    operator.delete(f"emq:{{viz-@{namespace_of(name)}.registry}}:queues")  # its count of jobs
    return existed


def student_url(operator_url: str, name: str, *, caps: JobCaps = DEFAULT_CAPS, gate: str | None = None) -> str:
    """:func:`add_student` on the Redis at ``operator_url``: the student's
    ``REDIS_URL``, for a hub's ``pre_spawn_hook`` to hand to the spawner
    (``deploy/jupyterhub/config.yaml``). Never log it."""
    from echomq_viz.redis_side.server import connect

    _check_name(name)
    check_gate(gate)
    operator = connect(operator_url)
    try:
        return add_student(operator, name, operator_url, caps=caps, gate=gate)
    finally:
        operator.close()


def write_student_url(operator_url: str, name: str, out: os.PathLike | str, *,
                      caps: JobCaps = DEFAULT_CAPS, gate: str | None = None) -> Path:
    """:func:`add_student` on the Redis at ``operator_url``, the student's URL
    written to ``out`` (created 0600, or replaced: a file only its owner can
    read), never shown. Everything is checked before Redis is changed."""
    _check_name(name)
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"--out must name a file, got the folder {out}")
    if not out.parent.is_dir():
        raise ValueError(f"--out must be in a folder that exists, got {out} ({out.parent} does not exist)")
    check_gate(gate)
    part = out.with_name(f".{out.name}.{secrets.token_hex(4)}.part")
    try:  # the file first: where it cannot be written, the user and its password stay as they were
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        raise ValueError(f"--out must be in a folder you can write in, got {out} "
                         f"({error.strerror or type(error).__name__})") from None
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(student_url(operator_url, name, caps=caps, gate=gate) + "\n")
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return out
