"""The real EchoMQ Lua scripts: a strict include loader and a Python API.

Scripts live in ``lua/``, one command per file named ``verbNoun-N.lua`` where
``N`` is the number of KEYS; shared functions live in ``lua/includes/``, one
per file. A script pulls one in with a line::

    --- @include "includes/getPriorityScore"

resolved relative to the including file with ``.lua`` appended. Each include
is emitted once, where it is first asked for, so a function shared by two
includes appears once. A missing or circular include, one file naming the
same include twice, or a script without its ``--[[ ]]`` header is an error
that names the chain of files.

:class:`Scripts` registers every script with redis-py (EVALSHA, with a
fallback to EVAL on NOSCRIPT) and exposes them under EchoMQ's names. Each
method validates its arguments in Python first; the scripts check them again,
so a call that bypasses Python is refused as well, before anything is written.
"""

from __future__ import annotations

import json
import numbers
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .keys import KEY_TYPES, Keys, QueueContext, validate_job_id
from .score import PRIORITY_LIMIT, split_score

__all__ = [
    "LUA_DIR",
    "LuaIncludeError",
    "LuaScript",
    "resolve_includes",
    "load_scripts",
    "Job",
    "Scripts",
    "validate_priority",
    "MAX_LOCK_MS",
    "MAX_TIMESTAMP_MS",
]

MAX_LOCK_MS = 2**31 - 1  # about 24.8 days; far past any lock, far from PX overflow
MAX_TIMESTAMP_MS = 2**53 - 1  # whole milliseconds a double (and JavaScript) keeps exact


def _find_lua_dir() -> Path:
    # An installed wheel carries the scripts inside the package; a source
    # checkout (editable install) keeps them at the project's top level.
    here = Path(__file__).resolve().parent
    for candidate in (here / "lua", here.parent / "lua"):
        if (candidate / "includes").is_dir():
            return candidate
    raise FileNotFoundError(f"no lua/ directory next to {here} or its parent")


LUA_DIR = _find_lua_dir()

_INCLUDE = re.compile(r'^\s*---\s*@include\s+"(?P<name>[^"]+)"\s*$')
_SCRIPT_NAME = re.compile(r"^(?P<command>[a-z][A-Za-z]*)-(?P<keys>\d+)\.lua$")
_HEADER = re.compile(r"\A--\[\[(?P<body>.*?)\]\]", re.S)


class LuaIncludeError(Exception):
    """A Lua file could not be assembled: a missing, circular or repeated
    include, or a missing header."""


def _header(path: Path, text: str) -> str:
    match = _HEADER.match(text)
    if not match:
        raise LuaIncludeError(f"{path.name}: must open with a --[[ ]] header stating its contract")
    return match.group("body")


def _chain(stack: Sequence[Path], root: Path) -> str:
    return " -> ".join(_relative(p, root) for p in stack)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def resolve_includes(path: str | Path, root: str | Path | None = None) -> str:
    """Return the source of a Lua file with every include inlined.

    :param path: the script to assemble.
    :param root: the directory includes may not escape; the script's own
        directory by default.
    :raises LuaIncludeError: on a missing, circular or repeated include, an
        include outside ``root``, or a file without its header.
    """
    path = Path(path).resolve()
    root = Path(root).resolve() if root is not None else path.parent
    emitted: set[Path] = set()

    def assemble(current: Path, stack: list[Path]) -> str:
        text = current.read_text(encoding="utf-8")
        _header(current, text)
        seen_here: set[Path] = set()
        out: list[str] = []
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            match = _INCLUDE.match(line)
            if not match:
                out.append(line)
                continue
            target = (current.parent / (match.group("name") + ".lua")).resolve()
            where = f"{_relative(current, root)}:{number}"
            if root not in target.parents:
                raise LuaIncludeError(f"include {match.group('name')!r} at {where} leaves {root}")
            if target in seen_here:
                raise LuaIncludeError(f"include {match.group('name')!r} repeated at {where}")
            seen_here.add(target)
            if target == current or target in stack:
                raise LuaIncludeError(
                    "circular include: " + _chain([*stack, current, target], root)
                )
            if not target.is_file():
                raise LuaIncludeError(
                    f"missing include {match.group('name')!r} at {where} "
                    f"(chain: {_chain([*stack, current], root)})"
                )
            if target in emitted:
                continue  # already inlined earlier in this script
            emitted.add(target)
            out.append(assemble(target, [*stack, current]).rstrip("\n") + "\n")
        return "".join(out)

    emitted.add(path)
    return assemble(path, [])


@dataclass(frozen=True)
class LuaScript:
    """One assembled script: its command name, the key types of its KEYS
    (read from its header, in order) and its full source."""

    command: str
    key_types: tuple[str, ...]
    path: Path
    source: str

    @property
    def number_of_keys(self) -> int:
        return len(self.key_types)

    @property
    def file_name(self) -> str:
        return self.path.name

    def keys(self, ctx: QueueContext) -> list[str]:
        """The KEYS of this script for one queue, in the script's order."""
        return [getattr(Keys, key_type)(ctx) for key_type in self.key_types]


_HEADER_KEY = re.compile(r"KEYS\[(\d+)\]\s+'(\w+)'")


def load_scripts(lua_dir: str | Path = LUA_DIR) -> dict[str, LuaScript]:
    """Assemble every ``verbNoun-N.lua`` in ``lua_dir``, keyed by command name.

    Each header must list ``KEYS[1]..KEYS[N]`` in order, each with its key
    type in quotes (``KEYS[4] 'prioritized'``); that list is the script's
    key contract.
    """
    lua_dir = Path(lua_dir)
    scripts: dict[str, LuaScript] = {}
    for path in sorted(lua_dir.glob("*.lua")):
        match = _SCRIPT_NAME.match(path.name)
        if not match:
            raise LuaIncludeError(f"{path.name}: script files are named verbNoun-N.lua")
        count = int(match.group("keys"))
        listed = _HEADER_KEY.findall(_header(path, path.read_text(encoding="utf-8")))
        numbers = [int(n) for n, _ in listed]
        if numbers != list(range(1, count + 1)):
            raise LuaIncludeError(
                f"{path.name}: header lists KEYS {numbers}, the name promises KEYS[1]..KEYS[{count}]"
            )
        unknown = [t for _, t in listed if t not in KEY_TYPES]
        if unknown:
            raise LuaIncludeError(f"{path.name}: header names unknown key types {unknown}")
        scripts[match.group("command")] = LuaScript(
            match.group("command"), tuple(t for _, t in listed), path, resolve_includes(path, lua_dir)
        )
    return scripts


@dataclass(frozen=True)
class Job:
    """A job as the consume script handed it out."""

    id: str
    name: str
    data: Any
    priority: int
    score: float | None  # the stored score; None for a job from the wait list
    fields: Mapping[str, str] = field(repr=False)

    @property
    def source(self) -> str:
        return "wait" if self.score is None else "prioritized"

    @property
    def counter(self) -> int | None:
        """The arrival counter packed in the score (None for a wait-list job)."""
        return None if self.score is None else split_score(self.score)[1]


def _job_from_reply(reply: Sequence[Any]) -> Job:
    """A Job from moveToActive-11's reply ``{id, score or nil, flat hash}``."""
    job_id, score, flat = reply
    fields = dict(zip(flat[::2], flat[1::2]))
    return Job(
        id=job_id,
        name=fields.get("name", ""),
        data=json.loads(fields.get("data", "null")),
        priority=int(fields.get("priority", 0)),
        score=None if score is None else float(score),
        fields=fields,
    )


def _non_empty_str(what: str, value: object) -> str:
    """``value`` after checking it is a str with at least one character."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def validate_priority(priority: object, lowest: int = 1) -> int:
    """Return ``priority`` as an int after checking it is one in
    ``lowest..PRIORITY_LIMIT``; numpy integers are accepted, bools are not."""
    if isinstance(priority, bool) or not isinstance(priority, numbers.Integral):
        raise TypeError(f"priority must be an int, got {type(priority).__name__} {priority!r}")
    priority = int(priority)
    if not lowest <= priority <= PRIORITY_LIMIT:
        hint = " (0 means no priority: use add_standard_job)" if priority == 0 else ""
        raise ValueError(
            f"priority must be in {lowest}..{PRIORITY_LIMIT:_} (2**21 - 1), got {priority:_}{hint}"
        )
    return priority


def _check_positive_int(what: str, value: object, highest: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < 1 or (highest is not None and value > highest):
        upper = f"..{highest:_}" if highest is not None else " or more"
        raise ValueError(f"{what} must be in 1{upper}, got {value:_}")
    return value


def _check_timestamp(timestamp: int | None) -> int:
    if timestamp is None:
        return _now_ms()
    return _check_positive_int("timestamp", timestamp, MAX_TIMESTAMP_MS)


def _encode_data(data: object) -> str:
    try:
        return json.dumps(data, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"job data must be JSON-serialisable (no NaN/inf): {exc}") from None


def _now_ms() -> int:
    return int(time.time() * 1000)


class Scripts:
    """The EchoMQ scripts bound to one redis-py client.

    The client should decode responses (``decode_responses=True``), as the
    clients made by :mod:`echomq_viz.server` do.
    """

    def __init__(self, client: Any, scripts: Mapping[str, LuaScript] | None = None) -> None:
        self.client = client
        self.sources = dict(scripts) if scripts is not None else load_scripts()
        self._registered = {
            name: client.register_script(script.source) for name, script in self.sources.items()
        }

    def run(self, command: str, ctx: QueueContext, args: Sequence[Any]) -> Any:
        """Run a script by command name with its queue's KEYS and raw ARGV.

        No Python validation: for showing and testing what the Lua itself
        accepts or refuses.
        """
        script = self.sources.get(command)
        if script is None:
            raise KeyError(f"no script {command!r}; known: {', '.join(sorted(self.sources))}")
        return self._registered[command](keys=script.keys(ctx), args=list(args))

    # -- adding ---------------------------------------------------------------

    def _add_prioritized_args(
        self, ctx: QueueContext, name: object, data: object, priority: object,
        job_id: object, timestamp: int | None,
    ) -> list[Any]:
        """The checked ARGV of addPrioritizedJob-9."""
        _non_empty_str("job name", name)
        priority = validate_priority(priority)
        custom = "" if job_id is None else validate_job_id(job_id)
        ts = _check_timestamp(timestamp)
        return [Keys.base(ctx), custom, name, ts, _encode_data(data), priority]

    def _pipeline_client(self, key: str):
        """The client to pipeline a queue's script calls on.

        A cluster pipeline refuses EVALSHA; every key of a queue lives in one
        slot, so a cluster client hands over the node that owns ``key``.
        """
        if hasattr(self.client, "get_node_from_key"):
            return self.client.get_node_from_key(key).redis_connection
        return self.client

    def add_prioritized_job(
        self, ctx: QueueContext, name: str, data: Any, priority: int,
        job_id: str | None = None, *, timestamp: int | None = None,
    ) -> str:
        """Run ``addPrioritizedJob-9``; return the job id.

        :param priority: an int in ``1..PRIORITY_LIMIT``; lower runs first.
        :param job_id: a custom id, or None for the next auto id. A custom id
            that exists already is not added again; its id comes back.
        """
        args = self._add_prioritized_args(ctx, name, data, priority, job_id, timestamp)
        return self._registered["addPrioritizedJob"](keys=self.sources["addPrioritizedJob"].keys(ctx), args=args)

    def add_prioritized_jobs(
        self, ctx: QueueContext, jobs: Iterable[tuple], *, chunk_size: int = 1000,
    ) -> list[str]:
        """Add many prioritized jobs through ``addPrioritizedJob-9``, pipelined.

        :param jobs: ``(name, data, priority)`` or ``(name, data, priority,
            job_id)`` tuples, added in order (so arrival order is kept).
        :returns: the job ids, in the same order.

        Every job is validated before the first is sent.
        """
        chunk_size = _check_positive_int("chunk_size", chunk_size)
        prepared = []
        for job in jobs:
            if not 3 <= len(job) <= 4:
                raise ValueError(f"each job is (name, data, priority[, job_id]), got {job!r}")
            name, data, priority, *custom = job
            prepared.append(self._add_prioritized_args(
                ctx, name, data, priority, custom[0] if custom else None, None))
        script = self._registered["addPrioritizedJob"]
        keys = self.sources["addPrioritizedJob"].keys(ctx)
        client = self._pipeline_client(keys[0])
        ids: list[str] = []
        for start in range(0, len(prepared), chunk_size):
            with client.pipeline(transaction=False) as pipe:
                for args in prepared[start:start + chunk_size]:
                    script(keys=keys, args=args, client=pipe)
                ids.extend(pipe.execute())
        return ids

    def add_standard_job(
        self, ctx: QueueContext, name: str, data: Any, job_id: str | None = None,
        *, timestamp: int | None = None,
    ) -> str:
        """Run ``addStandardJob-9``: a job without priority, on the wait list."""
        _non_empty_str("job name", name)
        custom = "" if job_id is None else validate_job_id(job_id)
        ts = _check_timestamp(timestamp)
        keys = self.sources["addStandardJob"].keys(ctx)
        args = [Keys.base(ctx), custom, name, ts, _encode_data(data)]
        return self._registered["addStandardJob"](keys=keys, args=args)

    # -- consuming ------------------------------------------------------------

    def move_to_active(
        self, ctx: QueueContext, token: str, lock_ms: int = 30_000, *, timestamp: int | None = None,
    ) -> Job | None:
        """Run ``moveToActive-11``: take the next job (wait list first, then the
        smallest score), lock it, and return it; None when there is none."""
        _non_empty_str("lock token", token)
        lock_ms = _check_positive_int("lock_ms", lock_ms, MAX_LOCK_MS)
        ts = _check_timestamp(timestamp)
        keys = self.sources["moveToActive"].keys(ctx)
        reply = self._registered["moveToActive"](keys=keys, args=[Keys.base(ctx), ts, token, lock_ms])
        return _job_from_reply(reply) if reply else None

    def drain(self, ctx: QueueContext, token: str, lock_ms: int = 30_000, *,
              batch_size: int = 1000) -> list[Job]:
        """Run ``moveToActive-11`` until it finds nothing, ``batch_size`` calls
        per pipeline round trip; return the jobs in the order handed out."""
        _non_empty_str("lock token", token)
        lock_ms = _check_positive_int("lock_ms", lock_ms, MAX_LOCK_MS)
        batch_size = _check_positive_int("batch_size", batch_size)
        script = self._registered["moveToActive"]
        keys = self.sources["moveToActive"].keys(ctx)
        client = self._pipeline_client(keys[0])
        taken: list[Job] = []
        while True:
            with client.pipeline(transaction=False) as pipe:
                for _ in range(batch_size):
                    script(keys=keys, args=[Keys.base(ctx), _now_ms(), token, lock_ms], client=pipe)
                replies = pipe.execute()
            for reply in replies:
                if not reply:
                    return taken
                taken.append(_job_from_reply(reply))

    # -- changing and counting --------------------------------------------------

    def change_priority(
        self, ctx: QueueContext, job_id: str, priority: int, *, lifo: bool = False,
    ) -> bool:
        """Run ``changePriority-7``; return False when the job does not exist.

        A queued job is re-scored: with a fresh counter (back of the new tier),
        or with ``lifo`` at ``priority * 2**32`` (front of the new tier).
        """
        if not isinstance(job_id, str) or not job_id:
            raise ValueError(f"job id must be a non-empty str, got {job_id!r}")
        priority = validate_priority(priority)
        if not isinstance(lifo, bool):
            raise TypeError(f"lifo must be a bool, got {type(lifo).__name__}")
        keys = self.sources["changePriority"].keys(ctx)
        args = [priority, Keys.base(ctx), job_id, "1" if lifo else "0"]
        return self._registered["changePriority"](keys=keys, args=args) == 0

    def counts_per_priority(self, ctx: QueueContext, priorities: Iterable[int]) -> dict[int, int]:
        """Run ``getCountsPerPriority-2``: jobs per tier (0 = the wait list)."""
        asked = [validate_priority(p, lowest=0) for p in priorities]
        if not asked:
            return {}
        counts = self._registered["getCountsPerPriority"](
            keys=self.sources["getCountsPerPriority"].keys(ctx), args=asked
        )
        return dict(zip(asked, (int(c) for c in counts)))

    # -- plain reads and demo housekeeping ------------------------------------

    def prioritized(self, ctx: QueueContext) -> list[tuple[str, float]]:
        """The prioritized set in pop order: ``(job id, stored score)`` pairs."""
        return [(m, float(s)) for m, s in self.client.zrange(Keys.prioritized(ctx), 0, -1, withscores=True)]

    def priority_counter(self, ctx: QueueContext) -> int | None:
        """The current value of ``pc``; None when it does not exist (reset)."""
        value = self.client.get(Keys.pc(ctx))
        return None if value is None else int(value)

    def set_priority_counter(self, ctx: QueueContext, value: int) -> None:
        """Set ``pc`` so that the next prioritized job gets counter ``value + 1``."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"counter must be an int, got {type(value).__name__} {value!r}")
        if not 0 <= value < 2**63 - 1:
            raise ValueError(f"counter must be in 0..2**63 - 2 (INCR's range), got {value}")
        self.client.set(Keys.pc(ctx), value)

    def reset(self, ctx: QueueContext) -> int:
        """Delete every key of this one queue, ``emq:{Q}:*``, and nothing else.

        :returns: how many keys were deleted.
        """
        deleted = 0
        batch: list[str] = []
        for key in self.client.scan_iter(match=Keys.pattern(ctx), count=1000):
            batch.append(key)
            if len(batch) >= 500:
                deleted += self.client.unlink(*batch)
                batch.clear()
        if batch:
            deleted += self.client.unlink(*batch)
        return deleted
