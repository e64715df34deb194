"""What a library sends to Redis, seen through ``MONITOR`` (I/O).

A :class:`CommandLog` listens with ``MONITOR`` on a connection of its own
while a library adds and pops. The caller marks each operation with an
``ECHO`` (:meth:`CommandLog.mark`), so every command Redis ran, from the
client or inside a Lua script, is filed under the operation it belongs to.
Only commands that name the queue's hash tag are kept: another kernel on a
shared Redis, or this kernel's lease renewal, never counts. ``MULTI`` and
``EXEC`` name no key, and on a unix socket ``MONITOR`` cannot tell clients
apart; but Redis runs a transaction's commands at once, just before its
``EXEC``, so an ``EXEC`` right after the queue's own commands closes a
transaction of the queue, whose body is that run (:func:`file_lines`). What the
lines say is turned into numbers by :func:`summarize`, pure.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

__all__ = ["Line", "Operation", "CommandLog", "OpSummary", "file_lines", "summarize", "write_commands",
           "key_types"]


@dataclass(frozen=True)
class Line:
    """One command Redis ran: its name (lower case), whether a Lua script ran it, its text."""

    name: str
    in_script: bool
    text: str


@dataclass
class Operation:
    """One marked operation (``kind`` is ``add`` or ``pop``) and the commands it ran."""

    kind: str
    lines: list[Line] = field(default_factory=list)


class CommandLog:
    """``MONITOR`` on ``client``'s server, kept to the commands naming ``tag``.

    Use as a context manager; :meth:`mark` starts an operation, and
    :meth:`pause` files what follows under none (the library's bookkeeping
    between two measured operations, e.g. an ack).
    """

    def __init__(self, client: Any, tag: str) -> None:
        self.client = client
        self.tag = tag
        self._word = f"emq-viz-mark-{secrets.token_hex(6)}"
        self.operations: list[Operation] = []
        self._monitor = None
        self._thread: threading.Thread | None = None
        self._raw: list[dict] = []
        self._error: BaseException | None = None

    def __enter__(self) -> "CommandLog":
        self._monitor = self.client.monitor()
        self._monitor.__enter__()
        self._thread = threading.Thread(target=self._listen, name="echomq-viz-monitor", daemon=True)
        self._thread.start()
        self.client.echo(f"{self._word} start")
        return self

    def _listen(self) -> None:
        try:
            while True:
                line = self._monitor.next_command()
                self._raw.append(line)
                if line["command"] == f"ECHO {self._word} stop":
                    return
        except BaseException as error:  # reported by __exit__
            self._error = error

    def mark(self, kind: str) -> None:
        self.client.echo(f"{self._word} op {kind}")

    def pause(self) -> None:
        self.client.echo(f"{self._word} pause")

    def __exit__(self, *exc: object) -> None:
        try:
            self.client.echo(f"{self._word} stop")
            self._thread.join(30)
        finally:
            self._monitor.__exit__(None, None, None)
        if self._thread.is_alive():
            raise RuntimeError("MONITOR did not see its own stop mark within 30 s")
        if self._error is not None:
            raise RuntimeError(f"MONITOR failed: {self._error}")
        self._file()

    def _file(self) -> None:
        self.operations.extend(file_lines(self._raw, self.tag, f"ECHO {self._word} "))


def file_lines(raw: Sequence[dict], tag: str, mark: str) -> list[Operation]:
    """The operations in ``raw`` MONITOR lines (redis-py's dicts): each begins
    at an ``ECHO`` of ``mark`` + ``op <kind>`` and ends at the next mark; it
    holds the lines naming ``tag``, with ``MULTI``/``EXEC`` around each run of
    them that an ``EXEC`` follows at once (a transaction of the queue). Pure."""
    operations: list[Operation] = []
    current: Operation | None = None
    started = False
    run_start: int | None = None  # where the current run of the queue's lines began in current.lines
    for line in raw:
        text = line["command"]
        in_script = line["client_type"] == "lua"
        if text.startswith(mark):
            what = text[len(mark):]
            started = started or what == "start"
            current = Operation(what[3:]) if what.startswith("op ") else None
            if current is not None:
                operations.append(current)
            run_start = None
            continue
        if not started or current is None:
            continue
        name = text.split(" ", 1)[0].lower()
        if tag in text:
            if run_start is None:
                run_start = len(current.lines)
            current.lines.append(Line(name, in_script, text))
        elif name == "exec" and not in_script and run_start is not None:
            current.lines.insert(run_start, Line("multi", False, "MULTI"))
            current.lines.append(Line("exec", False, "EXEC"))
            run_start = None
        else:
            run_start = None  # another client's line (or a keyless one) ends the run
    return operations


def write_commands(client: Any, names: Iterable[str]) -> set[str]:
    """Which of ``names`` Redis flags as writes (``COMMAND INFO``)."""
    names = sorted(set(names))
    if not names:
        return set()
    replies = client.execute_command("COMMAND", "INFO", *names)
    if isinstance(replies, dict):  # redis-py parses the reply into {name: {"flags": ...}}
        return {name for name in names if "write" in (replies.get(name) or {}).get("flags", ())}
    return {name for name, reply in zip(names, replies) if reply and "write" in reply[2]}


@dataclass(frozen=True)
class OpSummary:
    """The commands of one kind of operation, averaged over its operations."""

    kind: str
    count: int
    client_commands: float  # sent by the library, per operation
    script_commands: float  # run inside its Lua scripts, per operation
    steps: int  # the most separate writing steps one operation took
    how: str  # "one Lua script", "MULTI/EXEC", "one command", or "N separate steps"
    names: tuple[str, ...]  # the commands the library sent, most frequent first

    @property
    def atomic(self) -> bool:
        return self.steps <= 1


def _steps(lines: Sequence[Line], writes: set[str]) -> tuple[int, set[str]]:
    """How many separately applied writes, and of which kinds."""
    steps, kinds, in_multi, multi_writes = 0, set(), False, False
    for i, line in enumerate(lines):
        if line.in_script:
            continue
        if line.name == "multi":
            in_multi, multi_writes = True, False
        elif line.name in ("exec", "discard"):
            if in_multi and multi_writes:
                steps += 1
                kinds.add("MULTI/EXEC")
            in_multi = False
        elif line.name in ("eval", "evalsha", "fcall"):
            body = []
            for later in lines[i + 1:]:
                if not later.in_script:
                    break
                body.append(later)
            if any(inner.name in writes for inner in body):
                if in_multi:
                    multi_writes = True
                else:
                    steps += 1
                    kinds.add("one Lua script")
        elif line.name in writes:
            if in_multi:
                multi_writes = True
            else:
                steps += 1
                kinds.add("one command")
    return steps, kinds


def summarize(operations: Sequence[Operation], kind: str, writes: set[str]) -> OpSummary:
    """Average the operations of ``kind``; ``writes`` names the writing commands."""
    chosen = [op for op in operations if op.kind == kind]
    if not chosen:
        raise ValueError(f"no {kind} operation was recorded")
    client = [sum(not line.in_script for line in op.lines) for op in chosen]
    inner = [sum(line.in_script for line in op.lines) for op in chosen]
    found = [_steps(op.lines, writes) for op in chosen]
    steps = max(step for step, _ in found)
    kinds = set().union(*(k for _, k in found))
    how = f"{steps} separate steps" if steps > 1 else (sorted(kinds)[0] if kinds else "no write")
    names = Counter(line.name for op in chosen for line in op.lines if not line.in_script)
    return OpSummary(kind, len(chosen), sum(client) / len(chosen), sum(inner) / len(chosen), steps, how,
                     tuple(name.upper() for name, _ in names.most_common()))


def key_types(client: Any, tag: str) -> dict[str, str]:
    """Every key of the queue (``*{tag}*``), with its Redis type."""
    keys = sorted(client.scan_iter(match=f"*{{{tag}}}*", count=1000))
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.type(key)
        types = pipe.execute()
    return dict(zip(keys, types))
