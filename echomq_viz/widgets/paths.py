"""Notebook 08's views: who includes ``getPriorityScore``, and where a job
lands on each path that scores it. Both are drawn in the page.

- :class:`IncludeGraphView` draws the include graph read from ``lua/`` once
  (``page/include_graph.js``): picking an include in its menu redraws in the
  page, and the kernel hears nothing of it;
- :class:`PathView` asks "where will it land?" (``page/paths.js``): the page
  holds the guess; its run button asks the kernel, which runs one path of
  :data:`echomq_viz.experiments.paths.PATHS` on Redis and sends back the queue
  before and after, which the page draws with the moved job in bold.

The experiments themselves live in :mod:`echomq_viz.experiments.paths`.
"""

from __future__ import annotations

from typing import Any, Sequence

import traitlets

from echomq_viz.core.checks import check_str
from echomq_viz.experiments.paths import LANDINGS, PATHS, SCENE, SCORER, PathRun, ScoringPaths
from echomq_viz.redis_side.lua_loader import LUA_DIR, include_graph, includers_of
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.page_view import PageFigure, PageView, sent

__all__ = ["IncludeGraphView", "IncludeGraphFigure", "PathView", "PathFigure", "path_answer"]


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


def _queue_text(queue: Sequence[Sequence[Any]]) -> str:
    """A queue in pop order as the caption reads it: ``1 (p1), 2 (p1), 6 (wait)``."""
    return ", ".join(f"{job_id} ({f'p{p}' if p else 'wait'})" for job_id, p in queue) or "empty"


def _one_of(figure: PageFigure, proposal: dict, allowed: Sequence[Any]) -> Any:
    """The proposed value if it is one of ``allowed``; else the value as it was,
    and the refusal in the status line (what :meth:`PageFigure._checked` does for numbers)."""
    trait = proposal["trait"]
    name, value = trait.name, proposal["value"]
    good = figure.__dict__.setdefault("_good_values", {})  # the last value that passed, as _checked keeps it
    if value not in allowed:
        shown = ", ".join(repr(a) for a in allowed if a is not None)
        figure.status = f"refused {name} {sent(value)}: it must be one of {shown}"
        return good.get(name, trait.default())
    if figure.status.startswith("refused "):
        figure.status = ""
    good[name] = value
    return value


class IncludeGraphFigure(PageFigure):
    """The include graph's page model: the graph (each file with the files it
    includes), the includes one can pick, and the one picked."""

    module = "include_graph"

    page_writes = ("target",)  # what its page's controls move
    graph = traitlets.Dict().tag(sync=True)  # name -> sorted list of the files it includes
    targets = traitlets.List().tag(sync=True)
    target = traitlets.Unicode(SCORER).tag(sync=True)

    @traitlets.validate("target")
    def _known(self, proposal: dict) -> str:
        return _one_of(self, proposal, self.targets)


class IncludeGraphView(PageView):
    """The include graph of ``lua/``, drawn from the chosen include (right)
    to every script (left); the scripts and includes that reach it in colour
    and outlined thick, the others grey and dashed. A menu picks the include."""

    shown_traits = ("target",)

    def __init__(self, target: str = SCORER) -> None:
        check_str("target", target)
        graph = include_graph(LUA_DIR)
        targets = sorted(n for n in graph if n.startswith("includes/") and includers_of(n, graph))
        if target not in targets:
            raise ValueError(f"target must be an include some Lua file includes, e.g. {SCORER!r}, got {target!r}")
        self.graph = graph
        super().__init__(IncludeGraphFigure(graph={n: sorted(t) for n, t in graph.items()}, targets=targets,
                                            target=target))

    def __repr__(self) -> str:
        return f"IncludeGraphView(target={self.target!r}, scripts={len(self.scripts())})"

    @property
    def target(self) -> str:
        return self.figure.target

    def choose(self, target: str) -> "IncludeGraphView":
        """Pick an include from code, as the menu does."""
        check_str("target", target)
        if target not in self.figure.targets:
            raise ValueError(f"target must be an include some Lua file includes, e.g. {SCORER!r}, got {target!r}")
        self.figure.target = target
        return self

    def scripts(self) -> list[str]:
        """The scripts that reach the chosen include."""
        return sorted(n for n in includers_of(self.target, self.graph) if not n.startswith("includes/"))

    def listing_text(self) -> str:
        scripts = self.scripts()
        others = sorted(n for n in self.graph if not n.startswith("includes/") and n not in scripts)
        return (f"{len(scripts)} scripts reach {self.target}: {', '.join(scripts)}\n"
                f"not: {', '.join(others) or 'none'}")

    def describe(self) -> str:
        target, scripts = self.target, self.scripts()
        between = ", ".join(sorted(n.removeprefix("includes/") for n in includers_of(target, self.graph)
                                   if n.startswith("includes/")))
        direct = sum(target in self.graph[n] for n in scripts)
        how = "directly" if not between else f"through {between}" if not direct else f"directly or through {between}"
        others = sum(not n.startswith("includes/") for n in self.graph) - len(scripts)
        return (f"The include graph of lua/, scripts at the left, {target} at the right: "
                f"{_scripts(len(scripts), 'reach', 'reaches')} it, in colour, {how}; "
                f"{_scripts(others, 'do', 'does')} not, in grey.")


class PathFigure(PageFigure):
    """One path's page model: what it asks, the reader's guess, and the run
    Redis answered with (empty until one)."""

    module = "paths"

    page_writes = ("guess",)  # what its page's controls move
    path = traitlets.Unicode().tag(sync=True)
    script = traitlets.Unicode().tag(sync=True)
    question = traitlets.Unicode().tag(sync=True)
    landings = traitlets.List(list(LANDINGS)).tag(sync=True)
    scene = traitlets.List().tag(sync=True)  # [[job id, priority], ...] in pop order
    guess = traitlets.Unicode(None, allow_none=True).tag(sync=True)  # None or one of LANDINGS
    # {run, job_id, landing, queue_before, queue_after, waiting, after, text}: see PathView._show
    result = traitlets.Dict().tag(sync=True)

    @traitlets.validate("guess")
    def _a_landing(self, proposal: dict) -> str | None:
        return _one_of(self, proposal, (None, *LANDINGS))


class PathView(PageView):
    """One scoring path: guess where the job lands, run it on Redis, read the
    queue before and after and the job's score split into (tier, counter).

    :param lab: the :class:`~echomq_viz.experiments.paths.ScoringPaths` of a demo queue.
    :param path: a key of :data:`~echomq_viz.experiments.paths.PATHS`.
    """

    guess_first = True
    shown_traits = ("guess", "result")

    def __init__(self, lab: ScoringPaths, path: str) -> None:
        if not isinstance(lab, ScoringPaths):
            raise TypeError(f"lab must be a ScoringPaths, e.g. ScoringPaths(Demo('viz-08-paths')), "
                            f"got {type(lab).__name__}")
        check_str("path", path)
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(map(repr, PATHS))}, got {path!r}")
        self.lab, self.path = lab, path
        self.result: PathRun | None = None
        self.scene = tuple((str(i), p) for i, p in enumerate(SCENE, start=1))
        _, script, question = PATHS[path]
        super().__init__(PathFigure(path=path, script=script, question=question,
                                    scene=[list(job) for job in self.scene]))
        self.demo = lab.demo
        self._runs = 0
        run = self._callback(self.run_on_redis, ())
        # the page's run button: {kind: "run"}, after its guess (if any) was synced
        self.figure.on_msg(lambda _w, content, _b: run() if isinstance(content, dict)
                           and content.get("kind") == "run" else None)

    def answered(self) -> bool:
        return self.prediction is not None or self.result is not None

    @property
    def prediction(self) -> str | None:
        """The reader's guess, one of :data:`~echomq_viz.experiments.paths.LANDINGS`, or None."""
        return self.figure.guess

    def __repr__(self) -> str:
        landed = self.result.landing if self.result else None
        return f"PathView(path={self.path!r}, prediction={self.prediction!r}, landed={landed!r})"

    def predict(self, choice: str) -> "PathView":
        """Make the reader's guess from code: one of :data:`~echomq_viz.experiments.paths.LANDINGS`."""
        check_str("the guess", choice)
        if choice not in LANDINGS:
            raise ValueError(f"the guess must be one of {', '.join(map(repr, LANDINGS))}, got {choice!r}")
        self.figure.guess = choice
        return self

    def verdict_text(self) -> str:
        """What happened on Redis, and how it compares with the guess (the page's readout)."""
        if self.result is None:
            return "not run yet: press Run it on Redis"
        guess = self.prediction
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
        run = self.lab.run(self.path)
        self.result = run
        self._runs += 1  # a run equal to the last still reaches the page, which waits for it
        self.figure.result = {
            "run": self._runs, "job_id": run.job_id, "landing": run.landing,
            "queue_before": [list(job) for job in run.queue_before],
            "queue_after": [list(job) for job in run.queue_after],
            "waiting": run.before.container == "delayed", "after": run.after.text(), "text": run.text()}
        return run


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
