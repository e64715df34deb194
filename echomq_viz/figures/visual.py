"""The one visual system of every figure: type sizes, text colours on fills,
the width a figure may take, and one notation for powers and thousands.

Sizes are in points, as matplotlib takes them. A view's figure is drawn at
:data:`DPI` and shown one figure pixel to one CSS pixel, so a point is
``DPI / 72`` px on the page at 100 % zoom; the smallest size here,
:data:`SMALL`, is 12 px there, above the :data:`MIN_TEXT_PX` of 11 that
tests/figures/test_plots.py and the browser tests hold every figure to.

Contrast follows WCAG 2: :func:`contrast_ratio` of two colours, and
:func:`text_color_on` picks black or white, whichever reads better on a fill
(at least 4.58:1 on any colour, the worst case of the two).
"""

from __future__ import annotations

from typing import Iterator

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from echomq_viz.core.notation import power, thousands  # re-exported: the notation lives in the pure core

__all__ = ["DPI", "MIN_TEXT_PX", "MIN_CONTRAST", "SMALL", "TEXT", "TITLE", "MAX_FIGURE_PX",
           "px", "relative_luminance", "contrast_ratio", "text_color_on", "power", "thousands",
           "plain_number", "plain_formatter", "figure_texts", "smallest_text_px"]

DPI = 96  # a view's figure: one figure pixel is one CSS pixel at 100 % zoom
MIN_TEXT_PX = 11  # no text in a figure smaller than this on the page
MIN_CONTRAST = 4.5  # WCAG 2 AA for normal text
SMALL = 9  # pt: tick labels, box labels, notes (12 px)
TEXT = 10  # pt: axis labels, legends, annotations (13.3 px)
TITLE = 11  # pt: an axes' title (14.7 px)
MAX_FIGURE_PX = 840  # widest figure: JupyterLab's output at 1024 px (file browser closed) is 844 px


def px(points: float, dpi: float = DPI) -> float:
    """A size in points as CSS pixels on the page, for a figure at ``dpi``."""
    return points * dpi / 72


def relative_luminance(color) -> float:
    """WCAG 2 relative luminance of any matplotlib colour (alpha ignored)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_color_on(fill) -> str:
    """Black or white, whichever has the higher contrast on ``fill``."""
    return "black" if contrast_ratio("black", fill) >= contrast_ratio("white", fill) else "white"


def plain_number(value: float) -> str:
    """A tick value as a plain number: ``"200"``, ``"100,000"``, ``"0.5"``; never
    ``"2 × 10²"`` or an offset."""
    if float(value).is_integer():
        return thousands(int(value))
    return f"{value:,.6g}"


def plain_formatter() -> FuncFormatter:
    """A tick formatter that writes :func:`plain_number` (log axes included)."""
    return FuncFormatter(lambda value, _: plain_number(value))


def figure_texts(fig: Figure) -> Iterator:
    """Every visible text artist of ``fig`` with something to read: titles,
    labels, tick labels, legends, annotations."""
    fig.canvas.draw()  # tick labels get their text when drawn
    for text in fig.findobj(lambda artist: hasattr(artist, "get_fontsize") and hasattr(artist, "get_text")):
        if text.get_visible() and text.get_text().strip():
            yield text


def smallest_text_px(fig: Figure) -> tuple[float, str]:
    """The smallest visible text of ``fig`` on the page, in CSS px at 100 %,
    and the text itself; ``(inf, "")`` for a figure without text. A canvas on
    a HiDPI screen raises ``fig.dpi`` and shows the figure scaled back: the
    figure's own dpi counts."""
    dpi = getattr(fig, "_original_dpi", fig.dpi)
    sizes = [(px(text.get_fontsize(), dpi), text.get_text()) for text in figure_texts(fig)]
    return min(sizes, default=(float("inf"), ""))
