"""Argument checks of echomq_viz.figures.plots (the figures themselves are tested with the views)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure  # no pyplot: no backend, no global state

from test_checks import assert_refuses
from echomq_viz.figures import plots
from echomq_viz.core.score import PRIORITY_LIMIT


@pytest.fixture
def ax():
    return Figure().add_subplot()


def test_the_tier_boundary_takes_every_exact_edge(ax):
    artists = plots.draw_tier_boundary(ax, np.int64(PRIORITY_LIMIT - 1), reach=2)
    assert len(artists) == 3 and ax.get_xlabel() == f"score − {PRIORITY_LIMIT:,} × 2³²"
    labels = [t.get_text() for t in ax.texts]  # direct labels, no legend over the frame
    assert labels == [f"tier {PRIORITY_LIMIT - 1:,}: counters\n2³² − 2 … 2³² − 1", f"tier {PRIORITY_LIMIT:,}: counters\n0 … 1"]
    assert ax.get_legend() is None


@pytest.mark.parametrize("call, error, message", [
    (lambda ax: plots.draw_tier_boundary(ax, PRIORITY_LIMIT), ValueError,
     "priority must be in 0..2,097,150 (the next tier is exact too), got 2,097,151"),
    (lambda ax: plots.draw_tier_boundary(ax, 1, reach=0), ValueError, "reach must be in 1..64, got 0"),
    (lambda ax: plots.draw_bands(ax, True), TypeError, "tiers must be an int, got bool True"),
], ids=["boundary past the limit", "reach 0", "tiers True"])
def test_bad_sizes_are_refused_before_drawing(ax, call, error, message):
    before = ax.get_children()
    assert_refuses(lambda: call(ax), error, message)
    assert ax.get_children() == before  # nothing drawn


# -- the bit strip's image, drawn by lookup ------------------------------------------------


def _strip_pixels(priority: int, counter: int, *, plain: bool, size=(8.0, 1.2), dpi=96, **image) -> np.ndarray:
    """The strip drawn with its lookup image, or (``plain``) by matplotlib's own AxesImage."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import AxesImage

    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    strip = plots.draw_bit_strip(fig.add_subplot(), priority, counter)
    strip.image.set(**image)
    if plain:
        strip.image.__class__ = AxesImage  # same state, matplotlib's drawing
    fig.canvas.draw()
    plots.update_bit_strip(strip, priority, counter ^ 0x5A5A5A5A)  # a second draw: the lookup reused
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("priority, counter", [(1, 0), (6, 2**32 - 1), (PRIORITY_LIMIT, 123_456_789), (3, 2**31)])
@pytest.mark.parametrize("size, dpi", [((8.0, 1.2), 96), ((5.3, 0.9), 72), ((11.1, 2.0), 110)])
def test_the_strip_image_has_the_pixels_matplotlib_draws(priority, counter, size, dpi):
    ours = _strip_pixels(priority, counter, plain=False, size=size, dpi=dpi)
    assert np.array_equal(ours, _strip_pixels(priority, counter, plain=True, size=size, dpi=dpi))


def test_the_strip_image_uses_its_lookup_and_falls_back_where_colours_blend(ax):
    ax.figure.set_dpi(96)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(ax.figure)
    strip = plots.draw_bit_strip(ax, 2, 77)
    ax.figure.canvas.draw()
    assert strip.image._layout is None  # drawn once: by matplotlib, nothing probed
    ax.figure.canvas.draw()
    assert strip.image._layout[1] is not None  # nearest neighbour: one cell per pixel, looked up
    blended = dict(interpolation="bilinear")  # neighbouring cells mix: matplotlib draws it
    assert np.array_equal(_strip_pixels(2, 77, plain=False, **blended), _strip_pixels(2, 77, plain=True, **blended))


@pytest.mark.slow  # 43 positions, each drawn twice: about five seconds
def test_the_sliding_arrow_draws_what_matplotlib_draws_at_every_position():
    """SlidingArrow finds its shape once and moves it: the pixels are those of
    matplotlib's own FancyArrowPatch, found afresh for every position,
    through priority and counter moves, a change of size and a change of style."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import FancyArrowPatch

    from echomq_viz.figures.fast_artists import SlidingArrow

    figures = []
    for kind in (SlidingArrow, FancyArrowPatch):
        fig = Figure(figsize=(8, 3), dpi=96)
        FigureCanvasAgg(fig)
        stairs = plots.draw_staircase(fig.add_subplot(), range(1, 7), 1, 1)
        stairs.jump.__class__ = kind
        figures.append((fig, stairs))
    rng = np.random.default_rng(8)
    moves = [(6, 2**32 - 1), (5, 2**32 - 1), (1, 0)] + [
        (int(p), int(c)) for p, c in zip(rng.integers(1, 7, 40), rng.integers(0, 2**32, 40))]
    for step, (priority, counter) in enumerate(moves):
        if step == 20:
            for fig, stairs in figures:
                fig.set_size_inches(6, 4)
        if step == 30:
            for fig, stairs in figures:
                stairs.jump.set_arrowstyle("-|>", head_length=0.6)
        pixels = []
        for fig, stairs in figures:
            plots.update_staircase(stairs, priority, counter)
            fig.canvas.draw()
            pixels.append(np.asarray(fig.canvas.buffer_rgba()).copy())
        assert np.array_equal(*pixels), (step, priority, counter)
    assert figures[0][1].jump._shape is not None  # it did slide a shape found before


def test_a_cell_image_of_several_rows_has_the_pixels_matplotlib_draws():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import ListedColormap
    from matplotlib.image import AxesImage

    from echomq_viz.figures.fast_artists import CellImage

    codes = np.random.default_rng(3).integers(0, 4, (3, 7))
    pictures = []
    for plain in (False, True):
        fig = Figure(figsize=(3, 2), dpi=80)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        image = CellImage(ax, cmap=ListedColormap(["#000000", "#ff0000", "#00ff00", "#0000ff"]),
                          interpolation="nearest")
        image.set_data(codes)
        image.set_clim(0, 3)
        image.set_extent((0, 7, 0, 3))
        ax.add_image(image)
        if plain:
            image.__class__ = AxesImage
        fig.canvas.draw()
        image.set_data(codes[::-1])
        fig.canvas.draw()  # the second draw: looked up
        pictures.append(np.asarray(fig.canvas.buffer_rgba()).copy())
        if not plain:
            assert image._layout[1] is not None and not image._rows_alike
    assert np.array_equal(*pictures)
