"""The README's Explore command, typed in a fresh clone: it installs every
dependency from the index as a newcomer's machine does, and every notebook
then runs top to bottom in that venv.

Marked slow: a fresh venv and eleven notebooks take minutes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import clean_env

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))


def _readme_command(marker: str) -> str:
    """The command of the README's fenced block after ``<!-- marker -->``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split(f"<!-- {marker} -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0].strip()


@pytest.mark.slow
def test_every_notebook_runs_after_the_readmes_explore_command(tmp_path):
    """The README's Explore command, typed in a fresh clone, up to the lab itself (which waits
    for a browser); then every notebook runs top to bottom in that venv: the export executes
    each in a kernel of its own, and fails at the first cell that raises."""
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
    out = tmp_path / "html"
    exported = subprocess.run([clone / ".venv" / "bin" / "echomq-viz", "export", "--out", str(out)], cwd=clone,
                              env=clean_env(), capture_output=True, text=True, timeout=3600)
    assert exported.returncode == 0, exported.stdout[-3000:] + exported.stderr[-3000:]
    assert sorted(p.stem for p in out.glob("*.html")) == sorted(["index", *(Path(name).stem for name in NOTEBOOKS)])
