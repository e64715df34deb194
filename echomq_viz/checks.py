"""Argument checks, one wording for the whole package.

Every public function checks its arguments with these before any I/O, so a
refusal is one line that names the argument, the valid range and the value
given, and nothing has been changed yet. The policy:

- a value of the wrong type raises :class:`TypeError`, a value of the right
  type outside its range raises :class:`ValueError`;
- integers are ``int`` or any ``numbers.Integral`` (numpy integers too), but
  never ``bool``: ``True`` is not a priority;
- ranges are written as Python would, ``1..2_097_151``.

Pure: no I/O, no third-party imports.
"""

from __future__ import annotations

import numbers

__all__ = ["check_int", "check_str", "check_bool", "describe"]


def describe(value: object) -> str:
    """``value`` as an error message shows it: its type and a short repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _range_text(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"in {low:_}..{high:_}"
    if low is not None:
        return f"{low:_} or more"
    if high is not None:
        return f"{high:_} or less"
    return "an int"


def check_int(what: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a plain ``int`` after checking it is an integer in ``low..high``.

    Either bound may be None (open). Numpy integers are accepted; bools and
    floats are not, not even ``2.0``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {describe(value)}")
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{what} must be {_range_text(low, high)}, got {number:_}")
    return number


def check_str(what: str, value: object, *, empty: bool = False) -> str:
    """``value`` after checking it is a ``str``, and not empty unless ``empty``."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {describe(value)}")
    if not value and not empty:
        raise ValueError(f"{what} must not be empty")
    return value


def check_bool(what: str, value: object) -> bool:
    """``value`` after checking it is a real ``bool`` (not 0 or 1)."""
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {describe(value)}")
    return value
