"""Notebook 06's inspector, drawn in the page: the page's text and drawing agree with
Python's, what it draws agrees with what Redis holds (read, never written), a big
queue is sent as a bounded sample the figure names, and every value from the page
is checked by the kernel, a typed queue name before any connection."""

from __future__ import annotations

import re

import pytest

from echomq_viz.core.keys import Keys
from echomq_viz.experiments.inspection import inspect_queue
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.figures.queue_plots import counter_name, tier_name
from echomq_viz.widgets import InspectorView
from echomq_viz.widgets.inspector import POINTS_MAX, TEXT_MAX, describe_map, queue_map
from page_runner import page_calls, svg_problems

MARKERS = r'<(circle|rect|path) [^>]*><title>job ([^<]+) · (tier [^<]+) · counter ([^<]+)</title>'


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


@pytest.fixture
def demo(r) -> Demo:
    demo = Demo("viz-test-inspect", client=r)
    demo.reset()
    return demo


@pytest.fixture
def messy(demo) -> Demo:
    """Notebook 06's queue: three tiers, six jobs past the limit, a stale priority, pc near 2³²."""
    demo.add_batch(seeded_priorities(seed=6, count=40, tiers=(1, 2, 3)))
    for n in range(6):
        demo.add_past_the_limit_for_teaching(f"too-far-{n}", 2**21)
    demo.client.hset(Keys.job(demo.ctx, "3"), "priority", 7)
    demo.set_counter(2**32 - 500)
    demo.add("late-arrival", priority=2)
    return demo


def _view(demo, r) -> InspectorView:
    view = InspectorView(queue="{" + demo.queue + "}")
    view._connect = lambda: r  # the conftest server, whatever REDIS_URL says
    return view


def test_the_page_names_tiers_and_counters_as_python_does(tmp_path):
    tiers = [1, 3, 999, 65_535, 65_536, 65_537, 70_000, 2**21, 2**21 + 5, 2**21 + 999, 2**21 + 1000,
             2**32 - 1, 2**53 + 7, 2**62, 2**63 - 1, 0, -1, -5_000, -(2**63)]
    counters = [0, 1, 40, 999_999, 2**32 - 10**6 - 1, 2**32 - 10**6, 2**32 - 499, 2**32 - 1]
    calls = [("tierName", str(t)) for t in tiers] + [("counterName", c) for c in counters]
    results = page_calls("inspector", calls, tmp_path)
    assert results == [tier_name(t) for t in tiers] + [counter_name(c) for c in counters]
    assert results[tiers.index(2**21)] == "tier 2²¹" and results[tiers.index(2**21 + 5)] == "tier 2²¹ + 5"


def test_the_page_draws_and_describes_every_job_python_read(messy, r, tmp_path):
    empty = _view(messy, r)
    view = _view(messy, r)
    report = view.inspect()
    described, svg, blank = page_calls("inspector", [("describe", _state(view)), ("still", _state(view)),
                                                     ("still", _state(empty))], tmp_path)
    assert described == view.describe() == (
        f"The queue's jobs, one row per tier present, the arrival counter across, for emq:{{{messy.queue}}}:, "
        "47 jobs drawn: tier 1: 10, tier 2: 16, tier 3: 15, tier 2²¹: 6.")
    assert f"<title>{view.describe()}</title>" in svg and svg_problems(svg) == [] and svg_problems(blank) == []
    assert f"<title>{empty.describe()}</title>" in blank and "nothing read yet" in blank
    drawn = re.findall(MARKERS, svg)
    assert len(drawn) == report.total == 47
    # each marker: the job Redis holds, in its tier's row, at its counter; a square past 2²¹ − 1
    assert sorted(job for _, job, _, _ in drawn) == sorted(report.job_ids)
    for shape, job, tier, counter in drawn:
        i = list(report.job_ids).index(job)
        assert (tier, counter) == (tier_name(report.tiers[i]), counter_name(report.counters[i]))
        assert shape == ("rect" if report.tiers[i] > 2**21 - 1 else "circle")
    for label in ("tier 1", "tier 2", "tier 3", "tier 2²¹"):
        assert f">{label}</text>" in svg
    assert "the counter axis breaks between its two clusters; dashed: pc&#39;s counter, 2³² − 499" in svg \
        or "dashed: pc's counter, 2³² − 499" in svg
    assert "47 jobs in 4 tiers, all drawn (2 on top of another: equal scores)" in svg
    assert "read 47 jobs" in svg and "Inspect (read-only)" in svg


def test_the_legend_shows_only_the_shapes_drawn_and_tier_2_21_is_hatched(messy, r, tmp_path):
    view = _view(messy, r)
    view.inspect()
    (svg,) = page_calls("inspector", [("still", _state(view))], tmp_path)
    legend = svg[:svg.index(">tier 1</text>")]
    assert "score rounded" in legend and "overtaken after the wrap" not in legend and "<path" not in legend
    assert "hatched: a tier whose colour a row above has" in legend
    # tier 2 and tier 2²¹ share a colour: the row below is hatched (a pattern), not its colour alone
    rows = view.figure.queue_map["rows"]
    assert rows == ["1", "2", "3", str(2**21)]
    squares = re.findall(r'<rect [^>]*fill="([^"]+)"[^>]*><title>job', svg[len(legend):])
    assert squares and set(squares) == {"url(#emq-inspector-h3)"}
    assert 'id="emq-inspector-h3"' in svg and 'id="emq-inspector-h1"' not in svg
    # a queue whose pc was reset: jobs above pc's counter are triangles, and the legend says so
    messy.client.set(Keys.pc(messy.ctx), 5)
    view.inspect()
    (svg,) = page_calls("inspector", [("still", _state(view))], tmp_path)
    assert "overtaken after the wrap" in svg and len(re.findall(r"<path d=[^>]*><title>job", svg)) > 1


def test_a_big_queue_is_sent_as_a_sample_the_figure_names(demo, r, tmp_path):
    demo.add_batch(seeded_priorities(seed=2, count=300, tiers=(1, 2, 3)))
    demo.add_past_the_limit_for_teaching("far", 2**21)
    report = inspect_queue(r, "{" + demo.queue + "}")
    data = queue_map(report, limit=40)
    assert len(data["points"]) == 40 and data["placed"] == 301 and data["counts"] == [
        report.tier_counts[t] for t in (1, 2, 3, 2**21)]
    rows = {row for row, *_ in data["points"]}
    assert rows == {0, 1, 2, 3}  # every tier keeps a job, and the flagged job is sent
    assert [p for p in data["points"] if p[3] == 1] == [[3, int(report.counters[-1]), report.job_ids[-1], 1]]
    described, svg = page_calls("inspector", [("describe", {"queue_map": data}), ("still", {"queue_map": data})],
                                tmp_path)
    assert described == describe_map(data) and "a sample of 40 of its 301 jobs drawn, jobs per tier" in described
    assert "a sample of 40 of 301 jobs in 4 tiers" in svg and svg_problems(svg) == []
    assert len(re.findall(MARKERS, svg)) == 40
    assert len(queue_map(report)["points"]) == 301 <= POINTS_MAX


def test_what_the_page_gets_agrees_with_redis_and_nothing_is_written(messy, r, keyspace):
    view = _view(messy, r)
    before = keyspace()
    report = view.inspect()
    assert keyspace() == before
    data = view.figure.queue_map
    held = r.zrange(Keys.prioritized(messy.ctx), 0, -1, withscores=True)
    assert [job for _, _, job, _ in data["points"]] == [m for m, _ in held]
    assert [[int(data["rows"][row]), counter] for row, counter, _, _ in data["points"]] == \
        [list(divmod(int(s), 2**32)) for _, s in held]
    assert view.figure.progress == [47, 47] and view.summary_text() == report.summary()
    assert repr(view) == f"InspectorView(prefix='emq', queue='{{{messy.queue}}}')"
    assert view.drawn == {1: 10, 2: 16, 3: 15, 2**21: 6}


@pytest.mark.parametrize("name, sent, refusal", [
    ("queue", 5, "refused queue 5: not a value it can take"),
    ("prefix", None, "refused prefix None: not a value it can take"),
    ("queue", "q" * (TEXT_MAX + 1), f"refused queue: {TEXT_MAX + 1:,} characters, more than {TEXT_MAX:,}"),
    ("queue_map", {"rows": ["1"], "points": []}, "refused queue_map: only the kernel writes it"),
    ("url_enabled", False, "refused url_enabled: only the kernel writes it"),
    ("progress", [9, 9], "refused progress: only the kernel writes it"),
])
def test_a_value_from_the_page_the_kernel_does_not_take_is_refused_in_one_line(messy, r, keyspace, name, sent,
                                                                               refusal):
    view = _view(messy, r)
    view.inspect()
    before, kept = keyspace(), _state(view)
    view.figure.set_state({name: sent})
    assert view.figure.status == refusal and keyspace() == before
    assert _state(view) == {**kept, "status": refusal}  # every value as it was


@pytest.mark.parametrize("prefix, queue, error", [
    ("emq", "", "error: ValueError: queue name must not be empty"),
    ("emq", "{a b}", "error: ValueError: queue name must not contain whitespace or control characters"),
    ("em\tq", "{q}", "error: ValueError: key prefix must not contain whitespace or control characters"),
])
def test_a_name_typed_in_the_page_is_checked_before_any_connection(demo, r, keyspace, prefix, queue, error):
    view = InspectorView(queue="{q}")
    view._connect = lambda: pytest.fail("connected before the names were checked")
    before = keyspace()
    view.figure.set_state({"prefix": prefix, "queue": queue})
    view.figure._handle_custom_msg({"kind": "inspect"}, [])  # the page's Inspect button
    assert view.status.text.startswith(error) and view.figure.status == view.status.text
    assert len(view.status.text.splitlines()) == 1 and view.report is None and view.figure.queue_map == {}
    assert keyspace() == before


def test_the_inspect_button_reads_the_names_typed(messy, r):
    view = InspectorView(queue="{nothing-here}")
    view._connect = lambda: r
    view.figure.set_state({"queue": "{" + messy.queue + "}"})
    view.figure._handle_custom_msg({"kind": "inspect"}, [])
    assert view.status.text == "" and view.report.total == 47
    first = view.figure.queue_map["reads"]
    view.figure._handle_custom_msg({"kind": "inspect"}, [])  # the same read again still reaches the page
    assert view.figure.queue_map["reads"] == first + 1
