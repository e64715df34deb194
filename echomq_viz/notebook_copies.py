"""The user's own copy of the notebooks that ship with the package.

A checkout's notebooks are edited in place; an installed package's are copied
into a folder of the user's (``./echomq-viz-notebooks`` for ``lab``, the home
for a hub's ``singleuser``) and kept up to date without ever overwriting an
edit: a record of what was written tells a user's change from an old version.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Callable

__all__ = ["USER_FOLDER", "COPY_RECORD", "project_checkout", "shipped_notebooks", "copy_notebooks"]

USER_FOLDER = "echomq-viz-notebooks"  # the user's copy, made in the current folder
COPY_RECORD = ".echomq-viz-copied.json"  # in it: name -> sha256 of the file as we last wrote it


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
    package = Path(__file__).resolve().parent
    if (package / "notebooks").is_dir():
        return package / "notebooks"
    if project_checkout(package.parent):
        return package.parent / "notebooks"
    raise SystemExit("echomq-viz: this installation has no notebooks; reinstall it "
                     "from a wheel built in a clone (python3 -m pip wheel --no-deps -w dist .) "
                     "or pass --notebooks DIR")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_notebooks(source: Path, target: Path, *, say: Callable[[str], None]) -> Path:
    """Make ``target`` hold the user's own copy of every file in ``source``, and return it.

    A missing file is copied. A file still as we wrote it (its hash is in
    ``COPY_RECORD``) takes a newer shipped version. A file the user changed
    is never touched: when a different version ships, one line says so.
    """
    try:
        target.mkdir(mode=0o755, exist_ok=True)
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
            partial = mine.with_name(f".{mine.name}.part")
            partial.write_bytes(data)
            partial.replace(mine)
            record[shipped.name] = _digest(data)
            copied, updated = (copied + 1, updated) if current is None else (copied, updated + 1)
        record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"echomq-viz: cannot keep your copy of the notebooks in {target}: "
                         f"{exc.strerror or exc}; pass --notebooks DIR") from None
    news = f"; copied {copied}, updated {updated} unedited" if copied or updated else ""
    say(f"notebooks in {target} (your copy: edits stay yours{news})")
    return target
