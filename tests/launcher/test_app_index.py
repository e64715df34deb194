"""The app's front page cards (echomq_viz.launcher.app_index), read from the shipped notebooks.
The page itself, in a browser, is checked by tests/launcher/test_browser.py (TestVoila.test_index)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import jinja2
from PIL import Image

from echomq_viz.launcher import app_index
from echomq_viz.launcher.app_template import TEMPLATE_ROOT

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
NAMES = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))


def _heading(name: str) -> str:
    notebook = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    first = next(cell for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    return "".join(first["source"]).splitlines()[0].removeprefix("# ")


def test_one_card_per_notebook_in_path_order_titled_from_its_heading():
    cards = app_index.cards(NOTEBOOKS, list(reversed(NAMES)) + ["README.md"])
    assert [card.path for card in cards] == NAMES
    for card in cards:
        assert f"{card.number} · {card.title}" == _heading(card.path)
        assert card.path.startswith(card.number + "-")


def test_every_shipped_notebook_has_a_one_line_summary_of_its_own():
    stems = {Path(name).stem for name in NAMES}
    assert set(app_index.summaries()) == stems, "summaries.json and notebooks/ name different notebooks"
    for card in app_index.cards(NOTEBOOKS, NAMES):
        assert card.summary == app_index.summaries()[Path(card.path).stem]
        assert "\n" not in card.summary and 20 < len(card.summary) <= 120, card.summary


def test_a_thumbnail_is_the_notebooks_first_still_shrunk():
    for card in app_index.cards(NOTEBOOKS, NAMES):
        notebook = json.loads((NOTEBOOKS / card.path).read_text(encoding="utf-8"))
        still = app_index.first_still(notebook)
        if still is None:
            assert card.thumbnail is None
            continue
        assert card.thumbnail.startswith("data:image/png;base64,")
        thumb = Image.open(io.BytesIO(base64.b64decode(card.thumbnail.split(",", 1)[1])))
        full = Image.open(io.BytesIO(base64.b64decode(still)))
        assert thumb.width == min(full.width, app_index.THUMB_WIDTH)
        assert abs(thumb.height / thumb.width - full.height / full.width) < 0.02
        assert len(card.thumbnail) < 80_000, f"{card.path}: a {len(card.thumbnail)} byte thumbnail"


def test_a_notebook_without_a_summary_gets_its_first_sentence(tmp_path):
    notebook = {"cells": [{"cell_type": "markdown", "source": [
        "# 42 · A new idea\n", "\n", "**Scores** move `up` when [a job](x.ipynb) waits. Then more text.\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "42-a-new-idea.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    [card] = app_index.cards(tmp_path, ["42-a-new-idea.ipynb"])
    assert (card.number, card.title, card.summary, card.thumbnail) == (
        "42", "A new idea", "Scores move up when a job waits.", None)


def test_the_front_page_template_renders_a_card_per_notebook_and_links_nowhere_else():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / "voila/templates/echomq-viz"),
                             autoescape=True)
    app_index.install(env, NOTEBOOKS)
    items = [{"name": name, "path": name, "type": "notebook"} for name in NAMES]
    html = env.get_template("tree-lab.html").render(
        contents={"content": iter(items)}, base_url="/", notebook_path="")
    assert html.count('class="emq-card"') == len(NAMES)
    assert [html.index(f'href="/voila/render/{name}"') for name in NAMES] == sorted(
        html.index(f'href="/voila/render/{name}"') for name in NAMES)
    assert "http://" not in html and "https://" not in html and "<script" not in html
