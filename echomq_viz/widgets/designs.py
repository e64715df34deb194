"""Notebook 09's views, drawn in the page: the designs that fail, and the
three-key exercise.

:class:`DesignsView` (``page/designs.js``) starts with no design chosen: the
reader picks one, the kernel runs that scenario of
:mod:`echomq_viz.experiments.designs` on Redis (the same jobs through the real
scripts and through the wrong design) and sends the page both pop orders, the
table of stored scores and the design's Lua, which the page draws.
:class:`PackingView` (``page/packing.js``) shares out the bits of one score
among tenant, priority and arrival; whether the jobs fit is arithmetic, done
in the page as the sliders move, and only its run button asks the kernel to
run the budget through ``packThreeKeys.lua`` on Redis.
"""

from __future__ import annotations

import traitlets

from echomq_viz.core.checks import check_int, check_str
from echomq_viz.core.notation import power
from echomq_viz.experiments.designs import (
    BUDGET_CEILING, EXACT_BITS, EXERCISE_JOBS, EXERCISE_RANGES, SCENARIOS, Budget, DesignRunner, Outcome, PackOutcome, run_packing,
)
from echomq_viz.experiments.live import Demo
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.page_view import PageFigure, PageView, sent
from echomq_viz.widgets.view import require_demo

__all__ = ["DesignsView", "PackingView", "DesignsFigure", "PackingFigure", "SWITCH_LABELS", "EXERCISE_START",
           "run_scenario", "packing_text", "packing_answer", "packing_state"]

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


def _largest(jobs, ranges) -> tuple[int, int, int]:
    """The largest tenant, priority and arrival a budget must hold: what the exercise states
    (``ranges``), or a job's own where one goes past it."""
    return tuple(max(limit, *(job[index] for job in jobs)) for index, limit in enumerate(ranges, start=1))


def _ranges(ranges: object) -> tuple[int, int, int]:
    if not isinstance(ranges, (list, tuple)) or len(ranges) != 3:
        raise TypeError(f"ranges must be the largest (tenant, priority, arrival), got {ranges!r:.60}")
    return tuple(check_int(f"largest {name}", value, 0, 2**EXACT_BITS - 1) for name, value in zip(_FIELDS, ranges))


def _too_narrow(widths: tuple[int, int, int], jobs, ranges=EXERCISE_RANGES) -> list[str]:
    """Each key whose largest value (as stated, or among the jobs) needs more bits than its width gives, said
    without the bits it needs (the exercise's answer, the reader's to find)."""
    found = []
    for name, width, largest in zip(_FIELDS, widths, _largest(jobs, ranges)):
        if largest.bit_length() > width:
            found.append(f"{name} {largest:,} does not fit {width} bits, which hold 0..{2**width - 1:,}")
    return found


def _verdict(widths: tuple[int, int, int], jobs, ranges=EXERCISE_RANGES) -> str:
    """What a budget means for the jobs, as the page says it too (packing.js verdict)."""
    too_narrow, total = _too_narrow(widths, jobs, ranges), sum(widths)
    if too_narrow:  # the reader's answer, not a fault: say why nothing runs
        return "; ".join(too_narrow) + ": these jobs cannot be packed, give that key more bits"
    return ("fits in 53 bits: check_budget accepts it" if total <= EXACT_BITS else
            f"{total} bits: check_budget refuses it; run anyway, for teaching")


def packing_state(widths: tuple[int, int, int], jobs=EXERCISE_JOBS, ranges=EXERCISE_RANGES) -> str:
    """The packing figure's title: what the budget is for these jobs (packing.js stateLine)."""
    too_narrow = [name for name, width, largest in zip(_FIELDS, widths, _largest(jobs, ranges))
                  if largest.bit_length() > width]
    total, over = sum(widths), sum(widths) - EXACT_BITS
    head = f"{' + '.join(map(str, widths))} = {total} bits: "
    past = f"{over} past the {EXACT_BITS} a double keeps exact"
    if too_narrow:
        names = " and ".join(filter(None, (", ".join(too_narrow[:-1]), too_narrow[-1])))
        return head + f"too few for {names}, nothing can be packed" + (f"; {past}" if over > 0 else "")
    if over > 0:
        return head + f"{past}, so scores round"
    return head + "every job fits, every score exact"


def _pack(demo: Demo, budget: Budget, jobs, ranges=EXERCISE_RANGES) -> tuple[str, PackOutcome | None]:
    """The verdict on a budget and, when the keys' ranges fit it, its run on Redis."""
    widths = (budget.tenant_bits, budget.priority_bits, budget.arrival_bits)
    verdict = _verdict(widths, jobs, ranges)
    if _too_narrow(widths, jobs, ranges):
        return verdict, None
    return verdict, run_packing(demo, budget, jobs, past_53_for_teaching=not budget.exact)


def packing_text(demo: Demo, budget: Budget, jobs=EXERCISE_JOBS, ranges=EXERCISE_RANGES) -> str:
    """What the exercise view shows for ``budget`` once run, from a run of its
    own on ``demo`` (past 53 bits too, marked as teaching); no view is touched.
    ``ranges``: the largest tenant, priority and arrival the budget must hold."""
    demo = require_demo(demo)
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, e.g. Budget(11, 10, 32), got {type(budget).__name__}")
    verdict, outcome = _pack(demo, budget, tuple(jobs), _ranges(ranges))
    return verdict if outcome is None else f"{verdict}\n{outcome.text()}"


def packing_answer(demo: Demo, budget: Budget, jobs=EXERCISE_JOBS, ranges=EXERCISE_RANGES, *,
                   summary: str) -> Answer:
    """A budget's run on Redis, folded under ``summary``."""
    return Answer(summary, packing_text(demo, budget, jobs, ranges))


def _checked_jobs(jobs: object) -> tuple[tuple[str, int, int, int], ...]:
    if not isinstance(jobs, (list, tuple)) or not 1 <= len(jobs) <= 1000:
        raise TypeError(f"jobs must be a list of 1..1000 (member, tenant, priority, arrival) tuples, got {jobs!r:.60}")
    checked = []
    for job in jobs:
        if not isinstance(job, (list, tuple)) or len(job) != 4:
            raise TypeError(f"each job is a (member, tenant, priority, arrival) tuple, got {job!r}")
        keys = (check_int(name, value, 0, 2**EXACT_BITS - 1) for name, value in zip(_FIELDS, job[1:]))
        checked.append((check_str("member", job[0]), *keys))
    return tuple(checked)


def _listen(view: PageView, action) -> None:
    """Run ``action(message)`` (guarded, as every control's) on the page's {kind: "run", ...}
    message, and tell the page when it is over, whether or not anything changed."""
    def heard(_widget: object, content: object, _buffers: object) -> None:
        if not (isinstance(content, dict) and content.get("kind") == "run"):
            return
        try:
            view._callback(lambda: action(content), ())()
        finally:
            view.figure.send({"kind": "done"})

    view.figure.on_msg(heard)



class DesignsFigure(PageFigure):
    """The designs' page model: the chosen scenario ("" before a choice) and what Redis did."""

    module = "designs"

    page_writes = ("scenario",)  # what its page's controls move
    kernel_source = ", from what Redis did"
    scenario = traitlets.Unicode("").tag(sync=True)
    choices = traitlets.List().tag(sync=True)  # [[key, label], ...]: the page's buttons
    # {scenario, title, design, file, reason, jobs: [[id, name, priority]], right_order, design_order, table, lua}
    outcome = traitlets.Dict().tag(sync=True)

    @traitlets.validate("scenario")
    def _known(self, proposal: dict) -> str:
        value = proposal["value"]
        good = self.__dict__.setdefault("_good_values", {})
        if value != "" and value not in _SCENARIOS:
            self.status = f"refused scenario {sent(value)}: it must be one of {', '.join(_SCENARIOS)}"
            return good.get("scenario", "")
        if self.status.startswith("refused scenario"):  # a good value ends the refusal's line
            self.status = ""
        good["scenario"] = value
        return value

    @traitlets.validate("choices", "outcome")
    def _from_redis(self, proposal: dict) -> object:
        return self._kernel_only(proposal)


class DesignsView(PageView):
    """One button per scenario; each runs the real scripts and the design on
    Redis with the same jobs, and the page draws both pop orders, the table
    of stored scores and the design's Lua.

    :param runner: the :class:`DesignRunner` whose demo queues it uses.
    :param scenario: a scenario to run at once; None (the default) starts
        with no design chosen, a question for the reader.
    """

    shown_traits = ("scenario",)

    def __init__(self, runner: DesignRunner, *, scenario: str | None = None) -> None:
        if not isinstance(runner, DesignRunner):
            raise TypeError(f"runner must be a DesignRunner, got {type(runner).__name__}")
        if scenario is not None:
            scenario = _scenario_key(scenario)
        self.runner = runner
        self.outcome: Outcome | None = None
        figure = DesignsFigure()
        with figure.kernel_writes():
            figure.choices = [[key, SWITCH_LABELS[key]] for key in _SCENARIOS]
        super().__init__(figure)
        _listen(self, self._run_from_page)
        if scenario is not None:
            self.select(scenario)

    def __repr__(self) -> str:
        return f"DesignsView(scenario={self.figure.scenario or None!r})"

    def select(self, scenario: str) -> Outcome:
        """Choose a scenario from code and run it, as a button does; errors are raised here."""
        key = _scenario_key(scenario)
        with self._quietly():
            self.figure.scenario = key
        return self.run()

    def _run_from_page(self, message: dict) -> None:
        key = message.get("scenario")
        if not isinstance(key, str) or key not in _SCENARIOS:
            self.figure.status = f"refused scenario {sent(key)}: it must be one of {', '.join(_SCENARIOS)}"
            return
        self.figure.scenario = key
        self.run()

    def run(self) -> Outcome:
        """Run the chosen scenario on Redis and send the page what it did."""
        if not self.figure.scenario:
            raise RuntimeError("no design chosen: select(...) one first")
        scenario = _SCENARIOS[self.figure.scenario]
        self.outcome = outcome = self.runner.run(scenario)
        design = scenario.design
        with self.figure.kernel_writes():
            self.figure.outcome = {
                "scenario": scenario.key, "title": scenario.title, "design": design.title, "file": design.file,
                "reason": scenario.reason, "right_order": list(outcome.right_order),
                "jobs": [[job_id, job.name, job.priority] for job_id, job in zip(outcome.added, scenario.jobs)],
                "design_order": list(outcome.design_order), "table": outcome.text(),
                "lua": design.path.read_text(encoding="utf-8")}
        return outcome

    def text(self) -> str:
        return "" if self.outcome is None else self.outcome.text()

    def describe(self) -> str:
        outcome = self.outcome
        if outcome is None:
            return "No design chosen yet: two empty queue strips wait for one to run on Redis."
        scenario = outcome.scenario
        return (f"Two pop orders of the same {len(outcome.added)} jobs ({scenario.title}), first out at the "
                f"left. The real scripts pop {' '.join(outcome.right_order)}; the wrong design, "
                f"{scenario.design.title}, pops {' '.join(outcome.design_order)}: "
                + ("the same order." if outcome.agrees else "a different order."))


class PackingFigure(PageFigure):
    """The exercise's page model: the three widths, the jobs, and the last run on Redis."""

    module = "packing"

    page_writes = ("tenant_bits", "priority_bits", "arrival_bits")  # what its page's controls move
    kernel_source = ", from what Redis did"
    tenant_bits = traitlets.Int(8).tag(sync=True)
    priority_bits = traitlets.Int(8).tag(sync=True)
    arrival_bits = traitlets.Int(32).tag(sync=True)
    jobs = traitlets.List().tag(sync=True)  # [[member, tenant, priority, arrival], ...]
    ranges = traitlets.List([0, 0, 0]).tag(sync=True)  # the largest tenant, priority and arrival as stated
    run_enabled = traitlets.Bool(True).tag(sync=True)
    # {widths, verdict, text, order, right_order, rounded}: the last run on Redis
    outcome = traitlets.Dict().tag(sync=True)

    def bounds(self) -> dict[str, tuple[int, int]]:
        # as last accepted: a message of several widths is taken one width at a time
        widths = {name: self.accepted(name) for name in ("tenant_bits", "priority_bits", "arrival_bits")}
        total = sum(widths.values())  # no three past one double's 64 bits: each gets what the others leave
        return {name: (0, min(EXACT_BITS, BUDGET_CEILING - (total - width))) for name, width in widths.items()}

    @traitlets.validate("tenant_bits", "priority_bits", "arrival_bits")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate("jobs", "ranges", "outcome")
    def _from_redis(self, proposal: dict) -> object:
        return self._kernel_only(proposal)


class PackingView(PageView):
    """The exercise: three sliders share out the bits of one score among
    tenant, priority and arrival, and the page says at once whether the
    jobs fit; "Run on Redis" sends the budget to the kernel, which packs the
    jobs with ``packThreeKeys.lua`` (past 53 bits too, marked as teaching).
    """

    guess_first = True
    shown_traits = ("tenant_bits", "priority_bits", "arrival_bits")

    def __init__(self, demo: Demo, *, budget: Budget = EXERCISE_START, jobs=EXERCISE_JOBS,
                 ranges=EXERCISE_RANGES) -> None:
        demo = require_demo(demo)
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget, e.g. Budget(11, 10, 32), got {type(budget).__name__}")
        self.demo = demo
        self.jobs = _checked_jobs(jobs)
        self.ranges = _ranges(ranges)
        self.outcome: PackOutcome | None = None
        figure = PackingFigure(tenant_bits=budget.tenant_bits, priority_bits=budget.priority_bits,
                               arrival_bits=budget.arrival_bits)
        with figure.kernel_writes():
            figure.jobs = [list(job) for job in self.jobs]
            figure.ranges = list(self.ranges)
        super().__init__(figure)
        _listen(self, self._run_from_page)

    def __repr__(self) -> str:
        return "PackingView(budget=({}, {}, {}))".format(*self.widths)

    @property
    def widths(self) -> tuple[int, int, int]:
        f = self.figure
        return f.tenant_bits, f.priority_bits, f.arrival_bits

    @property
    def verdict(self) -> str:
        return _verdict(self.widths, self.jobs, self.ranges)

    def set(self, tenant_bits: int | None = None, priority_bits: int | None = None,
            arrival_bits: int | None = None) -> "PackingView":
        """Move the sliders from code, as a drag does (nothing runs on Redis);
        a budget no slider can show is refused, and then no width moves."""
        wanted = [old if new is None else new
                  for old, new in zip(self.widths, (tenant_bits, priority_bits, arrival_bits))]
        budget = Budget(*wanted)  # checked before any slider moves
        with self.figure.hold_sync():
            self.figure.tenant_bits, self.figure.priority_bits, self.figure.arrival_bits = (
                budget.tenant_bits, budget.priority_bits, budget.arrival_bits)
        return self

    def _run_from_page(self, message: dict) -> None:
        """The page's run button: the widths it sends are checked against the kernel's bounds
        before anything moves; one outside them is refused in one line and nothing runs."""
        widths = message.get("widths")
        names = ("tenant_bits", "priority_bits", "arrival_bits")
        if not isinstance(widths, list) or len(widths) != 3:
            self.figure.status = f"refused widths {sent(widths)}: three whole numbers are needed"
            return
        for name, value in zip(names, widths):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= EXACT_BITS:
                self.figure.status = f"refused {name} {sent(value)}: it must be a whole number in 0..{EXACT_BITS}"
                return
        if sum(widths) > BUDGET_CEILING:
            self.figure.status = (f"refused widths {' + '.join(map(str, widths))} = {sum(widths)} bits: "
                                  f"one double has {BUDGET_CEILING}")
            return
        with self.figure.hold_sync():
            for name, value in zip(names, widths):
                setattr(self.figure, name, value)
        self.run()

    def run(self) -> PackOutcome | None:
        """Run the sliders' budget through ``packThreeKeys.lua`` on Redis and
        send the page what it did; None, with nothing run, when a key's values
        do not fit its bits."""
        budget = Budget(*self.widths)
        verdict, outcome = _pack(self.demo, budget, self.jobs, self.ranges)
        if outcome is None:
            self.status.note(f"nothing run on Redis: {verdict}")
            return None
        self.outcome = outcome
        with self.figure.kernel_writes():
            self.figure.outcome = {"widths": list(self.widths), "verdict": verdict, "text": outcome.text(),
                                   "order": list(outcome.order), "right_order": list(outcome.right_order),
                                   "rounded": list(outcome.rounded)}
        return outcome

    def text(self) -> str:
        """The verdict and, when this budget has been run, what Redis did."""
        outcome = self.outcome
        ran = outcome is not None and (outcome.budget.tenant_bits, outcome.budget.priority_bits,
                                       outcome.budget.arrival_bits) == self.widths
        return f"{self.verdict}\n{outcome.text()}" if ran else self.verdict

    def answered(self) -> bool:
        """A budget that packs every job exactly is the answer: its pop order is then the sort."""
        return not _too_narrow(self.widths, self.jobs, self.ranges) and sum(self.widths) <= EXACT_BITS

    def describe(self) -> str:
        t, p, a = self.widths
        return (f"One score's 64 bits, bit 63 at the left, shared out as tenant {t}, priority {p} and arrival {a} "
                f"bits (arrival lowest), with the largest key each field must hold: "
                f"{packing_state(self.widths, self.jobs, self.ranges)}.")
