"""Node.js queue libraries, driven from Python (I/O).

The packages in ``peers/node/package-lock.json`` (pinned) are installed with
``npm ci`` once into the cache folder ``echomq-viz export`` uses
(``~/.cache/echomq-viz/peers-node/<lock hash>``), one process at a time.
``node_runner.js`` and ``node_worker.js`` answer one JSON request per line
(the loop both require is ``node_serve.js``); each exits when its stdin
closes, so it ends with the Python process that started it.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
from pathlib import Path
from typing import Any

from echomq_viz.peers.npm import cache_root, one_process_at_a_time, run_npm

__all__ = ["NodeMissing", "node_missing", "install_node_packages", "NodeRunner", "RUNNER", "WORKER", "SERVE"]

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "node_runner.js"
WORKER = HERE / "node_worker.js"  # Bull's and BullMQ's producer and worker
SERVE = HERE / "node_serve.js"  # the request loop both scripts require
PACKAGE = HERE / "node"


class NodeMissing(RuntimeError):
    """Node.js or npm is not installed: the Node peers cannot run here."""


def node_missing() -> str | None:
    """Why the Node peers cannot run here, in one line; None when they can."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found: the Node.js libraries (Bull) are skipped" if missing else None


def install_node_packages(cache_dir: Path | None = None) -> Path:
    """The folder holding ``node_modules`` for the pinned packages, installed on first use."""
    why = node_missing()
    if why:
        raise NodeMissing(why)
    lock = (PACKAGE / "package-lock.json").read_bytes()
    folder = (cache_dir or cache_root()) / "peers-node" / hashlib.sha256(lock).hexdigest()[:16]
    with one_process_at_a_time(folder):
        done = folder / "installed.ok"
        if not done.is_file():
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(PACKAGE / name, folder / name)
            run_npm(shutil.which("npm"), ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=folder,
                    what="npm ci of the Node peers", error=NodeMissing)
            done.write_text("ok\n")
    return folder


REQUEST_TIMEOUT_S = 300.0  # far past the longest request (filling a Bull list to 10^5 jobs: about 30 s)


class NodeRunner:
    """One ``node <script>`` process (``node_runner.js`` by default); :meth:`request` sends one JSON request."""

    def __init__(self, cache_dir: Path | None = None, timeout: float = REQUEST_TIMEOUT_S, script: Path = RUNNER) -> None:
        folder = install_node_packages(cache_dir)
        env = {**os.environ, "NODE_PATH": str(folder / "node_modules")}
        self.timeout = timeout
        self.process = subprocess.Popen([shutil.which("node"), str(script)], cwd=folder, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)

    @property
    def pid(self) -> int:
        return self.process.pid

    def request(self, op: str, **fields: Any) -> Any:
        if self.process.poll() is not None:
            raise RuntimeError(f"the Node runner has exited (code {self.process.returncode})")
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        # ioredis retries forever once its Redis is gone (maxRetriesPerRequest: null): the answer
        # would never come, and whoever waits (a notebook, the findings lock) with it
        if not select.select([self.process.stdout], [], [], self.timeout)[0]:
            self.process.kill()
            self.process.wait(5)
            raise RuntimeError(f"the Node runner did not answer {op!r} within {self.timeout:g} s: it was stopped")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Node runner stopped answering during {op!r}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"Node runner, {op}: {reply.get('error')}")
        return reply.get("result")

    def close(self) -> None:
        """Close the library's connections, then end the process (killed if it hangs)."""
        if self.process.poll() is None:
            try:
                self.request("close")
            except (RuntimeError, OSError, ValueError):
                pass
            try:
                self.process.stdin.close()
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream and not stream.closed:
                stream.close()
