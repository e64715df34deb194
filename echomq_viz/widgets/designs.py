"""Notebook 09's views: the designs that fail, switched live, and the
three-key exercise.

:class:`DesignsView` runs one scenario of :mod:`echomq_viz.experiments.designs` per
switch: the same jobs through the real scripts and through the wrong design
on Redis, both pop orders side by side, and the reason in one sentence.
:class:`PackingView` sets a budget of bits for (tenant, priority, arrival)
and checks it live with ``packThreeKeys.lua``.
"""

from __future__ import annotations

import html

import ipywidgets as w

from echomq_viz.figures import double_plots, plots
from echomq_viz.core.checks import check_str
from echomq_viz.experiments.designs import (
    BUDGET_CEILING, EXACT_BITS, EXERCISE_JOBS, SCENARIOS, Budget, DesignRunner, Outcome, PackOutcome, run_packing,
)
from echomq_viz.experiments.live import Demo
from echomq_viz.core.notation import power
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.lua_source import LuaCode
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, pre_html, require_demo

__all__ = ["DesignsView", "PackingView", "SWITCH_LABELS", "EXERCISE_START", "run_scenario", "packing_text",
           "packing_answer"]

SWITCH_LABELS = {
    "fifo": "counter in the high bits", "popmax": "ZPOPMAX", "clock-tie": "ms clock: same ms",
    "clock-skew": "ms clock: skewed", "clock-wrap": "ms clock: 49.7 days", "nomod": f"no % {power(2, 32)}",
}
_SCENARIOS = {scenario.key: scenario for scenario in SCENARIOS}
_FIELDS = ("tenant", "priority", "arrival")
# Where the exercise starts: too few bits for tenant 1 999 and priority 1 000, so the reader's
# own moves find the answer (EXERCISE_ANSWER), which the view never shows unasked.
EXERCISE_START = Budget(8, 8, 32)


def _scenario_key(key: object) -> str:
    check_str("scenario", key)
    if key not in _SCENARIOS:
        raise ValueError(f"scenario must be one of {', '.join(_SCENARIOS)}, got {key!r}")
    return key


def run_scenario(runner: DesignRunner, scenario: str) -> Outcome:
    """One scenario run on Redis as the view's switch runs it, no view touched."""
    if not isinstance(runner, DesignRunner):
        raise TypeError(f"runner must be a DesignRunner, got {type(runner).__name__}")
    return runner.run(_SCENARIOS[_scenario_key(scenario)])


def _too_narrow(widths: tuple[int, int, int], jobs) -> list[str]:
    """Each key whose largest value among the jobs needs more bits than its width gives."""
    found = []
    for index, (name, width) in enumerate(zip(_FIELDS, widths), start=1):
        largest = max(job[index] for job in jobs)
        if largest.bit_length() > width:
            found.append(f"{name} {largest:,} needs {largest.bit_length()} bits, "
                         f"{width} hold 0..{2**width - 1:,}")
    return found


def _pack(demo: Demo, budget: Budget, jobs) -> tuple[str, PackOutcome | None]:
    """The verdict on a budget and, when the jobs fit its keys, its run on Redis."""
    too_narrow = _too_narrow((budget.tenant_bits, budget.priority_bits, budget.arrival_bits), jobs)
    if too_narrow:  # the reader's answer, not a fault: say why nothing runs
        return "; ".join(too_narrow) + ": these jobs cannot be packed, give that key more bits", None
    outcome = run_packing(demo, budget, jobs, past_53_for_teaching=not budget.exact)
    return ("fits in 53 bits: check_budget accepts it" if budget.exact else
            f"{budget.total} bits: check_budget refuses it; run anyway, for teaching"), outcome


def packing_text(demo: Demo, budget: Budget, jobs=EXERCISE_JOBS) -> str:
    """What the exercise view shows for ``budget``, from a run of its own on
    ``demo`` (past 53 bits too, marked as teaching); no view is touched."""
    demo = require_demo(demo)
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, e.g. Budget(11, 10, 32), got {type(budget).__name__}")
    verdict, outcome = _pack(demo, budget, tuple(jobs))
    return verdict if outcome is None else f"{verdict}\n{outcome.text()}"


def packing_answer(demo: Demo, budget: Budget, jobs=EXERCISE_JOBS, *, summary: str) -> Answer:
    """A budget's run on Redis, folded under ``summary``."""
    return Answer(summary, packing_text(demo, budget, jobs))


class DesignsView(View):
    """One switch per scenario; each switch runs the real scripts and the
    design on Redis with the same jobs and shows both pop orders.

    :param runner: the :class:`DesignRunner` whose demo queues it uses.
    :param scenario: the key of the scenario shown first.
    """

    def __init__(self, runner: DesignRunner, *, scenario: str = "fifo") -> None:
        if not isinstance(runner, DesignRunner):
            raise TypeError(f"runner must be a DesignRunner, got {type(runner).__name__}")
        scenario = _scenario_key(scenario)
        super().__init__()
        self.runner = runner
        self.outcome: Outcome | None = None
        capacity = max(len(s.jobs) for s in SCENARIOS)
        self.fig = figure(8.4, 2.1)
        self.right_strip = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.56, 0.96, 0.3)), capacity,
                                                  "the real scripts pop")
        self.design_strip = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.07, 0.96, 0.3)), capacity)
        self.switch = w.ToggleButtons(options=[(SWITCH_LABELS[k], k) for k in _SCENARIOS], value=scenario,
                                      description="design", style={"button_width": "auto"})  # as wide as its label: never cut
        self.rerun_button = w.Button(description="Run again on Redis", icon="refresh",
                                     layout=w.Layout(width="200px"))
        self.reason = w.HTML()
        self.table = w.HTML()
        self.lua = w.HTML()
        self.widget = w.VBox([self.switch, self.rerun_button, self.fig.canvas, self.caption, self.reason,
                              self.table, self.lua, self.status.widget])
        self._on_change([self.switch], self.run, disable=True)
        self._on_click(self.rerun_button, self.run, also_busy=[self.switch])
        self.run()

    def __repr__(self) -> str:
        return f"DesignsView(scenario={self.switch.value!r})"

    def select(self, scenario: str) -> Outcome:
        """Flip the switch from code and run that scenario; errors are raised here."""
        key = _scenario_key(scenario)
        with self._quietly():
            self.switch.value = key
        return self.run()

    def run(self) -> Outcome:
        """Run the switch's scenario on Redis and show it."""
        scenario = _SCENARIOS[self.switch.value]
        self.outcome = outcome = self.runner.run(scenario)
        priorities = {job_id: job.priority for job_id, job in zip(outcome.added, scenario.jobs)}
        plots.update_queue_strip(self.right_strip, [(j, priorities[j]) for j in outcome.right_order])
        plots.update_queue_strip(self.design_strip, [(j, priorities[j]) for j in outcome.design_order])
        self.design_strip.boxes[0].axes.set_title(f"wrong: {scenario.design.title} pops", fontsize=9,
                                                  color="#1b7f3b" if outcome.agrees else "#b00020")
        self.reason.value = f"<b>Why:</b> {html.escape(scenario.reason)}"
        self.table.value = pre_html(outcome.text())
        design = scenario.design
        self.lua.value = LuaCode(design.path.read_text(encoding="utf-8"),
                               f"lua/designs/{design.file}")._repr_html_()
        self._redraw_figure()
        return outcome

    def text(self) -> str:
        return "" if self.outcome is None else self.outcome.text()

    def describe(self) -> str:
        outcome = self.outcome
        if outcome is None:
            return "Two empty queue strips: nothing run yet."
        scenario = outcome.scenario
        return (f"Two pop orders of the same {len(outcome.added)} jobs ({scenario.title}), first out at the "
                f"left. The real scripts pop {' '.join(outcome.right_order)}; the wrong design, "
                f"{scenario.design.title}, pops {' '.join(outcome.design_order)}: "
                + ("the same order." if outcome.agrees else "a different order."))


class PackingView(View):
    """The exercise: three sliders share out the bits of one score among
    tenant, priority and arrival; each change checks the budget live with
    ``packThreeKeys.lua`` on the demo queue. A budget past 53 bits runs anyway,
    marked as teaching, to show what breaks.
    """

    guess_first = True

    def __init__(self, demo: Demo, *, budget: Budget = EXERCISE_START, jobs=EXERCISE_JOBS) -> None:
        demo = require_demo(demo)
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget, e.g. Budget(11, 10, 32), got {type(budget).__name__}")
        super().__init__()
        self.demo, self.jobs = demo, tuple(jobs)
        self.outcome: PackOutcome | None = None
        self.verdict = ""
        self.fig = figure(8.4, 1.2)
        widths = (budget.tenant_bits, budget.priority_bits, budget.arrival_bits)
        self.bar = double_plots.draw_bit_budget(self.fig.add_axes((0.03, 0.2, 0.94, 0.38)), widths)
        self.sliders = [w.IntSlider(value=value, min=0, max=EXACT_BITS, description=f"{name} bits",
                                    continuous_update=False, style=SLIDER_STYLE, layout=WIDE)
                        for name, value in zip(_FIELDS, widths)]
        self.result = w.HTML()
        self.widget = w.VBox([*self.sliders, self.fig.canvas, self.caption, self.result, self.status.widget])
        self._on_change(self.sliders, self.check, disable=True)
        self.check()

    def __repr__(self) -> str:
        return "PackingView(budget=({}, {}, {}))".format(*self.widths)

    @property
    def widths(self) -> tuple[int, int, int]:
        return tuple(slider.value for slider in self.sliders)

    def set(self, tenant_bits: int | None = None, priority_bits: int | None = None,
            arrival_bits: int | None = None) -> PackOutcome:
        """Move the sliders from code and check the budget; errors are raised here."""
        wanted = [old if new is None else new
                  for old, new in zip(self.widths, (tenant_bits, priority_bits, arrival_bits))]
        Budget(*wanted)  # checked before any slider moves
        with self._quietly():
            for slider, value in zip(self.sliders, wanted):
                slider.value = int(value)
        return self.check()

    def _limit_sliders(self) -> None:
        """Let no slider take the three past one double's 64 bits: each one's
        maximum is what the other two leave, 53 at most."""
        total = sum(self.widths)
        for slider in self.sliders:
            slider.max = min(EXACT_BITS, BUDGET_CEILING - (total - slider.value))

    def check(self) -> PackOutcome | None:
        """Run the sliders' budget through ``packThreeKeys.lua`` and show it;
        None, with the reason shown, when a key's values do not fit its bits."""
        self._limit_sliders()
        double_plots.update_bit_budget(self.bar, self.widths)
        self._redraw_figure()
        self.outcome, self.verdict = None, ""
        self.result.value = ""
        budget = Budget(*self.widths)
        self.verdict, outcome = _pack(self.demo, budget, self.jobs)
        if outcome is None:
            self.result.value = f"<div style='color:#b00020'><b>{html.escape(self.verdict)}</b></div>"
            return None
        self.outcome = outcome
        good = budget.exact and outcome.order == outcome.right_order
        colour = "#1b7f3b" if good else "#b00020"
        self.result.value = (f"<div style='color:{colour}'><b>{html.escape(self.verdict)}</b></div>"
                             + pre_html(outcome.text()))
        return outcome

    def text(self) -> str:
        return self.verdict if self.outcome is None else f"{self.verdict}\n{self.outcome.text()}"

    def answered(self) -> bool:
        """A budget that packs every job exactly, in the right order, is the answer."""
        outcome = self.outcome
        return outcome is not None and outcome.budget.exact and outcome.order == outcome.right_order

    def describe(self) -> str:
        widths, total = self.widths, sum(self.widths)
        fields = ", ".join(f"{name} {width}" for name, width in zip(_FIELDS, widths))
        fit = (f"within the {EXACT_BITS} a double keeps exact" if total <= EXACT_BITS
               else f"{total - EXACT_BITS} past the {EXACT_BITS} a double keeps exact, in red")
        return (f"One score's 64 bits, bit 63 at the left, shared out as {fields} bits (arrival lowest): "
                f"{total} in all, {fit}.")
