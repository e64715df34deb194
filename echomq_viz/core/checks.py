"""Argument checks, one wording for the whole package.

Every public function checks its arguments with these before any I/O, so a
refusal is one line that names the argument, the valid range and the value
given, and nothing has been changed yet. The policy:

- a value of the wrong type raises :class:`TypeError`, a value of the right
  type outside its range raises :class:`ValueError`;
- integers are ``int`` or any ``numbers.Integral`` (numpy integers too), but
  never ``bool``: ``True`` is not a priority;
- messages read ``<what> must be <range> (<why>), got <value>``, in the
  package's one notation (:mod:`echomq_viz.core.notation`): thousands with commas,
  ``1..2,097,151``, and powers as superscripts, ``(2²¹ − 1)``.

Domain rules (a priority, a key name) live in their modules, built on these.
Pure: no I/O, no third-party imports.
"""

from __future__ import annotations

import math
import numbers

from echomq_viz.core.notation import power, thousands

__all__ = ["check_int", "check_whole", "check_str", "check_text", "check_bool", "describe"]


def describe(value: object) -> str:
    """``value`` as an error message shows it: its type and a short repr."""
    shown = value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value
    text = repr(shown)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _range_text(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"in {_show_int(low)}..{_show_int(high)}"
    if low is not None:
        return f"{_show_int(low)} or more"
    if high is not None:
        return f"{_show_int(high)} or less"
    return "an int"


def _why(why: str) -> str:
    return f" ({why})" if why else ""


def _show_int(number: int) -> str:
    """``number`` with thousands commas; from 2**99 on (31 digits) as ``1.234 × 10¹⁰⁰``,
    which keeps the line short (and works past Python's 4300-digit str limit)."""
    if abs(number).bit_length() < 100:
        return thousands(number)
    exponent = int(math.log10(abs(number)))
    mantissa = abs(number) / 10**exponent  # int / int: correctly rounded, however large
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    text = f"{mantissa:.3f}"
    if text == "10.000":
        text, exponent = "1.000", exponent + 1
    return f"{'-' if number < 0 else ''}{text} × {power(10, exponent)}"


def _in_range(what: str, number: int, low: int | None, high: int | None, why: str) -> int:
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{what} must be {_range_text(low, high)}{_why(why)}, got {_show_int(number)}")
    return number


def check_int(what: str, value: object, low: int | None = None, high: int | None = None, *,
              why: str = "") -> int:
    """``value`` as a plain ``int`` after checking it is an integer in ``low..high``.

    Either bound may be None (open); ``why`` explains the range in brackets.
    Numpy integers are accepted; bools and floats are not, not even ``2.0``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {describe(value)}")
    return _in_range(what, int(value), low, high, why)


def check_whole(what: str, value: object, low: int | None = None, high: int | None = None, *,
                why: str = "") -> int:
    """:func:`check_int` that also takes a float holding a whole number, as
    Redis returns scores; the value comes back as an exact ``int``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be an int or a float, got {describe(value)}")
    if not isinstance(value, numbers.Integral) and not (math.isfinite(value) and value == math.floor(value)):
        raise ValueError(f"{what} must be a whole number, got {describe(value)}")
    return _in_range(what, int(value), low, high, why)


def check_str(what: str, value: object, *, empty: bool = False, max_length: int | None = None,
              why: str = "") -> str:
    """``value`` after checking it is a ``str``, not empty unless ``empty``, and
    at most ``max_length`` characters; ``why`` explains the length."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {describe(value)}")
    if not value and not empty:
        raise ValueError(f"{what} must not be empty")
    if max_length is not None and len(value) > max_length:
        raise ValueError(f"{what} must be {0 if empty else 1}..{thousands(max_length)} characters{_why(why)}, "
                         f"got {thousands(len(value))}")
    return value


def check_text(what: str, value: object, *, empty: bool = False, max_length: int | None = None,
               why: str = "") -> str:
    """:func:`check_str` for text Redis will hold: it must encode as UTF-8,
    which a str holding a lone surrogate (half a UTF-16 pair) cannot."""
    check_str(what, value, empty=empty, max_length=max_length, why=why)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} must be UTF-8 encodable, got {describe(value)} holding the lone "
                         f"surrogate {value[exc.start]!r}") from None
    return value


def check_bool(what: str, value: object) -> bool:
    """``value`` after checking it is a real ``bool`` (not 0 or 1)."""
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {describe(value)}")
    return value
