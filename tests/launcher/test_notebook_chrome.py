"""The links and the Colab set-up cell every notebook carries
(echomq_viz.launcher._notebook_chrome): the cell does nothing outside Colab (a real
kernel runs it: no output, no install), and in Colab installs the package
from its repository (it is not on PyPI) and turns on the widget manager."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from echomq_viz.launcher import _notebook_chrome as chrome
from echomq_viz.launcher._kernel_channels import private_kernel_config

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "owner/echomq-viz"


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_colab_cell_does_nothing_in_a_plain_kernel(tmp_path):
    """Run in a real kernel, with every way to start a process watched."""
    watch = ("import subprocess, os\n"
             "started = []\n"
             "_run, _popen = subprocess.run, subprocess.Popen\n"
             "subprocess.run = lambda *a, **k: started.append(a) or _run(*a, **k)\n"
             "subprocess.Popen = type('P', (_popen,), {'__init__': lambda s, *a, **k: started.append(a) "
             "or _popen.__init__(s, *a, **k)})")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(watch), nbformat.v4.new_code_cell(chrome.COLAB_CELL),
        nbformat.v4.new_code_cell("import sys; print(started, 'google.colab' in sys.modules)")])
    with private_kernel_config() as config:
        NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                       config=config).execute()
    assert nb.cells[1].outputs == []
    assert [output.get("text") for output in nb.cells[2].outputs] == ["[] False\n"]


def _in_colab(monkeypatch) -> list:
    """Pretend to be Colab: returns the list each install and the widget manager's switch-on land in."""
    calls = []
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("widget manager"))
    google = types.ModuleType("google")
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: calls.append((argv, kw)))
    return calls


def test_colab_cell_in_colab_installs_from_the_repository_and_enables_the_widget_manager(monkeypatch):
    calls = _in_colab(monkeypatch)
    exec(compile(chrome.colab_cell(REPOSITORY), "colab-cell", "exec"), {})
    assert calls == [([sys.executable, "-m", "pip", "install", "--quiet",
                       "git+https://github.com/owner/echomq-viz.git"], {"check": True}), "widget manager"]
    with pytest.raises(ValueError, match="repository must be owner/name"):
        chrome.colab_cell("owner")


def test_colab_cell_without_a_repository_is_one_call_that_never_asks_pypi(monkeypatch):
    """echomq-viz is not on PyPI: the cell the notebooks carry installs nothing; it is the one
    call that turns the widget manager on (notebook 00 says how to install the package in Colab)."""
    calls = _in_colab(monkeypatch)
    exec(compile(chrome.COLAB_CELL, "colab-cell", "exec"), {})  # installed here: only the widget manager
    assert calls == ["widget manager"]
    code = [line for line in chrome.COLAB_CELL.splitlines() if line.strip() and not line.startswith("#")]
    assert code == ["from echomq_viz import colab_setup; colab_setup()"]


def test_colab_setup_does_nothing_outside_colab(monkeypatch):
    from echomq_viz import colab_setup

    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert colab_setup() is None and "google.colab" not in sys.modules


def test_links_point_at_binder_and_colab_without_images():
    text = chrome.links_markdown("04-tiers-as-bands.ipynb", REPOSITORY)
    assert ("(https://mybinder.org/v2/gh/owner/echomq-viz/main?urlpath=lab/tree/notebooks/04-tiers-as-bands.ipynb)"
            in text)
    assert "(https://colab.research.google.com/github/owner/echomq-viz/blob/main/notebooks/04-tiers-as-bands.ipynb)" \
        in text
    assert "![" not in text and "<img" not in text  # an offline page asks the network for nothing
    assert "`pip install git+https://github.com/owner/echomq-viz.git && echomq-viz lab`" in text  # not on PyPI
    for bad in ("owner", "a/b/c", "owner/name with space"):
        with pytest.raises(ValueError, match="repository must be owner/name"):
            chrome.links_markdown("01-x.ipynb", bad)
    with pytest.raises(ValueError, match="notebook must be a file name"):
        chrome.links_markdown("../01-x.ipynb", REPOSITORY)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_add_chrome_puts_both_cells_in_place_once(name):
    original = json.loads((ROOT / "notebooks" / name).read_text())
    nb = copy.deepcopy(original)
    assert chrome.add_chrome(nb, name, REPOSITORY) == bool(chrome.chrome_problems(original, name, REPOSITORY))
    assert chrome.chrome_problems(nb, name, REPOSITORY) == []
    assert nb["cells"][0] == original["cells"][0]  # the title stays first
    assert nb["cells"][1]["id"] == chrome.LINKS_CELL_ID
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert first_code["id"] == chrome.COLAB_CELL_ID
    assert chrome.add_chrome(nb, name, REPOSITORY) is False  # idempotent
    nbformat.validate(nbformat.from_dict(nb))
    chrome_ids = (chrome.LINKS_CELL_ID, chrome.COLAB_CELL_ID)
    others = [c for c in nb["cells"] if c.get("id") not in chrome_ids]
    assert others == [c for c in original["cells"] if c.get("id") not in chrome_ids]


def test_chrome_problems_names_what_is_missing_or_stale():
    nb = {"cells": [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# T"},
                    {"cell_type": "code", "id": "c", "metadata": {}, "source": "1", "outputs": [],
                     "execution_count": None}]}
    assert chrome.chrome_problems(nb, "01-x.ipynb", REPOSITORY) == [
        "01-x.ipynb: no cell with the Binder and Colab links", "01-x.ipynb: no Colab set-up cell"]
    chrome.add_chrome(nb, "01-x.ipynb", REPOSITORY)
    assert chrome.chrome_problems(nb, "01-x.ipynb", "someone/else") == [  # both name the repository
        "01-x.ipynb: the links cell is out of date",
        "01-x.ipynb: the Colab set-up cell is not the first code cell as colab_cell writes it"]
    assert chrome.add_chrome(nb, "01-x.ipynb", "someone/else") is True
    assert chrome.chrome_problems(nb, "01-x.ipynb", "someone/else") == []


def test_repository_comes_from_the_project_urls(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/o/n.git"\n')
    assert chrome.repository_of(pyproject) == "o/n"
    pyproject.write_text('[project]\nname = "x"\n')
    with pytest.raises(ValueError, match=r"names no GitHub repository: add \[project.urls\]"):
        chrome.repository_of(pyproject)
