"""Notebook 10's views: every library's pop order, drawn in the page
(``echomq_viz/widgets/page/orders.js``), and the cost as the queue grows, a
static matplotlib figure no control moves, drawn once per stored run and kept
(so a kernel that finds it kept never loads matplotlib)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import ipywidgets as w
import traitlets

from echomq_viz.core.checks import check_str
from echomq_viz.widgets.page_view import PageFigure, PageView
from echomq_viz.widgets.view import View
from echomq_viz.peers.runs import PeerRun
from echomq_viz.peers.table import details, order_verdict

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["OrdersView", "OrdersFigure", "GrowthView", "growth_figure", "growth_png", "MAX_JOBS"]

MAX_JOBS = 96  # four lines of 24 boxes a strip (page/orders.js)
_KERNEL_ONLY = ("right", "tiers", "libraries")  # what the libraries did: the page never writes it


class OrdersFigure(PageFigure):
    """The pop orders' page model: the jobs in the right order with their
    tiers, each library's order, verdict and details (the kernel's alone,
    sent once), and the library chosen."""

    module = "orders"

    page_writes = ("library",)  # what its page's controls move
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


def growth_figure(stored: dict) -> "Figure":
    """The stored growth run, as Redis timed it: its own time per add and per pop (SLOWLOG)
    against the jobs waiting, the spread between batches drawn as bars; Bull's least urgent add
    a line of its own. The client's timings stay in the record: they move with the machine and
    the client library more than with the queue."""
    from matplotlib.figure import Figure

    from echomq_viz.figures import visual
    from echomq_viz.peers import plots
    from echomq_viz.peers.growth import series

    fig = Figure(figsize=(visual.MAX_FIGURE_PX / visual.DPI, 4.6), dpi=visual.DPI)
    axes = fig.subplots(1, 2, sharey=True)
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
    fig.legend(handles, [line.get_label() for line in handles], loc="lower center", ncol=3,
               fontsize=visual.SMALL, frameon=False)
    fig.subplots_adjust(left=0.09, right=0.97, top=0.92, bottom=0.34, wspace=0.1)
    return fig


def growth_png(stored: dict, cache_dir: Path | None = None) -> bytes:
    """:func:`growth_figure` as a PNG, drawn once per stored run, drawing code and matplotlib,
    then kept in the user's cache folder (as notebook 10's runs are) for every later kernel."""
    from echomq_viz.peers.npm import cache_root

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(json.dumps(stored, sort_keys=True).encode())
    for name in ("view.py", "plots.py", "growth.py"):
        digest.update((here / name).read_bytes())
    digest.update(importlib.metadata.version("matplotlib").encode())
    folder = (cache_dir or cache_root()) / "peers-runs"
    path = folder / f"growth-{digest.hexdigest()[:20]}.png"
    try:
        return path.read_bytes()
    except OSError:
        pass
    from echomq_viz.widgets.view import still_png

    png = still_png(growth_figure(stored))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(png)
        partial.replace(path)
    except OSError:  # no cache folder to be had (a read-only home): drawn for this kernel alone
        pass
    return png


class KeptPicture:
    """A figure already drawn, as its PNG: what :func:`~echomq_viz.widgets.view.still_png`
    asks of a figure (``savefig``), and its size."""

    def __init__(self, png: bytes, dpi: float) -> None:
        from PIL import Image

        self.png, self.dpi = png, dpi
        self.width_px, self.height_px = Image.open(io.BytesIO(png)).size

    def savefig(self, target, **_options) -> None:
        target.write(self.png)

    def get_figwidth(self) -> float:
        return self.width_px / self.dpi


class GrowthView(View):
    """The stored growth run, as Redis timed it (:func:`growth_figure`): a static image, drawn
    once and kept (:func:`growth_png`), and its caption."""

    DPI = 96  # echomq_viz.figures.visual.DPI: one figure pixel a CSS pixel

    def __init__(self, stored: dict) -> None:
        super().__init__()
        self.stored = stored
        self.fig = KeptPicture(growth_png(stored), self.DPI)
        image = w.Image(value=self.fig.png, format="png",
                        layout=w.Layout(width=f"{self.fig.width_px}px", max_width="100%"))
        self.widget = w.VBox([image, self.caption, self.status.widget])
        self._redraw_figure()

    def __repr__(self) -> str:
        return f"GrowthView(stored sizes {self.stored['sizes']}, {self.stored['batches']} batches a size)"

    def describe(self) -> str:
        from echomq_viz.peers.growth import series

        names = ", ".join(entry["label"] for entry in self.stored["libraries"].values())

        def ends(kind: str) -> str:  # what each line does, smallest queue to largest, in microseconds
            return "; ".join(f"{label} {points[0][1] * 1e6:,.0f} to {points[-1][1] * 1e6:,.0f}"
                             for label, points in series(self.stored, "server_" + kind).items())
        return ("Two log-log plots of Redis's own microseconds per operation (SLOWLOG) against the jobs already "
                f"waiting, from the stored run up to {max(self.stored['sizes']):,} jobs: the most urgent add on "
                f"the left, the pop on the right. Each point is the median of {self.stored['batches']} batches' "
                f"means per operation, its bar the lowest to the highest batch. One line per library, each with "
                f"its own marker and dash: {names}; and Bull's least urgent add. From the fewest jobs to the "
                f"most, in microseconds, the add: {ends('add')}. The pop: {ends('pop')}.")
