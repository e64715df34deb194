"""echomq-viz: how one Redis sorted set serves as a two-key priority queue.

What a user imports is listed in ``__all__``: ``from echomq_viz import
priority_score, Demo``. Each name is imported from its module on first use,
so ``import echomq_viz`` alone stays light (no Redis client, no matplotlib).

The package is built in layers, from the pure core outward; a module imports
only from its own layer and the layers above it in this list
(``tests/test_layers.py`` holds it to that, and to no import circle):

- :mod:`echomq_viz.core`         the pure core: the score's maths, the double, every key's name, checks, notation
- :mod:`echomq_viz.redis_side`   a real redis-server, who owns which keys, the Lua scripts and their API
- :mod:`echomq_viz.experiments`  the experiments the notebooks run, on a real Redis
- :mod:`echomq_viz.figures`      figures drawn on a given matplotlib ``ax``, from data they are given
- :mod:`echomq_viz.widgets`      the notebooks' interactive views, drawn in the page (anywidget ES modules)
- :mod:`echomq_viz.peers`        the queue libraries people run, beside the packed score (notebook 10)
- :mod:`echomq_viz.launcher`     the ``echomq-viz`` command: lab, app, a hub's student server, offline pages, maintainers' tools

Each subpackage's docstring lists its modules and what it may import.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_WHERE = {
    **dict.fromkeys(
        ("priority_score", "split_score", "split_stored", "stored_score", "is_exact", "tier_bounds",
         "priority_scores_array", "split_scores_array", "TIER_SPAN", "COUNTER_MASK", "PRIORITY_LIMIT",
         "EXACT_LIMIT", "MAX_SCORE", "MAX_PRIORITY_COUNTER"), "echomq_viz.core.score"),
    **dict.fromkeys(("Keys", "QueueContext", "KEY_TYPES", "validate_job_id", "key_slot"), "echomq_viz.core.keys"),
    **dict.fromkeys(("Scripts", "Job", "DrainError", "BatchError", "validate_priority"), "echomq_viz.redis_side.scripts"),
    **dict.fromkeys(("connect", "RedisServer", "RedisUnavailable", "redact_url"), "echomq_viz.redis_side.server"),
    **dict.fromkeys(("Demo", "seeded_priorities"), "echomq_viz.experiments.live"),
    **dict.fromkeys(("clean_orphans", "LeaseLost"), "echomq_viz.redis_side.owners"),
    **dict.fromkeys(("inspect_queue", "QueueReport", "Finding"), "echomq_viz.experiments.inspection"),
    "LocalCluster": "echomq_viz.redis_side.cluster",
    "colab_setup": "echomq_viz.widgets.colab",
}

__all__ = list(_WHERE)


def __getattr__(name: str) -> object:
    """Import a public name's module on first use (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
