"""Notebook 10's views: every library's pop order, and the cost as the queue grows."""

from __future__ import annotations

from typing import Sequence

import ipywidgets as w

from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import WIDE, View, pre_html
from echomq_viz.figures import visual
from echomq_viz.peers import plots
from echomq_viz.peers.runs import PeerRun
from echomq_viz.peers.table import details, order_verdict

__all__ = ["OrdersView", "GrowthView", "WIDTH"]

WIDTH = visual.MAX_FIGURE_PX / visual.DPI  # inches: the widest figure the project's pages fit


class OrdersView(View):
    """One strip per library, the right order on top; pick a library to read
    its keys and commands under the figure."""

    def __init__(self, runs: Sequence[PeerRun]) -> None:
        runs = list(runs)
        if not runs or not all(isinstance(run, PeerRun) for run in runs):
            raise TypeError("runs must be a non-empty list of PeerRun, as observe_all returns")
        super().__init__()
        self.runs = runs
        tiers = {job.name: job.tier for job in runs[0].jobs}
        rows = len(runs) + 1
        self.fig = figure(WIDTH, 0.62 * rows + 0.3)
        height = 1 / rows
        self.strips = []
        for i, (title, order) in enumerate([("a correct priority queue: tier, then arrival", runs[0].right)]
                                           + [(f"{run.label}: {order_verdict(run)}", run.order) for run in runs]):
            ax = self.fig.add_axes((0.01, 1 - (i + 1) * height + 0.005, 0.98, height * 0.6))
            self.strips.append(plots.draw_order_strip(ax, title, order, tiers,
                                                      right=None if i == 0 else runs[0].right))
        self.library = w.Dropdown(options=[(run.label, i) for i, run in enumerate(runs)], value=0,
                                  description="library", layout=WIDE)
        self.panel = w.HTML()
        self.widget = w.VBox([self.fig.canvas, self.caption, self.library, self.panel, self.status.widget])
        self._on_change([self.library], self.show)
        self.show()

    def __repr__(self) -> str:
        return f"OrdersView({len(self.runs)} libraries, showing {self.runs[self.library.value].label!r})"

    def select(self, key: str) -> "OrdersView":
        """Show the library whose key (e.g. ``"rq"``) is given."""
        index = next((i for i, run in enumerate(self.runs) if run.key == key), None)
        if index is None:
            raise ValueError(f"key must be one of {', '.join(run.key for run in self.runs)}, got {key!r}")
        with self._quietly():
            self.library.value = index
        self.show()
        return self

    def show(self) -> None:
        chosen = self.library.value
        for i, strip in enumerate(self.strips[1:]):
            strip.boxes[0].axes.title.set_fontweight("bold" if i == chosen else "normal")
        self.panel.value = pre_html(self.text())
        self._redraw_figure()

    def text(self) -> str:
        return details(self.runs[self.library.value])

    def describe(self) -> str:
        wrong = [run.label for run in self.runs if not run.correct]
        verdict = ("every library hands them out in the right order" if not wrong
                   else f"{', '.join(wrong)} hand{'s' if len(wrong) == 1 else ''} them out in another order "
                        "(its differing boxes are outlined with thick dashes)")
        return (f"The same {len(self.runs[0].jobs)} jobs in three tiers, in the order each of {len(self.runs)} "
                f"libraries popped them, one strip per library under the right order; each box names a job "
                f"(its number is its arrival) and its tier; {verdict}. "
                f"Selected: {self.runs[self.library.value].label}.")


class GrowthView(View):
    """The stored growth run: time per add and per pop against the jobs waiting,
    the client's timing on the left, Redis's own on the right, the spread between
    batches drawn as bars. Bull's least urgent add is a line of its own."""

    def __init__(self, stored: dict) -> None:
        from echomq_viz.peers.growth import series

        super().__init__()
        self.stored = stored
        self.fig = figure(WIDTH, 7.2)
        grid = self.fig.subplots(2, 2, sharex=True)
        handles = []
        for row, kind in enumerate(("add", "pop")):
            for column, prefix in enumerate(("", "server_")):
                lines = series(stored, prefix + kind)
                if kind == "add":
                    least = series(stored, prefix + "add_least")
                    for label in [label for label in least if label.startswith("Bull (")]:
                        lines[f"{label}, least urgent add"] = least[label]
                who = "client" if not prefix else "Redis (SLOWLOG)"
                what = "most urgent add" if kind == "add" else "pop"
                drawn = plots.draw_growth(grid[row][column], lines, f"{what} · {who}")
                if row == 0 and column == 0:
                    handles = drawn
                if column:
                    grid[row][column].set_ylabel("")
                if row == 0:
                    grid[row][column].set_xlabel("")
        self.fig.legend(handles, [line.get_label() for line in handles], loc="lower center", ncol=3,
                        fontsize=visual.SMALL, frameon=False)
        self.fig.subplots_adjust(left=0.09, right=0.96, top=0.95, bottom=0.2, hspace=0.25, wspace=0.24)
        self.widget = w.VBox([self.fig.canvas, self.caption, self.status.widget])
        self._redraw_figure()

    def __repr__(self) -> str:
        return f"GrowthView(stored sizes {self.stored['sizes']}, {self.stored['batches']} batches a size)"

    def describe(self) -> str:
        names = ", ".join(entry["label"] for entry in self.stored["libraries"].values())
        return ("Four log-log plots of microseconds per operation against the jobs already waiting, from the "
                f"stored run up to {max(self.stored['sizes']):,} jobs: the most urgent add on top, the pop "
                "below; the client's timing on the left, Redis's own time per operation on the right. Each "
                f"point is the median of {self.stored['batches']} batches, its bar the lowest to the highest "
                f"batch. One line per library, each with its own marker and dash: {names}; and Bull's least "
                "urgent add.")
