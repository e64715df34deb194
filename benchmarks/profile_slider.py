"""Where one live move of notebook 01's hero goes, in a real kernel, as the page drives it.

    python benchmarks/profile_slider.py --moves 300 [--json OUT]

The hero is drawn in the page (``widgets/page/hero.js``): a drag with "live
on Redis" off sends the kernel nothing and costs it nothing, by design
(``benchmarks/page_views.py`` counts what a drag sends). What costs the
kernel is a drag live on: each update the page sends of the hero's page
model (``widgets.hero.HeroFigure``) adds a job through
``addPrioritizedJob-9`` and is answered with ``live_answer``.

A real kernel, started from the app's kernel spec as Voila starts one, on a
Redis of its own started here (its ``REDIS_URL``), builds the hero with a
``Demo`` and displays it; this process then plays the page: it switches
live on (an update and the ping, as the checkbox does), then sends each
counter change as the widget manager does (a ``comm_msg`` update, the next
only after the kernel's idle after the last, as ipywidgets' throttle does)
and waits for the answer naming it. The kernel's own CPU time (psutil, user
+ system, so other work on the machine barely moves it) over the moves
gives ``slider_cpu_ms_per_move``: the message read and dispatched, the
value checked, the Redis add, the answer serialized and sent, the echo, the
busy and idle status. Redis's own CPU per move is
``slider_redis_cpu_ms_per_move``.

A second pass runs the same moves under cProfile in the kernel's main
thread (where the page's messages are handled) and splits the time into
parts (``slider_cpu_parts_ms``):

- ``redis``: ``Demo.add_at_counter``: the lease proved, ``pc`` set, the
  script run, the stored score read back (the client's side: commands
  encoded and replies parsed; the wait for Redis is not CPU);
- ``answer``: the answer's update (ipywidgets' ``send_state`` for
  ``live_answer``: the state to JSON, the message signed and queued);
- ``echo``: ipywidgets' ``echo_update`` of the values the page sent;
- ``checks``: the kernel's bounds check of each value (``PageFigure._checked``);
- ``kernel``: the rest of the main thread: ipykernel reading, unpacking and
  dispatching the message, the traits set, the observers, busy and idle;
- ``threads``: the kernel's other threads (ipykernel's shell channel and
  IOPub threads, which move the messages in and out, the heartbeat, the
  lease's renewal), measured per thread with psutil.

The main thread's shares are cProfile's, scaled to its unprofiled CPU time
per move; ``kernel`` and ``threads`` are measured, not profiled.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from echomq_viz.launcher._kernel_channels import private_kernel_config  # noqa: E402
from echomq_viz.launcher.app_template import TEMPLATE_ROOT  # noqa: E402  (the app's data folder: its kernel spec)
from echomq_viz.redis_side.server import RedisServer  # noqa: E402

TIER_SPAN = 2**32

SETUP = """
import json
from IPython.display import display
from echomq_viz.experiments.live import Demo
from echomq_viz.widgets import HeroView
demo = Demo("viz-profile-slider")
demo.reset()
hero = HeroView(demo)
display(hero)
print(json.dumps({"hero": hero.figure.model_id, "priority": hero.figure.priority}))
"""
STATUS = "print(json.dumps(hero.figure.status))"

# part -> functions (module file suffix, function name, the caller's name or None for any) whose cumulative
# time is that part
PARTS = {
    "redis": [("experiments/live.py", "add_at_counter", None)],
    "answer": [("ipywidgets/widgets/widget.py", "send_state", None)],
    "echo": [("ipywidgets/widgets/widget.py", "_send", "set_state")],
    "checks": [("widgets/page_view.py", "_checked", None)],
}

PROFILE_ON = "import cProfile as _cp, time as _t; _prof = _cp.Profile(_t.thread_time); _prof.enable()"
PROFILE_OFF = """
_prof.disable()
import pstats as _ps
def _cumulative(path_end, name, caller):
    total = 0.0
    for (path, _line, function), (_cc, _nc, _tt, ct, callers) in _ps.Stats(_prof).stats.items():
        if path.endswith(path_end) and function == name:
            total += ct if caller is None else sum(row[3] for (_p, _l, by), row in callers.items() if by == caller)
    return total
print(json.dumps({part: sum(_cumulative(*f) for f in funcs) for part, funcs in %r.items()}))
"""


class Page:
    """The page's side of one kernel: execute code, send the hero's updates, read its answers."""

    def __init__(self, redis_url: str) -> None:
        # the app's kernel spec, on Unix sockets in a private folder, as
        # ``echomq-viz app`` starts a visitor's kernel
        specs = KernelSpecManager(kernel_dirs=[str(TEMPLATE_ROOT / "kernels")])
        self.closing = contextlib.ExitStack()  # the kernel's private folder, removed on close
        config = self.closing.enter_context(private_kernel_config())
        self.manager = KernelManager(kernel_name="python3", kernel_spec_manager=specs, config=config)
        self.manager.start_kernel(cwd=str(ROOT), stderr=subprocess.DEVNULL, env={**os.environ, "REDIS_URL": redis_url})
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        self.process = psutil.Process(self.manager.provisioner.process.pid)
        shown = json.loads(self.execute(SETUP))
        self.hero, self.priority = shown["hero"], shown["priority"]

    def execute(self, code: str) -> str:
        """Run ``code``; what it printed (an error raises)."""
        msg_id = self.client.execute(code)
        printed = []
        while True:
            msg = self.client.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind == "error":
                raise RuntimeError(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(printed)

    def comm(self, data: dict) -> str:
        """One message to the hero's model; its msg_id."""
        msg = self.client.session.msg("comm_msg", {"comm_id": self.hero, "data": data})
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def update(self, state: dict, answered: tuple[int, int] | None, pong: bool = False) -> None:
        """Send ``state`` as the widget manager does (and the ping after it,
        ``pong``); wait for the kernel's idle after each, and for the
        ``live_answer`` naming ``answered``, checking what Redis stored."""
        waiting = {self.comm({"method": "update", "state": state, "buffer_paths": []})}
        if pong:
            waiting.add(self.comm({"method": "custom", "content": {"kind": "ping"}}))
        heard_pong = not pong
        while waiting or answered is not None or not heard_pong:
            msg = self.client.get_iopub_msg(timeout=30)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                waiting.discard(msg["parent_header"].get("msg_id"))
            elif kind == "error":
                raise RuntimeError(f"kernel error: {content['ename']}: {content['evalue']}")
            elif kind == "comm_msg" and content.get("comm_id") == self.hero:
                data = content["data"]
                if data.get("method") == "custom" and data.get("content", {}).get("kind") == "pong":
                    heard_pong = True
                answer = data.get("state", {}).get("live_answer") if data.get("method") == "update" else None
                status = data.get("state", {}).get("status") if data.get("method") == "update" else None
                if status:
                    raise RuntimeError(f"the hero's status: {status}")
                if answer and (answer["priority"], answer["counter"]) == answered:
                    if int(answer["stored"]) != answered[0] * TIER_SPAN + answered[1]:
                        raise RuntimeError(f"Redis stored {answer['stored']} for {answered}")
                    answered = None

    def live_on(self) -> None:
        """What the checkbox does: the update with ``live: true``, then the ping."""
        self.update({"live": True}, (self.priority, self.counter), pong=True)

    def move(self, counter: int) -> None:
        self.counter = counter
        self.update({"counter": counter}, (self.priority, counter))

    counter = 1  # HeroView's start

    def drain(self) -> None:
        while self.client.iopub_channel.msg_ready():
            self.client.get_iopub_msg(timeout=1)

    def cpu_s(self) -> tuple[float, float]:
        """The kernel's CPU seconds: (all its threads, its main thread)."""
        times = self.process.cpu_times()
        main = next((t for t in self.process.threads() if t.id == self.process.pid), None)
        return times.user + times.system, (main.user_time + main.system_time) if main else float("nan")

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        self.closing.close()


def _cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def profile_slider(moves: int = 300) -> dict:
    """Kernel CPU per live hero move, and its parts; the ``slider_cpu_*`` results."""
    counters = np.random.default_rng(7).integers(0, 2**32 - 1, moves + 20).tolist()
    with RedisServer() as redis:
        page = Page(redis.url)
        try:
            page.live_on()
            for value in counters[:20]:  # warm up: first adds, caches
                page.move(value)
            time.sleep(0.2)
            page.drain()
            (before, main_before), redis_before, started = page.cpu_s(), _cpu_s(redis.pid), time.perf_counter()
            for value in counters[20:]:
                page.move(value)
            wall_ms = (time.perf_counter() - started) / moves * 1000
            time.sleep(0.2)  # the last messages' sends after the idle
            (after, main_after), redis_after = page.cpu_s(), _cpu_s(redis.pid)
            page.drain()
            page.execute(PROFILE_ON)
            profiled_before = page.cpu_s()[1]
            for value in counters[20:]:
                page.move(value)
            profiled_after = page.cpu_s()[1]
            parts_s = json.loads(page.execute(PROFILE_OFF % (PARTS,)))
            status = json.loads(page.execute(STATUS))
            rss_mb = page.process.memory_info().rss / 2**20
        finally:
            page.close()
    if status:
        raise RuntimeError(f"the hero's status after the moves: {status}")
    cpu_ms = (after - before) / moves * 1000
    main_ms = (main_after - main_before) / moves * 1000
    profiled_ms = (profiled_after - profiled_before) / moves * 1000
    scale = main_ms / profiled_ms if profiled_ms else 0.0
    parts = {part: round(seconds / moves * 1000 * scale, 2) for part, seconds in parts_s.items()}
    parts["kernel"] = round(max(main_ms - sum(parts.values()), 0.0), 2)
    parts["threads"] = round(max(cpu_ms - main_ms, 0.0), 2)
    return {"slider_cpu_ms_per_move": round(cpu_ms, 2), "slider_wall_ms_per_move": round(wall_ms, 2),
            "slider_cpu_parts_ms": parts, "slider_redis_cpu_ms_per_move": round((redis_after - redis_before)
                                                                               / moves * 1000, 3),
            "slider_kernel_rss_mb": round(rss_mb, 1), "slider_cpu_moves": moves}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="live moves measured (10..5000, default 300)")
    parser.add_argument("--json", metavar="OUT", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    if not 10 <= args.moves <= 5000:
        parser.error(f"--moves must be in 10..5000, got {args.moves}")
    results = profile_slider(args.moves)
    for key, value in results.items():
        print(f"{key:<30} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
