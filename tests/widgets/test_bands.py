"""Notebook 04's bands, drawn in the page: the kernel sends the page what Redis
holds, the page's drawing and caption agree with Python's and put every job in
its own band, no label covers a job, and a value from the page is checked
against the kernel's bounds before anything is written."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from conftest import assert_refused, one_clear_line
from echomq_viz.core.colours import band_style, tier_color
from echomq_viz.core.keys import Keys
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, priority_score, tier_bounds
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.widgets import BandsView
from echomq_viz.widgets.bands import JOBS_MAX, START_MAX, TIERS_MAX, BandsFigure
from page_runner import page_calls

# (tiers, jobs, start, edge): the notebook's two views, the most the kernel allows, the least
STATES = [(4, 200, 0, 1), (4, 200, 3_000_000_000, 1), (TIERS_MAX, JOBS_MAX, START_MAX, 7), (1, 10, 5, 3)]


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


def page_state(view: BandsView) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


@pytest.fixture
def drawn(demo, tmp_path):
    """Each state of STATES as Python holds it, with the page's describe, counts line and still."""
    views = []
    for tiers, jobs, start, edge in STATES:
        view = BandsView(demo, tiers=tiers, jobs=jobs, start=start, edge=edge)
        views.append((view.describe(), view.counts_text(), page_state(view), list(view.figure.points)))
    calls = [(name, state) for _, _, state, _ in views for name in ("describe", "countsText", "still")]
    results = page_calls("bands", calls, tmp_path)
    return [(*view, *results[3 * n:3 * n + 3]) for n, view in enumerate(views)]


def test_the_page_says_what_python_says(drawn):
    for described, counts_line, _, _, page_described, page_counts, svg in drawn:
        assert page_described == described and page_counts == counts_line
        assert svg.startswith("<svg") and 'width="820"' in svg and f"<title>{html.escape(described, quote=False)}</title>" in svg


def test_the_page_follows_the_kernels_bounds_and_band_style(tmp_path):
    bounds, *styles = page_calls("bands", [("bounds", {})] + [("bandStyle", p) for p in range(1, 11)], tmp_path)
    assert {name: tuple(pair) for name, pair in bounds.items()} == BandsFigure().bounds()
    for p, style in enumerate(styles, start=1):
        python = band_style(p)
        assert style["color"] == tier_color(p)
        assert to_rgba(style["color"], style["fillOpacity"]) == python["facecolor"]
        assert to_rgba(style["color"], style["edgeOpacity"]) == python["edgecolor"]
        assert style["hatch"] == python["hatch"]


# -- what the page draws: parsed back from its SVG --------------------------------------------------

CIRCLE = re.compile(r'<circle cx="([\d.-]+)" cy="([\d.-]+)" r="([\d.]+)" fill="(#[0-9a-f]{6})"')
TEXT = re.compile(r'<text x="([\d.-]+)" y="([\d.-]+)" font-size="(\d+)"[^>]*?text-anchor="(\w+)" '
                  r'dominant-baseline="(\w+)"([^>]*)>([^<]*)</text>')


def texts(svg: str) -> list[dict]:
    return [{"x": float(x), "y": float(y), "size": int(size), "anchor": anchor, "baseline": baseline,
             "rotated": "rotate(" in rest, "text": html.unescape(content)}
            for x, y, size, anchor, baseline, rest, content in TEXT.findall(svg)]


def text_box(t: dict) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) px, generously: DejaVu Sans averages under 0.64 em a character."""
    width, size = 0.64 * t["size"] * len(t["text"]), t["size"]
    if t["rotated"]:  # rotate(-90) about its anchor point, anchored in the middle
        return t["x"] - size, t["y"] - width / 2, t["x"] + 0.3 * size, t["y"] + width / 2
    left = {"start": t["x"], "middle": t["x"] - width / 2, "end": t["x"] - width}[t["anchor"]]
    top = {"auto": t["y"] - 0.8 * size, "hanging": t["y"], "middle": t["y"] - size / 2}[t["baseline"]]
    return left, top, left + width, top + 1.1 * size


def job_dots(svg: str, left: float, right: float) -> list[tuple[float, float, int]]:
    """(cx, cy, tier) of the job dots between x ``left`` and ``right``."""
    tier_of = {tier_color(p): p for p in range(1, TIERS_MAX + 1)}
    return [(float(x), float(y), tier_of[fill]) for x, y, r, fill in CIRCLE.findall(svg)
            if r == "3.2" and left <= float(x) <= right]


def y_ticks(svg: str, panel_left: float) -> dict[str, float]:
    """The y tick labels of the panel whose axis stands at ``panel_left``: label -> y px."""
    return {t["text"]: t["y"] for t in texts(svg) if t["anchor"] == "end" and t["baseline"] == "middle"
            and abs(t["x"] - (panel_left - 8)) < 0.01}


def test_at_full_scale_every_job_is_drawn_at_its_score_and_every_dot_is_a_job(drawn):
    for *_, points, _, _, svg in drawn:
        ticks = y_ticks(svg, 616)
        one, per_unit = ticks["1"], ticks["1"] - ticks["2"]  # px per 2³² of score
        near = 1.5 / per_unit  # a pixel and a half, in units of 2³²
        dots = [(p, (one - y) / per_unit + 1) for _, y, p in job_dots(svg, 600, 820)]
        for p, height in dots:  # inside its own band: tier p's scores are p·2³² .. (p + 1)·2³² − 1
            assert p - near <= height < p + 1 + near
        jobs = {(p, p + c / TIER_SPAN) for p, c in points}
        for p, height in dots:  # every dot is a job
            assert any(q == p and abs(h - height) <= near for q, h in jobs)
        for q, h in jobs:  # every job has a dot
            assert any(q == p and abs(h - height) <= near for p, height in dots)


def test_up_close_every_dot_sits_in_its_own_tiers_band(drawn):
    for *_, points, _, _, svg in drawn:
        ticks = y_ticks(svg, 104)
        tiers = {p for p, _ in points}
        half = (ticks["tier 1"] - ticks["tier 2"]) / 2 if len(ticks) > 1 else (300 - 64) / 2
        dots = job_dots(svg, 100, 470)
        assert {p for _, _, p in dots} == tiers
        for _, y, p in dots:
            assert ticks[f"tier {p}"] - half <= y <= ticks[f"tier {p}"] + half


def test_no_label_covers_a_job_and_nothing_is_cut_off(drawn):
    """A reader complained of a note over the tier-4 dots: every text stands clear of every dot,
    inside the 820 x 508 figure (within the 840 px an output gives), at 12 px or more."""
    for described, *_, svg in drawn:
        width, height = (float(v) for v in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
        assert width <= 840
        dots = [(float(x), float(y), float(r)) for x, y, r, _ in CIRCLE.findall(svg)]
        for t in texts(svg):
            left, top, right, bottom = text_box(t)
            assert t["size"] >= 12, t
            assert 0 <= left and right <= width and 0 <= top and bottom <= height, (described, t)
            covered = [(x, y) for x, y, r in dots
                       if left - r < x < right + r and top - r < y < bottom + r]
            assert not covered, f"{t['text']!r} covers the dots at {covered[:3]}"


# -- what the kernel sends: what Redis holds ------------------------------------------------------------


def test_the_points_and_counts_sent_are_what_redis_holds(demo, r):
    view = BandsView(demo, tiers=3, jobs=60, start=1_000, seed=2)
    stored = r.zrange(Keys.prioritized(demo.ctx), 0, -1, withscores=True)
    assert view.figure.points == [[int(s) // TIER_SPAN, int(s) % TIER_SPAN] for _, s in stored]
    assert all(priority_score(p, c) == s for (p, c), (_, s) in zip(view.figure.points, stored))
    assert sorted(c for _, c in view.figure.points) == list(range(1_001, 1_061))  # pc set through the demo
    assert view.figure.counts == [[p, r.zcount(Keys.prioritized(demo.ctx), *tier_bounds(p))] for p in (1, 2, 3)]
    drawn = seeded_priorities(2, 60, range(1, 4))
    assert view.counts == {p: drawn.count(p) for p in (1, 2, 3)}
    assert view.figure.ran == {"tiers": 3, "jobs": 60, "start": 1_000}


def test_a_value_the_page_sends_refills_redis_once(demo, r):
    view = BandsView(demo, tiers=2, jobs=20, start=0)
    runs = []
    refresh = view.refresh
    view.refresh = lambda: runs.append(1) or refresh()
    view.figure.set_state({"start": 3_000_000_000, "tiers": 3})  # two values in one message: one refill
    assert len(runs) == 1 and view.figure.status == ""
    counters = sorted(e.counter for e in demo.entries())
    assert counters == list(range(3_000_000_001, 3_000_000_021))
    assert all(tier_bounds(e.priority)[0] <= e.score <= tier_bounds(e.priority)[1] for e in demo.entries())
    assert view.describe().startswith("Tiers 1-3 as bands of the score axis with 20 jobs as points (counters "
                                      "3,000,000,001 to 3,000,000,020)")  # the text says where the batch sits
    assert ", ".join(f"tier {p}: {n}" for p, n in view.counts.items()) in view.describe()


def test_the_edge_is_the_pages_alone_and_touches_no_redis(demo, keyspace):
    view = BandsView(demo, tiers=2, jobs=20)
    before = keyspace()
    view.figure.set_state({"edge": 5})
    assert keyspace() == before and view.figure.edge == 5
    assert "the largest tier-5 score and the smallest tier-6 score, one apart" in view.describe()


@pytest.mark.parametrize("sent, line", [
    ({"jobs": JOBS_MAX + 10}, "refused jobs 5010: it must be a whole number in 10..5,000"),  # a page raising the max
    ({"jobs": 5}, "refused jobs 5: it must be a whole number in 10..5,000"),
    ({"tiers": 9}, "refused tiers 9: it must be a whole number in 1..8"),
    ({"tiers": 0}, "refused tiers 0"),
    ({"start": START_MAX + 1}, "refused start 4294962296: it must be a whole number in 0..4,294,962,295"),
    ({"start": -1}, "refused start -1"),
    ({"edge": 8}, "refused edge 8: it must be a whole number in 1..7"),
    ({"points": [[1, 5]]}, "refused points: only the kernel writes it"),
    ({"counts": [[1, 999]]}, "refused counts: only the kernel writes it"),
    ({"ran": {"tiers": 1, "jobs": 10, "start": 0}}, "refused ran: only the kernel writes it"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_and_nothing_is_written(demo, keyspace, sent,
                                                                                            line):
    view = BandsView(demo, tiers=2, jobs=20, start=7)
    state, before = page_state(view), keyspace()
    view.figure.set_state(sent)  # what a message from the page does, whatever the page's own bounds
    assert view.figure.status.startswith(line) and one_clear_line(view.figure.status)
    assert page_state(view) == {**state, "status": view.figure.status}  # every value as it was
    assert keyspace() == before  # nothing refilled for the refused value
    view.figure.set_state({"jobs": 30})  # the next good value ends the refusal, and refills
    assert view.figure.status == "" and sum(view.counts.values()) == 30


@pytest.mark.parametrize("moves, error, fragment", [
    ({"tiers": 9}, ValueError, "tiers must be in 1..8, got 9"),
    ({"jobs": 20, "start": START_MAX + 1}, ValueError, "start must be in 0..4,294,962,295"),  # jobs not moved either
    ({"edge": 0}, ValueError, "edge must be in 1..7"),
    ({"jobs": True}, TypeError, "bool"),
    ({"tiers": 2.0}, TypeError, "float"),
])
def test_set_refuses_what_no_slider_can_show_and_changes_nothing(demo, keyspace, moves, error, fragment):
    view = BandsView(demo, tiers=3, jobs=40, start=9)
    state = page_state(view)
    with assert_refused(error, re.escape(fragment), keyspace):
        view.set(**moves)
    assert page_state(view) == state


def test_set_moves_as_the_page_does_and_takes_numpy_integers(demo):
    view = BandsView(demo, tiers=np.int64(3), jobs=np.int64(20), start=np.int64(5), seed=np.int64(3))
    assert sum(view.counts.values()) == 20 and type(view.figure.tiers) is int
    view.set(tiers=np.int8(2), jobs=np.uint16(30), edge=np.int64(2))
    assert view.figure.ran == {"tiers": 2, "jobs": 30, "start": 5} and sum(view.counts.values()) == 30
    assert repr(view) == "BandsView(tiers=2, jobs=30, start=5)"


def test_a_failing_refill_is_one_line_in_the_view(demo):
    view = BandsView(demo, tiers=2, jobs=20)

    def boom(*args, **kwargs):
        raise RuntimeError("Redis went away\nsecond line")

    demo.reset = boom
    view.status.note("a stale note")
    view.figure.set_state({"jobs": 30})  # must not raise out of the callback
    assert view.figure.status == view.status.text == "error: RuntimeError: Redis went away"
    assert view.figure.ran["jobs"] == 20  # the page still draws the jobs Redis held


def test_edge_text_is_one_apart():
    text = BandsView.edge_text(None, 3)  # pure: needs no Redis
    assert f"{priority_score(3, COUNTER_MASK):,}" in text and text.endswith("gap: 1")


def test_the_view_records_what_it_showed(demo):
    data, metadata = BandsView(demo, tiers=4, jobs=200, start=0)._repr_mimebundle_()
    shown = metadata["echomq_viz"]
    assert data["text/plain"] == shown["view"] == "BandsView(tiers=4, jobs=200, start=0)"
    assert list(shown["values"].values()) == [{"tiers": 4, "jobs": 200, "start": 0, "edge": 1}]
    assert "image/png" not in data  # the still is the page's own, made when the notebook is stored
