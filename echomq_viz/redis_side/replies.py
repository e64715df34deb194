"""A Redis reply as text, whichever way the client was made.

A client made with ``decode_responses`` answers ``str``; one without answers ``bytes``. Code that
reads replies (SLOWLOG entries, FUNCTION LIST, INFO, a job's fields) takes either through
:func:`reply_text`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["reply_text"]


def reply_text(value: Any, errors: str = "replace") -> str:
    """``value`` as ``str``: bytes decoded as UTF-8 (``errors`` as :meth:`bytes.decode` takes it:
    ``"replace"``, or ``"backslashreplace"`` where the bytes must stay readable), anything else
    through ``str``."""
    return value.decode("utf-8", errors) if isinstance(value, bytes) else str(value)
