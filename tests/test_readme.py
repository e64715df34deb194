"""The README: a learner's page first (short, a picture, the two commands, the path of
notebooks), with the operator's material in docs/, one page a topic, every page linked."""

from __future__ import annotations

import re
from pathlib import Path

from echomq_viz.launcher import app_index
from echomq_viz.launcher.readme_picture import HERO_PICTURE, hero_png

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)\)")


def test_the_readme_is_short():
    words = len(README.split())
    assert words < 1200, f"README.md has {words} words; the operator's material goes to docs/"


def test_the_two_commands_are_there_and_the_picture_comes_first():
    assert README.index("![") < README.index("<!-- lab-command -->") < README.index("<!-- test-command -->")
    for marker in ("<!-- lab-command -->", "<!-- test-command -->"):
        assert re.search(re.escape(marker) + r"\n```bash\n.+\n```", README), marker


def test_the_picture_is_notebook_01s_current_still():
    assert "](docs/hero.png)" in README
    assert HERO_PICTURE.read_bytes() == hero_png(), (
        "docs/hero.png is not notebook 01's stored still: run python -m echomq_viz.launcher.readme_picture")


def test_every_link_of_the_readme_and_docs_leads_to_a_file_of_the_repository():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target} does not exist"


def test_every_docs_page_is_linked_from_the_readme():
    linked = set(LINK.findall(README))
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in linked, f"docs/{page.name} is not linked from README.md"


def test_the_path_lists_every_notebook_in_order_with_its_summary():
    rows = re.findall(r"^\| (\d\d) \| \[(.+?)\]\((notebooks/[^)]+)\) \| (.+?) \|$", README, re.M)
    notebooks = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert [row[2] for row in rows] == notebooks
    for number, title, path, summary in rows:
        card = app_index.card(ROOT, path)
        assert (number, title, summary) == (card.number, card.title, card.summary)


def test_the_readme_says_what_notebook_10_needs():
    assert "Node.js" in README and "notebook 10" in README.lower()
