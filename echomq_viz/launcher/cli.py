"""The ``echomq-viz`` command: the notebooks in JupyterLab, as a Voila app, or
as offline HTML pages, with a private Redis.

- ``echomq-viz lab``    open the notebooks in JupyterLab;
- ``echomq-viz app``    serve them as a Voila app (no code, no tracebacks, one
  page per notebook; idle kernels are culled);
- ``echomq-viz redis``  run the embedded server in the foreground and say how
  to connect to it;
- ``echomq-viz clean``  remove the demo keys no live kernel owns from a Redis;
- ``echomq-viz acl add`` a Redis user per student on a shared Redis; ``echomq-viz gate``
  stands between them and it (:mod:`echomq_viz.launcher.gate_command`);
- ``echomq-viz export`` write every notebook as an HTML page that renders its
  widgets and figures with no network (see :mod:`echomq_viz.launcher.export`);
- ``echomq-viz singleuser`` a student's server on a JupyterHub (see :mod:`echomq_viz.launcher.hub`).

``lab`` and ``app`` start the embedded Redis (unless ``REDIS_URL`` is set, whose
orphaned demo keys they then clean once) and hand its address to every kernel
through ``REDIS_URL``. Options they do not know go to JupyterLab or Voila.
Ctrl-C, SIGTERM or SIGHUP stops the server cleanly (it shuts its kernels down),
then anything it left behind, then Redis: no redis-server, kernel, jupyter or
voila process outlives the command. A second Ctrl-C stops everything at once.
An embedded redis-server that dies is started again on the same address
(empty), a few times at most, and each time one line says so. Every run starts
by deleting what a killed run (``kill -9``) of this user left in the temp folder.
The kernels of ``lab``, ``app``, ``singleuser`` and ``export`` talk over Unix
sockets (the app's and the export's in a short folder of the run's own when
``TMPDIR`` is too long for their paths; else one line says why TCP), and find
Matplotlib's font cache built (see :mod:`echomq_viz.launcher._kernel_channels`).
What a run cannot work with is refused before anything starts, in one line
(:mod:`echomq_viz.launcher.preflight`, :func:`echomq_viz.launcher.exposure.refusal`).
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Sequence

from echomq_viz.launcher._startup import skip_iri_grammar
from echomq_viz.launcher._kernel_channels import (ipc_problem, runtime_dir, socket_folder, sweep_kernel_folders,
                                                  warm_font_cache)
from echomq_viz.redis_side._process import StopSignals, owned_tempdir, supervise, sweep_leftovers
from echomq_viz.launcher import exposure
from echomq_viz.launcher._app_orphans import clean_orphans_at
from echomq_viz.launcher.operator_commands import cmd_acl, cmd_clean, job_caps, one_line
from echomq_viz.launcher.command_line import ENV_INSPECT, build_parser
from echomq_viz.launcher.lab_settings import LAB_NO_DELAY, LAB_QUIET, quiet_lab_config_path
from echomq_viz.launcher.notebook_copies import USER_FOLDER, lab_notebooks, notebooks_dir
from echomq_viz.launcher.preflight import no_room_line, redis_url_problem, replica_problem, temp_folder_problem
from echomq_viz.launcher.seats import (MAX_KERNELS_RANGE, SEAT_IDLE_MINUTES_RANGE, SEAT_IDLE_S, SEATS_PER_VISITOR,
                                       SEATS_PER_VISITOR_RANGE, Rotation, cap_line, default_max_kernels)
from echomq_viz.redis_side.server import (ENV_URL, RedisServer, RedisUnavailable, connect, redact_url,
                                          url_or_private_server)
from echomq_viz.launcher.versions import version_warning

__all__ = ["main", "build_parser", "USER_FOLDER", "ENV_INSPECT", "app_environment", "kernel_transport"]

REDIS_RESTARTS = 5  # how often the embedded redis-server is started again after it died

# Voila does not free a kernel when its page closes: cull idle ones.
VOILA_CULLING = (
    "--MappingKernelManager.cull_interval=5",
    "--MappingKernelManager.cull_idle_timeout=10",
)
# On a busy server a cell's last outputs can come seconds after its reply; nbclient
# waits 4 s for them, then renders the page without them (a page with no figure).
VOILA_OUTPUT_WAIT = ("--VoilaExecutor.iopub_timeout=30",)
# A visitor sees that a cell failed, never how (no traceback, no stderr).
VOILA_NO_TRACEBACKS = (
    "--VoilaConfiguration.show_tracebacks=False",
    "--VoilaExecutor.cell_error_instruction=The details are in the server's log.",
)
# The app's pages load only the JupyterLab extensions they render with: another one
# installed here (Notebook 7's, say) fails in a Voila page, with errors in its console.
VOILA_EXTENSIONS = tuple(f"--VoilaConfiguration.extension_allowlist={name}" for name in (
    "@jupyter-widgets/jupyterlab-manager", "@voila-dashboards/widgets-manager7",
    "@voila-dashboards/widgets-manager8", "anywidget", "jupyterlab_pygments"))  # one option a name


# The commands that start servers or kernels, each checking first the installed versions against the tested ranges
STARTS_SERVERS = ("lab", "app", "redis", "export", "singleuser")


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise SystemExit(f"echomq-viz: {package} is not installed here: pip install {package}")


# -- Redis for the kernels ---------------------------------------------------------------------


def _say(line: str) -> None:
    print(f"echomq-viz: {line}", file=sys.stderr, flush=True)


def _sweep() -> None:
    for path in sweep_leftovers():
        _say(f"deleted {path}, left by a run that was killed")
    sweep_kernel_folders()  # quietly: a killed run's kernels' sockets, outside TMPDIR when it was too long


def _clean_at_start(url: str) -> None:
    """Your Redis may hold demo keys of kernels that died: remove them once, never fatally."""
    try:
        removed = clean_orphans_at(url)
    except Exception as exc:  # the notebooks work without it: say why, go on
        _say(f"could not clean orphaned demo keys at {redact_url(url)}: {one_line(exc, url)}")
        return
    if removed:
        _say(f"removed {removed} orphaned demo key(s) at {redact_url(url)}")


def _redis_watch(server: RedisServer | None) -> Callable[[], bool] | None:
    """For :func:`supervise`: report restarts of the embedded redis-server;
    False, after one line saying why, once it is gone for good."""
    if server is None:
        return None

    def watch() -> bool:
        news = server.events()
        # "died" may be read while the supervisor is still cleaning up: it ends the watch all the same
        if server.running and server.death is None:
            for line in news:
                _say(line)
            return True
        news += server.events()  # it may have said why between the read above and its exit
        for line in news:
            if line != server.death:
                _say(line)
        _say(f"{server.death or 'the embedded redis-server is gone'}; stopping")
        return False

    return watch


def _redis_pids(server: RedisServer | None) -> tuple[int, ...]:
    return (server.supervisor_pid,) if server is not None and server.supervisor_pid else ()


def _replica_line(url: str) -> str | None:
    """Every notebook writes its demo queue first thing: the line refusing a replica, or None."""
    client = connect(url)
    try:
        return replica_problem(client, redact_url(f"{ENV_URL}={url}", (url,)))
    finally:
        client.close()


def _serve(argv: list[str], env: dict[str, str], *, then: Callable[[], list[str]] | None = None,
           on_private: Callable[[str], None] | None = None) -> int:
    """Run ``argv`` (and what ``then`` returns, once Redis answers) with Redis, until it exits;
    ``on_private(url)`` prepares a Redis this run started (a shared one is its operator's)."""
    _sweep()
    url, server = url_or_private_server(check=True, restarts=REDIS_RESTARTS)
    if server is None and (refusal := _replica_line(url)):
        print(refusal, file=sys.stderr, flush=True)  # nothing started
        return 2
    try:
        if server is not None and on_private is not None:
            on_private(url)  # inside: the private server stops whatever happens
        try:
            argv = [*argv, *then()] if then is not None else argv  # e.g. lab's copy: written once Redis is checked
        except SystemExit as refused:  # said now: "stopped" stays the last line
            if isinstance(refused.code, str):
                print(refused.code, file=sys.stderr, flush=True)
                refused.code = 2
            raise
        print(f"echomq-viz: notebooks use {'the embedded' if server else 'your'} Redis at {redact_url(url)}",
              flush=True)
        if server is None:
            _clean_at_start(url)
        print("echomq-viz: Ctrl-C stops the server, its kernels and the Redis it started", flush=True)
        env = {**os.environ, **env, ENV_URL: url}
        warm_font_cache(env)  # else a new home's first kernel may say it builds one, in the notebook
        return supervise(argv, env, keep=_redis_pids(server),
                         watch=_redis_watch(server))
    finally:
        if server is not None:
            server.stop()
        _say("stopped")  # the last line: nothing it started is left


def _public(command: str, args: argparse.Namespace, extra: Sequence[str], run_dir: Path) -> dict[str, str]:
    """With --public: the token and links files, the warning; what the server's environment needs."""
    port = exposure.port(command, args.port, args.public)
    return exposure.Publication.of(command, extra, port, run_dir).announce(_say) if args.public else {}


# -- the commands ---------------------------------------------------------------------------------


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    _require("jupyterlab", "jupyterlab")
    chosen = notebooks_dir(args.notebooks, say=_say) if args.notebooks is not None else None
    # echomq_viz.launcher._jupyterlab: JupyterLab itself, without a false deprecation warning
    argv = [sys.executable, "-m", "echomq_viz.launcher._jupyterlab", *exposure.pinned("--ServerApp.ip", extra), *LAB_QUIET,
            LAB_NO_DELAY]
    port = exposure.port("lab", args.port, args.public)
    if port is not None:
        argv += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if args.no_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI machines often run as root
    # JupyterLab's kernels: connection files in the runtime folder (not TMPDIR's: JUPYTER_RUNTIME_DIR moves it)
    if (why := ipc_problem(runtime_dir())) is None:
        argv.append("--KernelManager.transport=ipc")
    else:
        _say(f"JupyterLab's kernels talk over loopback TCP ports, not Unix sockets: {why}")
    with owned_tempdir("echomq-viz-lab-") as run_dir:
        env = {"JUPYTER_CONFIG_PATH": quiet_lab_config_path(run_dir), **_public("lab", args, extra, run_dir)}
        token = None if args.public else exposure.own_token(extra, run_dir)
        if token is not None:
            env[exposure.TOKEN_FILE_ENV] = str(token)  # never printed: the browser opens with it

        def then() -> list[str]:  # once Redis is there: what the server starts with
            root = chosen or lab_notebooks(say=_say)
            if token is not None:  # for another browser, or this one's tab closed
                _say(f"the token to log in with is in {token} (yours only, gone when this stops)")
            return [f"--ServerApp.root_dir={root}"]
        return _serve([*argv, *extra], env, then=then)


def app_environment(inspect_any: bool) -> dict[str, str]:
    """What the app's kernels get besides ``REDIS_URL``."""
    return {ENV_INSPECT: "any" if inspect_any else "own"}


def kernel_transport(run_dir: Path):
    """Where the app's kernels go (a context manager): on Unix sockets in the
    run's private folder (Voila puts their connection files in a
    ``voila_XXXXXXXX`` folder there), or in a short one of the run's own when
    their paths would not fit: see :func:`echomq_viz.launcher._kernel_channels.socket_folder`."""
    return socket_folder(run_dir, below="voila_12345678")


def cmd_app(args: argparse.Namespace, extra: Sequence[str]) -> int:
    _require("voila", "voila")
    extra = exposure.for_voila(extra)
    root = notebooks_dir(args.notebooks, say=_say)
    # echomq_viz.launcher._voila: Voila itself, with a reader that one odd client cannot stall
    argv = [sys.executable, "-m", "echomq_viz.launcher._voila", str(root), *exposure.pinned("--Voila.ip", extra),
            *VOILA_CULLING, *VOILA_OUTPUT_WAIT, *VOILA_NO_TRACEBACKS, *VOILA_EXTENSIONS]
    caps = job_caps(args)  # checked before anything starts
    seats = args.max_kernels or default_max_kernels()
    rotation = Rotation(args.seats_per_visitor or SEATS_PER_VISITOR,
                        round(args.seat_idle_minutes * 60) if args.seat_idle_minutes is not None else SEAT_IDLE_S)
    argv += [f"--AppKernelManager.max_kernels={seats}", *rotation.options()]
    port = exposure.port("app", args.port, args.public)
    if port is not None:
        argv += [f"--Voila.port={port}", "--Voila.port_retries=0"]
    if args.no_browser:
        argv.append("--no-browser")
    # Voila's own temp folder (kernel connection files) inside this run's, so
    # a killed run leaves one folder, which the next run deletes.
    with owned_tempdir("echomq-viz-app-") as run_dir, kernel_transport(run_dir) as kernels:
        argv += [f"--Voila.connection_dir_root={kernels.path}", *kernels.options]
        env = {**app_environment(args.inspect_any), **_public("app", args, extra, run_dir)}
        token = None if args.public else exposure.own_token(extra, run_dir)
        if token is not None:
            env[exposure.TOKEN_FILE_ENV] = str(token)  # never printed: the browser opens with it

        def say_the_cap() -> list[str]:  # once Redis answered: a bad REDIS_URL stays the one line
            if token is not None:  # for another browser, or a student's tab on this machine
                _say(f"the token to log in with is in {token} (yours only, gone when this stops)")
            _say(cap_line(seats, chosen=args.max_kernels is not None, rotation=rotation))
            if kernels.why_tcp:
                print(kernels.why_tcp, file=sys.stderr, flush=True)
            # notebook 10's runs made (or found kept) now, not behind its first visitor's spinner
            from echomq_viz.peers.findings import prepare_in_background

            making = prepare_in_background()  # started here: it ends with this (the main) thread
            threading.Thread(target=making.wait, name="echomq-viz-findings", daemon=True).start()  # reaped
            return []

        def cap_each_kernel(url: str) -> None:  # the app's own Redis: each kernel a student within caps
            from echomq_viz.redis_side.caps import set_caps
            from echomq_viz.redis_side.server import connect

            set_caps(connect(url), caps)
            _say(f"each visitor's demo queues hold at most {caps.describe()}")
        return _serve([*argv, *extra], env, then=say_the_cap, on_private=cap_each_kernel)


def cmd_singleuser(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """A student's server on a JupyterHub: see :mod:`echomq_viz.launcher.hub`."""
    _require("jupyterhub", "jupyterhub")
    from echomq_viz.launcher.hub import singleuser_argv, singleuser_env, student_notebooks  # only this command needs them

    root = student_notebooks(args.notebooks, say=_say)
    with owned_tempdir("echomq-viz-hub-") as run_dir:
        return _serve(singleuser_argv(root, extra), singleuser_env(run_dir))


def _write_connect_file(server: RedisServer) -> Path:
    """A 0600 file in the server's 0700 folder setting REDIS_URL and
    REDISCLI_AUTH: how this user reaches the server without the password on screen."""
    path = Path(server.dir, "connect.env")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(f"export {ENV_URL}='{server.url}'\nexport REDISCLI_AUTH='{server.password}'\n")
    return path


def cmd_redis(args: argparse.Namespace) -> int:
    _sweep()
    server = RedisServer(port=args.port, restarts=REDIS_RESTARTS).start()
    with StopSignals() as stop:
        try:
            print(f"Redis {server.version()} running, pid {server.pid}, private to this user.")
            if server.port:
                print("Connect from a shell (the file, yours only, sets REDIS_URL and REDISCLI_AUTH):")
                print(f"  . {_write_connect_file(server)}")
                print(f"  redis-cli -p {server.port}")
            else:
                print("Connect from a shell or a notebook with:")
                print(f"  export {ENV_URL}='{server.url}'")
                print(f"  redis-cli -s {server.socket_path}")
            print("Ctrl-C stops it and deletes its data.", flush=True)
            watch = _redis_watch(server)
            while not stop.wait(0.5):
                if not watch():
                    return 1
        finally:
            server.stop()
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    skip_iri_grammar()  # before nbformat brings jsonschema
    from echomq_viz.launcher.export import ExportError, ExportStopped, export_notebooks

    # Ctrl-C, SIGTERM or SIGHUP only recorded, then heard between steps: a KeyboardInterrupt
    # raised anywhere (in a library's cleanup, say) could leave a kernel or a browser behind
    try:
        with StopSignals() as stop:
            written = export_notebooks(
                notebooks_dir(args.notebooks, say=_say), Path(args.out), names=args.names or None,
                cache_dir=Path(args.cache) if args.cache else None, execute=not args.no_execute,
                log=lambda line: print(line, flush=True), stop=lambda: bool(stop.received),
            )
    except ExportStopped as exc:
        print(f"echomq-viz export: {exc} in {Path(args.out).resolve()}", file=sys.stderr)
        return 128 + stop.received[0]
    except ExportError as exc:
        print(f"echomq-viz export: {redact_url(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a page or a script that could not be written (a full disk: main says it)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(f"echomq-viz export: cannot write {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"echomq-viz: {len(written)} pages in {Path(args.out).resolve()}; "
          "open them from disk, no network needed")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("lab", "app", "singleuser"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for option, (low, high) in (("max_kernels", MAX_KERNELS_RANGE), ("seats_per_visitor", SEATS_PER_VISITOR_RANGE),
                                ("seat_idle_minutes", SEAT_IDLE_MINUTES_RANGE)):
        value = getattr(args, option, None)
        if value is not None and not low <= value <= high:  # NaN fails too
            parser.commands[args.command].error(f"argument --{option.replace('_', '-')}: must be in {low}..{high}, "
                                                f"got {value}")
    if args.command in ("app", "acl"):
        try:
            job_caps(args)
        except (ValueError, TypeError) as exc:  # e.g. --max-jobs below --max-queue-jobs
            parser.commands[args.command].error(f"argument --max-queue-jobs/--max-jobs: {exc}")
    port = getattr(args, "port", None)
    if port is not None and not 0 <= port <= 65535:
        parser.commands[args.command].error(f"argument --port: port {port} is outside 0..65535")
    if args.command in ("lab", "app") and (refusal := exposure.refusal(args.command, extra, public=args.public,
                                                                       port=args.port)):
        print(refusal, file=sys.stderr)  # before anything starts or is copied
        return 2
    if args.command in STARTS_SERVERS and (outside := version_warning()):
        _say(outside)  # before anything starts: a package outside its tested range is named first
    problem = temp_folder_problem() if args.command in STARTS_SERVERS else None
    if problem is None and args.command in ("lab", "app", "singleuser", "export"):
        problem = redis_url_problem()
    if problem:
        print(problem, file=sys.stderr)  # nothing started, nothing made
        return 2
    try:
        if args.command == "redis":
            return cmd_redis(args)
        if args.command == "export":
            return cmd_export(args)
        if args.command == "clean":
            return cmd_clean(args)
        if args.command == "acl":
            return cmd_acl(args)
        if args.command == "gate":
            from echomq_viz.launcher.gate_command import cmd_gate

            return cmd_gate(args)
        if args.command == "app":
            return cmd_app(args, extra)
        if args.command == "singleuser":
            return cmd_singleuser(args, extra)
        return cmd_lab(args, extra)
    except RedisUnavailable as exc:
        print(f"echomq-viz: {redact_url(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # what was made is gone already (each folder is removed on the way out); say where room is missing
        folder = os.path.dirname(exc.filename) if exc.filename else tempfile.gettempdir()
        print(no_room_line(folder), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
