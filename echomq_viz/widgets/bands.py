"""Notebook 04's bands: tiers as bands of the score axis, with real jobs inside them."""

from __future__ import annotations

import html

import ipywidgets as w

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_int
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.core.score import COUNTER_MASK, priority_score, split_score
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, require_demo, tiers_text

__all__ = ["BandsView"]


class BandsView(View):
    """Tiers as bands of the score axis, with real jobs from the demo queue
    as points inside them, and a zoom on the edge between two tiers.

    Sliders act on release: each change refills the demo queue on Redis.
    """

    def __init__(self, demo: Demo, *, tiers: int = 4, jobs: int = 200, start: int = 0,
                 seed: int = 4) -> None:
        demo = require_demo(demo)
        tiers = check_int("tiers", tiers, 1, 8)
        jobs = check_int("jobs", jobs, 10, 5000)
        start = check_int("start", start, 0, COUNTER_MASK - 5000)
        seed = check_int("seed", seed, 0, 2**32)
        super().__init__()
        self.demo, self.seed = demo, seed
        self.counts: dict[int, int] = {}
        self.fig = figure(8.4, 4.6)
        self.close_up = plots.draw_bands(self.fig.add_axes((0.08, 0.11, 0.5, 0.8)), 8, zoomed=True)
        self.full = plots.draw_bands(self.fig.add_axes((0.69, 0.52, 0.29, 0.39)), 8)
        self.close_up.points.axes.set_title("the jobs up close", fontsize=10)
        self.full.points.axes.set_title("at full scale", fontsize=10)
        self.edge = plots.draw_tier_boundary(self.fig.add_axes((0.69, 0.11, 0.29, 0.13)), 1)
        self.tiers = w.IntSlider(value=tiers, min=1, max=8, description="tiers",
                                 continuous_update=False, style=SLIDER_STYLE, layout=WIDE)
        self.jobs = w.IntSlider(value=jobs, min=10, max=5000, step=10, description="jobs",
                                continuous_update=False, style=SLIDER_STYLE, layout=WIDE)
        self.start = w.IntSlider(value=start, min=0, max=COUNTER_MASK - 5000, description="pc starts at",
                                 readout_format=",d", continuous_update=False, style=SLIDER_STYLE,
                                 layout=WIDE)
        self.counts_label = w.HTML()
        self.widget = w.VBox([self.tiers, self.jobs, self.start, self.fig.canvas, self.caption,
                              self.counts_label, self.status.widget])
        self._on_change([self.tiers, self.jobs, self.start], self.refresh, disable=True)
        self.refresh()

    def __repr__(self) -> str:
        return (f"BandsView(tiers={self.tiers.value}, jobs={self.jobs.value}, "
                f"start={self.start.value})")

    def refresh(self) -> dict[int, int]:
        """Refill the demo queue on Redis and redraw from what it holds."""
        tiers = self.tiers.value
        self.demo.reset()
        self.demo.set_counter(self.start.value)
        self.demo.add_batch(seeded_priorities(self.seed, self.jobs.value, range(1, tiers + 1)))
        scores = [e.score for e in self.demo.entries()]
        plots.update_bands(self.close_up, scores, tiers)
        plots.update_bands(self.full, scores, tiers)
        self.counts = self.demo.counts(range(1, tiers + 1))
        self.counts_label.value = html.escape(self.counts_text())
        self._redraw_figure()
        return self.counts

    def counts_text(self) -> str:
        parts = ", ".join(f"tier {p}: {n}" for p, n in self.counts.items())
        return f"getCountsPerPriority-2 on Redis: {parts}"

    def edge_text(self, priority: int = 1) -> str:
        """The largest score of a tier against the smallest of the next."""
        top = priority_score(priority, COUNTER_MASK)
        bottom = priority_score(priority + 1, 0)
        assert split_score(top)[0] == priority and split_score(bottom)[0] == priority + 1
        return (f"largest tier-{priority} score   {top:,}\n"
                f"smallest tier-{priority + 1} score  {bottom:,}\n"
                f"gap: {bottom - top}")

    def describe(self) -> str:
        tiers, total = self.tiers.value, sum(self.counts.values())
        parts = ", ".join(f"tier {p}: {n:,}" for p, n in self.counts.items())
        return (f"{tiers_text(tiers).capitalize()} as bands of the score axis with {total:,} jobs as points, each inside "
                f"its tier's band ({parts}), up close and at full scale; an inset shows the largest "
                "tier-1 score and the smallest tier-2 score one apart.")
