"""benchmarks/run.py's main loop: a part that fails is recorded as missed,
with its reason on one line, and the other parts still report. Tiny fake
parts stand in for the timed ones: nothing here is measured. And the record of a
failed test run names each failed test with its message."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_run():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # run.py imports classroom.py as its neighbour
    try:
        spec = importlib.util.spec_from_file_location("benchmarks_run", ROOT / "benchmarks" / "run.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


run = _load_run()


def _timed_out(quick: bool) -> dict:
    raise TimeoutError("Locator.wait_for: Timeout 60000ms exceeded.\n=== logs ===\n  waiting for canvas")


PARTS = {
    "first": lambda quick: {"first_ms": 1.5, "first_quick": quick},
    "browser": _timed_out,
    "last": lambda quick: {"last_count": 3},
}


def test_a_failing_part_is_recorded_as_missed_and_the_others_still_report(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert run.main(["--quick"], parts=PARTS, out=out) == 1
    results = json.loads(out.read_text())
    assert results["first_ms"] == 1.5 and results["first_quick"] is True
    assert results["last_count"] == 3  # the part after the failure ran
    assert results["browser_error"] == "TimeoutError: Locator.wait_for: Timeout 60000ms exceeded."
    assert not any(key.startswith(("first_error", "last_error")) for key in results)
    printed = capsys.readouterr()
    assert "browser_error  TimeoutError: Locator.wait_for" in printed.out
    assert "Traceback" not in printed.out + printed.err
    assert "missed: browser failed" in printed.err


def test_every_part_reporting_exits_zero_and_a_rerun_clears_the_old_miss(tmp_path):
    out = tmp_path / "results.json"
    assert run.main([], parts=PARTS, out=out) == 1
    fixed = {**PARTS, "browser": lambda quick: {"browser_figure_p50_ms": 40.0}}
    assert run.main(["--only", "browser"], parts=fixed, out=out) == 0
    results = json.loads(out.read_text())
    assert "browser_error" not in results
    assert results["browser_figure_p50_ms"] == 40.0
    assert results["first_ms"] == 1.5  # the other parts' figures stay


def test_a_part_run_again_replaces_every_key_it_wrote_before(tmp_path):
    """A part that no longer writes a key leaves no stale figure behind: each part's keys are
    recorded, and its next run (``--only``) replaces all of them."""
    out = tmp_path / "results.json"
    parts = {**PARTS, "browser": lambda quick: {"browser_old_ms": 9.0, "browser_kept_ms": 1.0}}
    assert run.main([], parts=parts, out=out) == 0
    assert json.loads(out.read_text())["keys_by_part"]["browser"] == ["browser_kept_ms", "browser_old_ms"]
    parts["browser"] = lambda quick: {"browser_kept_ms": 2.0}
    assert run.main(["--only", "browser"], parts=parts, out=out) == 0
    results = json.loads(out.read_text())
    assert "browser_old_ms" not in results and results["browser_kept_ms"] == 2.0
    assert results["first_ms"] == 1.5 and results["keys_by_part"]["first"] == ["first_ms", "first_quick"]
    assert results["keys_by_part"]["browser"] == ["browser_kept_ms"]


def test_a_quick_part_is_not_merged_into_a_full_run(tmp_path, capsys):
    """A smoke run's smaller sizes would sit under the full run's names: refused, nothing written."""
    out = tmp_path / "results.json"
    fixed = {**PARTS, "browser": lambda quick: {"browser_figure_p50_ms": 40.0}}
    assert run.main([], parts=fixed, out=out) == 0
    before = out.read_text()
    assert run.main(["--quick", "--only", "first"], parts=fixed, out=out) == 2
    assert out.read_text() == before
    assert "--quick with --only would put a smoke run's smaller sizes" in capsys.readouterr().err
    assert run.main(["--quick"], parts=fixed, out=out) == 0  # a whole quick record
    assert run.main(["--quick", "--only", "first"], parts=fixed, out=out) == 0  # into a quick one


def test_the_reason_is_one_line_even_without_a_message():
    def failing(exc):
        def part(quick):
            raise exc
        return part

    results: dict = {}
    failed = run.run_parts({"bare": failing(RuntimeError()), "padded": failing(ValueError("\n\n  bad size\nmore")),
                            "long": failing(OSError("x" * 1000 + "\ny"))}, True, results)
    assert failed == ["bare", "padded", "long"]
    assert results["bare_error"] == "RuntimeError"
    assert results["padded_error"] == "ValueError: bad size"
    assert "\n" not in results["long_error"] and len(results["long_error"]) < 300


def test_a_failed_test_is_named_with_its_message_though_its_name_is_long(tmp_path):
    """pytest's short summary drops the message of a test whose name is wider than 80 columns:
    the record takes it from the test's report. A real pytest run."""
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('the fixture broke')\n\n"
        f"@pytest.mark.parametrize('mode', ['{'lab' * 20}'])\n"
        "def test_a_name_long_enough_that_the_summary_has_no_room_left_for_its_message(mode):\n"
        "    assert mode == 'app', 'the mode is not the app'\n\n"
        "class TestPages:\n    def test_short(self):\n        assert 1 == 2\n\n"
        "def test_errs(broken):\n    pass\n\n"
        "def test_passes():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-ra",
                           "-p", "no:xdist", "-p", "no:nbval", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          # as with no terminal, and not on CI, where pytest keeps every message
                          env={**{k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")},
                               "COLUMNS": "80"})
    lines = done.stdout.splitlines()
    assert any(line.startswith("FAILED") and " - " not in line for line in lines), "the summary kept every message"
    assert sorted(run.failures(lines)) == [
        "ERROR test_tiny.py::test_errs - RuntimeError: the fixture broke",
        "FAILED test_tiny.py::TestPages::test_short - assert 1 == 2",
        f"FAILED test_tiny.py::test_a_name_long_enough_that_the_summary_has_no_room_left_for_its_message[{'lab' * 20}]"
        " - AssertionError: the mode is not the app"], done.stdout


def test_a_suite_reference_the_clone_lacks_is_a_reason_in_one_line_not_a_figure(tmp_path, monkeypatch):
    """The suite's reference is measured from a clone of this repository at SUITE_REFERENCE; where
    that commit is not in the history (a shallow clone, say) the record says why, never a guess."""
    monkeypatch.setattr(run, "SUITE_REFERENCE", "0" * 40)
    why = run._reference_clone(tmp_path)
    assert isinstance(why, str) and why.startswith("git -C ") and "\n" not in why, why
    assert not (tmp_path / "echomq-viz" / ".venv").exists()
