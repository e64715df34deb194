"""The tier colours every figure uses, chosen for every reader.

Any two of the ten colours stay at least ΔE 14 apart in CAM02-UCS for normal
vision and under simulated deuteranopia, protanopia and tritanopia; light
(odd tiers) and dark (even tiers) alternate, so neighbouring tiers differ in
lightness as well as hue, and neighbouring bands differ in pattern too
(checked in tests/core/test_colours.py).
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgba

__all__ = ["WAIT_COLOR", "tier_color", "tier_colors", "band_style"]

WAIT_COLOR = "#c8c8c8"  # jobs without priority, on the wait list
# after Paul Tol's "muted" scheme, fitted to the distances above
_TIER_PALETTE = ("#3a308b", "#88ccee", "#00742d", "#e5c86f", "#85194b",
                 "#44aa99", "#a642aa", "#b3a800", "#765171", "#d37960")
_PALETTE_RGBA = np.array([to_rgba(c) for c in _TIER_PALETTE])


def tier_color(priority: int) -> str:
    """The colour of a tier, the same in every figure."""
    return _TIER_PALETTE[int(priority) % len(_TIER_PALETTE)]


def tier_colors(priorities: np.ndarray) -> np.ndarray:
    """RGBA rows for many tiers at once (vectorised :func:`tier_color`)."""
    return _PALETTE_RGBA[np.asarray(priorities, dtype=np.int64) % len(_TIER_PALETTE)]


def band_style(priority: int) -> dict:
    """A tier band's fill (``axhspan`` keywords): even tiers, the darker
    colours, a stronger hatched tint; odd ones a pale plain tint."""
    even = int(priority) % 2 == 0
    return {"facecolor": to_rgba(tier_color(priority), 0.24 if even else 0.12),
            "edgecolor": to_rgba(tier_color(priority), 0.5), "hatch": "//" if even else None}
