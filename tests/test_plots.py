"""Argument checks of echomq_viz.plots (the figures themselves are tested with the views)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure  # no pyplot: no backend, no global state

from test_checks import assert_refuses
from echomq_viz import plots
from echomq_viz.score import PRIORITY_LIMIT


@pytest.fixture
def ax():
    return Figure().add_subplot()


def test_the_tier_boundary_takes_every_exact_edge(ax):
    artists = plots.draw_tier_boundary(ax, np.int64(PRIORITY_LIMIT - 1), reach=2)
    assert len(artists) == 3 and ax.get_xlabel().startswith(f"score − {PRIORITY_LIMIT * 2**32:,}")


@pytest.mark.parametrize("call, error, message", [
    (lambda ax: plots.draw_tier_boundary(ax, PRIORITY_LIMIT), ValueError,
     "priority must be in 0..2_097_150 (the next tier is exact too), got 2_097_151"),
    (lambda ax: plots.draw_tier_boundary(ax, 1, reach=0), ValueError, "reach must be in 1..64, got 0"),
    (lambda ax: plots.draw_queue_strip(ax, 0), ValueError, "capacity must be 1 or more, got 0"),
    (lambda ax: plots.draw_bands(ax, True), TypeError, "tiers must be an int, got bool True"),
], ids=["boundary past the limit", "reach 0", "capacity 0", "tiers True"])
def test_bad_sizes_are_refused_before_drawing(ax, call, error, message):
    before = ax.get_children()
    assert_refuses(lambda: call(ax), error, message)
    assert ax.get_children() == before  # nothing drawn
