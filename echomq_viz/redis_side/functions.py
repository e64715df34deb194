"""The package's Lua as one Redis Function library, and how each call finds it.

On Redis 7 and newer an operator loads every script the package runs, once,
as the library ``echomq_viz`` (``FUNCTION LOAD REPLACE``, :func:`load_library`;
``echomq-viz acl add`` does it): the same files in ``lua/``, each assembled
with its includes inlined as :mod:`.lua_loader` assembles it for EVALSHA, its
``KEYS`` and ``ARGV`` the function's parameters. Each function is named after
the SHA-1 of that source, ``emq_<sha1>``, the very digest EVALSHA would send:
a kernel runs exactly the code it would have sent, and a library loaded by
another version of the package simply lacks it. A student's Redis user may
run these functions and no code of its own (:mod:`.acl`).

Flags come from what a script calls: one that only reads is ``no-writes``
(and runs with ``FCALL_RO``); one that only deletes, expires or reads is
``allow-oom`` (a lease is renewed, and clean deletes, on a full server); every
other one is refused whole on a server past ``maxmemory``. Each function also
refuses more keys, arguments or argument bytes than any call of the package
sends (:data:`MAX_KEYS`, :data:`MAX_ARGS`, :data:`MAX_ARG_BYTES`), so no call
can keep Redis busy for long.

:class:`ScriptCall` is what the package uses in place of redis-py's
``register_script``: FCALL when the server's library holds the source, else
EVALSHA (Redis 6.2, a private server, a cluster, a source the library lacks).
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from typing import Any, Iterable, Sequence

from redis.exceptions import NoPermissionError, ResponseError

from echomq_viz.redis_side.lua_loader import LUA_DIR, load_scripts
from echomq_viz.redis_side.replies import reply_text
from echomq_viz.redis_side.variants import variant_sources

__all__ = ["LIBRARY", "REQUIRED_VERSION", "MAX_KEYS", "MAX_ARGS", "MAX_ARG_BYTES", "RedisTooOld", "FunctionMissing",
           "function_name", "function_flags", "called_commands", "package_sources", "library_code",
           "load_library", "loaded_functions", "server_version", "check_version", "ScriptCall"]

LIBRARY = "echomq_viz"
REQUIRED_VERSION = (7, 0)  # FUNCTION LOAD and ACL selectors are Redis 7.0's
# unlinkOrphaned-N takes a lease and up to 1000 keys; packThreeKeys 5 + 4 * 1000 arguments.
MAX_KEYS, MAX_ARGS, MAX_ARG_BYTES = 1001, 4005, 65536
_LISTING = "echomq_viz_functions"  # the function that names the others (no-writes)
_CALL = re.compile(r"""(?:\brcall|\bredis\.p?call)\(\s*(?:"(?P<command>[A-Za-z]+)"|(?P<dynamic>[A-Za-z_]))""")
# What a function may call and still be flagged: only reads, or reads and what frees or expires.
_READS = frozenset({"GET", "HGET", "HGETALL", "HMGET", "HEXISTS", "HKEYS", "HLEN", "EXISTS", "LLEN", "LPOS",
                    "LRANGE", "ZCARD", "ZCOUNT", "ZSCORE", "ZRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE",
                    "TYPE", "PTTL", "INFO"})
_FREES = frozenset({"DEL", "UNLINK", "PEXPIRE", "HDEL", "SREM", "ZREM", "LREM"})


class FunctionMissing(NoPermissionError):
    """A user that may run no code of its own called a script the server's library lacks."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class RedisTooOld(RuntimeError):
    """The server is older than the shared path needs (:data:`REQUIRED_VERSION`)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


# Both read a whole assembled source (up to 30 KB; the regex takes about half a millisecond):
# kept per source, since every Scripts() binds each of its scripts anew and the sources are few.
@functools.lru_cache(maxsize=256)
def function_name(source: str) -> str:
    """The library's name for ``source``: ``emq_`` and its SHA-1, as EVALSHA names it."""
    return "emq_" + hashlib.sha1(source.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=256)
def called_commands(source: str) -> tuple[frozenset[str], bool]:
    """The Redis commands ``source`` calls by name (upper case), and whether it
    also calls one named by a variable (``rcall(pushCmd, ...)``)."""
    named, dynamic = set(), False
    for match in _CALL.finditer(source):
        if match.group("command"):
            named.add(match.group("command").upper())
        else:
            dynamic = True
    return frozenset(named), dynamic


def function_flags(source: str) -> tuple[str, ...]:
    """``("no-writes",)`` for a script that only reads, ``("allow-oom",)`` for
    one that only reads, deletes or expires, ``()`` for every other one."""
    named, dynamic = called_commands(source)
    if dynamic:
        return ()
    if named <= _READS:
        return ("no-writes",)
    if named <= _READS | _FREES:
        return ("allow-oom",)
    return ()


def package_sources() -> list[str]:
    """Every script of ``lua/`` the package runs: the commands, the owners' lease
    scripts and the teaching variants (:mod:`.variants`)."""
    commands = [script.source for script in load_scripts().values()]
    owners = [path.read_text(encoding="utf-8") for path in sorted((LUA_DIR / "owners").glob("*.lua"))]
    return commands + owners + variant_sources()


def _lua_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def library_code(extra_sources: Iterable[str] = ()) -> str:
    """The library's code: every source of :func:`package_sources` and
    ``extra_sources`` (the teaching variants the experiments run) as a function."""
    sources = {function_name(source): source for source in [*package_sources(), *extra_sources]}
    parts = [f"#!lua name={LIBRARY}\n",
             "-- Made by echomq_viz.redis_side.functions from the files in lua/; load it with\n"
             "-- `echomq-viz acl add`. Each function is named after its script's SHA-1.\n"]
    for name in sorted(sources):
        source = sources[name]
        flags = ", ".join(_lua_string(flag) for flag in function_flags(source))
        parts.append(
            f"local function {name}(KEYS, ARGV)\n"
            f"  local argBytes = 0\n"
            f"  for i = 1, #ARGV do argBytes = argBytes + #ARGV[i] end\n"
            f"  if #KEYS > {MAX_KEYS} or #ARGV > {MAX_ARGS} or argBytes > {MAX_ARG_BYTES} then\n"
            f"    return redis.error_reply('ERR a call of this library takes at most {MAX_KEYS} keys and {MAX_ARGS} "
            f"arguments of {MAX_ARG_BYTES} bytes together, got ' .. #KEYS .. ' keys and ' .. #ARGV .. "
            f"' arguments of ' .. argBytes .. ' bytes')\n"
            f"  end\n"
            f"{source.rstrip()}\n"
            f"end\n"
            f"redis.register_function{{function_name = {_lua_string(name)}, callback = {name}, "
            f"flags = {{{flags}}}}}\n")
    listing = ", ".join(_lua_string(name) for name in sorted(sources))
    parts.append(f"redis.register_function{{function_name = {_lua_string(_LISTING)}, "
                 f"callback = function() return {{{listing}}} end, flags = {{'no-writes'}}}}\n")
    return "".join(parts)


# -- which servers hold the library ---------------------------------------------------------------

_known: dict[tuple, frozenset[str] | None] = {}
_known_lock = threading.Lock()


def _server_of(client: Any) -> tuple | None:
    """Which server, database and user a plain client reaches; None for a cluster."""
    if hasattr(client, "get_primaries") or not hasattr(client, "connection_pool"):
        return None
    kwargs = client.connection_pool.connection_kwargs
    return (kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}", kwargs.get("db", 0),
            kwargs.get("username"))


def loaded_functions(client: Any, *, refresh: bool = False) -> frozenset[str] | None:
    """The function names of the library on ``client``'s server, asked once per
    server and user (``refresh`` asks again); None where there is none (Redis
    6.2, a private server, a cluster, a user that may not call it)."""
    server = _server_of(client)
    if server is None:
        return None
    with _known_lock:
        if server in _known and not refresh:
            return _known[server]
    try:
        names: frozenset[str] | None = frozenset(
            reply_text(name) for name in client.execute_command("FCALL_RO", _LISTING, 0))
    except ResponseError:  # unknown command (6.2), no such function, NOPERM: EVALSHA then
        names = None
    with _known_lock:
        _known[server] = names
    return names


def cached_functions(client: Any) -> frozenset[str] | None:
    """What :func:`loaded_functions` found last for ``client``'s server, asking
    nothing (for code that runs while a connection is being set up)."""
    server = _server_of(client)
    with _known_lock:
        return _known.get(server) if server is not None else None


def server_version(client: Any) -> tuple[int, ...]:
    """The server's ``redis_version`` as numbers."""
    text = reply_text(client.info("server").get("redis_version", "0"))
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def check_version(client: Any) -> tuple[int, ...]:
    """The server's version, after checking it is :data:`REQUIRED_VERSION` or newer."""
    version = server_version(client)
    if version < REQUIRED_VERSION:
        needed = ".".join(map(str, REQUIRED_VERSION))
        raise RedisTooOld(f"a Redis shared by students must be Redis {needed} or newer (its Functions and ACL "
                          f"selectors keep each student to the package's own code), this one runs "
                          f"{'.'.join(map(str, version))}: upgrade it, or give each student a private server")
    return version


def load_library(operator: Any, extra_sources: Iterable[str] = ()) -> int:
    """Load (or replace) the library on the server ``operator`` reaches (a
    client of a user allowed ``FUNCTION``); how many functions it holds.

    :raises RedisTooOld: before Redis 7.0, with nothing loaded.
    :raises ValueError: on a cluster (each node would need it, and the caps one server).
    """
    if hasattr(operator, "get_primaries"):
        raise ValueError("a Redis shared by students must be one server, not a cluster: its users, caps and "
                         "function library live on each node apart")
    check_version(operator)
    code = library_code(extra_sources)
    operator.execute_command("FUNCTION", "LOAD", "REPLACE", code)
    names = loaded_functions(operator, refresh=True)
    with _known_lock:  # every other user on this server asks again too
        for server in [server for server in _known if server[:2] == _server_of(operator)[:2]]:
            del _known[server]
    return len(names or ())


class ScriptCall:
    """One Lua source, called like redis-py's registered script,
    ``call(keys=[...], args=[...])``: FCALL (``FCALL_RO`` for a read-only
    one) where the server's library holds it, else EVALSHA."""

    def __init__(self, client: Any, source: str) -> None:
        self.client = client
        self.source = source
        self.name = function_name(source)
        self.read_only = "no-writes" in function_flags(source)
        self._script = None

    @property
    def sha(self) -> str:
        """The source's SHA-1, as EVALSHA names it."""
        return self.name[len("emq_"):]

    def function(self) -> str | None:
        """The library function to call for this source on this server, or None: EVALSHA."""
        names = loaded_functions(self.client)
        return self.name if names is not None and self.name in names else None

    def _evalsha(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        if self._script is None:
            self._script = self.client.register_script(self.source)
        return self._script(keys=list(keys), args=list(args))

    def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = ()) -> Any:
        for last in (False, True):  # once more after asking the server afresh
            if self.function() is not None:
                try:
                    return self.client.execute_command("FCALL_RO" if self.read_only else "FCALL", self.name,
                                                       len(keys), *keys, *args)
                except ResponseError as exc:
                    if last or "function not found" not in str(exc).lower():
                        raise
                    loaded_functions(self.client, refresh=True)  # replaced meanwhile
                    continue
            try:
                return self._evalsha(keys, args)
            except NoPermissionError as exc:
                if "'evalsha'" not in str(exc):  # a key out of reach, not the command: the caller's to say
                    raise
                names = None if last else loaded_functions(self.client, refresh=True)
                if names is None or self.name not in names:
                    raise FunctionMissing(
                        f"this Redis user may run only the server's function library {LIBRARY!r}, which lacks this "
                        f"script of echomq-viz ({self.name}; {exc}): ask the course's operator to run "
                        "`echomq-viz acl add` with this version of echomq-viz") from None
        raise AssertionError("unreachable")
