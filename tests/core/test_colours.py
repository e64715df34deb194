"""The tier colours (echomq_viz.core.colours) for readers with a colour-vision
deficiency: every two tier colours stay at least ΔE 10 apart in CAM02-UCS
under simulated deuteranopia, protanopia and tritanopia (severity 100, via
``colorspacious``) as well as for normal vision, and neighbouring tiers and
their bands differ in lightness and pattern too, so no meaning rests on hue alone."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest
from colorspacious import cspace_convert
from matplotlib.colors import to_rgb, to_rgba

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from echomq_viz.core import colours
from echomq_viz.figures import plots  # noqa: E402

VISIONS = {
    "normal": None,
    **{name: {"name": "sRGB1+CVD", "cvd_type": f"{name}nomaly", "severity": 100}
       for name in ("deutera", "prota", "trita")},
}
MIN_DELTA_E = 10  # CAM02-UCS: clearly told apart
MIN_NEIGHBOUR_LIGHTNESS = 10  # J' between tiers p and p + 1, under every vision
MIN_BAND_LIGHTNESS = 4  # J' between the tinted fills of neighbouring bands
PERIOD = len({colours.tier_color(p) for p in range(1, 1000)})


def ucs(rgb, vision: str) -> np.ndarray:
    """CAM02-UCS (J', a', b') of sRGB colours as a reader with ``vision`` sees them."""
    rgb = np.atleast_2d(np.asarray(rgb, dtype=float))
    space = VISIONS[vision]
    if space is not None:
        rgb = np.clip(cspace_convert(rgb, space, "sRGB1"), 0, 1)
    return cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def delta_e(first, second, vision: str) -> float:
    return float(np.linalg.norm(ucs(to_rgb(first), vision) - ucs(to_rgb(second), vision)))


def over_white(rgba) -> tuple[float, float, float]:
    """What a translucent fill looks like on the white axes."""
    *rgb, alpha = to_rgba(rgba)
    return tuple(alpha * c + (1 - alpha) for c in rgb)


def test_the_palette_repeats_every_ten_tiers():
    assert PERIOD == 10
    assert [colours.tier_color(p) for p in range(1, 11)] == [colours.tier_color(p) for p in range(11, 21)]


@pytest.mark.parametrize("vision", VISIONS)
def test_every_two_tier_colours_stay_apart(vision):
    """Up to 20 tiers are drawn together (staircase, inspector): every pair of
    the ten colours, and each against the wait list's grey beside them."""
    palette = [colours.tier_color(p) for p in range(1, PERIOD + 1)] + [colours.WAIT_COLOR]
    close = [(a, b, round(delta_e(a, b, vision), 1)) for a, b in itertools.combinations(palette, 2)
             if delta_e(a, b, vision) < MIN_DELTA_E]
    assert not close, f"{vision}: tier colours closer than ΔE {MIN_DELTA_E}: {close}"


@pytest.mark.parametrize("vision", VISIONS)
def test_tier_colours_stand_out_on_white(vision):
    weak = [(p, round(delta_e(colours.tier_color(p), "white", vision), 1)) for p in range(1, PERIOD + 1)
            if delta_e(colours.tier_color(p), "white", vision) < 2 * MIN_DELTA_E]
    assert not weak, f"{vision}: tier marks too close to the white page: {weak}"


@pytest.mark.parametrize("vision", VISIONS)
def test_neighbouring_tiers_differ_in_lightness(vision):
    lightness = [ucs(to_rgb(colours.tier_color(p)), vision)[0, 0] for p in range(1, 2 * PERIOD + 2)]
    flat = [(p, p + 1, round(abs(lightness[p - 1] - lightness[p]), 1)) for p in range(1, 2 * PERIOD + 1)
            if abs(lightness[p - 1] - lightness[p]) < MIN_NEIGHBOUR_LIGHTNESS]
    assert not flat, f"{vision}: neighbouring tiers of nearly the same lightness (J'): {flat}"


def test_tier_colors_is_tier_color_for_many():
    priorities = np.arange(1, 25)
    assert np.array_equal(colours.tier_colors(priorities), np.array([to_rgba(colours.tier_color(p)) for p in priorities]))


@pytest.fixture
def bands():
    fig, ax = plt.subplots()
    drawn = plots.draw_bands(ax, 12)
    yield drawn
    plt.close(fig)


def test_neighbouring_bands_differ_in_pattern(bands):
    hatches = [span.get_hatch() or "" for span in bands.spans]
    assert all(a != b for a, b in zip(hatches, hatches[1:])), f"neighbouring bands share a pattern: {hatches}"


@pytest.mark.parametrize("vision", VISIONS)
def test_neighbouring_bands_differ_in_lightness(bands, vision):
    fills = [ucs(over_white(span.get_facecolor()), vision)[0, 0] for span in bands.spans]
    flat = [(p, p + 1, round(abs(a - b), 1)) for p, (a, b) in enumerate(zip(fills, fills[1:]), start=1)
            if abs(a - b) < MIN_BAND_LIGHTNESS]
    assert not flat, f"{vision}: neighbouring band fills of nearly the same lightness (J'): {flat}"


def test_band_pattern_is_drawn_in_the_tier_colour(bands):
    for p, span in enumerate(bands.spans, start=1):
        if span.get_hatch():
            assert to_rgb(span.get_edgecolor()) == to_rgb(colours.tier_color(p))
            assert span.get_edgecolor()[3] > span.get_facecolor()[3]  # the lines darker than the fill


@pytest.mark.parametrize("priority", range(PERIOD + 1))
def test_a_label_on_every_tier_colour_reads_at_4_5_or_more(priority):
    """A job box's label (the queue strips the pages draw) in the text colour
    chosen for its fill; priority 0 is the wait list's grey."""
    from echomq_viz.figures import visual

    fill = colours.tier_color(priority) if priority else colours.WAIT_COLOR
    assert visual.contrast_ratio(visual.text_color_on(fill), fill) >= visual.MIN_CONTRAST
