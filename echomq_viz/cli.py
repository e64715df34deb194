"""The ``echomq-viz`` command: the notebooks in JupyterLab, as a Voila app, or
as offline HTML pages, with a private Redis.

- ``echomq-viz lab``    open the notebooks in JupyterLab;
- ``echomq-viz app``    serve them as a Voila app (no code, one page per
  notebook; idle kernels are culled);
- ``echomq-viz redis``  run the embedded server in the foreground and print how
  to connect to it;
- ``echomq-viz export`` write every notebook as an HTML page that renders its
  widgets and figures with no network (see :mod:`echomq_viz.export`).

``lab`` and ``app`` start the embedded Redis (unless ``REDIS_URL`` is set) and
hand its address to every kernel through ``REDIS_URL``. Options they do not
know go to JupyterLab or Voila. Ctrl-C, SIGTERM or SIGHUP stops the server
cleanly (it shuts its kernels down), then anything it left behind, then Redis:
no redis-server, kernel, jupyter or voila process outlives the command. A
second Ctrl-C stops everything at once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

from .server import ENV_URL, RedisServer, RedisUnavailable, connect

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 20.0  # how long a server may take to shut its kernels down

# Voila does not free a kernel when its page closes: cull idle ones.
VOILA_CULLING = (
    "--MappingKernelManager.cull_interval=5",
    "--MappingKernelManager.cull_idle_timeout=10",
)
# No "Would you like to get notified about official Jupyter news?" toast, no
# news fetched, no update check.
LAB_DISABLED_PLUGINS = ("@jupyterlab/apputils-extension:announcements",)
LAB_QUIET = (
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
)


def notebooks_dir(chosen: str | os.PathLike | None = None) -> Path:
    """The notebooks: ``chosen``, else ``./notebooks`` when run from a
    checkout, else the folder beside the package."""
    if chosen is not None:
        path = Path(chosen).expanduser().resolve()
        if not path.is_dir():
            raise SystemExit(f"echomq-viz: {chosen} is not a folder")
        return path
    for candidate in (Path.cwd() / "notebooks", Path(__file__).resolve().parents[1] / "notebooks"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("echomq-viz: no notebooks/ folder here; run it from the project's checkout "
                     "or pass --notebooks DIR")


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise SystemExit(f"echomq-viz: {package} is not installed here: pip install {package}")


def _start_or_reuse_redis() -> tuple[str, RedisServer | None]:
    url = os.environ.get(ENV_URL)
    if url:
        connect(url).close()  # fail now, with one clear line, rather than in every notebook
        return url, None
    server = RedisServer().start()
    return server.url, server


# -- processes: the whole family, found through /proc (or ps) ---------------------------------


def proc_table() -> dict[int, tuple[int, str, str]]:
    """Every process as ``pid -> (ppid, start time, state)``."""
    table: dict[int, tuple[int, str, str]] = {}
    if os.path.isdir("/proc/self"):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    data = handle.read()
            except OSError:  # gone meanwhile
                continue
            fields = data[data.rindex(b")") + 2:].split()  # the name may hold spaces
            table[int(name)] = (int(fields[1]), fields[19].decode(), fields[0].decode())
        return table
    listing = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "state=", "-o", "lstart="],
                             capture_output=True, text=True, check=False).stdout
    for line in listing.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[0].isdigit():
            table[int(parts[0])] = (int(parts[1]), parts[3].strip(), parts[2][:1])
    return table


def cmdline(pid: int) -> str:
    """A process's command line, or "" once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def descendants(root: int, table: dict[int, tuple[int, str, str]] | None = None) -> list[int]:
    """The pids of every process below ``root``, children first."""
    table = proc_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, queue = [], list(children.get(root, []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


class _Family:
    """Every process seen below a root, remembered with its start time so a
    reused pid is never signalled."""

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}

    def note(self, root: int, *, skip: Iterable[int] = ()) -> None:
        table = proc_table()
        skipped = set()
        for pid in skip:
            if pid in table:
                skipped.add(pid)
                skipped.update(descendants(pid, table))
        for pid in descendants(root, table):
            if pid not in skipped:
                self.seen[pid] = table[pid][1]

    def alive(self) -> list[int]:
        table = proc_table()
        return [pid for pid, start in self.seen.items()
                if pid in table and table[pid][1] == start and table[pid][2] not in ("Z", "X")]

    def end(self, grace: float = 5.0) -> list[int]:
        """SIGTERM whatever is still alive, SIGKILL it after ``grace``;
        return the pids that had to be stopped."""
        left = self.alive()
        for pid in left:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            _reap()
            time.sleep(0.1)
        for pid in self.alive():
            _signal(pid, signal.SIGKILL)
        _reap()
        return left


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _reap() -> None:
    """Collect orphans that were reparented to us (we are their subreaper)."""
    for pid, (ppid, _, state) in proc_table().items():
        if ppid == os.getpid() and state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _libc_prctl(option: int, value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the process-tree sweep still runs
        pass


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _server_preexec() -> None:
    """In the server's child, before exec: SIGTERM it (a clean stop) if we die."""
    if sys.platform.startswith("linux"):
        _libc_prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def supervise(argv: Sequence[str], env: dict[str, str], *, keep: Iterable[int] = (),
              grace: float = GRACE_SECONDS) -> int:
    """Run a server until it exits or we are told to stop; then make sure
    nothing it started is left.

    The server runs in its own session, so Ctrl-C in the terminal reaches only
    us; we pass a stop on as SIGTERM, the signal both JupyterLab and Voila
    answer by shutting their kernels down. Processes that outlive it (a kernel
    it could not stop) are ended too. ``keep`` are pids of ours that are not
    the server's business (the Redis supervisor), left alone here.
    """
    if sys.platform.startswith("linux"):
        _libc_prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphaned kernels come back to us
    wake = threading.Event()
    received: list[int] = []

    def handler(signum, frame):
        received.append(signum)
        wake.set()

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    family = _Family()
    keep = tuple(keep)
    try:
        child = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL,
                                 start_new_session=True, preexec_fn=_server_preexec)
        asked_at: float | None = None
        last_look = 0.0
        while child.poll() is None:
            wake.wait(0.25)
            now = time.monotonic()
            if now - last_look >= 1.0:  # who the server has started, for the sweep
                family.note(child.pid)
                last_look = now
            if wake.is_set():
                wake.clear()
                family.note(child.pid)
                if asked_at is None:
                    print("\nechomq-viz: stopping the server and its kernels ...",
                          file=sys.stderr, flush=True)
                    _signal(child.pid, signal.SIGTERM)
                    asked_at = now
                else:  # asked twice: no more waiting
                    asked_at = now - grace
            if asked_at is not None and now - asked_at >= grace:
                _kill_group(child.pid)
                child.wait()
        code = child.returncode
    finally:
        # Whatever the server left (or was reparented to us), then its group.
        family.note(os.getpid(), skip=keep)
        family.end()
        for signum, before in previous.items():
            signal.signal(signum, before)
    if received and code in (0, -signal.SIGTERM, -signal.SIGKILL, 128 + signal.SIGTERM):
        return 0
    return 128 - code if code < 0 else code


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        _signal(pid, signal.SIGKILL)


def _redis_pids(server: RedisServer | None) -> tuple[int, ...]:
    if server is None or server._supervisor is None:
        return ()
    return (server._supervisor.pid,)


# -- the commands ---------------------------------------------------------------------------------


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    _require("jupyterlab", "jupyterlab")
    root = notebooks_dir(args.notebooks)
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}", *LAB_QUIET]
    if args.port is not None:
        argv += [f"--ServerApp.port={args.port}", "--ServerApp.port_retries=0"]
    if args.no_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI machines often run as root
    # One more Jupyter config folder, first on JUPYTER_CONFIG_PATH, for this
    # run only: it switches the news and update announcements off, leaving the
    # user's own settings alone.
    with tempfile.TemporaryDirectory(prefix="echomq-viz-lab-") as config_dir:
        labconfig = Path(config_dir, "labconfig")
        labconfig.mkdir()
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {plugin: True for plugin in LAB_DISABLED_PLUGINS}}))
        paths = [config_dir, *filter(None, os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep))]
        return _serve([*argv, *extra], {"JUPYTER_CONFIG_PATH": os.pathsep.join(paths)})


def cmd_app(args: argparse.Namespace, extra: Sequence[str]) -> int:
    _require("voila", "voila")
    root = notebooks_dir(args.notebooks)
    argv = [sys.executable, "-m", "voila", str(root), *VOILA_CULLING,
            "--VoilaConfiguration.show_tracebacks=True"]
    if args.port is not None:
        argv += [f"--Voila.port={args.port}", "--Voila.port_retries=0"]
    if args.no_browser:
        argv.append("--no-browser")
    return _serve([*argv, *extra])


def _serve(argv: list[str], env: dict[str, str] | None = None) -> int:
    url, server = _start_or_reuse_redis()
    try:
        where = "embedded" if server else "your"
        print(f"echomq-viz: notebooks use the {where} Redis at {url}", flush=True)
        print("echomq-viz: Ctrl-C stops the server, its kernels and the Redis it started", flush=True)
        return supervise(argv, {**os.environ, **(env or {}), ENV_URL: url}, keep=_redis_pids(server))
    finally:
        if server is not None:
            server.stop()


def cmd_redis(args: argparse.Namespace) -> int:
    server = RedisServer(port=args.port).start()
    stop = threading.Event()
    previous = {signum: signal.signal(signum, lambda *_: stop.set()) for signum in STOP_SIGNALS}
    try:
        print(f"Redis {server.version()} running, pid {server.pid}, private to this command.")
        print("Connect from a shell or a notebook with:")
        print(f"  export {ENV_URL}='{server.url}'")
        cli = f"-p {server.port}" if server.port else f"-s {server.socket_path}"
        print(f"  redis-cli {cli}")
        print("Ctrl-C stops it and deletes its data.", flush=True)
        while not stop.wait(0.5):
            if not server.running:
                print("echomq-viz: redis-server exited", file=sys.stderr)
                return 1
    finally:
        server.stop()
        for signum, before in previous.items():
            signal.signal(signum, before)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .export import ExportError, export_notebooks

    try:
        written = export_notebooks(
            notebooks_dir(args.notebooks), Path(args.out), names=args.names or None,
            cache_dir=Path(args.cache) if args.cache else None, execute=not args.no_execute,
            log=lambda line: print(line, flush=True),
        )
    except ExportError as exc:
        print(f"echomq-viz export: {exc}", file=sys.stderr)
        return 2
    print(f"echomq-viz: {len(written)} pages in {Path(args.out).resolve()}; "
          "open them from disk, no network needed")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="echomq-viz",
        description="The notebooks in JupyterLab, as a Voila app or as offline HTML pages, "
                    "with a private Redis.",
        epilog="Options lab and app do not know go to JupyterLab or Voila, "
               "e.g. echomq-viz app --theme=dark")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{lab,app,redis,export}")
    parser.commands = {}  # name -> its parser, for errors found after parsing
    for name, helptext, portname in (
        ("lab", "open the notebooks in JupyterLab with the embedded Redis", "JupyterLab's"),
        ("app", "serve the notebooks as a Voila app with the embedded Redis", "Voila's"),
    ):
        command = sub.add_parser(name, help=helptext)
        command.add_argument("--port", type=int, help=f"{portname} port (fails if it is taken)")
        command.add_argument("--no-browser", action="store_true", help="do not open a browser")
        command.add_argument("--notebooks", metavar="DIR", help="the notebooks folder (default ./notebooks)")
        parser.commands[name] = command
    redis_cmd = sub.add_parser("redis", help="run the embedded Redis in the foreground")
    parser.commands["redis"] = redis_cmd
    redis_cmd.add_argument("--port", type=int, default=None,
                           help="serve on 127.0.0.1:PORT (0 picks one) instead of a unix socket")
    export = sub.add_parser("export", help="write the notebooks as offline HTML pages")
    export.add_argument("names", nargs="*", help="notebook files to export (default: all)")
    export.add_argument("--out", default="build/html", help="output folder (default build/html)")
    export.add_argument("--notebooks", metavar="DIR", help="the notebooks folder (default ./notebooks)")
    export.add_argument("--cache", metavar="DIR",
                        help="where the fetched JavaScript is kept (default ~/.cache/echomq-viz)")
    export.add_argument("--no-execute", action="store_true",
                        help="use the outputs and widget state stored in the notebooks as they are "
                             "(their figures are blank: only a run records them)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("lab", "app"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    port = getattr(args, "port", None)
    if port is not None and not 0 <= port <= 65535:
        parser.commands[args.command].error(f"argument --port: port {port} is outside 0..65535")
    try:
        if args.command == "redis":
            return cmd_redis(args)
        if args.command == "export":
            return cmd_export(args)
        if args.command == "app":
            return cmd_app(args, extra)
        return cmd_lab(args, extra)
    except RedisUnavailable as exc:
        print(f"echomq-viz: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
