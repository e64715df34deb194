"""What every notebook carries so that it opens in other places: a cell of
links to run it on Binder or Colab, and a first code cell that, in Colab
only, installs the package and turns on Colab's widget manager.

Maintainers put both in with :func:`add_chrome` (idempotent) and check them
with :func:`chrome_problems`. The links are plain text, never badge images:
an image from the network would break the offline pages, which ask for none.
echomq-viz is not published on PyPI. Given the repository (``owner/name`` on
GitHub), the Colab cell installs the package from its git URL; without one
(:data:`COLAB_CELL`, what the notebooks carry while the project names no
address) it is one call, :func:`echomq_viz.colab_setup`, and notebook 00 says how to
install the package in Colab.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["COLAB_CELL", "LINKS_CELL_ID", "COLAB_CELL_ID", "colab_cell", "links_markdown", "repository_of",
           "add_chrome", "chrome_problems"]

LINKS_CELL_ID = "open-elsewhere"
COLAB_CELL_ID = "colab-setup"

_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")

# Prints nothing and starts nothing outside Colab (nbval compares no output).
_COLAB_SETUP = """\
# Google Colab only (elsewhere nothing): its widget manager on. Notebook 00 says how to install echomq-viz there.
from echomq_viz import colab_setup; colab_setup()"""
_COLAB_INSTALL = """\
# In Google Colab only: install echomq-viz from its repository, then turn on the widget manager.
import subprocess, sys
if "google.colab" in sys.modules:  # echomq-viz is not on PyPI: pip installs it from its repository
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "git+https://github.com/{repository}.git"],
                   check=True)
from echomq_viz import colab_setup; colab_setup()"""


def colab_cell(repository: str | None = None) -> str:
    """The Colab set-up cell: one call (:func:`echomq_viz.colab_setup`), after an install
    from ``owner/name`` on GitHub where a repository is given."""
    if repository is not None and not _REPOSITORY.match(repository):
        raise ValueError(f"repository must be owner/name, got {repository!r}")
    return _COLAB_SETUP if repository is None else _COLAB_INSTALL.format(repository=repository)


COLAB_CELL = colab_cell()  # what the notebooks carry while the project names no repository


def repository_of(pyproject: Path) -> str:
    """``owner/name`` of the GitHub repository named in ``[project.urls]``
    (``Repository`` or ``Source``) of ``pyproject``."""
    try:  # a maintainer's tool, not needed to run the notebooks: imported here, when used
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        import tomli as tomllib  # Python 3.10: a dependency there (pyproject.toml)

    urls = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    for key in ("Repository", "Source"):
        match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)(?:\.git)?/?", urls.get(key, ""))
        if match:
            return match.group(1)
    raise ValueError(f"{pyproject} names no GitHub repository: add [project.urls] "
                     f"Repository = \"https://github.com/OWNER/NAME\"")


def links_markdown(notebook: str, repository: str, branch: str = "main") -> str:
    """The links cell of ``notebook`` (a file name in ``notebooks/``) for ``owner/name`` on GitHub."""
    if not _REPOSITORY.match(repository):
        raise ValueError(f"repository must be owner/name, got {repository!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+\.ipynb", notebook):
        raise ValueError(f"notebook must be a file name like 01-title.ipynb, got {notebook!r}")
    binder = f"https://mybinder.org/v2/gh/{repository}/{branch}?urlpath=lab/tree/notebooks/{notebook}"
    colab = f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{notebook}"
    return (f"**Run it live:** [open in Binder]({binder}) · [open in Colab]({colab}) · "
            f"or on your machine: `pip install git+https://github.com/{repository}.git && echomq-viz lab`")


def _index_of(nb: dict, cell_id: str) -> int | None:
    return next((i for i, cell in enumerate(nb["cells"]) if cell.get("id") == cell_id), None)


def _cell(kind: str, cell_id: str, source: str) -> dict:
    cell = {"cell_type": kind, "id": cell_id, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def add_chrome(nb: dict, notebook: str, repository: str, branch: str = "main") -> bool:
    """Put the links cell after the title cell and the Colab cell before the
    first code cell of ``nb`` (notebook JSON), or bring them up to date.
    Returns whether ``nb`` changed."""
    wanted = {LINKS_CELL_ID: ("markdown", links_markdown(notebook, repository, branch)),
              COLAB_CELL_ID: ("code", colab_cell(repository))}
    changed = False
    for cell_id, (kind, source) in wanted.items():
        index = _index_of(nb, cell_id)
        if index is not None:
            cell = nb["cells"][index]
            if "".join(cell["source"]) != source or cell["cell_type"] != kind:
                nb["cells"][index] = _cell(kind, cell_id, source)
                changed = True
            continue
        if kind == "markdown":
            position = 1 if nb["cells"] and nb["cells"][0]["cell_type"] == "markdown" else 0
        else:
            position = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"), len(nb["cells"]))
        nb["cells"].insert(position, _cell(kind, cell_id, source))
        changed = True
    return changed


def chrome_problems(nb: dict, notebook: str, repository: str, branch: str = "main") -> list[str]:
    """What :func:`add_chrome` would change, one line each; empty when nothing."""
    problems = []
    links, colab = _index_of(nb, LINKS_CELL_ID), _index_of(nb, COLAB_CELL_ID)
    if links is None:
        problems.append(f"{notebook}: no cell with the Binder and Colab links")
    elif "".join(nb["cells"][links]["source"]) != links_markdown(notebook, repository, branch):
        problems.append(f"{notebook}: the links cell is out of date")
    first_code = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"), None)
    if colab is None:
        problems.append(f"{notebook}: no Colab set-up cell")
    elif colab != first_code or "".join(nb["cells"][colab]["source"]) != colab_cell(repository):
        problems.append(f"{notebook}: the Colab set-up cell is not the first code cell as colab_cell writes it")
    return problems
