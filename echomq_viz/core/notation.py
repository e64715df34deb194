"""The one notation for numbers the reader sees: powers as superscripts and
thousands with commas, in figures, readouts and refusal messages alike.

``2²¹ − 1`` rather than ``2**21 - 1`` or ``2^21 - 1``; ``2,097,151`` rather
than ``2_097_151``. Python's own spelling stays in code, docstrings and
comments; anything printed for a reader goes through these helpers.

Pure: no I/O, no third-party imports, so the pure core (:mod:`echomq_viz.core.checks`,
:mod:`echomq_viz.core.score`) can use it; :mod:`echomq_viz.figures.visual` re-exports
:func:`power` and :func:`thousands` for the figures.
"""

from __future__ import annotations

__all__ = ["MINUS", "power", "power_minus", "thousands"]

MINUS = "\u2212"  # the real minus sign, for prose-like text such as 2²¹ − 1

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power(base: int, exponent: int) -> str:
    """``power(2, 53)`` is ``"2⁵³"``: the one way figures and printed output write a power."""
    return f"{base}{str(exponent).translate(_SUPERSCRIPT)}"


def power_minus(base: int, exponent: int, less: int) -> str:
    """``power_minus(2, 21, 1)`` is ``"2²¹ − 1"``, with a real minus sign (U+2212)."""
    return f"{power(base, exponent)} {MINUS} {less}"


def thousands(n: int) -> str:
    """``thousands(4294967295)`` is ``"4,294,967,295"``: commas, never spaces or underscores,
    so a number never breaks across lines."""
    return f"{int(n):,}"
