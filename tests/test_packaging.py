"""What installing the wheel brings: the wheel and sdist carry the Lua
scripts and the notebooks; installed into a fresh venv, the package runs its
scripts, and ``echomq-viz lab``, ``app`` and ``export`` work from an empty
folder on the user's own copy of the notebooks, never overwriting their edits.

The README's Explore command, installing from the index in a fresh clone, is
tests/test_explore_command.py (a module of its own, so the two run side by side)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import time
import urllib.error
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from echomq_viz.launcher.notebook_copies import notebooks_dir
from echomq_viz.launcher.notebook_copies import COPY_RECORD, USER_FOLDER, copy_notebooks
from echomq_viz.redis_side.server import RedisServer, free_tcp_port
from conftest import clean_env
from processes import stop_group

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
# what the wheel ships and the launcher copies: the notebooks and their README
SHIPPED = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_file() and not p.name.startswith("."))
TOKEN = "echomq-viz-packaging"

IN_FRESH_VENV = textwrap.dedent(
    """
    import json, sys
    import echomq_viz
    from echomq_viz.core.keys import QueueContext
    from echomq_viz.redis_side.lua_loader import LUA_DIR, load_scripts
    from echomq_viz.redis_side.scripts import Scripts
    from echomq_viz.redis_side.server import connect

    site = sys.argv[1]
    assert echomq_viz.__file__.startswith(site), echomq_viz.__file__
    assert str(LUA_DIR).startswith(site), LUA_DIR
    scripts = Scripts(connect(sys.argv[2]))
    ctx = QueueContext("wheel-check")
    scripts.reset(ctx)
    loaded = {name: scripts.client.script_load(s.source) for name, s in scripts.sources.items()}
    scripts.add_prioritized_job(ctx, "late", {}, 2)
    scripts.add_prioritized_job(ctx, "early", {}, 1)
    order = [scripts.move_to_active(ctx, "t").name for _ in range(2)]
    scripts.reset(ctx)
    print(json.dumps({"scripts": sorted(loaded), "order": order}))
    """
)


# -- the user's copy of the notebooks --------------------------------------------------------------


def _shipped(folder: Path, **files: str) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.ipynb").write_text(text)
    return folder


def test_copy_notebooks_copies_what_is_missing_and_says_where(tmp_path):
    source = _shipped(tmp_path / "shipped", a="A1", b="B1")
    target = tmp_path / USER_FOLDER
    said: list[str] = []
    assert copy_notebooks(source, target, say=said.append) == target
    assert {p.name: p.read_text() for p in target.glob("*.ipynb")} == {"a.ipynb": "A1", "b.ipynb": "B1"}
    assert said == [f"notebooks in {target} (your copy: edits stay yours; copied 2, updated 0 unedited)"]
    (target / "a.ipynb").unlink()  # deleted by the user: a later run gives it back
    said.clear()
    copy_notebooks(source, target, say=said.append)
    assert (target / "a.ipynb").read_text() == "A1"
    assert said == [f"notebooks in {target} (your copy: edits stay yours; copied 1, updated 0 unedited)"]


def test_copy_notebooks_never_overwrites_an_edited_notebook(tmp_path):
    source = _shipped(tmp_path / "shipped", a="A1", b="B1", c="C1")
    target = tmp_path / USER_FOLDER
    copy_notebooks(source, target, say=lambda _: None)
    (target / "a.ipynb").write_text("A1 with my notes")
    said: list[str] = []
    copy_notebooks(source, target, say=said.append)  # same version: nothing to say about a
    assert said == [f"notebooks in {target} (your copy: edits stay yours)"]

    _shipped(source, a="A2", b="B2", d="D2")  # a new version of the package
    said.clear()
    copy_notebooks(source, target, say=said.append)
    assert (target / "a.ipynb").read_text() == "A1 with my notes"  # edited: kept
    assert (target / "b.ipynb").read_text() == "B2"  # unedited: the new version
    assert (target / "c.ipynb").read_text() == "C1"  # no longer shipped: left
    assert (target / "d.ipynb").read_text() == "D2"  # new
    assert said == [
        "a.ipynb has your edits, kept; this version of echomq-viz ships another: rename yours to get it",
        f"notebooks in {target} (your copy: edits stay yours; copied 1, updated 1 unedited)",
    ]
    (target / "a.ipynb").rename(target / "a-mine.ipynb")
    copy_notebooks(source, target, say=lambda _: None)
    assert (target / "a.ipynb").read_text() == "A2"
    assert (target / "a-mine.ipynb").read_text() == "A1 with my notes"


def test_copy_notebooks_keeps_a_same_named_file_it_did_not_write(tmp_path):
    source = _shipped(tmp_path / "shipped", a="A1")
    target = _shipped(tmp_path / USER_FOLDER, a="someone else's a")
    said: list[str] = []
    copy_notebooks(source, target, say=said.append)
    assert (target / "a.ipynb").read_text() == "someone else's a"
    assert said[0].startswith("a.ipynb has your edits, kept")
    assert json.loads((target / COPY_RECORD).read_text()) == {}


def test_copy_notebooks_in_a_folder_it_cannot_write_is_one_line(tmp_path):
    source = _shipped(tmp_path / "shipped", a="A1")
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(SystemExit) as stop:
        copy_notebooks(source, tmp_path / "file", say=lambda _: None)
    message = str(stop.value)
    assert message.startswith(f"echomq-viz: cannot keep your copy of the notebooks in {tmp_path / 'file'}: ")
    assert message.endswith("; pass --notebooks DIR") and "\n" not in message


def test_notebooks_dir_in_a_checkout_is_its_notebooks_folder(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert notebooks_dir() == ROOT / "notebooks"
    monkeypatch.chdir(tmp_path)  # elsewhere, while the package runs from this checkout
    assert notebooks_dir() == ROOT / "notebooks"
    assert not (tmp_path / USER_FOLDER).exists()


# -- the wheel and the sdist --------------------------------------------------------------------------


def _left_by_use(name: str) -> bool:
    """Whether ``name`` is a file that using a clone leaves in it, never shipped."""
    return ".ipynb_checkpoints" in name or "__pycache__" in name or name.endswith(".pyc")


@pytest.fixture(scope="module")
def used_clone(tmp_path_factory) -> Path:
    """A copy of the checkout as it is after ``echomq-viz lab`` and a test run:
    each notebook saved once in JupyterLab (which keeps a copy of it in
    ``.ipynb_checkpoints/<name>-checkpoint.ipynb``), every folder with a
    ``__pycache__``, and a half-written ``.<name>.part`` of the refresh."""
    clone = tmp_path_factory.mktemp("used") / "echomq-viz"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".hypothesis", "*.egg-info"))
    for folder in (clone / "notebooks", clone / "lua", clone / "echomq_viz", clone / "echomq_viz" / "widgets"):
        checkpoints = folder / ".ipynb_checkpoints"
        checkpoints.mkdir(exist_ok=True)
        for notebook in folder.glob("*.ipynb"):
            shutil.copyfile(notebook, checkpoints / f"{notebook.stem}-checkpoint.ipynb")
        (checkpoints / "x-checkpoint.ipynb").write_text("{}")
        (folder / "__pycache__").mkdir(exist_ok=True)
        (folder / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (clone / "notebooks" / f".{NOTEBOOKS[0]}.part").write_text("{}")
    return clone


@pytest.fixture(scope="module")
def hatchling(tmp_path_factory) -> Path:
    """A folder holding the build backend ``pyproject.toml`` names, the newest in its range, as
    the isolated build environment of pip or ``python -m build`` would hold it."""
    requires = re.search(r'requires = \["(hatchling[^"]*)"\]', (ROOT / "pyproject.toml").read_text()).group(1)
    folder = tmp_path_factory.mktemp("hatchling")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(folder), requires],
                   check=True, timeout=300)
    return folder


def _build(hatchling: Path, kind: str, clone: Path, out: Path) -> Path:
    """``clone`` built by hatchling's PEP 517 hook ``build_<kind>``, as pip or ``python -m build``
    calls it in an environment of its own (``-S``: none of this environment's packages, only the
    backend's folder): the file written in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    built = subprocess.run(
        [sys.executable, "-S", "-c",
         f"import sys; from hatchling.build import build_{kind}; print(build_{kind}(sys.argv[1]))", str(out)],
        cwd=clone, env={**clean_env(), "PYTHONPATH": str(hatchling)},
        check=True, capture_output=True, text=True, timeout=300).stdout.strip()
    return out / built


@pytest.fixture(scope="module")
def wheel(hatchling, used_clone, tmp_path_factory) -> Path:
    return _build(hatchling, "wheel", used_clone, tmp_path_factory.mktemp("wheel"))


def test_wheel_carries_the_lua_the_notebooks_and_the_licence(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "echomq_viz/lua/addPrioritizedJob-9.lua" in names
    assert "echomq_viz/lua/includes/getPriorityScore.lua" in names
    assert sorted(n.split("/")[-1] for n in names if n.startswith("echomq_viz/notebooks/")) == SHIPPED
    assert any(re.search(r"\.dist-info/(licenses/)?LICENSE$", name) for name in names), names


def test_wheel_leaves_out_what_jupyterlab_and_python_left_in_the_clone(wheel, used_clone):
    assert (used_clone / "notebooks" / ".ipynb_checkpoints" / "x-checkpoint.ipynb").is_file()  # planted
    names = zipfile.ZipFile(wheel).namelist()
    assert [name for name in names if _left_by_use(name) or "/." in name] == []
    assert "echomq_viz/widgets/view.py" in names and "echomq_viz/launcher/voila_template/voila/templates/echomq-viz/conf.json" in names


def test_sdist_carries_the_notebooks_tests_and_docs(hatchling, used_clone, tmp_path):
    """Built by hatchling as ``python -m build --sdist`` would, from a clone JupyterLab and Python
    have left their files in."""
    built = _build(hatchling, "sdist", used_clone, tmp_path)
    with tarfile.open(built) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for name in ("LICENSE", "README.md", "CONTRIBUTING.md", "CHANGELOG.md", "environment.yml", "constraints.txt",
                 "pyproject.toml", "lua/addPrioritizedJob-9.lua", "tests/conftest.py", "benchmarks/run.py",
                 "docs/hero.png", "docs/jupyterhub.md",  # the README's picture and pages
                 *(f"notebooks/{nb}" for nb in NOTEBOOKS)):
        assert name in names, f"the sdist lacks {name}"
    assert [name for name in names if _left_by_use(name) or name.startswith("notebooks/.")] == []


# -- installed into a fresh venv, run from an empty folder ----------------------------------------------------


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed in it: its bin folder.

    The venv sees this environment's packages: a ``.pth`` file lists this environment's
    site-packages after the venv's own (``venv``'s ``system_site_packages`` would show the base
    interpreter's instead, and pip would install every dependency again), and its
    ``share/jupyter`` is this environment's (JupyterLab's extensions, Voila's templates). The
    wheel goes in without its dependencies; ``pip check`` then finds every one of them satisfied.
    The wheel's own copy of the package comes first on the venv's path
    (``test_installed_wheel_runs_its_lua`` asserts it). Installing every dependency from the
    index, as a newcomer does, is the README's Explore command's test
    (tests/test_explore_command.py); doing it here too cost about a minute."""
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    ours = sorted({sysconfig.get_paths()[name] for name in ("purelib", "platlib")})
    Path(_site(python), "this-environment.pth").write_text("".join(f"{path}\n" for path in ours))
    (env_dir / "share").mkdir(exist_ok=True)
    (env_dir / "share" / "jupyter").symlink_to(Path(sys.prefix) / "share" / "jupyter")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed", wheel],
                   check=True, timeout=600)
    checked = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, f"the wheel's dependencies, against this environment:\n{checked.stdout}"
    return env_dir / "bin"


def _site(python: Path) -> str:
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_installed_wheel_runs_its_lua(installed, tmp_path):
    python = installed / "python"
    with RedisServer() as server:
        out = subprocess.run(
            [python, "-c", IN_FRESH_VENV, _site(python), server.url],
            check=True, capture_output=True, text=True, cwd=tmp_path, env=clean_env(),
        ).stdout
    assert '"order": ["early", "late"]' in out
    expected = sorted(p.name.split("-")[0] for p in (ROOT / "lua").glob("*.lua"))
    assert f'"scripts": {expected}'.replace("'", '"') in out


def _get(url: str, timeout: float = 5) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode()


def _serve_and_get(argv: list, cwd: Path, path: str, log: Path) -> str:
    """Start ``echomq-viz lab|app`` in ``cwd``, GET ``path`` once it serves, stop it with Ctrl-C."""
    port = free_tcp_port()
    with open(log, "wb") as sink:
        proc = subprocess.Popen([*argv, "--no-browser", "--port", str(port)], cwd=cwd, env=clean_env(),
                                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while True:
                assert proc.poll() is None, f"{argv} exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                try:
                    return _get(f"http://127.0.0.1:{port}{path}", timeout=60)
                except (urllib.error.URLError, ConnectionError, OSError):
                    assert time.monotonic() < deadline, f"{argv} never served:\n{log.read_text()[-3000:]}"
                    time.sleep(0.2)
        finally:
            stop_group(proc)


@pytest.mark.slow
def test_installed_commands_work_from_an_empty_folder_on_the_users_copy(installed, tmp_path):
    launcher = installed / "echomq-viz"
    empty = tmp_path / "empty"
    empty.mkdir()
    first = NOTEBOOKS[0]
    exported = subprocess.run([launcher, "export", first, "--out", "html"], cwd=empty, env=clean_env(),
                              capture_output=True, text=True, timeout=600)
    assert exported.returncode == 0, exported.stdout[-2000:] + exported.stderr[-2000:]
    copy = empty / USER_FOLDER
    assert f"notebooks in {copy} (your copy: edits stay yours; copied {len(SHIPPED)}" in exported.stderr
    assert sorted(p.name for p in copy.glob("*.ipynb")) == NOTEBOOKS
    page = (empty / "html" / f"{Path(first).stem}.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" in page

    mine = copy / first
    mine.write_text(mine.read_text().replace('"cells": [', '"cells": [{"cell_type": "markdown", "id": "mine", '
                                             '"metadata": {}, "source": "my own note"}, ', 1))
    listing = _serve_and_get([launcher, "lab", f"--IdentityProvider.token={TOKEN}"], empty,
                             f"/api/contents?token={TOKEN}", tmp_path / "lab.log")
    assert sorted(item["name"] for item in json.loads(listing)["content"]
                  if item["type"] == "notebook") == NOTEBOOKS
    served = _serve_and_get([launcher, "app", f"--Voila.token={TOKEN}"], empty, f"/voila/api/contents?token={TOKEN}",
                            tmp_path / "app.log")
    assert sorted(item["name"] for item in json.loads(served)["content"]) == NOTEBOOKS
    assert "my own note" in mine.read_text()  # three runs later, the edit is still there
