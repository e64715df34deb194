"""Where one hero slider move goes, in a real kernel, as a page drives it.

    python benchmarks/profile_slider.py --moves 300 [--json OUT]

A real kernel, started from the app's kernel spec as Voila starts one,
builds notebook 01's hero view and displays it; this process then plays the
page: it sends each
counter change as the widget manager does (a ``comm_msg`` update) and waits
for the ipympl frame that answers it. The kernel's own CPU time (psutil,
user + system, so other work on the machine barely moves it) over the moves
gives ``slider_cpu_ms_per_move``: the message read, the callbacks, drawing,
the PNG and every message sent back.

A second pass runs the same moves under cProfile inside the kernel and
splits that time into parts (each the cumulative time of the functions
named in ``PARTS``; ``kernel`` is the rest: the kernel reading and
dispatching the message, traits, ipywidgets' echo):

- ``score``: the score, the readout's HTML and the caption's text;
- ``artists``: ``plots.update_staircase`` and ``plots.update_bit_strip``;
- ``draw``: Agg, restoring the background and drawing the moving artists;
- ``png``: the changed pixels found and encoded (``get_diff_image``);
- ``send``: every comm message sent (JSON, signature, the socket).

The shares are cProfile's, scaled to the unprofiled CPU time per move.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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

SETUP = """
%matplotlib ipympl
import json
from IPython.display import display
from echomq_viz.widgets import HeroView
hero = HeroView(None)
display(hero)
print(json.dumps({"counter": hero.counter.model_id, "canvas": hero.fig.canvas.model_id}))
"""

# part -> functions (module file suffix, function name) whose cumulative time is that part
PARTS = {
    "score": [("widgets/hero.py", "_score_html"), ("widgets/hero.py", "describe")],
    "artists": [("echomq_viz/figures/plots.py", "update_staircase"), ("echomq_viz/figures/plots.py", "update_bit_strip")],
    "draw": [("widgets/canvas.py", "_draw"), ("backends/backend_agg.py", "restore_region")],
    "png": [("widgets/canvas.py", "get_diff_image")],
    "send": [("ipykernel/comm/comm.py", "publish_msg")],
}

PROFILE_ON = "import cProfile as _cp, time as _t; _prof = _cp.Profile(_t.thread_time); _prof.enable()"
PROFILE_OFF = """
_prof.disable()
import pstats as _ps
_stats = _ps.Stats(_prof).stats
_parts = {part: sum(row[3] for (path, _line, name), row in _stats.items()
                    if any(path.endswith(f) and name == n for f, n in funcs))
          for part, funcs in %r.items()}
print(json.dumps(_parts))
"""


class Page:
    """The page's side of one kernel: execute code, change a slider, wait for frames."""

    def __init__(self) -> None:
        # the app's kernel spec, on Unix sockets in a private folder, as
        # ``echomq-viz app`` starts a visitor's kernel
        specs = KernelSpecManager(kernel_dirs=[str(TEMPLATE_ROOT / "kernels")])
        self.closing = contextlib.ExitStack()  # the kernel's private folder, removed on close
        config = self.closing.enter_context(private_kernel_config())
        self.manager = KernelManager(kernel_name="python3", kernel_spec_manager=specs, config=config)
        self.manager.start_kernel(cwd=str(ROOT), stderr=subprocess.DEVNULL)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        self.process = psutil.Process(self.manager.provisioner.process.pid)
        self.ids = json.loads(self.execute(SETUP))

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

    def comm(self, comm_id: str, data: dict) -> None:
        self.client.shell_channel.send(self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def canvas_message(self, kind: str) -> None:
        self.comm(self.ids["canvas"], {"method": "custom", "content": {"type": kind}})

    def next_frame(self) -> None:
        """Wait for the canvas's next image (ipympl's ``binary`` message)."""
        while True:
            msg = self.client.get_iopub_msg(timeout=30)
            content = msg["content"]
            if msg["msg_type"] != "comm_msg" or content.get("comm_id") != self.ids["canvas"]:
                continue
            if msg.get("buffers"):
                return
            sent = json.loads(content["data"].get("content", {}).get("data") or "{}")
            if sent.get("type") == "draw":
                self.canvas_message("draw")  # what ipympl's JavaScript answers

    def attach(self) -> None:
        """What ipympl's JavaScript says when its canvas appears; then its first frame."""
        for kind in ("refresh", "send_image_mode", "initialized"):
            self.canvas_message(kind)
        self.next_frame()
        time.sleep(0.3)
        self.drain()

    def drain(self) -> None:
        while self.client.iopub_channel.msg_ready():
            self.client.get_iopub_msg(timeout=1)

    def move(self, value: int) -> None:
        self.comm(self.ids["counter"], {"method": "update", "state": {"value": value}, "buffer_paths": []})
        self.next_frame()

    def cpu_s(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        self.closing.close()


def profile_slider(moves: int = 300) -> dict:
    """Kernel CPU per hero move, and its parts; the ``slider_cpu_*`` results."""
    counters = np.random.default_rng(7).integers(0, 2**32 - 1, moves + 20).tolist()
    page = Page()
    try:
        page.attach()
        for value in counters[:20]:  # warm up: first draws, caches
            page.move(value)
        time.sleep(0.2)
        page.drain()
        before, started = page.cpu_s(), time.perf_counter()
        for value in counters[20:]:
            page.move(value)
        time.sleep(0.2)  # the idle status and last sends after the frame
        cpu_ms = (page.cpu_s() - before) / moves * 1000
        wall_ms = (time.perf_counter() - started - 0.2) / moves * 1000
        page.drain()
        page.execute(PROFILE_ON)
        profiled_before = page.cpu_s()
        for value in counters[20:]:
            page.move(value)
        profiled_after = page.cpu_s()
        parts_s = json.loads(page.execute(PROFILE_OFF % (PARTS,)))
        rss_mb = page.process.memory_info().rss / 2**20
    finally:
        page.close()
    profiled_ms = (profiled_after - profiled_before) / moves * 1000
    scale = cpu_ms / profiled_ms if profiled_ms else 0.0
    parts = {part: round(seconds / moves * 1000 * scale, 2) for part, seconds in parts_s.items()}
    parts["kernel"] = round(max(cpu_ms - sum(parts.values()), 0.0), 2)
    return {"slider_cpu_ms_per_move": round(cpu_ms, 2), "slider_wall_ms_per_move": round(wall_ms, 2),
            "slider_cpu_parts_ms": parts, "slider_kernel_rss_mb": round(rss_mb, 1), "slider_cpu_moves": moves}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="slider moves measured (10..5000, default 300)")
    parser.add_argument("--json", metavar="OUT", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    if not 10 <= args.moves <= 5000:
        parser.error(f"--moves must be in 10..5000, got {args.moves}")
    results = profile_slider(args.moves)
    for key, value in results.items():
        print(f"{key:<26} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
