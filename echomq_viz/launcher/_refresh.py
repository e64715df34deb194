"""Re-run notebooks in place and store their outputs so that diffs stay quiet.

    python -m echomq_viz.launcher._refresh notebooks/NN-*.ipynb

Each notebook runs top to bottom in a fresh kernel on one private Redis (or
``REDIS_URL``), with its widget state stored, figures included (the same
run as ``echomq-viz export``), and each view's still (the image GitHub and
nbviewer show) made from its figure's state at the end of the run. Then
what changes on every run and means nothing is taken out: execution
timestamps, and the random widget model ids, which are renumbered in an
order of their own (from the views shown). Running it twice on an unchanged
notebook writes the same bytes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Callable, Sequence

from echomq_viz.launcher._startup import skip_iri_grammar
from echomq_viz.launcher._stills import REFERENCE, VIEW, reach_models
from echomq_viz.launcher._stills import WIDGET_STATE
from echomq_viz.launcher.export import execute_with_widgets, redis_for_kernels

__all__ = ["refresh", "quieten", "main"]


def _canonical_order(nb: dict, state: dict) -> list[str]:
    """The model ids in an order that does not depend on their random values:
    depth-first from the views shown in the outputs, attributes by name, then
    any model no output reaches, by its kind and content."""
    order: list[str] = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            reach_models(state, output.get("data", {}).get(VIEW, {}).get("model_id", ""), order)
    masked = {model_id: REFERENCE.sub("IPY_MODEL_", json.dumps(model, sort_keys=True))
              for model_id, model in state.items()}
    for model_id in sorted(state, key=masked.__getitem__):
        reach_models(state, model_id, order)
    return order


def _renumber_widgets(text: str, order: Sequence[str]) -> str:
    """``text`` with each model id replaced by its place in ``order``."""
    if not order:
        return text
    rename = {model_id: f"{rank:032x}" for rank, model_id in enumerate(order, start=1)}
    # whole ids only, never a run of characters inside a longer word (an image, say)
    pattern = re.compile(r"(?<![0-9A-Za-z])(" + "|".join(map(re.escape, rename)) + r")(?![0-9A-Za-z])")
    return pattern.sub(lambda match: rename[match.group(1)], text)


def quieten(nb: dict) -> dict:
    """``nb`` (notebook JSON) without execution timestamps, its widget ids renumbered."""
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    text = json.dumps(nb, sort_keys=True, ensure_ascii=False)
    return json.loads(_renumber_widgets(text, _canonical_order(nb, state)))


def refresh(path: Path, *, timeout: int = 600) -> None:
    """Run the notebook at ``path`` and write it back with its outputs, quietly."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    execute_with_widgets(nb, path, timeout)
    quiet = nbformat.from_dict(quieten(nb))
    nbformat.validate(quiet)
    partial = path.with_name(f".{path.name}.part")
    nbformat.write(quiet, partial)
    partial.replace(path)
    from echomq_viz.launcher.readme_picture import HERO_NOTEBOOK, write_hero

    if path == HERO_NOTEBOOK:  # the README's picture is this notebook's hero still, kept current
        write_hero(path)


def main(argv: Sequence[str] | None = None, *, log: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m echomq_viz.launcher._refresh", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="the notebooks to re-run and store")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one cell may take (default 600)")
    args = parser.parse_args(argv)
    skip_iri_grammar()
    missing = [str(path) for path in args.notebooks if not path.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    with redis_for_kernels(True):
        for path in args.notebooks:
            log(f"running {path}")
            refresh(path.resolve(), timeout=args.timeout)
            log(f"stored {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
