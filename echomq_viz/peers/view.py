"""Notebook 10's views: every library's pop order, drawn in the page
(``echomq_viz/widgets/page/orders.js``), and the cost as the queue grows, a
static matplotlib figure no control moves."""

from __future__ import annotations

from typing import Sequence

import ipywidgets as w
import traitlets

from echomq_viz.core.checks import check_str
from matplotlib.figure import Figure

from echomq_viz.widgets.page_view import PageFigure, PageView
from echomq_viz.widgets.view import View, static_image
from echomq_viz.figures import visual
from echomq_viz.peers import plots
from echomq_viz.peers.runs import PeerRun
from echomq_viz.peers.table import details, order_verdict

__all__ = ["OrdersView", "OrdersFigure", "GrowthView", "WIDTH", "MAX_JOBS"]

WIDTH = visual.MAX_FIGURE_PX / visual.DPI  # inches: the widest figure the project's pages fit
MAX_JOBS = 96  # four lines of 24 boxes a strip (page/orders.js)
_KERNEL_ONLY = ("right", "tiers", "libraries")  # what the libraries did: the page never writes it


class OrdersFigure(PageFigure):
    """The pop orders' page model: the jobs in the right order with their
    tiers, each library's order, verdict and details (the kernel's alone,
    sent once), and the library chosen."""

    module = "orders"
    kernel_source = ", from the libraries' runs"
    right = traitlets.List().tag(sync=True)  # job names in the right order
    tiers = traitlets.Dict().tag(sync=True)  # job name -> tier
    libraries = traitlets.List().tag(sync=True)  # [{key, label, verdict, order, details}, ...]
    library = traitlets.Int(0).tag(sync=True)  # the chosen one's index: the page's, never sent

    def __init__(self, **data) -> None:
        self.__dict__["_writing"] = True  # the runs are written once, here (kernel_writes needs the widget made)
        try:
            super().__init__(**data)
        finally:
            self.__dict__["_writing"] = False

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"library": (0, max(len(self.libraries) - 1, 0))}

    @traitlets.validate("library")
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate(*_KERNEL_ONLY)
    def _from_the_runs(self, proposal: dict) -> object:
        """What the libraries did is written by the kernel alone; the page sending it is refused."""
        return self._kernel_only(proposal)


class OrdersView(PageView):
    """One strip per library, the right order on top; pick a library (the
    menu, or a click on its strip) to read its keys and commands under the
    figure. Drawn in the page from the runs, sent once: choosing redraws
    there and sends the kernel nothing."""

    shown_traits = ("library",)

    def __init__(self, runs: Sequence[PeerRun]) -> None:
        if not isinstance(runs, (list, tuple)) or not runs or not all(isinstance(run, PeerRun) for run in runs):
            raise TypeError("runs must be a non-empty list of PeerRun, as observe_all returns")
        runs = list(runs)
        if any(run.jobs != runs[0].jobs for run in runs):
            raise ValueError("runs must all be of one workload: observe_all(makers, jobs) with the same jobs")
        if len(runs[0].jobs) > MAX_JOBS:
            raise ValueError(f"runs must be of at most {MAX_JOBS} jobs (four lines of boxes a strip), "
                             f"got {len(runs[0].jobs)}")
        self.runs = runs
        super().__init__(OrdersFigure(
            right=list(runs[0].right), tiers={job.name: job.tier for job in runs[0].jobs},
            libraries=[{"key": run.key, "label": run.label, "verdict": order_verdict(run), "order": list(run.order),
                        "details": details(run)} for run in runs]))

    def __repr__(self) -> str:
        return f"OrdersView({len(self.runs)} libraries, showing {self.chosen.label!r})"

    @property
    def chosen(self) -> PeerRun:
        """The library the view shows (as the kernel last heard: a choice in the page stays there)."""
        return self.runs[self.figure.library]

    def select(self, key: str) -> "OrdersView":
        """Show the library whose key (e.g. ``"rq"``) is given, as the menu does."""
        check_str("key", key)
        index = next((i for i, run in enumerate(self.runs) if run.key == key), None)
        if index is None:
            raise ValueError(f"key must be one of {', '.join(run.key for run in self.runs)}, got {key!r}")
        self.figure.library = index
        return self

    def text(self) -> str:
        """The chosen library's keys and commands, as the page shows them under the figure."""
        return details(self.chosen)

    def describe(self) -> str:
        wrong = [run.label for run in self.runs if not run.correct]
        verdict = ("every library hands them out in the right order" if not wrong
                   else f"{', '.join(wrong)} hand{'s' if len(wrong) == 1 else ''} them out in another order "
                        f"({'its' if len(wrong) == 1 else 'their'} differing boxes are outlined with thick dashes)")
        jobs = self.runs[0].jobs
        tiers = len({job.tier for job in jobs})
        return (f"The same {len(jobs)} jobs in {tiers} tier{'s' * (tiers != 1)}, in the order each of "
                f"{len(self.runs)} libraries popped them, one strip per library under the right order; each box "
                f"names a job (its number is its arrival) and its tier; {verdict}. Selected: {self.chosen.label}.")


class GrowthView(View):
    """The stored growth run, as Redis timed it: its own time per add and per pop
    (SLOWLOG) against the jobs waiting, the spread between batches drawn as bars.
    Bull's least urgent add is a line of its own. The client's timings stay in the
    record: they move with the machine and the client library more than with the queue."""

    def __init__(self, stored: dict) -> None:
        from echomq_viz.peers.growth import series

        super().__init__()
        self.stored = stored
        self.fig = Figure(figsize=(WIDTH, 4.6), dpi=visual.DPI)
        axes = self.fig.subplots(1, 2, sharey=True)
        handles = []
        for column, kind in enumerate(("add", "pop")):
            lines = series(stored, "server_" + kind)
            if kind == "add":
                least = series(stored, "server_add_least")
                for label in [label for label in least if label.startswith("Bull (")]:
                    lines[f"{label}, least urgent add"] = least[label]
            what = "most urgent add" if kind == "add" else "pop"
            drawn = plots.draw_growth(axes[column], lines, f"{what} · Redis's own time")
            if column == 0:
                handles = drawn
            else:
                axes[column].set_ylabel("")
        self.fig.legend(handles, [line.get_label() for line in handles], loc="lower center", ncol=3,
                        fontsize=visual.SMALL, frameon=False)
        self.fig.subplots_adjust(left=0.09, right=0.97, top=0.92, bottom=0.34, wspace=0.08)
        self.widget = w.VBox([static_image(self.fig), self.caption, self.status.widget])
        self._redraw_figure()

    def __repr__(self) -> str:
        return f"GrowthView(stored sizes {self.stored['sizes']}, {self.stored['batches']} batches a size)"

    def describe(self) -> str:
        names = ", ".join(entry["label"] for entry in self.stored["libraries"].values())
        return ("Two log-log plots of Redis's own microseconds per operation (SLOWLOG) against the jobs already "
                f"waiting, from the stored run up to {max(self.stored['sizes']):,} jobs: the most urgent add on "
                f"the left, the pop on the right. Each point is the median of {self.stored['batches']} batches, "
                f"its bar the lowest to the highest batch. One line per library, each with its own marker and "
                f"dash: {names}; and Bull's least urgent add.")
