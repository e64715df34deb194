"""The one visual system (echomq_viz.figures.visual): sizes that stay legible on the
page, WCAG contrast, one notation for powers and thousands; and every figure
the package draws held to them."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from echomq_viz.figures import double_plots, plots, queue_plots, visual
from echomq_viz.core.colours import tier_color


def test_the_smallest_size_is_legible_at_the_views_dpi():
    for size in (visual.SMALL, visual.TEXT, visual.TITLE):
        assert visual.px(size) >= visual.MIN_TEXT_PX
    assert visual.px(8) < visual.MIN_TEXT_PX  # the 8 pt the figures used to have was too small


@pytest.mark.parametrize("a, b, ratio", [("black", "white", 21.0), ("#777777", "#777777", 1.0),
                                         ("#767676", "white", 4.54), ("#00742d", "black", 3.54)])
def test_contrast_ratio_is_wcags(a, b, ratio):
    assert visual.contrast_ratio(a, b) == pytest.approx(ratio, abs=0.01)
    assert visual.contrast_ratio(b, a) == pytest.approx(ratio, abs=0.01)


def test_text_on_any_fill_reads_at_4_5_or_more():
    for grey in np.linspace(0, 1, 101):
        fill = (grey, grey, grey)
        assert visual.contrast_ratio(visual.text_color_on(fill), fill) >= 4.5
    assert visual.text_color_on(tier_color(2)) == "white"  # the dark green that had black labels at 3.5:1


@pytest.mark.parametrize("call, text", [
    (lambda: visual.power(2, 53), "2⁵³"), (lambda: visual.power(2, 21), "2²¹"), (lambda: visual.power(10, -3), "10⁻³"),
    (lambda: visual.thousands(2**32 - 1), "4,294,967,295"), (lambda: visual.thousands(np.int64(2097152)), "2,097,152"),
    (lambda: visual.plain_number(200.0), "200"), (lambda: visual.plain_number(1e5), "100,000"),
    (lambda: visual.plain_number(0.5), "0.5"), (lambda: visual.plain_formatter()(60.0), "60"),
])
def test_one_notation(call, text):
    assert call() == text


def test_smallest_text_is_measured_in_page_pixels():
    fig = Figure(dpi=96)
    ax = fig.add_subplot()
    ax.set_title("big", fontsize=20)
    ax.text(0.5, 0.5, "tiny", fontsize=7)
    ax.text(0.5, 0.2, "gone", fontsize=5, visible=False)
    ax.tick_params(labelsize=12)
    assert visual.smallest_text_px(fig) == (pytest.approx(7 * 96 / 72), "tiny")
    fig.set_dpi(192)  # a canvas on a HiDPI screen doubles the dpi, the page shows it at half
    fig._original_dpi = 96
    assert visual.smallest_text_px(fig)[0] == pytest.approx(7 * 96 / 72)


# -- every figure, held to the system --------------------------------------------------------


def _drawn(draw) -> Figure:
    fig = Figure(figsize=(8.4, 3.6), dpi=visual.DPI)
    draw(fig)
    return fig


FIGURES = {
    "bit strip": lambda fig: plots.draw_bit_strip(fig.add_axes((0.05, 0.3, 0.9, 0.4)), 3, 7),
    "staircase": lambda fig: plots.draw_staircase(fig.add_subplot(), range(1, 7), 2, 9),
    "score pair": lambda fig: plots.draw_score_pair(fig.add_subplot(), (1, 4_000_000_000), (2, 1)),
    "bands": lambda fig: plots.update_bands(plots.draw_bands(fig.add_subplot(), 4), [2**32 + 5, 3 * 2**32 + 9], 4),
    "bands up close": lambda fig: plots.update_bands(plots.draw_bands(fig.add_subplot(), 4, zoomed=True),
                                                     [2**32 + 5, 3 * 2**32 + 9], 4),
    "frontier": lambda fig: plots.draw_frontier(fig.add_subplot(), 2**21, range(4, 12)),
    "tier boundary": lambda fig: plots.draw_tier_boundary(fig.add_axes((0.6, 0.2, 0.3, 0.3)), 1),
    "double bits": lambda fig: double_plots.draw_double_bits(fig.add_axes((0.2, 0.3, 0.7, 0.4)), 2**53 + 1, 2.0**53),
    "spacing": lambda fig: double_plots.draw_spacing(fig.add_subplot(), 2.0**53),
    "bit budget": lambda fig: double_plots.draw_bit_budget(fig.add_axes((0.05, 0.3, 0.9, 0.3)), (11, 10, 32)),
    "queue map": lambda fig: queue_plots.update_queue_map(
        queue_plots.draw_queue_map(fig, (0.14, 0.3, 0.84, 0.58)), np.array([1, 2, 2**21]),
        np.array([1, 40, 2**32 - 499]), ahead=np.array([False, False, True]), pc_counter=41),
}


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_text_is_11_px_or_more(name):
    size, text = visual.smallest_text_px(_drawn(FIGURES[name]))
    assert size >= visual.MIN_TEXT_PX, f"{name}: {text!r} is {size:.1f} px"


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_text_reads_on_what_it_stands_on(name):
    """Text on a filled box (a job's tier colour) against that fill, other text against the white figure."""
    fig = _drawn(FIGURES[name])
    boxes = [patch for ax in fig.axes for patch in ax.patches if patch.get_facecolor()[3] == 1]
    for text in visual.figure_texts(fig):
        x, y = text.get_window_extent().get_points().mean(axis=0)
        under = [box for box in boxes if box.contains_point((x, y))]
        background = under[-1].get_facecolor() if under else "white"
        ratio = visual.contrast_ratio(text.get_color(), background)
        assert ratio >= visual.MIN_CONTRAST, f"{name}: {text.get_text()!r} at {ratio:.2f}:1"


def test_no_other_notation_in_figure_text():
    for name, draw in FIGURES.items():
        for text in visual.figure_texts(_drawn(draw)):
            words = text.get_text()
            assert "^" not in words and "**" not in words and "0x100000000" not in words, (name, words)
            assert "_" not in words.replace("\n", ""), (name, words)


def _fits_and_reads(view, folder) -> None:
    """A view's figure fits a 900 px output and every text reads: drawn in the page
    (its module's SVG) or by matplotlib at its dpi."""
    from echomq_viz.widgets.page_view import PageView
    from page_runner import page_view_problems

    if isinstance(view, PageView):
        assert page_view_problems(view, folder) == [], repr(view)
        return
    fig = view.fig
    assert fig.get_figwidth() * fig.dpi <= visual.MAX_FIGURE_PX, repr(view)
    size, text = visual.smallest_text_px(fig)
    assert size >= visual.MIN_TEXT_PX, f"{view!r}: {text!r} is {size:.1f} px"


def test_the_view_figures_fit_a_900_px_output(tmp_path):
    """Every view's figure leaves room in a 900 px output area and reads (the
    views that need no Redis are built here; the browser tests measure the rest)."""
    from echomq_viz.widgets import ComparisonView, DoubleView, FrontierView, HeroView, IncludeGraphView

    for view in (HeroView(), ComparisonView(), DoubleView(), FrontierView(), IncludeGraphView()):
        _fits_and_reads(view, tmp_path)


def _live_views(r):
    """Every view that needs Redis, built as its notebook builds it (a live server of conftest)."""
    from echomq_viz.experiments.designs import DesignRunner
    from echomq_viz.core.keys import Keys
    from echomq_viz.experiments.live import Demo, seeded_priorities
    from echomq_viz.experiments.paths import ScoringPaths
    from echomq_viz.widgets import (BandsView, ConsumeView, DesignsView, InspectorView, PackingView, PathView,
                                    WrapView)

    demo = Demo("viz-test-visual", client=r)
    demo.reset()
    yield BandsView(demo, tiers=4, jobs=200, start=0, seed=4)
    yield ConsumeView(demo, priorities=seeded_priorities(seed=3, count=12, tiers=(1, 2, 3)), waiting=1)
    yield WrapView(demo, start=2**32 - 3, jobs=6, priority=3)
    yield PathView(ScoringPaths(demo), "same tier")
    yield DesignsView(DesignRunner(r), scenario="fifo")
    yield PackingView(demo)
    demo.reset()
    demo.add_batch(seeded_priorities(seed=6, count=40, tiers=(1, 2, 3)))
    for n in range(6):
        demo.add_past_the_limit_for_teaching(f"too-far-{n}", 2**21)
    demo.client.hset(Keys.job(demo.ctx, "3"), "priority", 7)
    demo.set_counter(2**32 - 500)
    demo.add("late-arrival", priority=2)
    inspector = InspectorView(queue="{" + demo.queue + "}")
    inspector._connect = lambda: r  # the conftest server, whatever REDIS_URL says
    inspector.inspect()
    yield inspector
    demo.reset()


def test_the_live_view_figures_fit_and_read(r, tmp_path):
    """The views that need Redis, in the state their notebooks leave them: as wide as
    a 900 px output allows, every text 11 px or more; 06's figure draws every job read."""
    seen = []
    for view in _live_views(r):
        seen.append(type(view).__name__)
        _fits_and_reads(view, tmp_path)
        if type(view).__name__ == "InspectorView":  # drawn in the page, from what the kernel sent
            drawn = view.figure.queue_map
            assert len(drawn["points"]) == view.report.total == 47
            assert len(drawn["ranges"]) == 2  # 1..46 and 2³² − 499: the counter axis breaks
            assert drawn["rows"] == ["1", "2", "3", str(2**21)]
    assert len(seen) == 7 and seen[-1] == "InspectorView"
