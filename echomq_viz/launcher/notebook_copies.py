"""The user's own copy of the notebooks that ship with the package.

The reader works on a copy: ``lab`` copies the notebooks, from a wheel or from
a clone alike, into ``./echomq-viz-notebooks`` (ignored by git in a clone), so
saving in JupyterLab never changes a committed notebook; a hub's
``singleuser`` copies them into the student's home. The app and ``export``,
which never save, read a checkout's own. A copy is kept up to date without
ever overwriting an edit: a record of what was written tells a user's change
from an old version. Two launchers started at once in one folder take turns
(a lock file), and each file is written under a name of its own, then renamed
into place, so nobody ever reads half a notebook. A copy that fails (a full
disk) takes back what it made: the notebooks it added, the lock file and the
folder when it made them, so the next try starts where this one did.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

__all__ = ["USER_FOLDER", "COPY_RECORD", "COPY_LOCK", "project_checkout", "shipped_notebooks", "copy_notebooks",
           "lab_notebooks"]

USER_FOLDER = "echomq-viz-notebooks"  # the user's copy, made in the current folder
COPY_RECORD = ".echomq-viz-copied.json"  # in it: name -> sha256 of the file as we last wrote it
COPY_LOCK = ".echomq-viz-copying.lock"  # held while one launcher updates the copy


def project_checkout(folder: Path) -> bool:
    """Whether ``folder`` is a checkout of this project (its notebooks are edited in place)."""
    try:
        pyproject = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return (folder / "notebooks").is_dir() and re.search(r'(?m)^name\s*=\s*"echomq-viz"', pyproject) is not None


def shipped_notebooks() -> Path:
    """The notebooks that came with the package: inside it (a wheel), or
    beside it (a checkout, an editable install)."""
    package = Path(__file__).resolve().parents[1]
    if (package / "notebooks").is_dir():
        return package / "notebooks"
    if project_checkout(package.parent):
        return package.parent / "notebooks"
    raise SystemExit("echomq-viz: this installation has no notebooks; reinstall it "
                     "from a wheel built in a clone (python3 -m pip wheel --no-deps -w dist .) "
                     "or pass --notebooks DIR")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` at once: written under a name no other process
    uses, then renamed over it."""
    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(partial, 0o644)  # mkstemp's 0600 would differ from a plain copy's
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


@contextlib.contextmanager
def _turn(target: Path, made: list[Path]):
    """One launcher at a time updates ``target``; the lock goes with the process."""
    lock_path = target / COPY_LOCK
    if not lock_path.exists():
        made.append(lock_path)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def copy_notebooks(source: Path, target: Path, *, say: Callable[[str], None]) -> Path:
    """Make ``target`` hold the user's own copy of every file in ``source``, and return it.

    A missing file is copied. A file still as we wrote it (its hash is in
    ``COPY_RECORD``) takes a newer shipped version. A file the user changed
    is never touched: when a different version ships, one line says so.
    When it fails (a full disk, no right to write), what this call made is
    removed (see the module's docstring) and ``SystemExit`` says why.
    """
    made: list[Path] = []  # what this call created, newest last: what a failure takes back
    try:
        with contextlib.suppress(FileExistsError):  # another launcher may make it at this moment
            target.mkdir(mode=0o755)
            made.append(target)
        with _turn(target, made):
            copied, updated = _update(source, target, say, made)
    except OSError as exc:
        _take_back(made)
        room = "free some room there or " if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        raise SystemExit(f"echomq-viz: cannot keep your copy of the notebooks in {target}: "
                         f"{exc.strerror or exc} (what this run had copied is removed); {room}"
                         f"pass --notebooks DIR") from None
    news = f"; copied {copied}, updated {updated} unedited" if copied or updated else ""
    say(f"notebooks in {target} (your copy: edits stay yours{news})")
    return target


def _take_back(made: list[Path]) -> None:
    """Remove what a failed copy made, newest first (a folder it made: with all in it)."""
    for path in reversed(made):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def _update(source: Path, target: Path, say: Callable[[str], None], made: list[Path]) -> tuple[int, int]:
    """Copy what is missing or unedited from ``source`` into ``target``: (copied, updated);
    each file it adds is noted in ``made``."""
    record_path = target / COPY_RECORD
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        record = record if isinstance(record, dict) else {}
    except (OSError, ValueError):
        record = {}
    copied = updated = 0
    for shipped in sorted(source.iterdir()):
        if not shipped.is_file() or shipped.name.startswith("."):
            continue
        data, mine = shipped.read_bytes(), target / shipped.name
        current = mine.read_bytes() if mine.is_file() else None
        if current is None and mine.exists():
            say(f"{mine} is not a file; left alone")
            continue
        if current == data:
            record[shipped.name] = _digest(data)
            continue
        if current is not None and record.get(shipped.name) != _digest(current):
            if record.get(shipped.name) != _digest(data):  # and a new version ships
                say(f"{mine.name} has your edits, kept; this version of echomq-viz ships another: "
                    f"rename yours to get it")
            continue
        if current is None:
            made.append(mine)
        _write_atomically(mine, data)
        record[shipped.name] = _digest(data)
        copied, updated = (copied + 1, updated) if current is None else (copied, updated + 1)
    if not record_path.exists():
        made.append(record_path)
    _write_atomically(record_path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return copied, updated


def lab_notebooks(*, say: Callable[[str], None]) -> Path:
    """What ``echomq-viz lab`` opens without ``--notebooks``: the reader's copy in
    ``./echomq-viz-notebooks``, of a wheel's notebooks or of a clone's."""
    return copy_notebooks(shipped_notebooks(), Path.cwd() / USER_FOLDER, say=say)


def notebooks_dir(chosen: str | os.PathLike | None = None, *, say: Callable[[str], None] | None = None) -> Path:
    """The notebooks to open: ``chosen``; else a checkout's ``notebooks/``
    (the current folder's, or the one the package runs from); else the user's
    copy of the shipped ones in ``./echomq-viz-notebooks`` (see :func:`copy_notebooks`)."""
    if chosen is not None:
        path = Path(chosen).expanduser().resolve()
        if not path.is_dir():
            raise SystemExit(f"echomq-viz: {chosen} is not a folder")
        return path
    for checkout in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if project_checkout(checkout):
            return checkout / "notebooks"
    return copy_notebooks(shipped_notebooks(), Path.cwd() / USER_FOLDER, say=say or _say)


def _say(line: str) -> None:
    print(f"echomq-viz: {line}", file=sys.stderr, flush=True)
