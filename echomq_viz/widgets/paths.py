"""Notebook 08's views: who includes ``getPriorityScore``, and where a job
lands on each path that scores it.

- :class:`IncludeGraphView` draws the include graph read from ``lua/``: pick
  an include, see every script that reaches it;
- :class:`PathView` asks "where will it land?", runs one path of
  :data:`echomq_viz.experiments.paths.PATHS` on Redis, and shows the queue before and
  after with the job's score split into (tier, counter).

The experiments themselves live in :mod:`echomq_viz.experiments.paths`.
"""

from __future__ import annotations

import html
from typing import Sequence

import ipywidgets as w

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_str
from echomq_viz.redis_side.lua_loader import LUA_DIR, include_graph, includers_of
from echomq_viz.experiments.paths import LANDINGS, PATHS, SCENE, SCORER, PathRun, ScoringPaths
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import View, pre_html

__all__ = ["IncludeGraphView", "PathView", "path_answer"]

_REACHES = plots.TIER_BITS_COLOR  # boxes and arrows on a path to the chosen include
_ELSEWHERE = "#bbbbbb"


def _layers(graph: dict[str, set[str]], target: str, nodes: set[str]) -> dict[str, int]:
    """How far each node lies from ``target``: the longest include chain down
    to it (0 for ``target``); the scripts all go in the farthest column."""
    depth = {target: 0}
    changed = True
    while changed:  # relax until stable: the graph has no cycles (the loader refuses them)
        changed = False
        for node in nodes:
            reached = [depth[t] + 1 for t in graph[node] if t in depth]
            if reached and max(reached) > depth.get(node, -1):
                depth[node], changed = max(reached), True
    far = max(depth.values(), default=0) + 1
    return {node: (far if not node.startswith("includes/") else depth[node]) for node in nodes | {target}}


def _landed(job_id: str, landing: str) -> str:
    """Where a job went, as a sentence: ``"job 5 landed at the back of its tier"``."""
    if landing == "where it was":
        return f"job {job_id} stayed where it was"
    if landing.endswith("of its tier"):
        return f"job {job_id} landed at the {landing}"
    if landing == "the wait list":
        return f"job {job_id} landed on the wait list"
    return f"job {job_id} went to '{landing}'"  # another container: active, delayed, nowhere


def _scripts(count: int, verb: str, verb_for_one: str) -> str:
    return f"1 script {verb_for_one}" if count == 1 else f"{count} scripts {verb}"


def _queue_text(queue: Sequence[tuple[str, int]]) -> str:
    """A queue in pop order as the caption reads it: ``1 (p1), 2 (p1), 6 (wait)``."""
    return ", ".join(f"{job_id} ({f'p{p}' if p else 'wait'})" for job_id, p in queue) or "empty"


class IncludeGraphView(View):
    """The include graph of ``lua/``, drawn from the chosen include (right)
    to every script (left); the scripts and includes that reach it in colour."""

    def __init__(self, target: str = SCORER) -> None:
        check_str("target", target)
        graph = include_graph(LUA_DIR)
        targets = sorted(n for n in graph if n.startswith("includes/") and includers_of(n, graph))
        if target not in targets:
            raise ValueError(f"target must be an include some Lua file includes, e.g. {SCORER!r}, got {target!r}")
        super().__init__()
        self.graph = graph
        self.choice = w.Dropdown(options=targets, value=target, description="include:",
                                 layout=w.Layout(width="420px"))
        self.fig = figure(8.4, 3.8)
        self.ax = self.fig.add_axes((0.01, 0.01, 0.98, 0.9))
        self.listing = w.HTML()
        self.widget = w.VBox([self.choice, self.fig.canvas, self.caption, self.listing, self.status.widget])
        self._on_change([self.choice], self._draw)
        self._draw()

    def __repr__(self) -> str:
        return f"IncludeGraphView(target={self.choice.value!r}, scripts={len(self.scripts())})"

    def scripts(self) -> list[str]:
        """The scripts that reach the chosen include."""
        return sorted(n for n in includers_of(self.choice.value, self.graph) if not n.startswith("includes/"))

    def listing_text(self) -> str:
        scripts = self.scripts()
        others = sorted(n for n in self.graph if not n.startswith("includes/") and n not in scripts)
        return (f"{len(scripts)} scripts reach {self.choice.value}: {', '.join(scripts)}\n"
                f"not: {', '.join(others) or 'none'}")

    def describe(self) -> str:
        target, scripts = self.choice.value, self.scripts()
        between = ", ".join(sorted(n.removeprefix("includes/") for n in includers_of(target, self.graph)
                                   if n.startswith("includes/")))
        direct = sum(target in self.graph[n] for n in scripts)
        how = "directly" if not between else f"through {between}" if not direct else f"directly or through {between}"
        others = sum(not n.startswith("includes/") for n in self.graph) - len(scripts)
        return (f"The include graph of lua/, scripts at the left, {target} at the right: "
                f"{_scripts(len(scripts), 'reach', 'reaches')} it, in colour, {how}; "
                f"{_scripts(others, 'do', 'does')} not, in grey.")

    def _draw(self) -> None:
        # The graph's shape changes with the include: drawn again, not updated in place.
        target, ax = self.choice.value, self.ax
        reaching = includers_of(target, self.graph)
        scripts = sorted(n for n in self.graph if not n.startswith("includes/"))
        layer = _layers(self.graph, target, reaching | set(scripts))
        columns: dict[int, list[str]] = {}
        for node in sorted(layer):
            columns.setdefault(layer[node], []).append(node)
        width = max(columns)
        where = {node: (width - x, (len(nodes) - 1) / 2 - i)
                 for x, nodes in columns.items() for i, node in enumerate(nodes)}
        ax.cla()
        ax.set_axis_off()
        labels = {}
        for node, (x, y) in where.items():
            on_path = node in reaching or node == target
            labels[node] = ax.text(x, y, node.removeprefix("includes/"), ha="center", va="center", fontsize=9,
                                   color="white" if on_path else "#555555",
                                   bbox=dict(boxstyle="round", facecolor=_REACHES if on_path else "white",
                                             edgecolor=_REACHES if on_path else _ELSEWHERE))
        for node, targets in self.graph.items():
            for include in targets & set(where):
                if node in reaching:  # from the includer's box, right edge, to the include's, left edge
                    ax.annotate("", xy=(0, 0.5), xycoords=labels[include], xytext=(1, 0.5),
                                textcoords=labels[node], arrowprops=dict(
                                    arrowstyle="->", color=_REACHES, shrinkA=5, shrinkB=5, lw=1.2))
        tallest = max(len(nodes) for nodes in columns.values())
        ax.set_xlim(-0.6, width + 0.6)
        ax.set_ylim(-tallest / 2, tallest / 2)
        ax.set_title(f"left: the scripts; right: {target}; arrows: 'includes'", fontsize=9)
        self.listing.value = pre_html(self.listing_text())
        self._redraw_figure()


class PathView(View):
    """One scoring path: guess where the job lands, run it on Redis, read the
    queue before and after and the job's score split into (tier, counter).

    :param lab: the :class:`~echomq_viz.experiments.paths.ScoringPaths` of a demo queue.
    :param path: a key of :data:`~echomq_viz.experiments.paths.PATHS`.
    """

    def __init__(self, lab: ScoringPaths, path: str) -> None:
        if not isinstance(lab, ScoringPaths):
            raise TypeError(f"lab must be a ScoringPaths, e.g. ScoringPaths(Demo('viz-08-paths')), "
                            f"got {type(lab).__name__}")
        check_str("path", path)
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(map(repr, PATHS))}, got {path!r}")
        super().__init__()
        self.lab, self.path = lab, path
        self.result: PathRun | None = None
        _, script, question = PATHS[path]
        self.question = w.HTML(f"<b>{html.escape(script)}</b>: {html.escape(question)}")
        self.prediction = w.ToggleButtons(options=LANDINGS, value=None, description="Your guess:")
        self.run_button = w.Button(description="Run it on Redis", icon="play", button_style="primary")
        self.fig = figure(8.4, 2.1)
        room = len(SCENE) + 1
        self.before = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.56, 0.96, 0.3)), room,
                                             "before, next out at the left")
        self.after = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.07, 0.96, 0.3)), room,
                                            "after: press Run it on Redis")
        self.scene = tuple((str(i), p) for i, p in enumerate(SCENE, start=1))
        plots.update_queue_strip(self.before, self.scene)
        self.readout = w.HTML()
        self.widget = w.VBox([self.question, self.prediction, self.run_button, self.fig.canvas, self.caption,
                              self.readout, self.status.widget])
        self._on_change([self.prediction], self._judge_again)
        self._on_click(self.run_button, self.run_on_redis)
        self._redraw_figure()

    guess_first = True

    def answered(self) -> bool:
        return self.prediction.value is not None or self.result is not None

    def __repr__(self) -> str:
        landed = self.result.landing if self.result else None
        return f"PathView(path={self.path!r}, prediction={self.prediction.value!r}, landed={landed!r})"

    def predict(self, choice: str) -> "PathView":
        """Make the reader's guess from code: one of :data:`~echomq_viz.experiments.paths.LANDINGS`."""
        check_str("the guess", choice)
        if choice not in LANDINGS:
            raise ValueError(f"the guess must be one of {', '.join(map(repr, LANDINGS))}, got {choice!r}")
        self.prediction.value = choice
        return self

    def verdict_text(self) -> str:
        """What happened on Redis, and how it compares with the guess."""
        if self.result is None:
            return "not run yet: press Run it on Redis"
        guess = self.prediction.value
        verdict = ("no guess made" if guess is None else
                   f"you guessed {guess!r}: " + ("right" if guess == self.result.landing else "not what Redis did"))
        return f"{self.result.text()}\n{verdict}"

    def describe(self) -> str:
        run = self.result
        if run is None:
            return (f"Two queue strips, next out at the left. Before: {_queue_text(self.scene)}. "
                    "After: empty until the path runs on Redis.")
        return (f"Two queue strips, next out at the left, job {run.job_id} in bold. "
                f"Before: {_queue_text(run.queue_before)}. After {PATHS[self.path][1]}: "
                f"{_queue_text(run.queue_after)}; {_landed(run.job_id, run.landing)}.")

    def run_on_redis(self) -> PathRun:
        """Run the path from a fresh scene through its real script, and show it."""
        self.result = run = self.lab.run(self.path)
        for strip, queue in ((self.before, run.queue_before), (self.after, run.queue_after)):
            plots.update_queue_strip(strip, queue)
            ids = [job_id for job_id, _ in queue] + [None] * (strip.capacity - len(queue))
            for box, job_id in zip(strip.boxes, ids):
                box.set_linewidth(3 if job_id == run.job_id else 1)
        waiting = "" if run.before.container != "delayed" else f" (job {run.job_id} waits in 'delayed')"
        self.before.boxes[0].axes.set_title(f"before, next out at the left{waiting}", fontsize=9)
        self.after.boxes[0].axes.set_title(f"after: {_landed(run.job_id, run.landing)}", fontsize=9)
        self._show_verdict()
        self._redraw_figure()
        return run

    def _show_verdict(self) -> None:
        self.readout.value = pre_html(self.verdict_text())

    def _judge_again(self) -> None:
        if self.result is not None:
            self._show_verdict()


def path_answer(lab: ScoringPaths, path: str) -> Answer:
    """Where the job of ``path`` lands, folded: the path run on Redis from the
    same fresh scene as the view's button runs it, no view touched."""
    if not isinstance(lab, ScoringPaths):
        raise TypeError(f"lab must be a ScoringPaths, got {type(lab).__name__}")
    check_str("path", path)
    if path not in PATHS:
        raise ValueError(f"path must be one of {', '.join(map(repr, PATHS))}, got {path!r}")
    run = lab.run(path)
    return Answer(f"Guessed? Open to see where {PATHS[path][1]} put job {run.job_id}",
                  run.text())
