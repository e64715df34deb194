"""The answer one deliberate step away, for a reader who cannot act.

On GitHub, nbviewer and the offline pages nobody can press a guess-first
view's buttons. So the cell after such a view computes the answer, on Redis,
as the view's own button would, and shows it folded: an HTML
``<details>`` that opens only on a click (GitHub renders it too). The
view above is never touched: it stays the reader's.
"""

from __future__ import annotations

import html

from echomq_viz.core.checks import check_str

__all__ = ["Answer"]


class Answer:
    """``text`` (computed, never typed) under a ``summary`` line that opens it."""

    def __init__(self, summary: str, text: str) -> None:
        self.summary = check_str("summary", summary)
        self.text = check_str("text", text)

    def __repr__(self) -> str:
        return f"{self.summary} (folded: {len(self.text.splitlines())} lines)"

    def _repr_html_(self) -> str:
        return ("<details class='echomq-viz-answer'>"
                f"<summary style='cursor:pointer'><b>{html.escape(self.summary)}</b></summary>"
                "<pre style='font-size:12px; font-family:var(--jp-code-font-family, monospace); "
                f"white-space:pre-wrap'>{html.escape(self.text)}</pre></details>")
