"""Notebook 02's comparison: guess which of two jobs pops first, then see the scores and ask Redis."""

from __future__ import annotations

import html

import ipywidgets as w

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_int, describe
from echomq_viz.experiments.live import Comparison, Demo
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, priority_score
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import SLIDER_STYLE, View, pre_html, require_demo

__all__ = ["ComparisonView", "verdict_text", "compare_on_redis", "comparison_answer"]


def _job(what: str, job: object, max_priority: int) -> tuple[int, int]:
    """A ``(priority, counter)`` pair after checking both."""
    if not isinstance(job, (tuple, list)) or len(job) != 2:
        raise TypeError(f"{what} must be a (priority, counter) pair, got {describe(job)}")
    return (check_int(f"{what} priority", job[0], 1, max_priority),
            check_int(f"{what} counter", job[1], 0, COUNTER_MASK))


def _sliders(label: str, job: tuple[int, int], max_priority: int) -> tuple[w.IntSlider, w.IntSlider]:
    return (
        w.IntSlider(value=job[0], min=1, max=max_priority, description=f"{label} priority",
                    style=SLIDER_STYLE, layout=w.Layout(width="300px")),
        w.IntSlider(value=job[1], min=0, max=COUNTER_MASK, description=f"{label} counter",
                    readout_format=",d", style=SLIDER_STYLE, layout=w.Layout(width="420px")),
    )


class ComparisonView(View):
    """Job A one tier better, job B far ahead on the counter. Predict, reveal
    the composite scores, then let the real scripts on Redis decide.

    :param a, b: the starting ``(priority, counter)`` of each job.
    """

    def __init__(self, demo: Demo | None = None, *, a: tuple[int, int] = (1, 4_000_000_000),
                 b: tuple[int, int] = (2, 1), max_priority: int = 5) -> None:
        max_priority = check_int("max_priority", max_priority, 1, 20)
        a, b = _job("job A", a, max_priority), _job("job B", b, max_priority)
        super().__init__()
        self.demo = None if demo is None else require_demo(demo)
        self.result: Comparison | None = None
        self.a_priority, self.a_counter = _sliders("job A", a, max_priority)
        self.b_priority, self.b_counter = _sliders("job B", b, max_priority)
        self.prediction = w.ToggleButtons(options=[("A pops first", "A"), ("B pops first", "B")],
                                          value=None, description="Your guess:")
        self.fig = figure(5.6, 3.4)
        self.pair = plots.draw_score_pair(self.fig.add_axes((0.14, 0.1, 0.82, 0.78)), a, b)
        self.fig.canvas.layout.visibility = "hidden"  # no peeking before a guess
        self.explanation = w.HTML()
        self.run_button = w.Button(description="Run it on Redis", icon="play",
                                   disabled=demo is None, button_style="primary")
        self.redis_result = w.HTML()
        self.redis_text = ""
        self.widget = w.VBox([
            w.HBox([self.a_priority, self.a_counter]), w.HBox([self.b_priority, self.b_counter]),
            self.prediction, self.fig.canvas, self.caption, self.explanation,
            w.HBox([self.run_button, self.redis_result]), self.status.widget,
        ])
        self._on_change([self.a_priority, self.a_counter, self.b_priority, self.b_counter, self.prediction],
                        self._redraw)
        self._on_click(self.run_button, self.run_on_redis)
        self._redraw()

    def __repr__(self) -> str:
        return (f"ComparisonView(a={self.job_a}, b={self.job_b}, "
                f"prediction={self.prediction.value!r})")

    @property
    def job_a(self) -> tuple[int, int]:
        return self.a_priority.value, self.a_counter.value

    @property
    def job_b(self) -> tuple[int, int]:
        return self.b_priority.value, self.b_counter.value

    guess_first = True

    def answered(self) -> bool:
        return self.prediction.value is not None or self.result is not None

    def _still_allowed(self) -> bool:
        return self.prediction.value is not None  # no spoiler before a guess

    def predict(self, choice: str) -> "ComparisonView":
        """Make the reader's guess from code: ``"A"`` or ``"B"``."""
        self.prediction.value = choice
        return self

    def verdict_text(self) -> str:
        """Both composite scores, which is smaller, and why."""
        return verdict_text(self.job_a, self.job_b)

    def describe(self) -> str:
        if self.prediction.value is None:
            return "Two score bars, hidden until you guess which job pops first."
        jobs = {"A": self.job_a, "B": self.job_b}
        scores = {name: priority_score(*job) for name, job in jobs.items()}
        parts = "; ".join(f"job {name} (priority {p:,}, counter {c:,}) scores {scores[name]:,}"
                          for name, (p, c) in jobs.items())
        if scores["A"] == scores["B"]:
            return (f"Two stacked score bars, tier part below, counter part on top: {parts}; "
                    "equal scores, so Redis orders them by member.")
        first = "A" if scores["A"] < scores["B"] else "B"
        return (f"Two stacked score bars, tier part below, counter part on top: {parts}; "
                f"{first}'s is smaller, so {first} pops first.")

    def _redraw(self) -> None:
        plots.update_score_pair(self.pair, self.job_a, self.job_b)
        if self.prediction.value is not None:
            self.fig.canvas.layout.visibility = "visible"
            self.explanation.value = pre_html(self.verdict_text())
        self._redraw_figure()

    def run_on_redis(self) -> Comparison:
        """Add A and B through ``addPrioritizedJob-9`` (pc set so the counters
        match the sliders), then consume once with ``moveToActive-11``."""
        demo = self._require_demo()
        result = demo.compare(self.job_a, self.job_b)
        self.result = result
        self.redis_text = _redis_line(result, self.prediction.value)
        self.redis_result.value = html.escape(self.redis_text)
        return result


def verdict_text(a: tuple[int, int], b: tuple[int, int]) -> str:
    """Both composite scores of jobs ``a`` and ``b``, which is smaller, and why."""
    (pa, ca), (pb, cb) = a, b
    sa, sb = priority_score(pa, ca), priority_score(pb, cb)
    lines = [f"A: {thousands(pa)} × 0x100000000 + {thousands(ca % TIER_SPAN):>13} = {thousands(sa):>16}",
             f"B: {thousands(pb)} × 0x100000000 + {thousands(cb % TIER_SPAN):>13} = {thousands(sb):>16}"]
    if sa == sb:
        lines.append("Equal scores: ZPOPMIN then orders by member, not by arrival.")
        return "\n".join(lines)
    first = "A" if sa < sb else "B"
    if pa != pb:
        why = (f"The tiers differ, so the high bits decide: one priority step is {TIER_SPAN:,},\n"
               f"more than any counter gap (at most {COUNTER_MASK:,}).")
    else:
        why = "Same tier: the high bits tie and the low bits, the arrival counter, decide."
    lines.append(f"{first} has the smaller score, so ZPOPMIN pops {first} first.")
    lines.append(why)
    return "\n".join(lines)


def _redis_line(result: Comparison, guess: str | None) -> str:
    verdict = "no guess made" if guess is None else (
        "you were right" if guess == result.popped else "not what you guessed")
    return (f"Redis popped job {result.popped} first "
            f"(stored scores A {int(result.score_a):,}, B {int(result.score_b):,}): {verdict}")


def compare_on_redis(demo: Demo, a: tuple[int, int], b: tuple[int, int]) -> str:
    """What the view shows once guessed and run, for jobs ``a`` and ``b``, from
    a run of its own on ``demo`` (no view is touched): the verdict, then which
    job the real scripts popped."""
    demo = require_demo(demo)
    a, b = _job("job A", a, 2**21 - 1), _job("job B", b, 2**21 - 1)
    result = demo.compare(a, b)
    return verdict_text(a, b) + "\nRedis popped job {} first (stored scores A {:,}, B {:,})".format(
        result.popped, int(result.score_a), int(result.score_b))


def comparison_answer(demo: Demo, a: tuple[int, int], b: tuple[int, int]) -> Answer:
    """The answer to the view's question, folded, from a run on Redis."""
    return Answer("Guessed? Open to see the scores and what Redis popped", compare_on_redis(demo, a, b))
