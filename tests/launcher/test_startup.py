"""Our Jupyter processes start without rfc3987-syntax's grammar, and lose nothing they check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from echomq_viz.launcher._startup import skip_iri_grammar

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_GRAMMAR = """
import sys
from echomq_viz.launcher._startup import skip_iri_grammar
skip_iri_grammar()
import jsonschema, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)  # the notebook schema still checks
broken = nbformat.from_dict({**nb, "cells": [{"cell_type": "code", "source": 1}]})
try:
    nbformat.validate(broken)
except nbformat.ValidationError:
    pass
else:
    raise SystemExit("a broken notebook passed")
checker = jsonschema.Draft7Validator.FORMAT_CHECKER
assert not checker.conforms("not-an-email", "email") and checker.conforms("a@b.c", "email")
print(sorted(m for m, loaded in sys.modules.items() if loaded and m.split(".")[0] in ("lark", "rfc3987_syntax")),
      "iri" in checker.checkers, "date-time" in checker.checkers)
"""


def imported_modules(importtime_stderr: str) -> set[str]:
    """The modules a ``python -X importtime`` run imported, read from its stderr."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime_stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.slow  # a process of its own
def test_without_the_grammar_notebooks_still_validate_and_formats_still_check(tmp_path):
    notebook = next((ROOT / "notebooks").glob("01-*.ipynb"))
    out = subprocess.run([sys.executable, "-c", WITHOUT_GRAMMAR, str(notebook)], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.split()
    assert out == ["[]", "False", "True"], out  # no Lark, no iri format; the other formats still there


@pytest.mark.slow  # a process of its own
@pytest.mark.parametrize("module", ["_jupyterlab", "_voila", "_singleuser"])
def test_the_servers_import_jsonschema_without_building_the_grammar(module, tmp_path):
    """``--version`` goes through each server's start up to its config: jsonschema is imported
    (so the check means something), Lark never is."""
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", f"echomq_viz.launcher.{module}", "--version"],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    imported = imported_modules(run.stderr)
    assert "jsonschema._format" in imported
    assert not {name for name in imported if name.split(".")[0] == "lark"}


@pytest.mark.slow  # a pytest of its own
def test_pytest_with_the_projects_options_loads_jsonschema_without_the_grammar():
    """The project's pytest options load this module as a plugin ahead of nbval, which imports nbformat."""
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "pytest", "-p", "no:cacheprovider", "-n", "0",
                          "--noconftest", "--collect-only", "-q", "tests/launcher/test_startup.py"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:]
    imported = imported_modules(run.stderr)
    assert {"nbval.kernel", "jsonschema._format"} <= imported  # nbval loaded, and jsonschema with it
    assert not {name for name in imported if name.split(".")[0] == "lark"}


def test_once_jsonschema_is_loaded_nothing_changes():
    import jsonschema  # noqa: F401  (pytest's nbval plugin loaded it already)

    before = sys.modules.get("rfc3987_syntax")
    skip_iri_grammar()
    assert sys.modules.get("rfc3987_syntax") is before
