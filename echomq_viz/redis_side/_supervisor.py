"""Keeps one private redis-server alive exactly as long as its parent process.

Run by :class:`echomq_viz.redis_side.server.RedisServer` as
``python -m echomq_viz.redis_side._supervisor`` with a pipe on stdin whose first line is
the JSON config (not an argument: other users can read every command line,
and the config holds the password). It starts redis-server, waits until it
answers PING, and prints ``ready <pid>`` (or ``failed <reason>``). Then it
watches both ends:

- the parent closes the pipe, or dies in any way, SIGKILL included: the
  supervisor stops redis-server and deletes its directory;
- redis-server dies: with restarts left, it starts it again on the same
  address and prints ``restarted <pid> <old pid> <reason>``; otherwise it
  prints ``died <old pid> <reason>`` and exits, cleaning up as above.

redis-server also gets PR_SET_PDEATHSIG, so even a SIGKILL of the supervisor
takes it down. Standard library only (psutil is not imported), so it starts fast.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

from echomq_viz.redis_side._process import die_with_parent


def _command(*words: str) -> bytes:
    """One command in RESP, so a password is sent as data, whatever it holds."""
    encoded = [word.encode() for word in words]
    return f"*{len(encoded)}\r\n".encode() + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in encoded)


def _answers(config: dict) -> bool:
    """True once redis-server answers PING (after AUTH when it has a password)."""
    password = config.get("password")
    request = (_command("AUTH", password) if password else b"") + _command("PING")
    lines = 2 if password else 1
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
            conn.sendall(request)
            reply = b""
            while reply.count(b"\r\n") < lines:
                chunk = conn.recv(256)
                if not chunk:
                    return False
                reply += chunk
            return reply.endswith(b"+PONG\r\n")  # not -LOADING: the data is all there
    except OSError:
        return False


def _log_tail(config: dict, lines: int = 8) -> str:
    """The log's last lines; redis-server quotes a bad config line, so never the password."""
    try:
        with open(os.path.join(config["dir"], "redis.log"), encoding="utf-8", errors="replace") as handle:
            tail = " | ".join(line.strip() for line in handle.readlines()[-lines:])
    except OSError:
        return "(no log)"
    return tail.replace(config["password"], "***") if config.get("password") else tail


def _how_it_ended(code: int, config: dict) -> str:
    if code < 0:
        return f"was killed by signal {-code}"
    return f"exited with {code}: {_log_tail(config)}"


def _start(config: dict) -> tuple[subprocess.Popen, str | None]:
    """Start redis-server; return it and None once it answers, else why not."""
    with open(os.path.join(config["dir"], "redis.log"), "ab") as log:
        proc = subprocess.Popen(
            config["argv"], cwd=config["dir"], stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, preexec_fn=die_with_parent(signal.SIGKILL),
        )
    deadline = time.monotonic() + config.get("timeout", 10.0)
    while not _answers(config):
        if proc.poll() is not None:
            return proc, f"redis-server {_how_it_ended(proc.returncode, config)}"
        if time.monotonic() > deadline:
            return proc, f"redis-server did not answer PING in time: {_log_tail(config)}"
        time.sleep(0.005)
    return proc, None


def _say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    config = json.loads(sys.stdin.buffer.readline() or b"{}")
    if not config:
        return 2
    restarts = int(config.get("restarts", 0))

    def stop_on_signal(signum, frame):  # SIGTERM/SIGHUP: clean up like EOF
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop

    proc = None
    try:
        proc, problem = _start(config)
        if problem:
            _say(f"failed {problem}")
            return 1
        _say(f"ready {proc.pid}")
        stdin = sys.stdin.fileno()
        while True:
            readable, _, _ = select.select([stdin], [], [], 0.2)
            if readable and not os.read(stdin, 4096):
                return 0  # EOF: the parent closed the pipe or is gone
            if proc.poll() is None:
                continue
            old, reason = proc.pid, _how_it_ended(proc.returncode, config)
            if restarts <= 0:
                _say(f"died {old} {reason}")
                return 1
            restarts -= 1
            proc, problem = _start(config)
            if problem:
                _say(f"died {old} {reason}; starting it again failed: {problem}")
                return 1
            _say(f"restarted {proc.pid} {old} {reason}")
    finally:
        if proc is not None and proc.poll() is None:
            if config.get("keep_dir"):
                proc.terminate()  # a folder that stays may want its data saved
            else:
                proc.kill()  # its folder goes next; SIGTERM would wait up to a cron tick (100 ms) for nothing
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not config.get("keep_dir"):
            shutil.rmtree(config["dir"], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
