"""The README's Explore command, typed in a fresh clone: it installs every
dependency from the index as a newcomer's machine does, without the test
extra; then every module of the package imports in that venv, and three
notebooks run top to bottom there: 00 where a newcomer starts, 01 the first
lesson, and 10 (the libraries people run, each through its own worker, and
Node.js).

The other notebooks run under nbval, in JupyterLab and in the app in the
test venv, whose packages are these and the test extra: what the test extra
could hide here is an import, which the imports of every module find.

Marked slow: a fresh venv takes a minute or more."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import clean_env

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
RUN_THERE = (NOTEBOOKS[0], NOTEBOOKS[1], NOTEBOOKS[-1])  # where a newcomer starts, the first lesson, and 10
# every module of the package, imported in the fresh venv: a name printed is one that failed
IMPORT_EVERY_MODULE = """
import importlib, pkgutil, echomq_viz
for module in pkgutil.walk_packages(echomq_viz.__path__, "echomq_viz."):
    if module.name.endswith(".__main__"):
        continue  # the command line itself, which runs on import
    try:
        importlib.import_module(module.name)
    except Exception as exc:
        print(module.name, type(exc).__name__, exc)
"""


def _readme_command(marker: str) -> str:
    """The command of the README's fenced block after ``<!-- marker -->``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split(f"<!-- {marker} -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0].strip()


@pytest.mark.slow
def test_every_notebook_runs_after_the_readmes_explore_command(tmp_path):
    """The README's Explore command, typed in a fresh clone, up to the lab itself (which waits
    for a browser); then every module of the package imports in that venv, and notebooks 00,
    01 and 10 run top to bottom there: the export executes each in a kernel of its own, and
    fails at the first cell that raises (an export of some notebooks writes no index page)."""
    command = _readme_command("lab-command")
    install, launch = command.rsplit(" && ", 1)
    assert launch == ".venv/bin/echomq-viz lab", f"the README's Explore command changed: {command}"
    clone = tmp_path / "echomq-viz"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".hypothesis", "*.egg-info",
        ".ipynb_checkpoints", "__pycache__"))
    installing = subprocess.run(install, shell=True, cwd=clone, env=clean_env(), capture_output=True, text=True,
                                timeout=1800)
    assert installing.returncode == 0, installing.stdout[-2000:] + installing.stderr[-2000:]
    imported = subprocess.run([clone / ".venv" / "bin" / "python", "-c", IMPORT_EVERY_MODULE], cwd=tmp_path,
                              env=clean_env(), capture_output=True, text=True, timeout=600)
    assert imported.returncode == 0 and imported.stdout == "", imported.stdout[-3000:] + imported.stderr[-3000:]
    out = tmp_path / "html"
    exported = subprocess.run([clone / ".venv" / "bin" / "echomq-viz", "export", "--out", str(out), *RUN_THERE],
                              cwd=clone, env=clean_env(), capture_output=True, text=True, timeout=1800)
    assert exported.returncode == 0, exported.stdout[-3000:] + exported.stderr[-3000:]
    assert sorted(p.stem for p in out.glob("*.html")) == sorted(Path(name).stem for name in RUN_THERE)
