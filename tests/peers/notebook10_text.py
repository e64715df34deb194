"""Notebook 10 as a reader meets it, for the tests that hold its sentences to the runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10-the-queues-people-run.ipynb"


def cells(path: Path = NOTEBOOK) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def notebook() -> tuple[str, str]:
    """Notebook 10's prose (every markdown cell, whitespace made single spaces) and its stored
    printed output, as text."""
    found = cells()
    prose = "\n".join("".join(cell["source"]) for cell in found if cell["cell_type"] == "markdown")
    printed = "\n".join("".join(output.get("text", "")) for cell in found if cell["cell_type"] == "code"
                        for output in cell.get("outputs", ()))
    return " ".join(prose.split()), printed


def open_prose() -> str:
    """The prose a reader meets without opening a fold (every ``<details>`` block taken out)."""
    text = "\n".join("".join(cell["source"]) for cell in cells() if cell["cell_type"] == "markdown")
    return " ".join(re.sub(r"<details>.*?</details>", " ", text, flags=re.S).split())


def reading(path: Path = NOTEBOOK) -> str:
    """What a reader reads of the notebook: the prose, the code and the printed text (an HTML
    output's text, without its tags)."""
    parts = []
    for cell in cells(path):
        parts.append("".join(cell["source"]))
        for output in cell.get("outputs", ()):
            parts.append("".join(output.get("text", "")))
            page = "".join(output.get("data", {}).get("text/html", ""))
            parts.append(" ".join(re.sub(r"<[^>]+>", " ", page).split()))  # a table's cells, as read
    return "\n".join(parts)
