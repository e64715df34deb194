"""The launcher's check of the installed versions against the ranges declared
in pyproject.toml, read back from the package's own metadata."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from echomq_viz.launcher.versions import declared_ranges, out_of_range, version_warning

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
# the packages whose private parts the code uses: each has a ceiling
INTERNALS = ("ipykernel", "jupyter_server", "voila", "ipywidgets", "matplotlib")  # matplotlib: fast_artists.py


def _fake_install(folder: Path, *requires: str) -> Path:
    """A real dist-info of echomq-viz, found before the installed one when ``folder`` leads sys.path."""
    info = folder / "echomq_viz-0.1.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", "Name: echomq-viz", "Version: 0.1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    return folder


def test_the_ranges_checked_are_pyprojects_base_dependencies():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    here = [Requirement(line) for line in declared]
    here = [r for r in here if r.marker is None or r.marker.evaluate()]
    assert ({(canonicalize_name(r.name), str(r.specifier)) for r in declared_ranges()}
            == {(canonicalize_name(r.name), str(r.specifier)) for r in here})


def test_every_package_whose_internals_we_use_has_a_floor_and_a_ceiling():
    ranges = {canonicalize_name(r.name): r.specifier for r in declared_ranges()}
    for name in INTERNALS:
        operators = {spec.operator for spec in ranges[canonicalize_name(name)]}
        assert operators == {">=", "<"}, (name, ranges[name])


def test_this_environment_is_inside_the_tested_ranges():
    assert out_of_range(declared_ranges()) == []
    assert version_warning() is None


def test_a_package_outside_its_range_or_missing_is_named_with_the_fix(tmp_path, monkeypatch):
    voila = metadata.version("voila")
    monkeypatch.syspath_prepend(str(_fake_install(
        tmp_path, "voila<0.1", "numpy>=1", "no-such-package-echomq>=1", 'pytest>=99; extra == "test"',
        "also-not-here>=1; python_version < '3'")))
    assert [(r.name, v) for r, v in out_of_range(declared_ranges())] == [
        ("voila", voila), ("no-such-package-echomq", None)]  # extras and other Pythons' lines left out
    assert version_warning() == (
        f"outside the tested versions, expect failures: voila {voila} (tested: <0.1), "
        f"no-such-package-echomq missing (tested: >=1); pip install 'voila<0.1' 'no-such-package-echomq>=1'")


def test_the_launcher_says_it_in_one_line_before_anything_starts(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL",)}
    env["PYTHONPATH"] = str(_fake_install(tmp_path / "site", "voila<0.1"))
    missing = tmp_path / "absent"
    for command in (["lab", "--notebooks", str(missing)], ["app", "--notebooks", str(missing)]):
        done = subprocess.run([sys.executable, "-m", "echomq_viz", *command, "--no-browser"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0 and len(lines) == 2, done.stderr
        assert lines[0].startswith("echomq-viz: outside the tested versions, expect failures: voila ")
        assert lines[0].endswith("(tested: <0.1); pip install 'voila<0.1'")
        assert lines[1] == f"echomq-viz: {missing} is not a folder"  # the first thing it does, after the check
    clean = subprocess.run([sys.executable, "-m", "echomq_viz", "clean", "--help"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert clean.returncode == 0 and clean.stderr == ""  # starts nothing: no check


def test_every_declared_dependency_has_a_floor():
    """A floor is what .ci/run's lowest-versions environment installs and tests."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = declared["dependencies"] + [line for extra in declared["optional-dependencies"].values() for line in extra]
    unbounded = [line for line in lines if not Requirement(line).name.startswith("echomq")
                 and not {spec.operator for spec in Requirement(line).specifier} & {">=", "==", "~="}]
    assert unbounded == []
