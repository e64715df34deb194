"""echomq_viz.launcher.trust: the shipped notebooks signed in this user's signature
database, and nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat.sign import NotebookNotary

from echomq_viz.launcher.trust import trust_shipped

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SHIPPED = "00-start-here.ipynb"
EDITED = "02-which-pops-first.ipynb"


def _trusted(path: Path) -> bool:
    return NotebookNotary().check_signature(nbformat.read(path, as_version=nbformat.NO_CONVERT))


def test_only_notebooks_as_shipped_are_signed_once(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))  # a signature database of its own
    folder = tmp_path / "copy"
    folder.mkdir()
    for name in (SHIPPED, EDITED):
        shutil.copy(NOTEBOOKS / name, folder / name)
    notebook = nbformat.read(folder / EDITED, as_version=nbformat.NO_CONVERT)
    notebook.cells[0].source += "\n\nMy own note."
    nbformat.write(notebook, folder / EDITED)
    nbformat.write(nbformat.v4.new_notebook(), folder / "mine.ipynb")

    assert not _trusted(folder / SHIPPED)
    assert trust_shipped(folder, NOTEBOOKS) == [SHIPPED]
    assert _trusted(folder / SHIPPED)
    assert not _trusted(folder / EDITED) and not _trusted(folder / "mine.ipynb")
    assert trust_shipped(folder, NOTEBOOKS) == []  # already signed


def test_a_broken_signature_database_never_stops_a_start(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "nbsignatures.db").write_text("not a database")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(NOTEBOOKS / SHIPPED, folder / SHIPPED)
    said: list[str] = []
    trust_shipped(folder, NOTEBOOKS, say=said.append)
    assert len(said) <= 1 and all(SHIPPED in line for line in said)
