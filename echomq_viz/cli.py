"""The ``echomq-viz`` command: JupyterLab or a bare Redis, with the embedded server.

- ``echomq-viz lab``   start the embedded Redis (unless ``REDIS_URL`` is set),
  hand its address to every kernel through ``REDIS_URL``, open JupyterLab on
  the notebooks; stopping JupyterLab stops the server.
- ``echomq-viz redis`` run the embedded server in the foreground and print how
  to connect to it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Sequence

from .server import ENV_URL, RedisServer, RedisUnavailable, connect


def notebooks_dir() -> Path:
    """``./notebooks`` when run from a checkout, else the one beside the package."""
    for candidate in (Path.cwd() / "notebooks", Path(__file__).resolve().parents[1] / "notebooks"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("echomq-viz: no notebooks/ folder here; run it from the project's checkout")


def _start_or_reuse_redis() -> tuple[str, RedisServer | None]:
    url = os.environ.get(ENV_URL)
    if url:
        connect(url)  # fail now, with one clear line, rather than in every notebook
        return url, None
    server = RedisServer().start()
    return server.url, server


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGHUP, handler)


def cmd_redis(args: argparse.Namespace) -> int:
    server = RedisServer(port=args.port).start()
    stop = threading.Event()
    _stop_on_signals(stop)
    try:
        print(f"Redis {server.version()} running, pid {server.pid}, private to this command.")
        print(f"  export {ENV_URL}='{server.url}'")
        print(f"  redis-cli {'-p ' + str(server.port) if server.port else '-s ' + str(server.socket_path)}")
        print("Ctrl-C stops it and deletes its data.", flush=True)
        stop.wait()
    finally:
        server.stop()
    return 0


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    url, server = _start_or_reuse_redis()
    try:
        where = "embedded" if server else "your"
        print(f"echomq-viz: notebooks use the {where} Redis at {url}", flush=True)
        argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={notebooks_dir()}"]
        if args.port:
            argv.append(f"--port={args.port}")
        if args.no_browser:
            argv.append("--no-browser")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.append("--allow-root")  # containers and CI machines often run as root
        lab = subprocess.Popen([*argv, *extra], env={**os.environ, ENV_URL: url})
        stop = threading.Event()
        _stop_on_signals(stop)
        # Ctrl-C reaches JupyterLab too (same process group) and it decides;
        # SIGTERM is passed on. Either way we stop Redis once it has gone.
        while lab.poll() is None:
            if stop.wait(0.2) and lab.poll() is None:
                stop.clear()
                lab.send_signal(signal.SIGTERM)
        return lab.returncode
    finally:
        if server is not None:
            server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="echomq-viz", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("lab", help="open the notebooks in JupyterLab with the embedded Redis")
    lab.add_argument("--port", type=int, help="JupyterLab's port")
    lab.add_argument("--no-browser", action="store_true", help="do not open a browser")
    redis_cmd = sub.add_parser("redis", help="run the embedded Redis in the foreground")
    redis_cmd.add_argument("--port", type=int, default=None,
                           help="serve on 127.0.0.1:PORT (0 picks one) instead of a unix socket")
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "redis":
            return cmd_redis(args)
        return cmd_lab(args, extra)
    except RedisUnavailable as exc:
        print(f"echomq-viz: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
