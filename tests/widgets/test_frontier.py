"""Past the exact range, live: the teaching opt-in, collisions, FIFO inversion, counter wrap."""

from __future__ import annotations

import re

import pytest
import redis

from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo, past_the_limit_source
from echomq_viz.core.score import PRIORITY_LIMIT, TIER_SPAN, is_exact, split_stored, stored_score
from echomq_viz.widgets import FrontierView, WrapView
from page_runner import page_calls


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test-frontier", client=r)


def redis_order(priority: int, counters: list[int], ids: list[str]) -> list[str]:
    """How a sorted set orders these jobs: by stored score, then member bytes."""
    return [i for _, i in sorted(zip((stored_score(priority, c) for c in counters), ids),
                                 key=lambda pair: (pair[0], pair[1].encode()))]


def test_teaching_source_is_the_real_script_with_one_bound_changed(demo):
    real = demo.scripts.sources["addPrioritizedJob"].source
    teaching = past_the_limit_source(real)
    changed = [(a, b) for a, b in zip(real.splitlines(), teaching.splitlines()) if a != b]
    assert len(real.splitlines()) == len(teaching.splitlines())
    assert changed == [("local priority, priorityError = checkPriority(ARGV[6], 1)",
                        "local priority, priorityError = checkPriority(ARGV[6], 1, 4294967295)")]
    with pytest.raises(RuntimeError, match="exactly once"):
        past_the_limit_source(real.replace("checkPriority(ARGV[6], 1)", "checkPriority(ARGV[6], 0)"))


@pytest.mark.parametrize("priority", [2**21, 2**21 + 1, 2**22, 2**32 - 1])
def test_teaching_add_stores_what_the_double_arithmetic_predicts(demo, priority):
    for counter in [1, 2, 3, 4, 5, 7, 9, 2**31 + 1, 2**32 - 1, 0]:
        job_id, stored = demo.add_past_the_limit_for_teaching(f"c{counter}", priority, counter)
        assert stored == stored_score(priority, counter), counter


def test_normal_api_and_lua_still_refuse_after_teaching_use(demo, keyspace):
    demo.add_past_the_limit_for_teaching("teach", 2**21, 1)
    before = keyspace()
    with pytest.raises(ValueError, match="2²¹ − 1"):
        demo.add("normal", 2**21)
    args = [Keys.base(demo.ctx), "", "j", "1700000000000", "{}", str(2**21)]
    with pytest.raises(redis.ResponseError, match="in 1..2097151"):
        demo.scripts.run("addPrioritizedJob", demo.ctx, args)
    assert keyspace() == before


@pytest.mark.parametrize("priority", [0, 2**32, -5])
def test_teaching_add_refuses_out_of_its_range(demo, keyspace, priority):
    before = keyspace()
    with pytest.raises(ValueError, match="2³² − 1"):
        demo.add_past_the_limit_for_teaching("x", priority)
    assert keyspace() == before


def test_teaching_add_refuses_non_ints(demo):
    with pytest.raises(TypeError, match="int"):
        demo.add_past_the_limit_for_teaching("x", True)


@pytest.mark.parametrize("priority, first", [(2**21, 4), (2**21, 1), (2**22, 1), (PRIORITY_LIMIT, 4)])
def test_frontier_view_pop_order_is_score_then_member_bytes(demo, priority, first):
    view = FrontierView(demo, priority=priority, first_counter=first)
    order = view.run_on_redis()
    ids = [str(n) for n in range(1, 17)]
    expected = redis_order(priority, list(range(first, first + 16)), ids)
    assert order == expected
    if all(is_exact(priority, c) for c in range(first, first + 16)):
        assert order == ids  # exact scores: first in, first out
    assert ("FIFO BROKEN" in view.redis_text) == (order != ids)


def test_frontier_inversion_at_two_to_the_21(demo):
    order = FrontierView(demo, priority=2**21, first_counter=4).run_on_redis()
    assert order.index("10") < order.index("8") < order.index("9")  # "10" < "8" as bytes


def test_frontier_summary_names_the_rounded_counters():
    view = FrontierView(None, priority=2**21, first_counter=4)
    rounded = [c for c in range(4, 20) if not is_exact(2**21, c)]
    assert f"ROUNDED for counters {', '.join(map(str, rounded))}" in view.summary_text()
    view.set(priority=PRIORITY_LIMIT)
    assert view.summary_text() == f"priority {PRIORITY_LIMIT:,}: scores exact"
    assert view.figure.redis_enabled is False  # no demo, no Redis button


def test_wrap_view_newer_jobs_jump_ahead(demo):
    view = WrapView(demo, start=TIER_SPAN - 3, jobs=6, priority=3)
    popped = view.run()
    counters = [(TIER_SPAN - 3 + n) % TIER_SPAN for n in range(1, 7)]
    expected = [str(i + 1) for i in sorted(range(6), key=lambda i: counters[i])]
    assert popped == expected == ["3", "4", "5", "6", "1", "2"]
    assert "newer jobs jumped ahead" in view.text
    rows = view.figure.answer["rows"]  # what INCR pc returned to each add, beside the counter Redis stored
    assert [row["incr"] for row in rows] == [TIER_SPAN - 3 + n for n in range(1, 7)]
    assert [row["counter"] for row in rows] == counters == [row["incr"] % TIER_SPAN for row in rows]
    assert f"{TIER_SPAN - 2:>13,}  {TIER_SPAN - 2:>12,}" in view.text.splitlines()[1]
    assert demo.priority_counter() is None  # the drain found the set empty: pc deleted


def test_wrap_view_without_wrap_keeps_fifo(demo):
    view = WrapView(demo, start=TIER_SPAN - 10, jobs=6)
    assert view.run() == ["1", "2", "3", "4", "5", "6"]
    assert "jumped" not in view.text


@pytest.mark.parametrize("score, expected", [
    (0, (0, 0)), (2**53, (2**21, 0)), (float(2**53 + 4), (2**21, 4)), (2**64 - 1, (2**32 - 1, 2**32 - 1)),
])
def test_split_stored_accepts_scores_past_the_limit(score, expected):
    assert split_stored(score) == expected


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, ValueError), (float("inf"), ValueError),
                                        (True, TypeError), ("1", TypeError)])
def test_split_stored_refuses_bad_scores(bad, error):
    with pytest.raises(error):
        split_stored(bad)


# -- drawn in the page ------------------------------------------------------------------------------

POSITIONS = [(2**21, 4), (PRIORITY_LIMIT, 4), (2**21 - 2, 100), (2**22, 0), (2**24, 4), (2**21 + 1, 2**32 - 17)]


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


def test_the_page_says_what_python_says_of_every_position(tmp_path):
    views = [FrontierView(None, priority=p, first_counter=f) for p, f in POSITIONS]
    calls = [(name, _state(view)) for view in views for name in ("describe", "summary", "still")]
    results = page_calls("frontier", calls, tmp_path)
    for view, (described, summary, svg) in zip(views, zip(*[iter(results)] * 3)):
        assert described == view.describe()
        assert summary == view.summary_text()
        assert svg.startswith("<svg") and f"<title>{view.describe()}</title>" in svg


def test_the_figure_says_how_wide_the_steps_are_and_why(tmp_path):
    """At 2²¹ doubles are 2 apart, and ties to even put 3 counters on a double ending in 0 and 1 on
    one ending in 1: the figure, its caption and the drawn points say so, as the numbers are."""
    view = FrontierView(None, priority=2**21, first_counter=4)
    (svg,) = page_calls("frontier", [("still", _state(view))], tmp_path)
    assert "neighbouring doubles here are 2 apart" in svg
    assert "it takes 3 counters, one ending in 1 takes 1" in svg
    assert "takes 3 counters (it wins both ties), one ending in 1 takes 1." in view.describe()
    labels = re.findall(r">×(\d+)(?: of (\d+))? · …([01])<", svg)
    inside = [(int(n), int(end)) for n, full, end in labels if not full]  # runs the window does not cut
    assert inside and all(n == (3 if end == 0 else 1) for n, end in inside)
    # each point sits at the low part Redis would store, on the axis the page draws
    ticks = {int(label.replace(",", "")): float(y) for y, label in re.findall(
        r'<text x="[\d.]+" y="([\d.]+)"[^>]*text-anchor="end"[^>]*>([\d,]+)</text>', svg)}
    (a, ya), (b, yb) = sorted(ticks.items())[:2]
    per_unit = (ya - yb) / (b - a)
    marks = [float(y) for y in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="5.5"', svg)]
    marks += [float(y) + 5 for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="10" height="10" fill="#b00020" stroke', svg)]
    lows = sorted(int(stored_score(2**21, c)) - 2**21 * TIER_SPAN for c in range(4, 20))
    drawn = sorted(round(a + (ya - y) / per_unit) for y in marks)
    assert drawn == lows


@pytest.mark.parametrize("sent, line", [
    ({"priority": 5}, "refused priority must be one of 2,097,150"),
    ({"priority": True}, "refused priority must be one of"),
    ({"first_counter": 2**32 - 16}, "refused first_counter 4294967280: it must be a whole number in 0..4,294,967,279"),
    ({"first_counter": -1}, "refused first_counter -1"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_in_one_line(demo, keyspace, sent, line):
    view = FrontierView(demo, priority=2**21, first_counter=4)
    before = keyspace()
    view.figure.set_state(sent)
    assert (view.figure.priority, view.figure.first_counter) == (2**21, 4)
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    view.figure._handle_custom_msg({"kind": "run", "priority": 2**21, **sent}, [])  # the button, same values
    assert keyspace() == before and view.figure.answer == {}  # nothing written, nothing run
    view.figure.set_state({"first_counter": 5})
    assert view.figure.status == "" and view.figure.first_counter == 5


def test_the_page_may_not_write_redis_answer(demo):
    view = FrontierView(demo)
    view.figure.set_state({"answer": {"popped": ["1"]}})
    assert view.figure.answer == {} and view.figure.status.startswith("refused answer")


def test_the_button_runs_the_values_the_page_shows_and_the_page_agrees_with_redis(demo, tmp_path):
    view = FrontierView(demo, priority=PRIORITY_LIMIT, first_counter=0)
    view.figure._handle_custom_msg({"kind": "run", "priority": 2**21, "first_counter": 4}, [])
    assert (view.figure.priority, view.figure.first_counter) == (2**21, 4) and view.figure.status == ""
    answer = view.figure.answer
    assert answer["popped"] == redis_order(2**21, list(range(4, 20)), answer["added"])
    (said,) = page_calls("frontier", [("answerLine", _state(view))], tmp_path)
    assert said == [f"Redis popped {' '.join(answer['popped'])}: FIFO BROKEN; the page's prediction from the "
                    "stored scores: the same order", "good"]
    assert "FIFO BROKEN" in view.redis_text


def test_wrap_page_says_what_python_says_before_and_after_the_run(demo, tmp_path):
    view = WrapView(demo, start=TIER_SPAN - 3, jobs=6, priority=3)
    before = _state(view)
    view.figure._handle_custom_msg({"kind": "run", "start": TIER_SPAN - 4}, [])
    assert view.figure.start == TIER_SPAN - 4 and view.popped == ["4", "5", "6", "1", "2", "3"]
    after = _state(view)
    described, svg, described_after, table, svg_after = page_calls(
        "wrap", [("describe", before), ("still", before), ("describe", after), ("table", after), ("still", after)],
        tmp_path)
    assert described_after == view.describe() and table == view.text
    assert "pop order 4 5 6 1 2 3: newer jobs jumped ahead" in described_after
    assert "not filed yet" in described and "will be 4,294,967,294 4,294,967,295 0 1 2 3" in described
    # the empty figure says why it is empty, and what the arithmetic already knows
    assert "not filed yet: press “File 6 jobs on Redis, then drain”" in svg and "counter 2³² − 1" in svg
    assert "the counter part wraps to 0" in svg and "newer jobs 4 5 6 jumped ahead of 1 2 3" in svg_after
    view.set(start=TIER_SPAN - 10)  # a run for another start is not drawn as this one's
    assert "not filed yet" in view.describe()


def test_wrap_refuses_a_start_from_the_page_and_writes_nothing(demo, keyspace):
    view = WrapView(demo)
    before = keyspace()
    view.figure._handle_custom_msg({"kind": "run", "start": TIER_SPAN + 3}, [])
    assert keyspace() == before and view.figure.answer == {}
    assert view.figure.status == "refused start 4294967299: it must be a whole number in 4,294,967,286..4,294,967,298"
