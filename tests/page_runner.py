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
