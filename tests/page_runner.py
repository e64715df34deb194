"""Run a view's page module in Node.js: its pure functions (``still``,
``describe``, ``readout``) on given states, so a test compares them with
Python's. The module is the very text the page gets (``page_module``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from echomq_viz.widgets.page_modules import page_module

_CALL = """
const module = await import(process.env.PAGE_MODULE_URL);
const calls = JSON.parse(await (await import("node:fs/promises")).readFile(process.env.PAGE_CALLS, "utf8"));
const results = calls.map(([name, state]) => module[name](state));
process.stdout.write(JSON.stringify(results));
"""


def node_or_skip() -> str:
    """Node.js, or a skip saying why (a failure on CI, where the page's code is always checked)."""
    found = shutil.which("node")
    if found is None:
        reason = "node not found: the views' page modules are checked in Node.js (apt-get install nodejs)"
        if os.environ.get("ECHOMQ_VIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def page_calls(module: str, calls: list[tuple[str, dict]], folder: Path) -> list:
    """``[module.name(state) for name, state in calls]``, run in one Node process."""
    node = node_or_skip()
    path = folder / f"{module}.mjs"
    path.write_text(page_module(module), encoding="utf-8")
    (folder / "calls.json").write_text(json.dumps(calls), encoding="utf-8")
    env = {**os.environ, "PAGE_MODULE_URL": path.as_uri(), "PAGE_CALLS": str(folder / "calls.json")}
    done = subprocess.run([node, "--input-type=module", "-e", _CALL], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"node exited {done.returncode}: {done.stderr.strip()[-2000:]}"
    return json.loads(done.stdout)


def svg_problems(svg: str) -> list[str]:
    """What breaks the visual system in a view's drawn SVG: wider than 840 px,
    text under 12 px, text that reads under 4.5:1 on the white ground (text drawn
    on a fill says so with data-on, and is checked by the browser tests)."""
    import re

    from echomq_viz.figures import visual

    problems = []
    width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
    if width > visual.MAX_FIGURE_PX:
        problems.append(f"{width:g} px wide, more than {visual.MAX_FIGURE_PX}")
    for attributes, words in re.findall(r"<text([^>]*)>([^<]*)</text>", svg):
        size = float(re.search(r'font-size="([\d.]+)"', attributes).group(1))
        if size < 12:
            problems.append(f"{words!r} is {size:g} px")
        fill = re.search(r'fill="(#[0-9a-fA-F]{6})"', attributes)
        if fill and "data-on=" not in attributes and visual.contrast_ratio(fill.group(1), "white") < visual.MIN_CONTRAST:
            problems.append(f"{words!r} in {fill.group(1)} reads at {visual.contrast_ratio(fill.group(1), 'white'):.1f}:1")
    return problems


def page_view_problems(view, folder: Path) -> list[str]:
    """:func:`svg_problems` of a page view's figure as its module draws it now."""
    state = {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}
    (svg,) = page_calls(view.figure.module, [("still", state)], folder)
    return svg_problems(svg)
