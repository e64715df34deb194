"""The README's picture: the hero figure of notebook 01 as that notebook's own run left it.

Its still (see :mod:`echomq_viz.launcher._stills`) is stored in the notebook; this writes it out as
``docs/hero.png``, byte for byte, so the picture is what the project's run drew and never a
hand-made copy. Run ``python -m echomq_viz.launcher.readme_picture`` after refreshing notebook 01;
``tests/test_readme.py`` fails while the two differ.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from echomq_viz.launcher.app_index import first_still

__all__ = ["HERO_NOTEBOOK", "HERO_PICTURE", "hero_png", "write_hero"]

ROOT = Path(__file__).resolve().parents[2]
HERO_NOTEBOOK = ROOT / "notebooks" / "01-one-score-two-keys.ipynb"
HERO_PICTURE = ROOT / "docs" / "hero.png"


def hero_png(notebook: Path = HERO_NOTEBOOK) -> bytes:
    """The PNG of the notebook's first still."""
    still = first_still(json.loads(notebook.read_text(encoding="utf-8")))
    if still is None:
        raise LookupError(f"{notebook.name} stores no still: refresh it first")
    return base64.b64decode(still)


def write_hero(notebook: Path = HERO_NOTEBOOK, out: Path = HERO_PICTURE) -> bool:
    """Write the hero's still to ``out``; True when that changed the file."""
    png = hero_png(notebook)
    if out.is_file() and out.read_bytes() == png:
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png)
    return True


if __name__ == "__main__":
    changed = write_hero()
    print(f"{HERO_PICTURE.relative_to(ROOT)}: {'written' if changed else 'already current'}")
    sys.exit(0)
