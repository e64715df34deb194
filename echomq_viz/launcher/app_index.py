"""The app's front page: one card per notebook, in path order, each with its
still as a thumbnail, its title and a one-line summary.

Voila's own index is a file browser ("Select items to open with Voilà.")
that loads JupyterLab's extensions to list file names. The ``echomq-viz``
template's ``tree-lab.html`` renders these cards instead, on the server, as
a page with no script: the card text comes from each notebook's first
Markdown cell (its summary from the template's ``summaries.json``, else the
first sentence there), the thumbnail from its first stored ``image/png`` output (a
view's still, see :mod:`echomq_viz.launcher._stills`), shrunk and inlined, so the
page asks nothing of the network. :func:`install` makes :func:`cards`
available to the template; :func:`write_offline_index` renders the same page
as the offline pages' ``index.html`` (see :mod:`echomq_viz.launcher.export`).
"""

from __future__ import annotations

import base64
import functools
import io
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from echomq_viz.launcher.app_template import TEMPLATE, TEMPLATE_ROOT

__all__ = ["Card", "card", "cards", "install", "write_offline_index", "THUMB_WIDTH"]

THUMB_WIDTH = 600  # px: about twice a card's image width, sharp on a high-density screen
THUMB_BYTES = 56_000  # a card's picture at most: the front page loads them all at once
THUMB_COLOURS = 128  # a figure has few colours: a palette keeps a thumbnail a few tens of kB
SUMMARY_CHARS = 150  # a summary longer than this is cut at a word, with an ellipsis
# One line a notebook, by file stem; the README's path of notebooks says the same.
SUMMARIES = TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE / "summaries.json"
_HEADING = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
_NUMBERED = re.compile(r"^(\d+)\s*[·.:-]\s*(.+)$")  # "01 · One score, two keys"
_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")  # bold, code, links (their text stays)


@dataclass(frozen=True)
class Card:
    """One notebook as the front page shows it."""

    path: str  # relative to the notebooks folder, with "/" separators
    number: str  # "01", or "" for a notebook not named NN-...
    title: str  # "One score, two keys"
    summary: str  # one line
    thumbnail: str | None  # a data: URL of a PNG, or None (a notebook with no figure)


def _plain(markdown: str) -> str:
    return _MARKUP.sub(lambda m: m.group(1) or "", markdown)


def _first_sentence(paragraph: str) -> str:
    text = " ".join(_plain(paragraph).split())
    match = re.search(r"(?<=[.!?:])\s+(?=[A-Z(])", text)
    sentence = text[:match.start()] if match else text
    sentence = sentence.rstrip(":")
    if len(sentence) > SUMMARY_CHARS:
        sentence = sentence[:SUMMARY_CHARS].rsplit(" ", 1)[0].rstrip(",;") + " …"
    return sentence


def _summary(markdown: str) -> str:
    """The first sentence of the first paragraph after the title."""
    for block in re.split(r"\n\s*\n", markdown):
        block = block.strip()
        if block and not block.startswith(("#", "[", "!", "<", "|", "- ", "* ", ">", "1.", "```")):
            return _first_sentence(block)
    return ""


def _thumbnail(png_base64: str) -> str:
    """A data URL of the still, no wider than :data:`THUMB_WIDTH`."""
    from PIL import Image  # matplotlib's dependency, here anyway

    image = Image.open(io.BytesIO(base64.b64decode(png_base64)))
    if image.width > THUMB_WIDTH:
        image = image.resize((THUMB_WIDTH, round(image.height * THUMB_WIDTH / image.width)), Image.LANCZOS)
    for colours in (THUMB_COLOURS, THUMB_COLOURS // 2, THUMB_COLOURS // 4):  # fewer for a busy still
        out = io.BytesIO()
        image.convert("RGB").quantize(colours).save(out, format="PNG", optimize=True)
        if out.tell() <= THUMB_BYTES:
            break
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def first_still(notebook: dict[str, Any]) -> str | None:
    """The base64 of the notebook's first stored ``image/png`` output, if any."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            png = output.get("data", {}).get("image/png")
            if png:
                return "".join(png) if isinstance(png, list) else png
    return None


@functools.lru_cache(maxsize=64)
def _card(path: str, file: Path, mtime_ns: int) -> Card:  # mtime_ns: a changed file is read again
    notebook = json.loads(file.read_text(encoding="utf-8"))
    markdown = next(("".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                     for cell in notebook.get("cells", []) if cell.get("cell_type") == "markdown"), "")
    heading = _HEADING.search(markdown)
    title = _plain(heading.group(1)) if heading else file.stem
    number = ""
    if numbered := _NUMBERED.match(title):
        number, title = numbered.groups()
    elif leading := re.match(r"(\d+)-", file.name):
        number = leading.group(1)
    still = first_still(notebook)
    summary = summaries().get(file.stem) or _summary(markdown[heading.end():] if heading else markdown)
    return Card(path, number, title, summary, _thumbnail(still) if still else None)


@functools.lru_cache(maxsize=1)
def summaries() -> dict[str, str]:
    """The one-line summaries of the shipped notebooks, by file stem."""
    return json.loads(SUMMARIES.read_text(encoding="utf-8"))


def card(folder: str | Path, path: str) -> Card:
    """The card of the notebook at ``path`` inside ``folder``."""
    file = Path(folder, path)
    return _card(path, file, file.stat().st_mtime_ns)


def cards(folder: str | Path, paths: Iterable[str]) -> list[Card]:
    """The cards of the notebooks among ``paths`` (relative to ``folder``), in path order;
    a notebook that cannot be read is left out (the log says which)."""
    found = []
    for path in sorted(p for p in paths if p.endswith(".ipynb")):
        try:
            found.append(card(folder, path))
        except (OSError, ValueError, KeyError) as exc:
            import logging

            logging.getLogger("echomq_viz").warning("no card for %s: %s", path, exc)
    return found


def install(env: Any, root: str | Path) -> None:
    """Give the templates of the Jinja environment ``env`` ``echomq_viz_cards(items)``:
    the cards of the notebooks among a listing's ``items`` (paths relative to ``root``)."""
    env.globals["echomq_viz_cards"] = lambda items: cards(
        root, [item["path"] for item in items if item.get("type") == "notebook"])
    # Shrinking the stills takes about a second: done now, beside the server's start, not on the
    # server's event loop when the first visitor opens the front page.
    threading.Thread(target=cards, args=(root, [path.name for path in Path(root).glob("*.ipynb")]),
                     name="echomq-viz-cards", daemon=True).start()


def write_offline_index(notebooks: Path, names: Iterable[str], out: Path) -> Path:
    """``out/index.html``: the front page's cards for the notebooks ``names``
    (in ``notebooks``), each linking to its offline page ``<stem>.html``."""
    import jinja2


    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE),
                             autoescape=True)
    install(env, notebooks)
    items = [{"name": name, "path": name, "type": "notebook"} for name in names]
    page = env.get_template("tree-lab.html").render(contents={"content": items}, base_url="", notebook_path="",
                                                    offline=True)
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
