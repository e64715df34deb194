"""What a Redis error means for a kernel, in one line.

A ``Demo`` call that Redis fails (a read-only replica, a server out of
memory, a user without the right, a server gone, one still loading its data,
a cluster missing slots) raises the same redis-py error class, so ``except``
clauses keep working, but as an error IPython shows as its one line: what
happened and what to do. The original error stays its ``__cause__``, and
its traceback goes to the kernel's own stderr (the terminal's log of
``echomq-viz lab`` or ``app``), never into the notebook.
"""

from __future__ import annotations

import os
import re
import sys
import traceback

from redis import exceptions as rx

__all__ = ["one_line", "explain"]

_TWINS: dict[type, type] = {}


def explain(exc: BaseException, where: str) -> str:
    """One line saying what ``exc`` (from the Redis at ``where``) means."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    codes = set(re.findall(r"(?<![A-Za-z])-?([A-Z]{3,})\b", text))  # a script's error holds its call's code
    if isinstance(exc, rx.ReadOnlyError) or "READONLY" in codes:
        return (f"Redis at {where} is a read-only replica: nothing was written; set REDIS_URL to its "
                "primary, or unset it for a private server")
    if isinstance(exc, rx.OutOfMemoryError) or "OOM" in codes:
        return (f"Redis at {where} is out of memory (its maxmemory is reached and it evicts nothing): "
                "nothing was written; reset a demo queue (deleting always works) or ask its operator for room")
    if isinstance(exc, rx.NoPermissionError) or "NOPERM" in codes:
        return (f"this Redis user may not do that at {where} ({text}): a student's user reaches only "
                "its own demo keys; nothing was done")
    if isinstance(exc, rx.BusyLoadingError) or "LOADING" in codes:
        return f"Redis at {where} is still loading its data into memory: nothing was done; try again in a moment"
    if isinstance(exc, rx.ClusterDownError) or codes & {"CLUSTERDOWN", "TRYAGAIN"}:
        return (f"the Redis Cluster at {where} is down or moving slots ({text}): nothing was done; "
                "try again once every slot is served")
    if isinstance(exc, rx.MasterDownError) or "MASTERDOWN" in codes:
        return f"Redis at {where} is a replica that lost its primary ({text}): nothing was done"
    if isinstance(exc, (rx.ConnectionError, rx.TimeoutError)):
        return f"cannot reach Redis at {where} ({text}): is it running? nothing was done"
    return f"Redis at {where} refused the call: {text}"


def _twin(cls: type) -> type:
    """``cls`` shown by IPython as its one line (its name kept: ``except cls`` still catches it)."""
    twin = _TWINS.get(cls)
    if twin is None:
        def _render_traceback_(self) -> list[str]:
            return [f"{cls.__name__}: {self}"]

        twin = _TWINS[cls] = type(cls.__name__, (cls,), {"_render_traceback_": _render_traceback_,
                                                          "__module__": cls.__module__})
    return twin


def _log(exc: BaseException) -> None:
    """The full traceback to the process's own stderr: in a kernel, the copy
    ipykernel kept of it (the terminal), not the notebook's stream."""
    text = "echomq-viz: " + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    fd = getattr(sys.stderr, "_original_stdstream_copy", None)  # ipykernel watching fd 2 for the notebook
    if not isinstance(fd, int):
        if sys.stderr is sys.__stderr__:
            return  # not in a kernel: Python prints the traceback, __cause__ included
        fd = 2  # a kernel that leaves fd 2 alone: it is the terminal
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass


def one_line(exc: rx.RedisError, where: str) -> rx.RedisError:
    """The error to raise (``from exc``) in place of ``exc``."""
    _log(exc)
    try:
        return _twin(type(exc))(explain(exc, where))
    except TypeError:  # a class that takes other arguments: its own text, still one line
        return _twin(rx.RedisError)(explain(exc, where))
