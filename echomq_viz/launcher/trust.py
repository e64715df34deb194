"""The notebooks we ship are trusted: signed in this user's notebook signature
database when ``lab`` or ``app`` starts, as Jupyter signs a notebook its user
ran and saved.

Without a signature Jupyter logs "Notebook NN is not trusted" for every
notebook opened, and shows its HTML outputs sanitized. Only a notebook whose
bytes are those of the shipped one of the same name is signed: a copy the user
edited outside Jupyter (Jupyter signs what it saves) is left as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

__all__ = ["trust_shipped"]


def trust_shipped(folder: Path, shipped: Path, *, say: Callable[[str], None] | None = None) -> list[str]:
    """Sign the notebooks in ``folder`` that are byte for byte the ones in
    ``shipped``; the names of those signed now (already signed ones are not)."""
    import nbformat
    from nbformat.sign import NotebookNotary

    signed: list[str] = []
    notary = None
    for path in sorted(folder.glob("*.ipynb")):
        original = shipped / path.name
        try:
            if not original.is_file() or path.read_bytes() != original.read_bytes():
                continue
            notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT)
            notary = notary or NotebookNotary()
            if not notary.check_signature(notebook):
                notary.sign(notebook)
                signed.append(path.name)
        except Exception as exc:  # trust is a courtesy: a notebook that cannot be signed still opens
            if say is not None:
                say(f"could not mark {path.name} as trusted: {type(exc).__name__}: {exc}")
    return signed
