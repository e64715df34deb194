"""Notebook 09's views, drawn in the page: the page says and draws what Python
says, a value from the page outside the kernel's bounds is refused in one line
with nothing written, and what the page is sent is what Redis did."""

from __future__ import annotations

import re

import pytest

from echomq_viz.experiments.designs import EXERCISE_ANSWER, EXERCISE_JOBS, SCENARIOS, Budget, DesignRunner
from echomq_viz.experiments.live import Demo
from echomq_viz.widgets import DesignsView, PackingView, packing_text, run_scenario
from echomq_viz.widgets.designs import _verdict, packing_state
from page_runner import page_calls, svg_problems

WIDTHS = [(8, 8, 32), (11, 10, 32), (11, 11, 32), (10, 10, 32), (8, 8, 48), (0, 0, 0), (53, 0, 11), (12, 10, 31)]


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


@pytest.fixture
def runner(r) -> DesignRunner:
    return DesignRunner(r)


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


def _run_message(view, content: dict) -> list:
    """What the page's button sends, as the kernel gets it; returns what the kernel sent back."""
    sent = []
    view.figure.send = sent.append
    view.figure._handle_custom_msg(content, [])
    return sent


def test_the_packing_page_says_what_python_says_of_every_budget(demo, tmp_path):
    views = [PackingView(demo, budget=Budget(*widths)) for widths in WIDTHS]
    calls = [(name, _state(view)) for view in views for name in ("describe", "verdict", "stateLine", "still")]
    results = page_calls("packing", calls, tmp_path)
    for view, (described, verdict, title, svg) in zip(views, zip(*[iter(results)] * 4)):
        assert described == view.describe()
        assert verdict == view.verdict == _verdict(view.widths, EXERCISE_JOBS)
        assert title == packing_state(view.widths) and title.split("; ")[0] in svg  # the figure says what the state is
        assert svg.startswith("<svg") and svg_problems(svg) == []
    assert results[2].startswith("8 + 8 + 32 = 48 bits: too few for tenant")  # never "48 bits: exact"


def test_the_packing_page_computes_the_largest_score_exactly(demo, tmp_path):
    views = [PackingView(demo, budget=EXERCISE_ANSWER), PackingView(demo, budget=Budget(11, 11, 32))]
    svgs = page_calls("packing", [("still", _state(view)) for view in views], tmp_path)
    for view, svg in zip(views, svgs):  # BigInt in the page, the exact int here: the same digits
        largest = max(Budget(*view.widths).pack(*keys) for _, *keys in EXERCISE_JOBS)
        assert f"largest packed score {largest:,} {'&lt;' if largest < 2**53 else '≥'} 2⁵³" in svg


def test_a_drag_runs_nothing_and_the_run_button_runs_the_budget_on_redis(demo, keyspace):
    view = PackingView(demo)
    before = keyspace()
    view.set(tenant_bits=11, priority_bits=10)
    assert keyspace() == before and view.figure.outcome == {} and view.answered()
    assert _run_message(view, {"kind": "run", "widths": [11, 10, 32]}) == [{"kind": "done"}]
    assert view.text() == packing_text(demo, EXERCISE_ANSWER)
    outcome = view.figure.outcome
    assert outcome["widths"] == [11, 10, 32] and outcome["order"] == outcome["right_order"]
    assert "every score exact, pop order right" in outcome["text"] and outcome["rounded"] == []


def test_the_packing_view_starts_unanswered_and_past_53_runs_for_teaching(demo):
    view = PackingView(demo)
    assert view.widths == (8, 8, 32) and view.outcome is None and not view.answered()
    assert "cannot be packed" in view.text() and view.run() is None
    assert view.status.text.startswith("nothing run on Redis: tenant 1,999 needs 11 bits")
    view.set(tenant_bits=11, priority_bits=11)
    assert not view.answered()
    outcome = view.run()
    assert outcome.rounded and view.figure.outcome["rounded"] == list(outcome.rounded)
    assert view.figure.outcome["order"] == [m for m, _ in outcome.popped]


@pytest.mark.parametrize("sent, line", [
    ({"tenant_bits": 54}, "refused tenant_bits 54: it must be a whole number in 0..24"),
    ({"arrival_bits": -1}, "refused arrival_bits -1"),
    ({"priority_bits": 40}, "refused priority_bits 40: it must be a whole number in 0..24"),
    ({"outcome": {"text": "forged"}}, "refused outcome: only the kernel writes it"),
    ({"jobs": []}, "refused jobs: only the kernel writes it"),
])
def test_a_packing_value_from_the_page_outside_the_kernels_bounds_is_refused(demo, keyspace, sent, line):
    view = PackingView(demo)
    before = keyspace()
    view.figure.set_state(sent)
    assert view.widths == (8, 8, 32) and view.figure.outcome == {} and len(view.figure.jobs) == 8
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert keyspace() == before


@pytest.mark.parametrize("widths, line", [
    ([11, 10, 54], "refused arrival_bits 54: it must be a whole number in 0..53"),
    ([30, 30, 30], "refused widths 30 + 30 + 30 = 90 bits: one double has 64"),
    ([11, 1.5, 32], "refused priority_bits 1.5"),
    ([11, True, 32], "refused priority_bits True"),
    ([11, 10], "refused widths [11, 10]"),
    ("11,10,32", "refused widths '11,10,32'"),
])
def test_a_run_asked_with_widths_out_of_bounds_is_refused_and_writes_nothing(demo, keyspace, widths, line):
    view = PackingView(demo)
    before = keyspace()
    assert _run_message(view, {"kind": "run", "widths": widths}) == [{"kind": "done"}]
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert view.widths == (8, 8, 32) and view.figure.outcome == {} and keyspace() == before


def test_the_designs_page_says_and_draws_what_redis_did(runner, tmp_path):
    view = DesignsView(runner)
    states = [(view.describe(), _state(view))]
    for scenario in SCENARIOS:
        outcome = view.select(scenario.key)
        assert view.figure.outcome["right_order"] == list(outcome.right_order)
        assert view.figure.outcome["design_order"] == list(outcome.design_order)
        states.append((view.describe(), _state(view)))
    results = page_calls("designs", [(name, state) for _, state in states for name in ("describe", "still")],
                         tmp_path)
    for (described, state), page_described, svg in zip(states, results[::2], results[1::2]):
        assert page_described == described and svg_problems(svg) == []
        outcome = state["outcome"]
        if outcome:  # each strip holds the jobs in the order Redis popped them
            labels = re.findall(r">job (\d+)</text>", svg)
            assert labels == outcome["right_order"] + outcome["design_order"]
    assert results[1].count("Which order will a wrong design pop?") == 1  # the start: a question


def test_the_designs_view_starts_with_no_design_chosen(runner, keyspace):
    before = keyspace()
    view = DesignsView(runner)
    assert view.figure.scenario == "" and view.figure.outcome == {} and view.outcome is None
    assert keyspace() == before and repr(view) == "DesignsView(scenario=None)"
    assert [key for key, _ in view.figure.choices] == [s.key for s in SCENARIOS]


def test_a_design_chosen_in_the_page_runs_on_redis_as_run_scenario_does(runner):
    view = DesignsView(runner)
    assert _run_message(view, {"kind": "run", "scenario": "popmax"}) == [{"kind": "done"}]
    assert view.figure.scenario == "popmax" and view.figure.status == ""
    alone = run_scenario(runner, "popmax")
    assert view.figure.outcome["design_order"] == list(alone.design_order) != list(alone.right_order)
    assert view.figure.outcome["table"] == alone.text() and "ZPOPMAX" in view.figure.outcome["lua"]


@pytest.mark.parametrize("content, line", [
    ({"kind": "run", "scenario": "nope"}, "refused scenario 'nope': it must be one of fifo, popmax"),
    ({"kind": "run", "scenario": 3}, "refused scenario 3"),
    ({"kind": "run"}, "refused scenario None"),
])
def test_a_design_the_kernel_does_not_know_is_refused_and_writes_nothing(runner, keyspace, content, line):
    view = DesignsView(runner, scenario="fifo")
    before, shown = keyspace(), dict(view.figure.outcome)
    assert _run_message(view, content) == [{"kind": "done"}]
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert view.figure.scenario == "fifo" and view.figure.outcome == shown and keyspace() == before
    view.figure.set_state({"scenario": "bogus"})
    assert view.figure.scenario == "fifo" and view.figure.status.startswith("refused scenario 'bogus'")
    view.figure.set_state({"outcome": {"scenario": "forged"}})
    assert view.figure.outcome == shown and keyspace() == before


def test_views_refuse_bad_arguments_in_one_line(runner, demo):
    with pytest.raises(ValueError, match="scenario must be one of"):
        DesignsView(runner, scenario="nope")
    with pytest.raises(TypeError, match="runner must be a DesignRunner"):
        DesignsView(demo)
    with pytest.raises(TypeError, match="budget must be a Budget"):
        PackingView(demo, budget=(8, 8, 32))
    view = PackingView(demo)
    with pytest.raises(ValueError, match="at most 64 bits"):
        view.set(tenant_bits=53, priority_bits=12)
    assert view.widths == (8, 8, 32)
