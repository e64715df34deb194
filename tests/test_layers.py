"""The package's layers: imports run one way, from the pure core outward, and never in a circle.

Read from the source (``ast``), every import of one echomq_viz module by another, at the top of
a file or inside a function alike, is an edge. Two rules, each failing with the modules named:

- a module imports only from its own layer and the layers before it in :data:`LAYERS`;
- no circle: no module reaches itself through the imports of others.
"""

from __future__ import annotations

import ast
from pathlib import Path

import echomq_viz

PACKAGE = Path(echomq_viz.__file__).parent
# from the pure core outward; the package's own __init__ and __main__ sit above them all
LAYERS = ("core", "redis_side", "experiments", "figures", "widgets", "peers", "launcher")


def module_names(package: Path) -> dict[str, Path]:
    names = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The echomq_viz modules ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:  # echomq_viz.core.score.x -> echomq_viz.core.score
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                found.add(candidate)
    return found


def layer_of(name: str) -> int:
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return len(LAYERS)  # echomq_viz itself, __main__: the face above every layer


def problems(package: Path) -> list[str]:
    known = module_names(package)
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    found = [f"{name} ({LAYERS[layer_of(name)]}) imports {target} ({LAYERS[layer_of(target)]}), a later layer"
             for name, targets in sorted(graph.items()) for target in sorted(targets)
             if layer_of(name) < len(LAYERS) and layer_of(target) > layer_of(name)]
    # a circle: a path back to where it started (depth-first, each circle reported once)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                found.append("import circle: " + " -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return found


def test_imports_run_one_way_and_never_in_a_circle():
    assert problems(PACKAGE) == []


def test_every_module_sits_in_a_layer():
    loose = [name for name in module_names(PACKAGE)
             if layer_of(name) == len(LAYERS) and name not in ("echomq_viz", "echomq_viz.__main__")]
    assert loose == [], f"modules outside every layer: {loose}"


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "echomq_viz"
    for relative, source in {"__init__.py": "", **{f"{layer}/__init__.py": "" for layer in LAYERS}, **files}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(source)
    return root


def test_a_planted_circle_is_found_and_named(tmp_path):
    root = _plant(tmp_path, {
        "launcher/a.py": "from echomq_viz.launcher import b\n",
        "launcher/b.py": "def f():\n    from .a import x  # inside a function counts too\n",
    })
    assert problems(root) == ["import circle: echomq_viz.launcher.a -> echomq_viz.launcher.b -> echomq_viz.launcher.a"]


def test_an_import_from_a_later_layer_is_found_and_named(tmp_path):
    root = _plant(tmp_path, {
        "core/score.py": "from echomq_viz.figures.plots import draw\n",
        "figures/plots.py": "from echomq_viz.core import score\n",
    })
    assert problems(root) == [
        "echomq_viz.core.score (core) imports echomq_viz.figures.plots (figures), a later layer",
        "import circle: echomq_viz.core.score -> echomq_viz.figures.plots -> echomq_viz.core.score",
    ]
