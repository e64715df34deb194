"""Binder builds this repository as it stands: repo2docker (the PyPI
``jupyter-repo2docker`` that Binder runs) renders its Dockerfile here with
``--no-build``, no Docker needed, and the test reads the build steps."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dockerfile() -> str:
    """The Dockerfile repo2docker would build for this repository."""
    r2d = Path(sys.executable).with_name("jupyter-repo2docker")
    command = [str(r2d)] if r2d.is_file() else [shutil.which("jupyter-repo2docker") or "jupyter-repo2docker"]
    result = subprocess.run(
        [*command, "--no-build", "--debug", "--user-id", "1000", "--user-name", "jovyan", str(ROOT)],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    text = result.stdout + result.stderr
    assert "FROM " in text, text[-3000:]
    return text


def _line(text: str, pattern: str) -> int:
    """Index of the first line matching ``pattern``; fails when none does."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if re.search(pattern, line):
            return index
    raise AssertionError(f"no line matches {pattern!r} in the Dockerfile:\n{text[-4000:]}")


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_binder_uses_the_conda_environment_and_its_python(dockerfile):
    assert _line(dockerfile, r'env update .*--file "environment\.yml"') >= 0
    wanted = re.search(r"^\s*-\s*python\s*=\s*(\d+\.\d+)\s*$",
                       (ROOT / "environment.yml").read_text(), re.M)
    assert wanted, "environment.yml pins no python=X.Y (repo2docker would pick its own default)"
    assert f"Building conda environment for python={wanted.group(1)}\n" in dockerfile, \
        "repo2docker ignored the Python version"
    assert "Python version unspecified" not in dockerfile


def test_binder_copies_the_repository_before_installing_it(dockerfile):
    """The pip section installs this repository (``-e .[test]``): the
    repository must be in the image before the environment is built."""
    copy_repo = _line(dockerfile, r"^COPY .*\bsrc/ \$\{REPO_DIR\}/")
    install_env = _line(dockerfile, r'env update .*--file "environment\.yml"')
    assert copy_repo < install_env, (
        "repo2docker builds environment.yml before it copies the repository, so `pip install -e .` "
        "finds nothing to install")


def test_environment_installs_this_repository_with_its_tests():
    from repo2docker.utils import is_local_pip_requirement
    from ruamel.yaml import YAML

    environment = YAML(typ="safe").load((ROOT / "environment.yml").read_text())
    (pip_lines,) = [dep["pip"] for dep in environment["dependencies"] if isinstance(dep, dict)]
    assert pip_lines == ["-e .[test]"]
    assert all(is_local_pip_requirement(line) for line in pip_lines)
