"""The views' page side: one ES module per view in ``page/``, composed into the
text an anywidget runs.

A view's module imports the shared ones (``visual.js``, ``score.js``,
``controls.js``) with ordinary relative imports, so Node's test runner loads
them as they are. An anywidget module arrives in the page as one text (a
relative import inside it resolves nowhere), so :func:`page_module` inlines
each imported file once, in import order, and drops the import lines.
Every view module exports ``render`` (anywidget's entry point), ``still``
(its figure as SVG text, from a plain state object: what the page draws,
and what a stored notebook's still is made from) and ``describe`` (the
figure's text alternative).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

__all__ = ["PAGE", "page_module"]

PAGE = Path(__file__).with_name("page")
_IMPORT = re.compile(r"""^import\s+(?:\{[^}]*\}\s+from\s+)?["']\./([\w-]+\.js)["'];?\s*$""", re.M)


@functools.lru_cache(maxsize=None)
def page_module(name: str) -> str:
    """The text of ``page/<name>.js`` with its relative imports inlined."""
    seen: list[str] = []
    parts: list[str] = []

    def add(file: str) -> None:
        if file in seen:
            return
        seen.append(file)
        path = PAGE / file
        if not path.is_file():
            raise FileNotFoundError(f"no page module {file} in {PAGE}")
        text = path.read_text(encoding="utf-8")
        for imported in _IMPORT.findall(text):
            add(imported)
        parts.append(f"// ---- {file}\n" + _IMPORT.sub("", text))

    add(f"{name}.js")
    return "\n".join(parts)
