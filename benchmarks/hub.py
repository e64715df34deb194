"""A course on a JupyterHub: N students, each on a server of their own, drag the hero's sliders.

    python benchmarks/hub.py --sessions 20 --seconds 20 --json OUT

A real JupyterHub (PyPI ``jupyterhub``, npm ``configurable-http-proxy``) on
loopback in a temporary folder, with ``DummyAuthenticator`` and
``SimpleLocalProcessSpawner``, so no system user is needed; the spawner runs
``echomq-viz singleuser``, as a school's hub would. Through the hub's REST API
the students' servers are started, a few at a time; then each student,
through the hub's proxy and with an API token of their own, opens notebook
01 as a Voila page (``/user/<name>/voila/render/…``) and speaks the kernel
protocol exactly as ``benchmarks/classroom.py`` does (its ``Student``).
In the same run, the same N students on one ``echomq-viz app`` give the
comparison. The hub is always stopped at the end, which stops every server,
kernel and Redis.

What is reported:

- ``hub_sessions``: students still at work at the end of the window;
- ``hub_p95_ms``: a press on Redis (or a live move) sent -> the kernel's answer naming that position,
  as in classroom.py (its class at work: drags in the page, a press every few seconds);
- ``hub_errors``, ``hub_crosstalk``: as in classroom.py;
- ``hub_rss_per_student_mb``: resident memory of one student's server, kernel
  and private Redis together (the largest of the N);
- ``hub_cpu_per_student_pct``: CPU of one student's processes while
  dragging, in percent of one core (the mean over the N);
- ``hub_start_s``: a student's server from the start request to ready (p95);
- ``hub_vs_app_p95``: ``hub_p95_ms`` over the app's p95 at the same N.

``--shared-redis`` puts every student on one Redis with a password
(``REDIS_URL`` from the spawner's environment) instead of a private one each.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterable

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import classroom  # noqa: E402  (benchmarks/ on sys.path)
from report import print_results  # noqa: E402
from echomq_viz.launcher.export import ExportError, _slug  # noqa: E402
from echomq_viz.peers.npm import cache_root, one_process_at_a_time, run_npm  # noqa: E402
from echomq_viz.redis_side.server import RedisServer, free_tcp_port  # noqa: E402

PROXY = "configurable-http-proxy@4"  # npm: the proxy JupyterHub starts in front of itself and the servers
SERVICE = "echomq-viz-bench"  # the hub service whose token drives the REST API
STARTING_AT_ONCE = 3  # server start requests in flight at a time
START_TIMEOUT_S = 180.0

GOALS = {
    "hub_sessions": (">=", 20), "hub_p95_ms": ("<=", classroom.P95_LIMIT_MS),
    "hub_errors": ("<=", 0), "hub_crosstalk": ("<=", 0),
}


# -- the proxy, fetched once -----------------------------------------------------------------------


def proxy_command(cache_dir: Path | None = None, *, log: Callable[[str], None] = lambda _: None) -> list[str]:
    """``configurable-http-proxy``: from PATH, else installed once with npm
    into ``cache_dir/js/`` (``~/.cache/echomq-viz``, where ``echomq-viz export``
    keeps its JavaScript)."""
    found = shutil.which("configurable-http-proxy")
    if found:
        return [found]
    folder = (cache_dir or cache_root()) / "js" / _slug(PROXY)
    binary = folder / "node_modules" / ".bin" / "configurable-http-proxy"
    with one_process_at_a_time(folder):
        if not binary.is_file():
            npm = shutil.which("npm")
            if npm is None:
                raise ExportError("npm is needed once, to fetch configurable-http-proxy (apt-get install npm)")
            log(f"fetching {PROXY} with npm install into {folder}")
            run_npm(npm, ["install", "--prefix", str(folder), "--no-audit", "--no-fund", "--omit=dev", PROXY],
                    cwd=folder, what=f"npm install {PROXY}", error=ExportError)
            if not binary.is_file():
                raise ExportError(f"npm install {PROXY} failed: it wrote no {binary.name}")
    return [str(binary)]


# -- the hub ----------------------------------------------------------------------------------------

CONFIG = """\
# Written by benchmarks/hub.py: a throwaway JupyterHub on loopback.
import json, sys
settings = json.loads({settings!r})
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%d" % settings["proxy_api_port"]
c.ConfigurableHTTPProxy.command = settings["proxy"]
c.JupyterHub.db_url = "sqlite:///" + settings["folder"] + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = settings["folder"] + "/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["folder"] + "/home/{{username}}"
c.Spawner.ip = "127.0.0.1"
c.Spawner.cmd = [sys.executable, "-m", "echomq_viz", "singleuser"]
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL", "PYTHONPATH"]
# Each server's own temp folder parent: the launcher sweeps leftovers of dead runs there.
c.Spawner.environment = {{"TMPDIR": settings["folder"] + "/tmp"}}
c.Spawner.start_timeout = c.Spawner.http_timeout = settings["start_timeout"]
c.JupyterHub.services = [{{"name": settings["service"], "api_token": settings["token"]}}]
c.JupyterHub.load_roles = [{{
    "name": settings["service"], "services": [settings["service"]],
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "read:hub"],
}}]


def shared_redis(spawner):
    # Some students on one shared Redis (REDIS_URL), the others on a private one each.
    if spawner.user.name in settings["shared_users"]:
        spawner.environment = {{**spawner.environment, "REDIS_URL": settings["shared_url"]}}


c.Spawner.pre_spawn_hook = shared_redis
"""


def _distinct_ports(count: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_tcp_port()
        if port not in ports:
            ports.append(port)
    return ports


class Hub:
    """A real JupyterHub on loopback, in ``folder`` (homes in ``folder/home``),
    stopped (SIGTERM: every server, its kernels and Redis, then the proxy)
    when the block ends, whatever happened inside.

    :param shared_url: the shared Redis for the students in ``shared_users``
        (the others get a private Redis each).
    """

    def __init__(self, folder: Path, *, shared_url: str | None = None, shared_users: Iterable[str] = (),
                 log: Callable[[str], None] = lambda _: None) -> None:
        self.folder = Path(folder)
        self.port, self.hub_port, self.proxy_api_port = _distinct_ports(3)
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(24)
        self.shared_url, self.shared_users = shared_url, sorted(shared_users)
        self.log = log
        self.process: subprocess.Popen | None = None
        self.seen: dict[int, tuple[float, str]] = {}  # every process under the hub, noted while it ran
        self.leftovers: list[str] = []

    def __enter__(self) -> "Hub":
        (self.folder / "tmp").mkdir(mode=0o700, parents=True, exist_ok=True)
        settings = {
            "port": self.port, "hub_port": self.hub_port, "proxy_api_port": self.proxy_api_port,
            "proxy": proxy_command(log=self.log), "folder": str(self.folder),
            "service": SERVICE, "token": self.token, "start_timeout": int(START_TIMEOUT_S),
            "shared_url": self.shared_url, "shared_users": self.shared_users,
        }
        config = self.folder / "jupyterhub_config.py"
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds the shared Redis password
        with os.fdopen(fd, "w") as handle:
            handle.write(CONFIG.format(settings=json.dumps(settings)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env.pop("REDIS_URL", None)  # a student's Redis is private unless the hook says otherwise
        self.log_path = self.folder / "jupyterhub.log"
        with open(self.log_path, "wb") as sink:
            self.process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)],
                                            cwd=self.folder, env=env, stdin=subprocess.DEVNULL,
                                            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait(lambda: self.api("GET", "/") is not None, 60, "the hub did not answer within 60 s")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.process is None:
            return
        self.note_family()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the hub stops every server, then its proxy
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        deadline = time.monotonic() + 10
        while self.still_running() and time.monotonic() < deadline:
            time.sleep(0.2)
        running = self.still_running()
        noted = {line.split()[0] for line in running}
        self.leftovers = running + [line for line in self._proxies() if line.split()[0] not in noted]
        for line in self.leftovers:  # noted, then ended: a benchmark never leaves processes behind
            try:
                psutil.Process(int(line.split()[0])).kill()
            except psutil.Error:
                pass

    # -- the REST API ------------------------------------------------------------------------------

    def api(self, method: str, path: str, body: dict | None = None, *, token: str | None = None):
        """The hub's REST API (``/hub/api``): the decoded answer, None for an empty one."""
        request = urllib.request.Request(
            f"{self.url}/hub/api{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {token or self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            payload = response.read()
        return json.loads(payload) if payload else None

    def start_server(self, name: str) -> float:
        """Create ``name`` if new, start their server, wait until it is ready:
        the seconds from the request to ready."""
        started = time.monotonic()
        try:
            if self._user(name) is None:
                self.api("POST", f"/users/{name}")
            self.api("POST", f"/users/{name}/server")
        except urllib.error.HTTPError as exc:  # the reason is in the hub's log, not in the answer
            raise RuntimeError(f"starting {name}'s server: HTTP {exc.code}\n{self.log_tail()}") from None
        self._wait(lambda: self._server(name).get("ready"), START_TIMEOUT_S,
                   lambda: f"{name}'s server was not ready within {START_TIMEOUT_S:g} s\n{self.log_tail()}")
        self.note_family()
        return time.monotonic() - started

    def stop_server(self, name: str) -> None:
        self.note_family()
        self.api("DELETE", f"/users/{name}/server")
        self._wait(lambda: not self._server(name), 90, f"{name}'s server did not stop within 90 s")

    def user_token(self, name: str) -> str:
        """A fresh API token of ``name``'s own (an hour)."""
        return self.api("POST", f"/users/{name}/tokens", {"note": "echomq-viz", "expires_in": 3600})["token"]

    def server_url(self, name: str) -> str:
        return f"{self.url}/user/{name}"

    def _user(self, name: str) -> dict | None:
        try:
            return self.api("GET", f"/users/{name}")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def _server(self, name: str) -> dict:
        return ((self._user(name) or {}).get("servers") or {}).get("", {})

    def _wait(self, check: Callable[[], object], timeout: float, message) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub exited with {self.process.returncode}\n{self.log_tail()}")
            try:
                if check():
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(message() if callable(message) else message)
            time.sleep(0.2)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- its processes -----------------------------------------------------------------------------

    def family(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def note_family(self) -> None:
        for proc in self.family():
            try:
                self.seen.setdefault(proc.pid, (proc.create_time(), " ".join(proc.cmdline())))
            except psutil.Error:
                pass

    def _proxies(self) -> list[str]:
        """This hub's proxy by its API port, whatever its pid ("pid command"): the proxy runs in a
        session of its own, so one the hub started again, after the family was noted, is found too
        (a proxy left so outlived a run once, unseen)."""
        port = f"--api-port {self.proxy_api_port}"
        found = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            command = " ".join(proc.info["cmdline"] or ())
            if "configurable-http-proxy" in command and port in command:
                found.append(f"{proc.info['pid']} {command[:160]}")
        return found

    def still_running(self) -> list[str]:
        """Processes once under the hub that are still there: "pid command"."""
        left = []
        for pid, (created, command) in self.seen.items():
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == created and proc.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                    left.append(f"{pid} {command[:160]}")
            except psutil.Error:
                pass
        return left

    def student_processes(self, name: str) -> list[psutil.Process]:
        """``name``'s server (the ``echomq-viz singleuser`` the spawner started)
        and everything below it: jupyterhub-singleuser, kernels, private Redis."""
        for proc in self.family():
            try:
                if "singleuser" in proc.cmdline() and proc.environ().get("JUPYTERHUB_USER") == name:
                    return [proc, *proc.children(recursive=True)]
            except psutil.Error:
                continue
        return []

    def student_rss_mb(self, name: str) -> float:
        return self._student_sum(name, lambda proc: proc.memory_info().rss) / 2**20

    def student_cpu_seconds(self, name: str) -> float:
        return self._student_sum(name, lambda proc: sum(proc.cpu_times()[:2]))

    def _student_sum(self, name: str, measure: Callable[[psutil.Process], float]) -> float:
        total = 0.0
        for proc in self.student_processes(name):
            try:
                total += measure(proc)
            except psutil.Error:
                pass
        return total


# -- students through the hub's proxy ---------------------------------------------------------------
#
# classroom.Student fetches the page and opens the kernel's websocket with no
# credentials (the app has no log-in). Through a hub every request needs the
# student's own token: these wrappers stand in for the two names it calls,
# adding the token of the student whose task is running (a context variable,
# so concurrent students never share one) and nothing when none is set.

_TOKEN: contextvars.ContextVar[str | None] = contextvars.ContextVar("hub_student_token", default=None)


def _auth_headers() -> dict[str, str]:
    token = _TOKEN.get()
    return {"Authorization": f"token {token}"} if token else {}


class _TokenHTTPClient:
    def fetch(self, url: str, **kwargs):
        return AsyncHTTPClient().fetch(url, headers=_auth_headers(), **kwargs)


def _token_websocket_connect(url: str, **kwargs):
    return websocket_connect(HTTPRequest(url, headers=_auth_headers()), **kwargs)


classroom.AsyncHTTPClient = _TokenHTTPClient
classroom.websocket_connect = _token_websocket_connect


class HubStudent(classroom.Student):
    """classroom.py's student, at ``/user/<name>`` with a token of their own."""

    def __init__(self, number: int, server_url: str, token: str, record: classroom.Record) -> None:
        super().__init__(number, server_url, record)
        self.token = token

    async def join(self) -> None:
        _TOKEN.set(self.token)  # this task's context only (asyncio copies it per task)
        await super().join()


async def _class_at_work(students: list[HubStudent], seconds: float, record: classroom.Record,
                         cpu_seconds: Callable[[], float]) -> dict:
    stop = asyncio.Event()
    joined = await classroom._join_all(students, record)
    hands = [asyncio.ensure_future(s.drag(stop)) for s in joined]
    try:
        cpu_before, window_start = cpu_seconds(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu_used, window_end = cpu_seconds() - cpu_before, time.monotonic()
    finally:
        stop.set()
        await asyncio.gather(*hands, return_exceptions=True)
    inside = lambda rows: [ms for at, ms in rows if window_start <= at < window_end]  # noqa: E731
    moves, presses = inside(record.moves), inside(record.presses)
    answered = moves + presses  # every Redis answer the students waited for, as classroom.py counts them
    active = sum(not s.closed for s in joined)
    await asyncio.gather(*(s.leave() for s in joined), return_exceptions=True)
    return {"hub_sessions": active, "hub_moves": len(moves), "hub_presses": len(presses),
            "hub_p50_ms": classroom._percentile(answered, 50), "hub_p95_ms": classroom._percentile(answered, 95),
            # percent of one core per student while dragging: server, kernel and Redis together
            "hub_cpu_per_student_pct": round(cpu_used / (window_end - window_start) / max(len(joined), 1) * 100, 1)}


def bench_hub(sessions: int, seconds: float = 20.0, *, shared_redis: bool = False, compare: bool = True,
              log=print) -> dict:
    """N students on a hub (servers started through its API, then a window of
    dragging), then, with ``compare``, the same N on ``echomq-viz app``."""
    names = [f"student{n:03d}" for n in range(sessions)]
    record = classroom.Record()
    results: dict = {}
    folder = Path(tempfile.mkdtemp(prefix="emqhub-"))  # short: unix socket paths live below it
    try:
        with (RedisServer(port=0) if shared_redis else contextlib.nullcontext()) as redis, \
                Hub(folder, shared_url=redis.url if redis else None, shared_users=names if redis else (),
                    log=log) as hub:
            log(f"hub at {hub.url}; starting {sessions} servers, {STARTING_AT_ONCE} at a time")
            start_s = _start_all(hub, names)
            tokens = {name: hub.user_token(name) for name in names}
            students = [HubStudent(n, hub.server_url(name), tokens[name], record) for n, name in enumerate(names)]
            cpu = lambda: sum(hub.student_cpu_seconds(name) for name in names)  # noqa: E731
            results.update(asyncio.run(_class_at_work(students, seconds, record, cpu)))
            rss = [hub.student_rss_mb(name) for name in names]
            results.update({
                "hub_errors": len(record.errors), "hub_crosstalk": len(record.crosstalk),
                "hub_rss_per_student_mb": round(max(rss), 1) if rss else None,
                "hub_start_s": classroom._percentile(start_s, 95) if start_s else None,
                "hub_redis": "shared, with a password" if shared_redis else "private per student",
                "hub_error_samples": [what for _, what in record.errors[:5]],
                "hub_crosstalk_samples": [what for _, what in record.crosstalk[:5]],
            })
        results["hub_leftover_processes"] = len(hub.leftovers)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    log(" ".join(f"{k}={v}" for k, v in results.items() if not k.endswith("_samples")))
    if compare:
        app = classroom.bench_classroom(sessions, [sessions], seconds, log=log)
        results["hub_app_p95_ms"] = app["classroom_p95_ms"]
        hub_p95, app_p95 = results.get("hub_p95_ms"), app["classroom_p95_ms"]
        results["hub_vs_app_p95"] = round(hub_p95 / app_p95, 2) if hub_p95 and app_p95 else None
    results["hub_seconds"] = seconds
    return results


def _start_all(hub: Hub, names: list[str]) -> list[float]:
    """Every server started, STARTING_AT_ONCE requests in flight: the seconds each took."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(STARTING_AT_ONCE) as pool:
        return list(pool.map(hub.start_server, names))


def _bounded(kind: type, low: float, high: float):
    """An argparse type: a ``kind`` number in ``low..high``."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be a number in {low:g}..{high:g}, got {text!r}")
        return value
    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=_bounded(int, 1, 200), default=20, help="students (1..200, default 20)")
    parser.add_argument("--seconds", type=_bounded(float, 1, 600), default=20.0,
                        help="measured seconds (1..600, default 20)")
    parser.add_argument("--shared-redis", action="store_true", help="every student on one Redis with a password")
    parser.add_argument("--no-compare", action="store_true", help="skip the same class on echomq-viz app")
    parser.add_argument("--json", metavar="OUT", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    results = bench_hub(args.sessions, args.seconds, shared_redis=args.shared_redis, compare=not args.no_compare)
    print_results(results, GOALS, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
