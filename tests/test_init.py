"""The package's public face (echomq_viz/__init__.py) and every module's ``__all__``."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import echomq_viz

PACKAGE = Path(echomq_viz.__file__).parent
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py") if path.name not in ("__init__.py", "__main__.py")
)


def test_importing_the_package_imports_no_module_of_it():
    code = ("import echomq_viz, sys; "
            "print(sorted(m for m in sys.modules if m.startswith('echomq_viz.') "
            "or m.split('.')[0] in ('redis', 'matplotlib', 'numpy', 'ipywidgets')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_core_name_imports_only_its_module_and_no_io():
    code = ("from echomq_viz import priority_score, PRIORITY_LIMIT; import sys; "
            "assert priority_score(PRIORITY_LIMIT, 1) == 2**53 - 2**32 + 1; "
            "print(sorted(m for m in sys.modules if m.startswith('echomq_viz.') "
            "or m.split('.')[0] in ('redis', 'matplotlib')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['echomq_viz.core', 'echomq_viz.core.checks', 'echomq_viz.core.notation', 'echomq_viz.core.score']"


@pytest.mark.parametrize("name", echomq_viz.__all__)
def test_every_public_name_resolves_to_what_its_modules_export(name):
    value = getattr(echomq_viz, name)
    homes = [importlib.import_module(m) for m in MODULES]
    homes = [m for m in homes if name in getattr(m, "__all__", ())]
    assert homes and all(getattr(m, name) is value for m in homes), name


def test_the_curated_names_a_user_imports():
    wanted = {"priority_score", "split_score", "stored_score", "PRIORITY_LIMIT", "TIER_SPAN", "Keys",
              "QueueContext", "Scripts", "Job", "connect", "RedisServer", "Demo", "clean_orphans",
              "inspect_queue", "LocalCluster"}
    assert wanted <= set(echomq_viz.__all__)
    assert len(set(echomq_viz.__all__)) == len(echomq_viz.__all__)
    assert set(echomq_viz.__all__) <= set(dir(echomq_viz))
    with pytest.raises(AttributeError, match="module 'echomq_viz' has no attribute 'nothing_here'"):
        echomq_viz.nothing_here  # noqa: B018


def test_the_docstrings_list_every_layer_and_every_module():
    """The package's docstring names each layer; each layer's docstring names each of its modules."""
    doc = echomq_viz.__doc__
    for module in MODULES:
        layer = module.split(".")[1]
        assert f"echomq_viz.{layer}`" in doc, layer
        if len(module.split(".")) > 2:
            layer_doc = importlib.import_module(f"echomq_viz.{layer}").__doc__
            assert f":mod:`.{module.split('.')[2]}`" in layer_doc, module
            assert "May import" in layer_doc, layer


@pytest.mark.parametrize("module", MODULES)
def test_every_all_lists_only_public_names_the_module_has(module):
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", [])
    assert not [n for n in names if n.startswith("_")], names
    assert not [n for n in names if not hasattr(mod, n)], names
    assert len(set(names)) == len(names)


LIBRARY = ["core.checks", "core.score", "core.keys", "core.queue_report", "redis_side.lua_loader",
           "redis_side.script_stream", "redis_side.scripts", "redis_side.server", "redis_side.owners",
           "experiments.live", "redis_side.cluster", "experiments.inspection", "experiments.interop", "figures.plots"]


@pytest.mark.parametrize("module", LIBRARY)
def test_every_library_module_says_what_it_exports(module):
    assert hasattr(importlib.import_module(f"echomq_viz.{module}"), "__all__")


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("echomq_viz")):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_imports_another_modules_private_names(path):
    assert _private_imports(path) == []
