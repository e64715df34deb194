"""Notebook 09's views, drawn in the page: the page says and draws what Python
says, a value from the page outside the kernel's bounds is refused in one line
with nothing written, and what the page is sent is what Redis did."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from echomq_viz.experiments.designs import (
    BUDGET_CEILING, EXACT_BITS, EXERCISE_ANSWER, EXERCISE_JOBS, SCENARIOS, Budget, DesignRunner,
)
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import DesignsView, PackingView, packing_text, run_scenario
from echomq_viz.widgets.designs import _verdict, packing_state
from echomq_viz.widgets.page_modules import page_module
from page_runner import node_or_skip, page_calls, svg_problems
from test_designs import DESIGN_ORDERS  # each design's pop order, as its reason says it (tests/experiments)

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
    assert view.status.text.startswith("nothing run on Redis: tenant 1,999 does not fit 8 bits")
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
    ([11] * 100_000, "refused widths [11, 11, 11"),  # a crafted message: quoted in 40 characters
    ([11, "9" * 100_000, 32], "refused priority_bits '9999"),
])
def test_a_run_asked_with_widths_out_of_bounds_is_refused_and_writes_nothing(demo, keyspace, widths, line):
    view = PackingView(demo)
    before = keyspace()
    assert _run_message(view, {"kind": "run", "widths": widths}) == [{"kind": "done"}]
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert len(view.figure.status) < 200
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


def _one_line_error(view) -> bool:
    return (view.status.text.startswith("error: ConnectionError") and "\n" not in view.status.text
            and view.figure.status == view.status.text)


# -- the designs view, click by click ---------------------------------------------------------


def test_each_design_chosen_in_the_page_runs_once_and_the_page_gets_its_orders_lua_and_reason(runner):
    view = DesignsView(runner)
    runs = []
    run = runner.run
    runner.run = lambda scenario: runs.append(scenario.key) or run(scenario)
    for n, scenario in enumerate(SCENARIOS, start=1):
        assert _run_message(view, {"kind": "run", "scenario": scenario.key}) == [{"kind": "done"}]
        assert runs[-1:] == [scenario.key] and len(runs) == n  # one click, one run on Redis
        assert view.figure.scenario == scenario.key and view.status.text == view.figure.status == ""
        shown, design = view.figure.outcome, scenario.design
        assert shown["scenario"] == scenario.key and shown["design_order"] == DESIGN_ORDERS[scenario.key].split()
        assert shown["right_order"] == list(view.outcome.right_order) != shown["design_order"]
        assert shown["lua"] == design.path.read_text(encoding="utf-8") and shown["file"] == design.file
        assert shown["reason"] == scenario.reason and shown["title"] == scenario.title
        assert [job[0] for job in shown["jobs"]] == list(view.outcome.added)


def test_select_runs_once_its_caption_follows_and_an_unknown_design_moves_nothing(runner):
    view = DesignsView(runner)
    runs = []
    run = runner.run
    runner.run = lambda scenario: runs.append(scenario.key) or run(scenario)
    outcome = view.select("popmax")
    assert runs == ["popmax"] and view.figure.scenario == "popmax"  # the kernel's own move runs nothing more
    assert view.describe() == ("Two pop orders of the same 6 jobs (six jobs in three tiers), first out at the "
                               f"left. The real scripts pop {' '.join(outcome.right_order)}; the wrong design, "
                               f"ZPOPMAX instead of ZPOPMIN, pops {DESIGN_ORDERS['popmax']}: a different order.")
    shown = dict(view.figure.outcome)
    with pytest.raises(ValueError, match="scenario must be one of fifo, popmax"):
        view.select("lifo")
    assert runs == ["popmax"] and view.figure.scenario == "popmax" and view.figure.outcome == shown
    assert view.select("nomod").design_order == tuple(DESIGN_ORDERS["nomod"].split())
    assert runs == ["popmax", "nomod"] and view.figure.scenario == "nomod"
    assert view.describe().endswith(f"scripts pop {' '.join(view.outcome.right_order)}; the wrong design, "
                                    f"no % 0x100000000 on the counter, pops {DESIGN_ORDERS['nomod']}: "
                                    "a different order.")


def test_a_lost_redis_is_one_line_in_the_status_and_frees_the_controls(tmp_path):
    server = RedisServer(directory=tmp_path / "redis").start()  # kept: it comes back on the same socket
    try:
        client = server.client(socket_timeout=1, socket_connect_timeout=1)
        designs = DesignsView(DesignRunner(client), scenario="fifo")
        packing = PackingView(Demo("viz-test", client=client), budget=EXERCISE_ANSWER)
        shown = dict(designs.figure.outcome)
        server.stop()
        with pytest.raises(RedisConnectionError):  # from code: raised, the status left alone
            designs.select("popmax")
        assert designs.status.text == designs.figure.status == "" and designs.figure.scenario == "popmax"
        assert designs.figure.outcome == shown  # what Redis last did, for fifo: the page shows it for fifo only
        # from the page: one line, and "done" all the same, which frees the page's buttons
        assert _run_message(designs, {"kind": "run", "scenario": "popmax"}) == [{"kind": "done"}]
        assert _one_line_error(designs) and designs.figure.outcome == shown
        assert _run_message(packing, {"kind": "run", "widths": [11, 10, 32]}) == [{"kind": "done"}]
        assert _one_line_error(packing) and packing.figure.outcome == {} and packing.outcome is None
        server.start()  # Redis is back: the same views run, and the error line goes
        assert _run_message(designs, {"kind": "run", "scenario": "popmax"}) == [{"kind": "done"}]
        assert designs.status.text == designs.figure.status == ""
        assert designs.figure.outcome["design_order"] == DESIGN_ORDERS["popmax"].split()
        assert _run_message(packing, {"kind": "run", "widths": [11, 10, 32]}) == [{"kind": "done"}]
        assert packing.status.text == packing.figure.status == ""
        assert packing.figure.outcome["order"] == packing.figure.outcome["right_order"]
    finally:
        server.stop()


# -- the packing view: the budget, as the page moves it ---------------------------------------

NAMES = ("tenant_bits", "priority_bits", "arrival_bits")


def _page_max_for(cases: list[tuple[dict, str]], folder) -> list[int]:
    """``maxFor(state, name)`` of packing.js, the page's slider maximum, for each case."""
    node = node_or_skip()
    path, calls = folder / "packing.mjs", folder / "max_for.json"
    path.write_text(page_module("packing"), encoding="utf-8")
    calls.write_text(json.dumps(cases), encoding="utf-8")
    script = ("const m = await import(process.env.PAGE_MODULE_URL);"
              "const fs = await import('node:fs/promises');"
              "const cases = JSON.parse(await fs.readFile(process.env.PAGE_CALLS, 'utf8'));"
              "process.stdout.write(JSON.stringify(cases.map(([state, name]) => m.maxFor(state, name))));")
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PAGE_MODULE_URL": path.as_uri(), "PAGE_CALLS": str(calls)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_width_from_the_page_never_takes_the_budget_past_one_double(demo, keyspace, tmp_path):
    view = PackingView(demo)
    before, cases, highs = keyspace(), [], []

    def bound(name: str) -> int:  # the kernel's, noted with the state for the page's to be compared
        cases.append((_state(view), name))
        highs.append(view.figure.bounds()[name][1])
        return highs[-1]

    for name in NAMES:  # each slider pushed to its end, then one past it, as a forged page might
        high, view.figure.status = bound(name), ""
        view.figure.set_state({name: high})
        assert getattr(view.figure, name) == high and view.figure.status == ""
        view.figure.set_state({name: high + 1})
        assert getattr(view.figure, name) == high and view.figure.status.startswith(f"refused {name} {high + 1}")
        assert sum(view.widths) <= BUDGET_CEILING
    assert view.widths == (24, 8, 32)  # the first took all the others left
    rng = random.Random(9)
    for _ in range(400):  # any whole number, one width at a time, as the page's sliders send them
        view.figure.status = ""
        name, value = rng.choice(NAMES), rng.randint(-3, EXACT_BITS + 12)
        widths, high = view.widths, bound(name)
        view.figure.set_state({name: value})
        if 0 <= value <= high:
            assert getattr(view.figure, name) == value and view.figure.status == ""
        else:
            assert view.widths == widths and view.figure.status.startswith(f"refused {name} {value}")
        assert sum(view.widths) <= BUDGET_CEILING and all(0 <= w <= EXACT_BITS for w in view.widths)
    # the page's slider stops where the kernel's bound is
    assert _page_max_for(cases, tmp_path) == highs
    assert keyspace() == before and view.figure.outcome == {}


def test_a_message_of_several_widths_never_takes_the_budget_past_one_double(demo):
    # each width is reckoned against the others as last accepted, one after another
    view = PackingView(demo, budget=Budget(10, 50, 4))
    view.figure.set_state({"tenant_bits": 40, "priority_bits": -1})
    assert view.figure.status.startswith("refused ")
    assert sum(view.widths) <= BUDGET_CEILING, view.widths
    view.figure.set_state({"tenant_bits": 8, "priority_bits": 8, "arrival_bits": 32})
    room = BUDGET_CEILING - 48
    view.figure.set_state({"tenant_bits": 8 + room, "priority_bits": 8 + room})  # each fits alone, not both
    assert sum(view.widths) <= BUDGET_CEILING and view.figure.status.startswith("refused priority_bits"), view.widths


def test_a_refusal_in_a_message_stays_in_the_status_though_another_value_is_taken(demo):
    view = PackingView(demo, budget=Budget(8, 8, 32))
    view.figure.set_state({"tenant_bits": 60, "priority_bits": 60, "arrival_bits": 30})
    assert view.figure.status.startswith("refused ") and view.widths[2] == 30


def test_a_key_given_too_few_bits_is_the_readers_answer_not_an_error(demo, keyspace):
    view = PackingView(demo)
    assert view.status.text == view.figure.status == ""
    assert _run_message(view, {"kind": "run", "widths": [11, 10, 32]}) == [{"kind": "done"}]
    ran = dict(view.figure.outcome)
    before = keyspace()
    view.figure.set_state({"tenant_bits": 10})  # a drag: tenant 1,999 no longer fits
    assert view.figure.status == "" and view.widths == (10, 10, 32)
    assert view.text() == view.verdict  # the last run is not this budget's
    assert view.text().startswith("tenant 1,999 does not fit 10 bits, which hold 0..1,023")
    for widths in ([10, 10, 32], [3, 10, 32]):  # the run button, sent anyway
        assert _run_message(view, {"kind": "run", "widths": widths}) == [{"kind": "done"}]
        assert view.status.text == view.figure.status  # a note, never an error
        assert view.status.text.startswith(f"nothing run on Redis: tenant 1,999 does not fit {widths[0]} bits, which hold 0..")
        assert view.figure.outcome == ran and view.outcome.budget == EXERCISE_ANSWER and keyspace() == before
    assert view.verdict.startswith("tenant 1,999 does not fit 3 bits, which hold 0..7")
    assert _run_message(view, {"kind": "run", "widths": [11, 10, 32]}) == [{"kind": "done"}]
    assert view.status.text == view.figure.status == "" and view.outcome.order == view.outcome.right_order


def test_the_packing_caption_and_verdict_follow_the_widths(demo):
    view = PackingView(demo)
    head = "One score's 64 bits, bit 63 at the left, shared out as "
    assert view.describe() == (head + "tenant 8, priority 8 and arrival 32 bits (arrival lowest), with the largest "
                               "key each field must hold: 8 + 8 + 32 = 48 bits: too few for tenant and priority, "
                               "nothing can be packed.")
    view.set(tenant_bits=11, priority_bits=10)
    assert view.describe() == (head + "tenant 11, priority 10 and arrival 32 bits (arrival lowest), with the "
                               "largest key each field must hold: 11 + 10 + 32 = 53 bits: every job fits, "
                               "every score exact.")
    view.set(priority_bits=12)
    assert view.describe().endswith(": 11 + 12 + 32 = 55 bits: 2 past the 53 a double keeps exact, so scores round.")
    assert view.text().startswith("55 bits: check_budget refuses it; run anyway, for teaching")
    view.figure.set_state({"priority_bits": 10})  # a drag in the page
    assert view.describe().endswith(": 11 + 10 + 32 = 53 bits: every job fits, every score exact.")
    assert view.figure.status == "" and view.text().startswith("fits in 53 bits: check_budget accepts it")
    # judged by the keys' stated ranges, not by the eight jobs alone (whose largest priority is 5,
    # whose arrivals stop at 102): 3 priority bits and 7 arrival bits hold neither
    view.figure.set_state({"priority_bits": 3, "arrival_bits": 7})
    assert view.describe().endswith(": 11 + 3 + 7 = 21 bits: too few for priority and arrival, nothing can be packed.")
    assert view.text() == ("priority 1,000 does not fit 3 bits, which hold 0..7; arrival 4,294,967,295 does not fit 7 bits, "
                           "which hold 0..127: these jobs cannot be packed, give that key more bits")
    view.set(priority_bits=10, arrival_bits=32)
    view.set(priority_bits=11, arrival_bits=32)
    assert packing_state(view.widths) == "11 + 11 + 32 = 54 bits: 1 past the 53 a double keeps exact, so scores round"
    assert view.text().startswith("54 bits: check_budget refuses it; run anyway, for teaching")
