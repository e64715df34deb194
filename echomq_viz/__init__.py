"""echomq-viz: how one Redis sorted set serves as a two-key priority queue.

What a user imports is listed in ``__all__``: ``from echomq_viz import
priority_score, Demo``. Each name is imported from its module on first use,
so ``import echomq_viz`` alone stays light (no Redis client, no matplotlib).

Modules, from the pure core outward:

- :mod:`echomq_viz.notation`      the one notation for numbers shown: 2²¹ − 1, 2,097,151 (pure)
- :mod:`echomq_viz.checks`        argument checks, one wording for the whole package
- :mod:`echomq_viz.visual`        the one visual system of every figure: type sizes, text on fills, notation re-exported (pure)
- :mod:`echomq_viz.score`         the composite score maths (pure, no I/O)
- :mod:`echomq_viz.doubles`       the IEEE double a score is stored as: its bits, spacing, rounding (pure)
- :mod:`echomq_viz.keys`          every Redis key of a queue, built in one place
- :mod:`echomq_viz.queue_report`  what a read prioritized set means: report and findings (pure)
- :mod:`echomq_viz.lua_loader`    the strict loader of the Lua scripts in ``lua/``
- :mod:`echomq_viz.script_stream` many calls of one script down one connection, pipelined
- :mod:`echomq_viz.scripts`       the real EchoMQ Lua scripts and their Python API
- :mod:`echomq_viz._process`      (private) the processes and temp folders the package starts
- :mod:`echomq_viz._supervisor`   (private) keeps a private redis-server alive as long as its parent
- :mod:`echomq_viz.redaction`     every password in a message shown as ``***`` (pure)
- :mod:`echomq_viz.redis_errors`  what a Redis error means for a kernel, in one line
- :mod:`echomq_viz.server`        a real Redis: ``REDIS_URL`` or a private embedded one
- :mod:`echomq_viz.owners`        which process owns which demo keys on a shared Redis
- :mod:`echomq_viz.acl`           a Redis user per student, so nobody's code reaches another's queues
- :mod:`echomq_viz.live`          demo queues: the experiments the notebooks run
- :mod:`echomq_viz.paths`         every script that scores a job, run live (notebook 08)
- :mod:`echomq_viz.designs`       the designs that fail, run live beside the real one (notebook 09)
- :mod:`echomq_viz.cluster`       a local Redis Cluster built from those servers
- :mod:`echomq_viz.inspection`    a read-only report on any real queue
- :mod:`echomq_viz.interop`       the stock BullMQ client, from plain functions
- :mod:`echomq_viz.colours`       the tier colours, apart for colour-blind readers too
- :mod:`echomq_viz.plots`         figures drawn on a matplotlib ``ax``, updated in place
- :mod:`echomq_viz.fast_artists`  artists drawn for less on every slider move (the hero's bit strip and arrow)
- :mod:`echomq_viz.double_plots`  the double's bits and spacing, drawn the same way
- :mod:`echomq_viz.queue_plots`   a real queue as read, drawn (notebook 06's inspector)
- :mod:`echomq_viz.widgets`       the notebooks' interactive views (a package)
- :mod:`echomq_viz.peers`         the queue libraries people run, beside the packed score (a package, notebook 10)
- :mod:`echomq_viz.export`        the notebooks as offline HTML pages
- :mod:`echomq_viz.exposure`      who may reach ``lab`` and ``app``: loopback, or ``--public`` with a token
- :mod:`echomq_viz.seats`         how many visitors' kernels ``app`` admits at once
- :mod:`echomq_viz.app_index`     the app's front page: one card per notebook
- :mod:`echomq_viz.app_template`  where the app's Voila template lives
- :mod:`echomq_viz.lab_settings`  JupyterLab's settings as ``lab`` runs it: no news, no update check
- :mod:`echomq_viz.trust`         the notebooks we ship, trusted in this user's signature store
- :mod:`echomq_viz.cli`           the ``echomq-viz`` command
- :mod:`echomq_viz.versions`      whether the installed packages are inside the tested ranges (the launcher's check)
- :mod:`echomq_viz.notebook_copies` the user's own copy of the shipped notebooks, edits kept
- :mod:`echomq_viz.hub`           ``echomq-viz singleuser``: a student's server on a JupyterHub
- :mod:`echomq_viz._voila`        (private) Voila as the app runs it, its frame reader bounded
- :mod:`echomq_viz._app_server`   (private) the app's server: a cheaper activity watcher, no dropped debug records
- :mod:`echomq_viz._jupyterlab`   (private) JupyterLab as ``lab`` runs it, without a false warning
- :mod:`echomq_viz._app_kernel`   (private) the app's kernels: ipykernel without its debugger, nor a wait to flush nothing
- :mod:`echomq_viz._kernel_channels` (private) our kernels on Unix sockets where they fit, the font cache built first
- :mod:`echomq_viz._refresh`      (private) maintainers: re-run notebooks, store outputs quietly
- :mod:`echomq_viz._stills`       (private) each view's stored image made its figure's final state
- :mod:`echomq_viz._notebook_chrome` (private) maintainers: the Colab cell and the Binder/Colab links
- :mod:`echomq_viz.readme_picture` maintainers: the README's picture, notebook 01's hero still
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_WHERE = {
    **dict.fromkeys(
        ("priority_score", "split_score", "split_stored", "stored_score", "is_exact", "tier_bounds",
         "priority_scores_array", "split_scores_array", "TIER_SPAN", "COUNTER_MASK", "PRIORITY_LIMIT",
         "EXACT_LIMIT", "MAX_SCORE", "MAX_PRIORITY_COUNTER"), "echomq_viz.score"),
    **dict.fromkeys(("Keys", "QueueContext", "KEY_TYPES", "validate_job_id", "key_slot"), "echomq_viz.keys"),
    **dict.fromkeys(("Scripts", "Job", "DrainError", "BatchError", "validate_priority"), "echomq_viz.scripts"),
    **dict.fromkeys(("connect", "RedisServer", "RedisUnavailable", "redact_url"), "echomq_viz.server"),
    **dict.fromkeys(("Demo", "seeded_priorities"), "echomq_viz.live"),
    **dict.fromkeys(("clean_orphans", "LeaseLost"), "echomq_viz.owners"),
    **dict.fromkeys(("inspect_queue", "QueueReport", "Finding"), "echomq_viz.inspection"),
    "LocalCluster": "echomq_viz.cluster",
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
