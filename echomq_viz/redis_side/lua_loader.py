"""The strict loader of the real EchoMQ Lua scripts in ``lua/``.

Scripts live in ``lua/``, one command per file named ``verbNoun-N.lua`` where
``N`` is the number of KEYS; shared functions live in ``lua/includes/``, one
per file. A script pulls one in with a line::

    --- @include "includes/getPriorityScore"

resolved relative to the including file with ``.lua`` appended. Each include
is emitted once, where it is first asked for, so a function shared by two
includes appears once. A missing or circular include, one file naming the
same include twice, or a script without its ``--[[ ]]`` header is an error
that names the chain of files.

Reads files only; :mod:`echomq_viz.redis_side.scripts` runs what it assembles.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from echomq_viz.core.keys import KEY_TYPES, Keys, QueueContext

__all__ = ["LUA_DIR", "LuaIncludeError", "LuaScript", "resolve_includes", "load_scripts"]


def _find_lua_dir() -> Path:
    # An installed wheel carries the scripts inside the package; a source
    # checkout (editable install) keeps them at the project's top level.
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "lua", package.parent / "lua"):
        if (candidate / "includes").is_dir():
            return candidate
    raise FileNotFoundError(f"no lua/ directory in {package} or beside it")


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


def _fingerprint(lua_dir: Path) -> bytes:
    """A digest of every Lua file an assembly in ``lua_dir`` can read (its
    names and bytes): equal digests assemble to the same scripts."""
    digest = hashlib.blake2b(str(lua_dir.resolve()).encode(), digest_size=20)
    for path in sorted(lua_dir.rglob("*.lua")):
        data = path.read_bytes()
        digest.update(b"\0%s\0%d\0" % (path.relative_to(lua_dir).as_posix().encode(), len(data)))
        digest.update(data)
    return digest.digest()


def load_scripts(lua_dir: str | Path = LUA_DIR) -> dict[str, LuaScript]:
    """Assemble every ``verbNoun-N.lua`` in ``lua_dir``, keyed by command name.

    Each header must list ``KEYS[1]..KEYS[N]`` in order, each with its key
    type in quotes (``KEYS[4] 'prioritized'``); that list is the script's
    key contract. A set assembled before from the same files is reused.
    """
    lua_dir = Path(lua_dir)
    return dict(_assembled(lua_dir, _fingerprint(lua_dir)))


# Every view and test builds a ScriptAPI, and assembling resolves each include
# path afresh. Keyed by the folder as named too: the scripts' paths are built from it.
@functools.lru_cache(maxsize=8)
def _assembled(lua_dir: Path, fingerprint: bytes) -> dict[str, LuaScript]:
    return _assemble_all(lua_dir)


def _assemble_all(lua_dir: Path) -> dict[str, LuaScript]:
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


# -- the include graph --------------------------------------------------------------------

__all__ += ["include_graph", "includers_of"]


def _node_name(path: Path, root: Path) -> str:
    """A Lua file as the graph names it: ``"changePriority-7"``, ``"includes/getPriorityScore"``."""
    return path.relative_to(root).with_suffix("").as_posix()


def include_graph(lua_dir: str | Path = LUA_DIR) -> dict[str, set[str]]:
    """Who includes whom, read from the ``@include`` lines of every script in
    ``lua_dir`` and every include under its ``includes/`` (not the wrong
    designs of ``lua/designs/``, which no command runs): each file by name (scripts by file stem,
    ``"changePriority-7"``; includes as a script names them,
    ``"includes/getPriorityScore"``) with the set of files it includes directly.

    :raises LuaIncludeError: on an include that names no Lua file inside ``lua_dir``.
    """
    root = Path(lua_dir).resolve()
    graph: dict[str, set[str]] = {}
    for path in sorted([*root.glob("*.lua"), *(root / "includes").rglob("*.lua")]):
        name = _node_name(path, root)
        graph[name] = set()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = _INCLUDE.match(line)
            if not match:
                continue
            target = (path.parent / (match.group("name") + ".lua")).resolve()
            if root not in target.parents or not target.is_file():
                raise LuaIncludeError(f"include {match.group('name')!r} at {name}.lua:{number} "
                                      f"names no Lua file inside {root}")
            graph[name].add(_node_name(target, root))
    return graph


def includers_of(name: str, graph: dict[str, set[str]] | None = None) -> set[str]:
    """Every Lua file that includes ``name``, directly or through other
    includes (``name`` itself only when it sits in an include cycle).

    :param graph: an :func:`include_graph`; that of :data:`LUA_DIR` by default.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, e.g. 'includes/getPriorityScore', "
                        f"got {type(name).__name__} {name!r}")
    graph = include_graph() if graph is None else graph
    if name not in graph:
        raise ValueError(f"name must be a Lua file of the graph, e.g. 'includes/getPriorityScore', "
                         f"got {name!r}")
    found: set[str] = set()
    reached = {name}
    while reached:
        reached = {node for node, targets in graph.items() if targets & reached} - found
        found |= reached
    return found
