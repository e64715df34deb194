"""The views drawn in the page: what a drag costs there, and what it costs the kernel.

- ``bench_page_draw``: the hero's module (the very text the page runs) drawing its
  figure, caption and readout for many positions in Node.js, against the reference
  of the path the views left: matplotlib drawing the same staircase and strip in
  the kernel, then a PNG of it (what an ipympl figure sends on each move).
- ``bench_browser``: notebook 01's hero in JupyterLab in Chromium (1280 px wide):
  each ArrowLeft on the counter, from the keydown to the ``requestAnimationFrame``
  after the figure changed (the frame that paints it), over ``moves`` moves, and the
  share of moves painted in the first frame after their keydown; the
  kernel messages the page sends and the kernel's CPU during those moves (live off:
  both should be nothing). Then live on: a pointer drag of ``live_moves`` moves at 60 a
  second along the counter; the kernel's CPU (each coalesced send adds a job on Redis
  and answers) per move the page drew, and the messages sent. In the same run, the reference: the same staircase and
  strip as a plain ipympl figure (``%matplotlib ipympl``, ipympl's own canvas and
  PNG frames) driven by an ipywidgets slider, timed the same way to its canvas's
  next changed frame. ipympl is in the ``test`` extra for this reference alone.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

_NODE_DRAW = """
const m = await import(process.env.MODULE_URL);
const states = JSON.parse(process.env.STATES);
for (const s of states.slice(0, 20)) { m.still(s); m.describe(s); m.readout(s); }  // warm the JIT
const times = [];
for (const s of states) {
  const t0 = performance.now();
  m.still(s); m.describe(s); m.readout(s);
  times.push(performance.now() - t0);
}
process.stdout.write(JSON.stringify(times));
"""


def _percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def bench_page_draw(moves: int) -> dict:
    """The page's drawing of one hero position, against matplotlib's."""
    from echomq_viz.widgets.page_modules import page_module

    node = shutil.which("node")
    if node is None:
        return {"page_draw_p50_ms": None, "page_draw_note": "needs Node.js"}
    rng = np.random.default_rng(1)
    states = [{"priority": int(p), "counter": int(c), "tiers": 6, "live": False, "live_enabled": False,
               "live_answer": {}, "status": ""}
              for p, c in zip(rng.integers(1, 7, moves), rng.integers(0, 2**32, moves))]
    with tempfile.TemporaryDirectory() as folder:
        module = Path(folder, "hero.mjs")
        module.write_text(page_module("hero"), encoding="utf-8")
        done = subprocess.run([node, "--input-type=module", "-e", _NODE_DRAW], capture_output=True, text=True,
                              env={**os.environ, "MODULE_URL": module.as_uri(), "STATES": json.dumps(states)},
                              timeout=300, check=True)
    page = json.loads(done.stdout)
    reference = [_matplotlib_draw(s["priority"], s["counter"]) for s in states[: max(10, moves // 10)]]
    return {"page_draw_p50_ms": round(_percentile(page, 50), 3), "page_draw_p95_ms": round(_percentile(page, 95), 3),
            "page_draw_reference_p50_ms": round(_percentile(reference, 50), 2),
            "page_draw_ratio": round(_percentile(reference, 50) / _percentile(page, 50), 1),
            "page_draw_moves": moves}


def _matplotlib_draw(priority: int, counter: int) -> float:
    """Milliseconds to draw the same figure with matplotlib and encode its PNG."""
    from matplotlib.figure import Figure

    from echomq_viz.figures import plots

    start = time.perf_counter()
    fig = Figure(figsize=(8.0, 4.0), dpi=96)
    grid = fig.add_gridspec(2, 1, height_ratios=[4.2, 1], hspace=0.65)
    plots.draw_staircase(fig.add_subplot(grid[0]), range(1, 7), priority, counter)
    plots.draw_bit_strip(fig.add_subplot(grid[1]), priority, counter)
    fig.savefig(io.BytesIO(), format="png")
    return (time.perf_counter() - start) * 1000


# The reference cell: the path the views left, the same figure as a plain ipympl canvas (not shown
# by pyplot: only inside the box, as a view held it) with no toolbar, header, footer or resize grip
_REFERENCE_CELL = """
%matplotlib ipympl
import ipywidgets as w
import matplotlib.pyplot as plt
from echomq_viz.figures import plots
with plt.ioff():
    fig = plt.figure(figsize=(8.0, 4.0), dpi=96)
fig.canvas.toolbar_visible = fig.canvas.header_visible = fig.canvas.footer_visible = False
fig.canvas.resizable = False
grid = fig.add_gridspec(2, 1, height_ratios=[4.2, 1], hspace=0.65, left=0.08, right=0.98, top=0.92, bottom=0.14)
stairs = plots.draw_staircase(fig.add_subplot(grid[0]), range(1, 7), 1, 2**32 - 1)
strip = plots.draw_bit_strip(fig.add_subplot(grid[1]), 1, 2**32 - 1)
reference = w.IntSlider(value=2**32 - 1, min=0, max=2**32 - 1, description="reference counter")
def follow(change):
    plots.update_staircase(stairs, 1, change["new"])
    plots.update_bit_strip(strip, 1, change["new"])
    fig.canvas.draw_idle()
reference.observe(follow, "value")
w.VBox([reference, fig.canvas])
"""

# On every keydown: the time to the animation frame after the figure changed
_PROBE = """
([figureSelector, kind]) => {
  if (window.__probeStop) window.__probeStop();  // one probe at a time
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const target = panel.querySelector(figureSelector);
  window.__probe = [];
  window.__sig = null;
  let pending = null;
  // Frames counted by a callback of each frame's own: registered a frame ahead, it runs before a
  // callback a move registers during that frame, so a move painted in the first frame after its
  // input reads a count one above the count at its input
  let frames = 0, counting = true;
  const count = () => { frames += 1; if (counting) requestAnimationFrame(count); };
  requestAnimationFrame(count);
  const changed = () => {
    if (!pending || pending.done) return;
    const rec = pending;
    rec.done = true;
    requestAnimationFrame(() => { rec.ms = performance.now() - rec.t0; rec.frames = frames - rec.f0; });
  };
  if (kind === 'svg') {
    new MutationObserver(changed).observe(target, {childList: true, subtree: true});
  } else {
    const ctx = target.getContext('2d');
    const sig = () => { const d = ctx.getImageData(0, 0, target.width, target.height).data;
                        let h = 0; for (let i = 0; i < d.length; i += 97) h = (h * 31 + d[i]) | 0; return h; };
    const poll = () => { if (pending && !pending.done && sig() !== pending.sig0) changed();
                         requestAnimationFrame(poll); };
    requestAnimationFrame(poll);
    window.__sig = sig;
  }
  const down = (event) => {
    pending = {t0: event.timeStamp, f0: frames, ms: null, frames: null, done: false,
               sig0: window.__sig ? window.__sig() : null};
    window.__probe.push(pending);
  };
  document.addEventListener('keydown', down, true);
  window.__probeStop = () => { counting = false; document.removeEventListener('keydown', down, true); };
}
"""


# A drag, as the page sees one: an input event on the view's range each animation frame, for `moves` frames
_DRAG = """async ([view, index, moves]) => {
  const range = document.querySelectorAll(`${view} input[type=range]`)[index];
  const [low, high] = [Number(range.min), Number(range.max)];
  const start = performance.now();
  for (let k = 1; k <= moves; k++) {
    await new Promise(requestAnimationFrame);
    range.value = String(Math.round(high - ((high - low) * k) / (moves + 1)));
    range.dispatchEvent(new Event('input', {bubbles: true}));
  }
  return performance.now() - start;
}"""


def _kernel_pid(port: int, token: str) -> int | None:
    import psutil

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions?token={token}", timeout=5) as answer:
        sessions = json.load(answer)
    ids = [s["kernel"]["id"] for s in sessions if s.get("kernel")]
    for process in psutil.process_iter(["cmdline"]):
        if any(kernel_id in " ".join(process.info["cmdline"] or ()) for kernel_id in ids):
            return process.pid
    return None


def bench_browser(moves: int, live_moves: int = 120) -> dict:
    """Notebook 01's hero in JupyterLab: keydown to painted frame; the kernel's part."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not os.path.exists(CHROMIUM):
        return {"browser_figure_p95_ms": None, "browser_note": "needs playwright and Debian's chromium"}
    import nbformat
    import psutil

    from echomq_viz.redis_side.server import RedisServer, free_tcp_port

    port, token = free_tcp_port(), "bench"
    scratch = tempfile.TemporaryDirectory(prefix="echomq-viz-bench-")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("from echomq_viz.experiments.live import Demo\n"
                                                "from echomq_viz.widgets import HeroView\n"
                                                "demo = Demo('viz-bench-page')\n"
                                                "HeroView(demo, priority=1, counter=2**32 - 1)"),
                      nbformat.v4.new_code_cell(_REFERENCE_CELL)]
    nbformat.write(notebook, Path(scratch.name, "bench.ipynb"))
    redis = RedisServer()  # the kernel's Redis (its REDIS_URL), for the live pass
    redis.start()
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--port", str(port), f"--ServerApp.token={token}",
         f"--ServerApp.root_dir={scratch.name}", "--allow-root"],
        cwd=scratch.name, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "REDIS_URL": redis.url})
    sent: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api?token={token}", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(
                frame if isinstance(frame, str) else frame.decode("utf-8", "replace"))))
            page.goto(f"http://127.0.0.1:{port}/lab/tree/bench.ipynb?token={token}")
            select = page.locator(".jp-Dialog button:has-text('Select')")
            try:  # a notebook with no kernel yet asks which
                select.click(timeout=20_000)
            except Exception:
                pass
            page.wait_for_function("document.querySelector('#jp-main-statusbar')?.innerText.includes('Idle')",
                                   timeout=60_000)
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
            page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jupyter-matplotlib-canvas-div canvas",
                                   state="attached", timeout=60_000)
            page.wait_for_function("document.querySelector('#jp-main-statusbar')?.innerText.includes('Idle')",
                                   timeout=60_000)
            time.sleep(2)
            kernel = psutil.Process(_kernel_pid(port, token))

            # the page view: every move the page's own
            page.locator(".emq-hero input[type=range]").nth(1).focus()
            page.evaluate(_PROBE, [".emq-hero .emq-figure", "svg"])
            sent.clear()
            cpu0 = sum(kernel.cpu_times()[:2])
            for _ in range(moves):
                page.keyboard.press("ArrowLeft")
                time.sleep(0.03)
            time.sleep(1)
            cpu = sum(kernel.cpu_times()[:2]) - cpu0
            messages = sum("comm_msg" in frame for frame in sent)
            probed = page.evaluate("window.__probe")
            page_ms = [rec["ms"] for rec in probed]
            next_frame = [rec["frames"] == 1 for rec in probed if rec["frames"] is not None]

            # live on: a pointer drag along the counter at 60 moves a second, each move drawn in the page and
            # the kernel told at most four times a second (controls.coalesced), each telling adding a job on Redis
            hero = page.locator(".emq-hero")
            hero.locator("input[type=checkbox]").check()
            page.wait_for_function("[...document.querySelectorAll('.emq-hero .emq-status')]"
                                   ".some(e => e.textContent.includes('stored: equal'))", timeout=60_000)
            time.sleep(1)
            sent.clear()
            cpu0 = sum(kernel.cpu_times()[:2])
            # as a pointer drag does: one input event per animation frame, the range a step further each time
            drag_ms = page.evaluate(_DRAG, [".emq-hero", 1, live_moves])
            time.sleep(1.5)  # the trailing send, its add on Redis and its answer
            live_cpu = sum(kernel.cpu_times()[:2]) - cpu0
            live_messages = sum("comm_msg" in frame for frame in sent)
            live_inputs = live_moves
            # Redis's answer for the drag's last position (an older one names its own position)
            live_equal = hero.locator(".emq-status").filter(has_text="stored: equal").filter(
                has_not_text="(for priority").count()
            hero.locator("input[type=checkbox]").uncheck()
            time.sleep(0.5)

            # the reference: an ipympl figure, in the same kernel and page
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider .noUi-handle").last.focus()
            page.evaluate(_PROBE, [".jupyter-matplotlib-canvas-div canvas:first-child", "canvas"])
            for _ in range(max(10, moves // 5)):
                page.keyboard.press("ArrowLeft")
                time.sleep(0.35)
            time.sleep(1)
            reference_ms = [rec["ms"] for rec in page.evaluate("window.__probe")]
            browser.close()
    finally:
        lab.terminate()
        lab.wait(30)
        redis.stop()
        scratch.cleanup()
    drawn = [ms for ms in page_ms if ms is not None]
    reference = [ms for ms in reference_ms if ms is not None]
    return {
        "browser_figure_p50_ms": round(_percentile(drawn, 50), 1) if drawn else None,
        "browser_figure_p95_ms": round(_percentile(drawn, 95), 1) if drawn else None,
        "browser_moves": moves, "browser_missed": len(page_ms) - len(drawn),
        # the share of moves painted in the first frame after their input: what "within one frame"
        # means when the frame clock itself is 16.7 ms (the p95 above waits for that clock)
        "browser_next_frame_pct": round(100 * sum(next_frame) / len(next_frame), 1) if next_frame else None,
        "browser_kernel_messages_per_drag": messages,
        "browser_kernel_cpu_ms_per_move": round(cpu * 1000 / moves, 3),
        # live on: the kernel's CPU over a drag (its adds on Redis included) per move the page drew
        "browser_live_kernel_cpu_ms_per_move": round(live_cpu * 1000 / live_inputs, 3) if live_inputs else None,
        "browser_live_moves": live_inputs, "browser_live_kernel_messages": live_messages,
        "browser_live_drag_s": round(drag_ms / 1000, 2), "browser_live_last_answer_equal": bool(live_equal),
        "browser_reference_p50_ms": round(_percentile(reference, 50), 1) if reference else None,
        "browser_reference_p95_ms": round(_percentile(reference, 95), 1) if reference else None,
        "browser_reference_missed": len(reference_ms) - len(reference),
        "browser_note": "keydown to the animation frame after the figure changed, Chromium 1280 px, JupyterLab; "
                        "reference: the same figure as an ipympl canvas and an ipywidgets slider",
    }
