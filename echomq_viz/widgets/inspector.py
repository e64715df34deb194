"""Notebook 06's inspector: a real queue's prioritized set read (read commands only) and drawn."""

from __future__ import annotations

import os

import ipywidgets as w
import numpy as np

from echomq_viz.figures import queue_plots
from echomq_viz.core.checks import check_int, check_str
from echomq_viz.redis_side.owners import other_owners_in
from echomq_viz.redis_side.server import redact_url
from echomq_viz.widgets.canvas import figure
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, pre_html

__all__ = ["InspectorView"]


def _without_password(exc: Exception, url: str) -> Exception:
    """``exc`` itself, or the same kind of error with every password masked
    (``url``'s wherever it occurs)."""
    text = redact_url(str(exc), (url,))
    if text == str(exc):
        return exc
    try:
        return type(exc)(text)
    except Exception:  # an exception type that wants other arguments
        return RuntimeError(text)


class InspectorView(View):
    """Point at a Redis, prefix and queue; read its prioritized set (read
    commands only), draw every job (a row per tier present, the counter
    across) and list what is wrong.

    ``ECHOMQ_VIZ_INSPECT`` says where it may connect. ``any``, or unset
    (JupyterLab: one person at one desk), allows any URL. ``own``, set by
    ``echomq-viz app``, whose visitors must not make the server reach other
    hosts, ports or sockets, disables the URL box and refuses every URL but the
    app's own (``REDIS_URL``) before any connection; any other value counts as
    ``own``. Errors shown never include a password.

    :param url: a Redis URL; empty for ``REDIS_URL`` or the embedded server.
    :param queue: the queue name as it appears in the keys (``{Q}`` for EchoMQ).
    :param tiers: kept for callers of earlier versions: the figure draws every tier present.
    """

    MODE_ENV = "ECHOMQ_VIZ_INSPECT"

    def __init__(self, url: str = "", *, prefix: str = "emq", queue: str = "", tiers: int = 8) -> None:
        for what, value in (("url", url), ("prefix", prefix), ("queue", queue)):
            check_str(what, value, empty=True)
        tiers = check_int("tiers", tiers, 1, 20)
        super().__init__()
        self.report = None
        self.drawn: dict[int, int] = {}  # tier -> jobs of the report drawn in its row
        self.tiers = tiers
        self.own_only = os.environ.get(self.MODE_ENV, "any") not in ("any", "")
        shown = url
        if self.own_only:  # visitors see neither the app's URL nor a password
            shown = "" if self._is_own(url) else redact_url(url)
        self.url = w.Text(value=shown, description="Redis URL", disabled=self.own_only, style=SLIDER_STYLE,
                          placeholder="this app's own Redis" if self.own_only else "REDIS_URL or the embedded server",
                          layout=WIDE)
        self.prefix = w.Text(value=prefix, description="prefix", style=SLIDER_STYLE)
        self.queue = w.Text(value=queue, description="queue", placeholder="{orders}", style=SLIDER_STYLE)
        self.run_button = w.Button(description="Inspect (read-only)", icon="search", button_style="primary",
                                   layout=w.Layout(width="200px"))
        self.progress = w.IntProgress(value=0, min=0, max=1, description="reading", style=SLIDER_STYLE)
        self.summary = w.HTML()
        self.fig = figure(8.4, 3.8)
        self.map = queue_plots.draw_queue_map(self.fig, (0.14, 0.3, 0.84, 0.58))
        self.widget = w.VBox([self.url, w.HBox([self.prefix, self.queue]),
                              w.HBox([self.run_button, self.progress]), self.fig.canvas, self.caption,
                              self.summary, self.status.widget])
        # Kept as an attribute: callers may run the guarded click without a button.
        self._on_run = self._on_click(self.run_button, self.inspect)
        self._redraw_figure()

    def __repr__(self) -> str:
        return f"InspectorView(prefix={self.prefix.value!r}, queue={self.queue.value!r})"

    @staticmethod
    def _is_own(url: str) -> bool:
        from echomq_viz.redis_side.server import ENV_URL

        return url.strip() in ("", os.environ.get(ENV_URL, "").strip())

    def _progress(self, done: int, total: int) -> None:
        # About a hundred updates sent to the browser, however many chunks.
        if done >= total or done - self.progress.value >= max(total // 100, 1):
            self.progress.max = max(total, 1)
            self.progress.value = done

    def _connect(self):
        """A client for the URL in the box, or a refusal before any connection."""
        from echomq_viz.redis_side.server import connect

        url = self.url.value.strip()  # the box is disabled in own mode, but a crafted message can still set it
        if self.own_only and not self._is_own(url):
            raise PermissionError(f"this app inspects only its own Redis, no other URL ({self.MODE_ENV}=own)")
        return connect(url or None)

    def inspect(self):
        """Read the queue and show the report; returns the :class:`QueueReport`."""
        from echomq_viz.experiments.inspection import inspect_queue

        queue, prefix = self.queue.value.strip(), self.prefix.value.strip()
        if self.own_only and other_owners_in(f"{prefix}:{queue}"):
            raise PermissionError("this app inspects no other visitor's demo queues: only this page's own "
                                  "(Demo(...).queue) and queues that are not demos")
        try:
            self.progress.value = 0
            client = self._connect()
            try:
                report = inspect_queue(client, queue, prefix,
                                       progress=self._progress)
            finally:
                client.close()
        except Exception as exc:
            clean = _without_password(exc, self.url.value)
            if clean is exc:
                raise
            raise clean from None  # the chained original would show the password again
        self.report = report
        shown = np.isfinite(report.scores)  # every job with a place on the axes: all but infinite scores
        queue_plots.update_queue_map(self.map, report.tiers[shown], report.counters[shown],
                                     ahead=report.ahead_of_pc[shown] if report.pc is not None else None,
                                     pc_counter=report.pc_counter, left_out=int((~shown).sum()))
        tiers, counts = np.unique(report.tiers[shown], return_counts=True)
        self.drawn = {int(t): int(n) for t, n in zip(tiers, counts)}
        hidden = report.total - sum(self.drawn.values())
        text = report.summary() + (f"\n({hidden:,} jobs with an infinite score not drawn)" if hidden else "")
        self.summary.value = pre_html(text)
        self._redraw_figure()
        return report

    def describe(self) -> str:
        rows = "The queue's jobs, one row per tier present, the arrival counter across"
        if self.report is None:
            return f"{rows}, empty: nothing read yet."
        report = self.report
        drawn = sum(self.drawn.values())
        counts = ", ".join(f"{queue_plots.tier_name(p)}: {n:,}" for p, n in self.drawn.items())
        hidden = report.total - drawn
        return (f"{rows}, for {report.prefix}:{report.queue}, {drawn:,} jobs drawn: {counts}"
                + (f"; {hidden:,} with an infinite score, not drawn." if hidden else "."))
