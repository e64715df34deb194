"""Keeps one private redis-server alive exactly as long as its parent process.

Run by :class:`echomq_viz.server.RedisServer` as
``python -m echomq_viz._supervisor CONFIG_JSON`` with a pipe on stdin. It
starts redis-server, waits until it answers PING, prints ``ready <pid>`` (or
``failed <reason>``) on stdout, then blocks reading stdin. When the parent
closes the pipe, or dies in any way, SIGKILL included, the read returns and
the supervisor stops redis-server and deletes its directory. redis-server also
gets PR_SET_PDEATHSIG, so even a SIGKILL of the supervisor takes it down.

Standard library only, so it starts fast.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the stdin pipe still covers us
        pass


def _pings(config: dict) -> bool:
    try:
        if config.get("socket"):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: object = config["socket"]
        else:
            conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            address = ("127.0.0.1", config["port"])
        with conn:
            conn.settimeout(0.5)
            conn.connect(address)
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _log_tail(path: str, lines: int = 8) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return " | ".join(line.strip() for line in handle.readlines()[-lines:])
    except OSError:
        return "(no log)"


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    directory, log_path = config["dir"], os.path.join(config["dir"], "redis.log")

    def stop_on_signal(signum, frame):  # SIGTERM/SIGHUP: clean up like EOF
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop

    proc = None
    try:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                config["argv"], cwd=directory, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + config.get("timeout", 10.0)
        while not _pings(config):
            if proc.poll() is not None:
                print(f"failed redis-server exited with {proc.returncode}: {_log_tail(log_path)}", flush=True)
                return 1
            if time.monotonic() > deadline:
                print(f"failed redis-server did not answer PING in time: {_log_tail(log_path)}", flush=True)
                return 1
            time.sleep(0.005)
        print(f"ready {proc.pid}", flush=True)
        while sys.stdin.buffer.read(4096):  # returns b"" once the parent is gone
            pass
        return 0
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not config.get("keep_dir"):
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
