"""Time to a usable first view of each page of ``echomq-viz app``, as a visitor waits for it.

    python benchmarks/first_view.py [--pages 10,01] [--json OUT]

Notebook 10's runs are made (or found kept) for the installed versions first,
as ``python -m echomq_viz.peers.findings`` does ahead of the first visitor.
Then the app starts, and each page opens in a fresh Chromium tab, one page at
a time: the time from the navigation's start until Voila's "Executing N of M"
spinner is gone and the page's first view is drawn (its first widget in the
page), or its text shown on a page without a widget.

Reported (part ``first_view`` of ``benchmarks/run.py``):

- ``app_first_view_s_<NN>``: seconds to the first view of notebook NN's page;
- ``peers_findings_s``: how long notebook 10's runs took to make or find;
- ``app_first_view_note``: what was measured, or why nothing was.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from classroom import App  # noqa: E402
from page_views import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

GOALS = {"app_first_view_s_10": ("<=", 6)}
PAGE_TIMEOUT_S = 120
# The first view: Voila's spinner removed and the rendered cells shown, then a widget drawn in them
# (a page view's SVG, a static image), or the text on a page that has no widget.
FIRST_VIEW = """() => {
  if (document.getElementById("loading")) return false;
  const cells = document.getElementById("rendered_cells");
  if (!cells || cells.style.display === "none") return false;
  const views = cells.querySelectorAll(".jp-OutputArea-output .jupyter-widgets, .jp-OutputArea-output .lm-Widget");
  const hasWidget = !!document.querySelector('script[type="application/vnd.jupyter.widget-view+json"]');
  if (!hasWidget) return cells.innerText.length > 0;
  return Array.from(views).some(v => v.querySelector("svg, img, canvas") !== null);
}"""


def pages(only: list[str] | None = None) -> list[str]:
    found = sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    return [name for name in found if only is None or name[:2] in only]


def make_findings() -> float:
    """Notebook 10's runs, made or found kept, as the app's start would; the seconds it took."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "echomq_viz.peers.findings"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return round(time.perf_counter() - started, 1)


def bench_first_view(only: list[str] | None = None, log=print) -> dict:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not os.path.exists(CHROMIUM):
        return {"app_first_view_s_10": None, "app_first_view_note": "needs playwright and Debian's chromium"}
    results: dict = {"peers_findings_s": make_findings()}
    with App() as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in pages(only):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                started = time.perf_counter()
                page.goto(f"{app.base_url}/voila/render/{name}", wait_until="commit", timeout=PAGE_TIMEOUT_S * 1000)
                page.wait_for_function(FIRST_VIEW, timeout=PAGE_TIMEOUT_S * 1000, polling=50)
                seconds = round(time.perf_counter() - started, 2)
                results[f"app_first_view_s_{name[:2]}"] = seconds
                log(f"{name}: first view in {seconds} s")
                page.close()
                time.sleep(1)  # its kernel is culled once the tab is gone; the next page starts alone
        finally:
            browser.close()
        # a closed tab's kernel culled is the app doing its work, not a problem
        problems = [line for line in app.problems() if "Culling 'idle' kernel" not in line]
    results["app_first_view_note"] = ("navigation start to Voila's spinner gone and the first widget drawn, one "
                                      "page at a time, each in a fresh tab; notebook 10's runs made or found "
                                      f"first ({results['peers_findings_s']} s)"
                                      + (f"; the app's log: {problems[:3]}" if problems else ""))
    return results


def main(argv: list[str] | None = None) -> int:
    from report import print_results

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default=None, help="comma-separated page numbers (default: every page)")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    only = args.pages.split(",") if args.pages else None
    print_results(bench_first_view(only), GOALS, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
