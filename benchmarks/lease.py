"""Keys a live kernel loses to ``clean``, in the two cases where leases used to fail.

    python benchmarks/lease.py [--rounds N] [--json OUT]

Each round runs the real thing: kernels are Python processes holding a
``Demo`` on a private redis-server, adding jobs through the real scripts.

- lease lapse: one kernel is paused (SIGSTOP) past its lease while
  ``clean_orphans`` runs over and over; it resumes (SIGCONT) and goes on
  adding, while a second kernel works all along;
- restart gap: the redis-server is killed and the launcher's supervisor
  restarts it empty; the kernel adds jobs at once, and ``clean_orphans``
  runs before the lease's next renewal (a 30 s lease renews every 10 s).

A kernel counts on every job it added since its last error; a job it
counts on whose hash is gone is lost. Reported: ``lease_lapse_keys_lost``
and ``restart_gap_keys_lost``, summed over the rounds (goal 0 for both).
The paused kernel's lease is shortened to ``PAUSED_LEASE_S`` through
``ECHOMQ_VIZ_LEASE_SECONDS`` so that a round takes seconds, not minutes.
The module also gives the tests their kernel (:class:`Kernel`).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from echomq_viz.experiments.live import clean_orphans  # noqa: E402
from echomq_viz.redis_side.demo_keys import lease_key  # noqa: E402
from echomq_viz.redis_side.owners import ENV_LEASE  # noqa: E402
from echomq_viz.redis_side.server import RedisServer  # noqa: E402

GOALS = {"lease_lapse_keys_lost": ("<=", 0), "restart_gap_keys_lost": ("<=", 0)}
PAUSED_LEASE_S = 2.0
JOBS = 20

# A kernel, driven line by line: each command answers one JSON line, an error as {"error": "<its one line>"}.
KERNEL = r"""
import json, sys
from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import connect

demo = Demo(sys.argv[2], client=connect(sys.argv[1]))
print(json.dumps(demo.queue), flush=True)
for line in sys.stdin:
    command, *args = line.split()
    try:
        if command == "add":
            reply = demo.add_batch([2] * int(args[0]))
        elif command == "state":  # what a consistent queue holds
            entries = demo.entries()
            ids = [entry.job_id for entry in entries]
            reply = {"queue": demo.queue, "ids": ids, "counters": [entry.counter for entry in entries],
                     "pc": demo.priority_counter(), "id": demo.client.get(Keys.id(demo.ctx)),
                     "hashes": sum(demo.client.exists(Keys.job(demo.ctx, i)) for i in ids)}
    except Exception as exc:
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(reply), flush=True)
"""


class Kernel:
    """A process holding ``Demo(name)`` on ``url`` with a lease of ``lease``
    seconds; ``counted`` is how many jobs it counts on (added since its last error)."""

    def __init__(self, url: str, lease: float, name: str = "viz-lease") -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), ENV_LEASE: str(lease)}
        self.process = subprocess.Popen([sys.executable, "-c", KERNEL, url, name], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.queue = self._read()
        self.token = self.queue.rsplit("@", 1)[1]
        self.counted = 0

    def _read(self):
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        if not ready:
            raise TimeoutError("the kernel did not answer within 60 s")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the kernel ended (exit {self.process.wait(5)})")
        return json.loads(line)

    def ask(self, command: str):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        reply = self._read()
        if command.startswith("add "):
            self.counted = len(reply) + self.counted if isinstance(reply, list) else 0
        return reply

    def lost(self) -> int:
        """Jobs this kernel counts on that are gone."""
        return self.counted - self.ask("state")["hashes"]

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.resume()
        self.process.stdin.close()
        self.process.wait(30)
        self.process.stdout.close()


def wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


class Cleaner:
    """``clean_orphans`` run over and over on ``client`` in a thread, as long as the block lasts."""

    def __init__(self, client) -> None:
        self.client = client
        self.removed: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.removed.append(clean_orphans(self.client))

    def __enter__(self) -> "Cleaner":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)


def lapse_round(server: RedisServer) -> int:
    """One lease lapse with clean running: keys the two kernels lost."""
    client = server.client()
    with Kernel(server.url, PAUSED_LEASE_S) as paused, Kernel(server.url, 30) as alive:
        paused.ask(f"add {JOBS}")
        alive.ask(f"add {JOBS}")
        paused.pause()
        if not wait_until(lambda: not client.exists(lease_key(paused.token)), PAUSED_LEASE_S + 10):
            raise RuntimeError("the paused kernel's lease never lapsed")
        with Cleaner(client):
            time.sleep(0.2)
            paused.resume()
            time.sleep(PAUSED_LEASE_S)  # its renewal thread wakes up and tries
            for _ in range(JOBS):
                paused.ask("add 1")
                alive.ask("add 1")
        clean_orphans(client)
        lost = paused.lost() + alive.lost()
    client.close()
    return lost


def restart_round() -> int:
    """One redis-server restart with clean in the gap: keys the kernel lost."""
    with RedisServer(restarts=1) as server:
        server.start()
        with Kernel(server.url, 30) as kernel:
            kernel.ask(f"add {JOBS}")
            os.kill(server.pid, signal.SIGKILL)
            if not wait_until(lambda: any("restarted" in line for line in server.events()), 30):
                raise RuntimeError("the redis-server was not restarted")
            kernel.counted = 0  # the server lost everything: nobody can count on that
            kernel.ask(f"add {JOBS}")
            client = server.client()
            clean_orphans(client)
            client.close()
            return kernel.lost()


def bench_lease(rounds: int = 3, log=print) -> dict:
    """Both scenarios ``rounds`` times each; keys lost, summed."""
    lapse = restart = 0
    with RedisServer() as server:
        server.start()
        for n in range(rounds):
            lapse += lapse_round(server)
            restart += restart_round()
            log(f"lease round {n + 1}/{rounds}: keys lost so far {lapse} (lapse), {restart} (restart gap)")
    return {"lease_lapse_keys_lost": lapse, "restart_gap_keys_lost": restart, "lease_rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each scenario (default 3)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be 1 or more, got {args.rounds}")
    results = bench_lease(args.rounds)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
