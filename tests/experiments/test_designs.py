"""The designs that fail (lua/designs/, echomq_viz.experiments.designs), on real Redis servers; their views
(echomq_viz.widgets.designs) are tested in tests/widgets/test_designs_views.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from redis.exceptions import ResponseError

from echomq_viz.experiments.designs import (
    DESIGN_DIR, DESIGNS, EXACT_BITS, EXERCISE_ANSWER, EXERCISE_JOBS, SCENARIOS, Budget, DesignRunner, check_budget,
    design_source, run_packing,
)
from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo
from echomq_viz.core.score import TIER_SPAN, split_stored
from echomq_viz.redis_side.lua_loader import LUA_DIR, load_scripts, resolve_includes

SCENARIO = {scenario.key: scenario for scenario in SCENARIOS}


@pytest.fixture
def runner(r) -> DesignRunner:
    return DesignRunner(r)


def pack_script(r):
    return r.register_script(resolve_includes(DESIGN_DIR / "packThreeKeys.lua", LUA_DIR))


# -- the files -------------------------------------------------------------------------


def test_the_real_loader_never_loads_a_design():
    loaded = load_scripts()
    assert {script.path.parent for script in loaded.values()} == {LUA_DIR}
    assert {script.command for script in loaded.values()} == {p.name.split("-")[0] for p in LUA_DIR.glob("*.lua")}
    files = sorted(DESIGN_DIR.glob("*.lua"))
    assert {p.name for p in files} >= {d.file for d in DESIGNS} | {"packThreeKeys.lua"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("--[[\n") and "]]" in text, path.name
        assert all(text.rstrip() not in script.source for script in loaded.values()), path.name


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: d.key)
def test_each_design_changes_one_piece_of_the_real_script(design):
    real = load_scripts()[design.script].source
    wrong = design_source(design, real)
    piece = design.path.read_text(encoding="utf-8").rstrip("\n")
    assert wrong != real and wrong.count(piece) == 1
    assert wrong.replace(piece, design.replaces) == real  # everything else byte for byte


def test_a_design_whose_target_has_gone_is_refused():
    with pytest.raises(RuntimeError, match="no longer holds the text arrivalInHighBits.lua replaces"):
        design_source(DESIGNS[0], "return 1")
    with pytest.raises(TypeError, match="design must be a Design"):
        design_source("fifo", "return 1")


# -- the live runs ----------------------------------------------------------------------

# The design's pop order, as each reason sentence says it.
DESIGN_ORDERS = {
    "fifo": "1 2 3 4 5 6",  # arrival only
    "popmax": "5 1 6 3 4 2",  # worst tier first, newest first inside it
    "clock-tie": "1 2 3 4 5 6 7 8 10 9",  # one millisecond: "10" < "9"
    "clock-skew": "2 4 1 3",  # B's clock is behind
    "clock-wrap": "3 4 1 2",  # after the wrap first
    "nomod": "1 3 2 4",  # the tier-1 job spilled into tier 2, behind the old tier-2 job
}
# The real scripts pop by (priority, arrival), but for the wrap of pc % 2**32 in a busy queue:
# new-tier-2 (counter 2**32 + 6, kept as 6) overtakes recent-tier-2 (2**32 - 1). 09 shows that cost.
REAL_ORDERS = {"nomod": "3 1 4 2"}


@pytest.mark.parametrize("key", list(DESIGN_ORDERS))
def test_each_design_pops_in_the_order_its_reason_says(runner, key):
    scenario = SCENARIO[key]
    outcome = runner.run(scenario)
    arrival = {job_id: (job.priority, n) for n, (job_id, job) in enumerate(zip(outcome.added, scenario.jobs))}
    by_priority_and_arrival = " ".join(sorted(outcome.added, key=arrival.get))
    assert " ".join(outcome.right_order) == REAL_ORDERS.get(key, by_priority_and_arrival)
    assert " ".join(outcome.design_order) == DESIGN_ORDERS[key]
    assert not outcome.agrees and "<- differs" in outcome.text() and scenario.reason in outcome.text()


def test_the_design_scores_are_what_each_wrong_formula_computes_on_redis(runner):
    fifo = runner.run(SCENARIO["fifo"])
    assert [fifo.design_scores[j] for j in fifo.added] == [
        n * 2**21 + job.priority for n, job in enumerate(SCENARIO["fifo"].jobs, start=1)]
    wrap = runner.run(SCENARIO["clock-wrap"])
    lows = [split_stored(wrap.design_scores[j])[1] for j in wrap.added]
    assert lows == [job.clock % 2**32 for job in SCENARIO["clock-wrap"].jobs] == [2**32 - 2, 2**32 - 1, 0, 1]
    nomod = runner.run(SCENARIO["nomod"])
    assert split_stored(nomod.design_scores["3"]) == (2, 5)  # priority 1, read back as tier 2
    assert split_stored(nomod.right_scores["3"]) == (1, 5)
    assert split_stored(nomod.right_scores["2"]) == (2, 2**32 - 1)  # recent-tier-2, before the wrap
    assert split_stored(nomod.right_scores["4"]) == (2, 6)  # new-tier-2, after it: a smaller counter


def test_time_comes_from_the_arguments_never_the_wall_clock(runner):
    first = runner.run(SCENARIO["clock-skew"])
    second = runner.run(SCENARIO["clock-skew"])
    assert first.design_scores == second.design_scores
    assert first.design_scores["1"] == 2 * TIER_SPAN + (SCENARIO["clock-skew"].jobs[0].clock % TIER_SPAN)


def test_a_design_still_refuses_bad_input_before_writing(runner, r, keyspace):
    runner.run(SCENARIO["clock-tie"])
    before = keyspace()
    demo, script = runner.demos["clock"], runner._script(SCENARIO["clock-tie"].design)
    keys = demo.scripts.sources["addPrioritizedJob"].keys(demo.ctx)
    for args, message in (([Keys.base(demo.ctx), "", "j", 1, "{}", 0], "priority must be in 1..2097151"),
                          ([Keys.base(demo.ctx), "", "j", "soon", "{}", 1], "timestamp must be whole")):
        with pytest.raises(ResponseError, match=message):
            script(keys=keys, args=args)
    assert keyspace() == before


def test_the_runner_touches_only_its_own_demo_queues(runner, r, keyspace):
    r.set("emq:{orders}:pc", "41")
    other = Demo("viz-09-right", client=r)  # same name, same process: the same queue
    assert other.queue == runner.right.queue
    r.zadd("emq:{viz-09-fifo}:prioritized", {"someone-else": 1})
    for scenario in SCENARIOS:
        runner.run(scenario)
    assert r.get("emq:{orders}:pc") == "41"
    assert r.zrange("emq:{viz-09-fifo}:prioritized", 0, -1) == ["someone-else"]
    runner.reset()
    assert all(key in ("emq:{orders}:pc", "emq:{viz-09-fifo}:prioritized") or key.endswith(":lease")
               for key in r.scan_iter(count=1000))


def test_run_refuses_what_is_not_a_scenario(runner):
    with pytest.raises(TypeError, match="scenario must be one of SCENARIOS"):
        runner.run("fifo")


# -- the exercise ----------------------------------------------------------------------


def test_a_budget_checks_its_fields_and_check_budget_its_total():
    assert str(EXERCISE_ANSWER) == "tenant 11 + priority 10 + arrival 32 = 53 bits" and EXERCISE_ANSWER.exact
    assert check_budget(11, 10, 32) == EXERCISE_ANSWER
    with pytest.raises(ValueError, match=r"at most 53 bits .*got tenant 11 \+ priority 11 \+ arrival 32 = 54"):
        check_budget(11, 11, 32)
    with pytest.raises(TypeError, match="tenant_bits must be an int, got bool True"):
        Budget(True, 10, 32)
    with pytest.raises(ValueError, match="arrival_bits must be in 0..53, got 54"):
        Budget(1, 1, 54)
    with pytest.raises(ValueError, match="at most 64 bits even for teaching, got 65"):
        Budget(53, 11, 1)
    assert Budget(np.int64(11), 10, 32).total == 53  # numpy integers are ints


def test_pack_and_unpack_are_inverse_and_exact_inside_53_bits():
    budget = EXERCISE_ANSWER
    for tenant, priority, arrival in [(0, 0, 0), (2047, 1023, 2**32 - 1), (1999, 5, 99), (1, 0, 1)]:
        score = budget.pack(tenant, priority, arrival)
        assert score < 2**EXACT_BITS and budget.unpack(score) == (tenant, priority, arrival)
        assert budget.stored(tenant, priority, arrival) == score
        assert budget.unpack(float(score)) == (tenant, priority, arrival)
    with pytest.raises(ValueError, match=r"tenant \(11 bits\) must be in 0..2,047, got 2,048"):
        budget.pack(2048, 0, 0)
    wide = Budget(11, 11, 32)
    assert wide.stored(1999, 5, 99) != wide.pack(1999, 5, 99)  # past 2**53: rounded


def test_the_default_answer_pops_in_order_on_redis(r):
    demo = Demo("viz-09-pack", client=r)
    outcome = run_packing(demo, EXERCISE_ANSWER)
    assert outcome.order == outcome.right_order == ("102", "96", "97", "95", "98", "99", "100", "101")
    assert outcome.rounded == ()
    assert [s for _, s in outcome.popped] == sorted(EXERCISE_ANSWER.pack(*job[1:]) for job in EXERCISE_JOBS)
    assert r.exists(Keys.prioritized(demo.ctx)) == 0  # the script popped every job it added


def test_past_53_bits_is_refused_before_any_write(r, keyspace):
    demo = Demo("viz-09-pack", client=r)
    r.zadd(Keys.prioritized(demo.ctx), {"earlier": 1})
    before = keyspace()
    with pytest.raises(ValueError, match="at most 53 bits"):
        run_packing(demo, Budget(11, 11, 32))
    with pytest.raises(ValueError, match=r"tenant \(10 bits\) must be in 0..1,023, got 1,999"):
        run_packing(demo, Budget(10, 11, 32))
    with pytest.raises(ValueError, match="member '95' given twice"):
        run_packing(demo, EXERCISE_ANSWER, [EXERCISE_JOBS[0], EXERCISE_JOBS[0]])
    with pytest.raises(TypeError, match="jobs must be a list of"):
        run_packing(demo, EXERCISE_ANSWER, iter(EXERCISE_JOBS))
    with pytest.raises(ValueError, match="jobs must hold 1..1000 jobs, got 0"):
        run_packing(demo, EXERCISE_ANSWER, [])
    with pytest.raises(TypeError, match="past_53_for_teaching must be True or False"):
        run_packing(demo, EXERCISE_ANSWER, past_53_for_teaching=1)
    assert keyspace() == before


def test_past_53_bits_for_teaching_rounds_and_breaks_the_order(r):
    demo = Demo("viz-09-pack", client=r)
    budget = Budget(11, 11, 32)
    outcome = run_packing(demo, budget, past_53_for_teaching=True)
    assert outcome.rounded == ("95", "97", "99", "101")
    assert outcome.order == ("102", "96", "97", "95", "98", "100", "101", "99")  # "100" < "101" < "99"
    # Python's mirror of the Lua arithmetic gives the very doubles Redis stored
    assert dict(outcome.popped) == {m: budget.stored(*keys) for m, *keys in EXERCISE_JOBS}
    assert "ORDER BROKEN" in outcome.text()


def test_the_python_mirror_rounds_in_the_luas_two_steps_where_one_rounding_would_differ(r):
    """Past 53 bits the Lua rounds twice (tenant and priority first, then the arrival added): a
    budget and a job where that differs from rounding the exact score once, so the mirror must
    follow the Lua's steps to give the doubles Redis stored."""
    budget = Budget(40, 20, 4)
    jobs = [("a", 533578946923, 7840, 2), ("b", 533578946923, 7840, 1), ("c", 1, 1, 1)]
    assert budget.stored(*jobs[0][1:]) != float(budget.pack(*jobs[0][1:]))  # the case separates the two
    outcome = run_packing(Demo("viz-09-pack", client=r), budget, jobs, past_53_for_teaching=True)
    assert dict(outcome.popped) == {m: budget.stored(*keys) for m, *keys in jobs}


BAD_PACK_ARGS = [
    ([11, 11, 32, "0"], "the budget must be at most 53 bits"),
    ([11, 10, 54, "1"], "arrival bits must be an integer in 0..53, got '54'"),
    ([11, 10, 32, "2"], "allow past 53 bits must be '0' or '1'"),
    ([53, 11, 1, "1"], "the budget must be at most 64 bits"),
    ([10, 10, 32, "0", "a", 1024, 1, 1], "tenant of 'a' (10 bits) must be an integer in 0..1023, got '1024'"),
    ([10, 10, 32, "0", "a", 1, 1, 1, "a", 1, 1, 2], "member 'a' given twice"),
    ([10, 10, 32, "0", "", 1, 1, 1], "member must not be empty"),
    ([10, 10, 32, "0", "a", 1, 1], "give 1..1000 jobs of four arguments each"),
    ([10, 10, 32, "0"], "give 1..1000 jobs"),
]


@pytest.mark.parametrize("args, message", BAD_PACK_ARGS)
def test_the_pack_script_refuses_bad_arguments_and_writes_nothing(r, keyspace, args, message):
    demo = Demo("viz-09-pack", client=r)
    before = keyspace()
    with pytest.raises(ResponseError, match=re.escape(message)):
        pack_script(r)(keys=[Keys.prioritized(demo.ctx)], args=[Keys.base(demo.ctx), *args])
    assert keyspace() == before


def test_the_pack_script_wants_an_empty_set_of_its_own_queue(r, keyspace):
    demo = Demo("viz-09-pack", client=r)
    r.zadd(Keys.prioritized(demo.ctx), {"earlier": 1})
    before = keyspace()
    job = [11, 10, 32, "0", "a", 1, 1, 1]
    with pytest.raises(ResponseError, match="must be empty before the exercise runs"):
        pack_script(r)(keys=[Keys.prioritized(demo.ctx)], args=[Keys.base(demo.ctx), *job])
    with pytest.raises(ResponseError, match="KEYS\\[1\\] must be the key prefix"):
        pack_script(r)(keys=["emq:{orders}:prioritized"], args=[Keys.base(demo.ctx), *job])
    assert keyspace() == before
