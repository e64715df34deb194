"""Past the exact range, live: the teaching opt-in, collisions, FIFO inversion, counter wrap."""

from __future__ import annotations

import pytest
import redis

from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo, past_the_limit_source
from echomq_viz.core.score import PRIORITY_LIMIT, TIER_SPAN, is_exact, split_stored, stored_score
from echomq_viz.widgets import FrontierView, WrapView


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
    view.priority.value = PRIORITY_LIMIT
    assert view.summary_text() == f"priority {PRIORITY_LIMIT:,}: scores exact"
    assert view.run_button.disabled  # no demo, no live button


def test_wrap_view_newer_jobs_jump_ahead(demo):
    view = WrapView(demo, start=TIER_SPAN - 3, jobs=6, priority=3)
    popped = view.run()
    counters = [(TIER_SPAN - 3 + n) % TIER_SPAN for n in range(1, 7)]
    expected = [str(i + 1) for i in sorted(range(6), key=lambda i: counters[i])]
    assert popped == expected == ["3", "4", "5", "6", "1", "2"]
    assert "newer jobs jumped ahead" in view.text
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
