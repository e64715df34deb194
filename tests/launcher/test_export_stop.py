"""A stop of ``echomq-viz export``: a terminal's Ctrl-C (SIGINT to the export's whole process
group, Playwright's driver included) while a notebook's cell runs, and while a page view's still
is drawn. Either ends it with one line on stderr saying what was written, exit status 130, and
nothing it started left running: its kernel, Chromium, its private redis-server. A cell that fails
on its own still says so.

Each export runs one notebook of the test's own, whose cell sleeps (it touches a file first) or
whose view's ``still`` spins, so the signal lands in the phase named on a machine of any speed.
The export runs the checkout's package (``cwd``), in a TMPDIR of its own, with no ``REDIS_URL``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest

from conftest import one_clear_line, wait_until
from echomq_viz.redis_side._process import cmdline, descendants
from test_browser import _need_npm_once
from test_page_stills import need_browser

ROOT = Path(__file__).resolve().parents[2]

# A view whose still never comes: the browser is busy in it when the signal lands.
SPINNING_STILL = """\
export function render({ el }) { el.textContent = "a view"; }
export function still(state) {
  const end = Date.now() + 120000;
  while (Date.now() < end) {}
  return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>';
}
"""


def notebook(folder: Path, name: str, source: str) -> Path:
    """``folder/name``: one code cell of ``source``."""
    path = folder / name
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "c", "metadata": {}, "outputs": [],
                   "source": source}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}))
    return path


class Export:
    """``echomq-viz export NOTEBOOK --out OUT`` in a session of its own, as from a terminal; every
    process below it is noted (pid -> start time, command line) while it runs."""

    def __init__(self, path: Path, out: Path) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="emq-t-"))  # short: Unix socket paths stay under 108 bytes
        env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": str(self.tmp)}
        self.proc = subprocess.Popen([sys.executable, "-m", "echomq_viz", "export", str(path), "--out", str(out)],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self.reader.start()
        self.family: dict[int, tuple[float, str]] = {}

    def note_family(self) -> dict[int, tuple[float, str]]:
        for pid in descendants(self.proc.pid):
            try:
                self.family.setdefault(pid, (psutil.Process(pid).create_time(), cmdline(pid)))
            except psutil.Error:
                pass
        return self.family

    def seen(self, word: str) -> bool:
        return any(word in command for _, command in self.note_family().values())

    def wait_for(self, condition, what: str, seconds: float = 90) -> None:
        if not wait_until(lambda: condition() or self.proc.poll() is not None, seconds) or self.proc.poll() is not None:
            self.proc.kill()
            raise AssertionError(f"no {what} within {seconds}s; stdout {self.lines}, stderr {self.proc.stderr.read()}")
        self.note_family()

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C as a terminal sends it; the exit status and stderr."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the export did not stop within 60 s of Ctrl-C; stdout {self.lines}") from None
        self.reader.join(5)
        return code, self.proc.stderr.read()

    def left(self) -> list[str]:
        running = []
        for pid, (start, command) in self.family.items():
            try:
                process = psutil.Process(pid)
                if process.create_time() == start and process.status() != psutil.STATUS_ZOMBIE:
                    running.append(f"{pid} {command[:160]}")
            except psutil.Error:
                pass
        return running

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def assert_stopped(export: Export, out: Path, kinds: tuple[str, ...]) -> None:
    for kind in kinds:
        assert export.seen(kind), f"no {kind} ran below the export: {sorted(c for _, c in export.family.values())}"
    code, err = export.interrupt()
    assert code == 130 and one_clear_line(err), f"exit status {code}, stderr {err!r}"
    assert err.splitlines() == [f"echomq-viz export: stopped; 0 of 1 pages written in {out}"], err
    assert wait_until(lambda: not export.left(), 10), "left running:\n" + "\n".join(export.left())
    assert not list(export.tmp.glob("echomq-viz-*")), f"left in TMPDIR: {list(export.tmp.iterdir())}"
    assert not list(out.glob("*.html"))


@pytest.mark.slow  # a kernel, a browser: seconds
def test_ctrl_c_while_a_cell_runs_stops_the_export_and_its_kernel(tmp_path):
    _need_npm_once("the widget JavaScript")
    marker = tmp_path / "the cell runs"
    path = notebook(tmp_path, "sleeps.ipynb", f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\n"
                                              "time.sleep(120)")
    export = Export(path, tmp_path / "pages")
    try:
        export.wait_for(marker.exists, "running cell")
        assert_stopped(export, tmp_path / "pages", ("ipykernel", "redis-server"))
    finally:
        export.close()


@pytest.mark.slow
def test_ctrl_c_while_a_still_is_drawn_stops_the_export_and_its_browser(tmp_path):
    need_browser()
    _need_npm_once("the widget JavaScript")
    path = notebook(tmp_path, "spins.ipynb", "import anywidget\nfrom IPython.display import display\n\n"
                                             f"class Spins(anywidget.AnyWidget):\n    _esm = {SPINNING_STILL!r}\n\n"
                                             "display(Spins())")
    export = Export(path, tmp_path / "pages")
    try:
        export.wait_for(lambda: export.seen("--type=renderer"), "Chromium page")  # the still's page is open
        time.sleep(0.5)  # and busy in still()
        assert_stopped(export, tmp_path / "pages", ("chromium", "redis-server"))
    finally:
        export.close()


@pytest.mark.slow
def test_a_cell_that_fails_still_says_so(tmp_path):
    """The stop is told apart from a failing cell, which is said as before: exit status 2."""
    _need_npm_once("the widget JavaScript")
    path = notebook(tmp_path, "fails.ipynb", "raise ValueError('the notebook is wrong')")
    export = Export(path, tmp_path / "pages")
    try:
        assert export.proc.wait(120) == 2
        err = export.proc.stderr.read()
        assert one_clear_line(err) and err.startswith("echomq-viz export: fails.ipynb failed to run: "), err
        assert err.endswith("failed to run: CellExecutionError: ValueError: the notebook is wrong\n"), err  # no colour codes
        assert "stopped" not in err
    finally:
        export.close()


# The command's import held at its start, so that the signal lands there on a machine of any speed
HELD_IMPORT = """
import signal, sys, time, importlib.abc
signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal (a test runner may ignore it)
class Held(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "echomq_viz.launcher.cli":
            print("importing", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, Held())
from echomq_viz.launcher._entry import main
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_while_python_imports_the_command_is_one_line(tmp_path):
    """The signal lands while the command is being imported (a fifth of a second, before it has
    any stop handling of its own): one line and 130, not Python's traceback."""
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", HELD_IMPORT, "export", "--out", str(tmp_path / "html")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline() == "importing\n"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGINT and one_clear_line(err), (proc.returncode, err[-2000:])
    assert err.strip() == "echomq-viz: stopped"
