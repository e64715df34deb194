"""Notebook 06's inspector: a real queue's prioritized set read (read commands only) and drawn in the page.

The kernel reads (:func:`~echomq_viz.experiments.inspection.inspect_queue`) and
never writes; it sends the page the decoded jobs (tier, counter, id and what is
wrong with each), at most :data:`POINTS_MAX` of them, and the report's text.
The page (``page/inspector.js``) draws the map: a row per tier present, the
arrival counter across, broken where the counters jump. The queue, prefix and
URL typed in the page reach the kernel only with its Inspect button, and are
checked there, as :func:`inspect_queue` checks them, before any connection.
"""

from __future__ import annotations

import os

import numpy as np
import traitlets

from echomq_viz.core.checks import check_int, check_str
from echomq_viz.core.score import PRIORITY_LIMIT
from echomq_viz.figures.queue_plots import split_counters, tier_name
from echomq_viz.redis_side.owners import other_owners_in
from echomq_viz.redis_side.server import redact_url
from echomq_viz.widgets.page_view import PageFigure, PageView

__all__ = ["InspectorView", "InspectorFigure", "POINTS_MAX", "queue_map"]

POINTS_MAX = 3000  # jobs sent to the page: past this, a sample (the figure says so)
TEXT_MAX = 500  # characters of a URL, prefix or queue name from the page
ID_MAX = 40  # characters of a job id sent (a tooltip's worth)
JOB, PAST_LIMIT, AHEAD = 0, 1, 2  # a point's kind: its marker in the page
_KERNEL_ONLY = ("queue_map", "summary", "progress", "url_enabled", "url_placeholder")


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


def _chosen(tiers: np.ndarray, flagged: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the jobs to send: all of them, or at most ``limit``: each
    tier's first, the flagged ones, the rest evenly spaced in pop order."""
    n = tiers.size
    if n <= limit:
        return np.arange(n)
    keep = np.union1d(np.unique(tiers, return_index=True)[1][:limit // 2],
                      np.flatnonzero(flagged)[:limit // 4])
    rest = np.setdiff1d(np.arange(n), keep)
    even = rest[np.linspace(0, rest.size - 1, limit - keep.size).astype(np.int64)]
    return np.union1d(keep, even)


def queue_map(report, limit: int = POINTS_MAX, reads: int = 0) -> dict:
    """What the page draws of a :class:`~echomq_viz.core.queue_report.QueueReport`:
    rows (tiers as decimal text: past 2⁵³ a JSON number would round), jobs per
    row, the counter ranges (two where the axis breaks), ``pc``'s counter, and
    at most ``limit`` points ``[row, counter, id, kind]``."""
    limit = check_int("limit", limit, 1)
    shown = np.isfinite(report.scores)  # every job with a place on the axes: all but infinite scores
    tiers, counters, ids = report.tiers[shown], report.counters[shown], report.job_ids[shown]
    ahead = report.ahead_of_pc[shown] if report.pc is not None else np.zeros(tiers.size, bool)
    kinds = np.where(tiers > PRIORITY_LIMIT, PAST_LIMIT, np.where(ahead, AHEAD, JOB))
    rows, row_of, counts = np.unique(tiers, return_inverse=True, return_counts=True)
    places = np.unique(np.column_stack([tiers, counters]), axis=0).shape[0] if tiers.size else 0
    picked = _chosen(tiers, kinds != JOB, limit)
    return {
        "reads": reads, "queue": report.base, "total": int(report.total), "placed": int(tiers.size),
        "left_out": int(report.total - tiers.size), "equal": int(tiers.size - places),
        "rows": [str(t) for t in rows.tolist()], "counts": counts.tolist(),
        "ranges": [list(r) for r in split_counters(counters)] if tiers.size else [],
        "pc_counter": report.pc_counter,
        "points": [[int(row_of[i]), int(counters[i]), str(ids[i])[:ID_MAX], int(kinds[i])] for i in picked.tolist()],
        "findings": len(report.findings),
    }


def describe_map(data: dict) -> str:
    """The figure's text alternative from what the page was sent (page/inspector.js says the same)."""
    rows = "The queue's jobs, one row per tier present, the arrival counter across"
    if not data:
        return f"{rows}, empty: nothing read yet."
    counts = ", ".join(f"{tier_name(int(t))}: {n:,}" for t, n in zip(data["rows"], data["counts"]))
    sent, placed = len(data["points"]), data["placed"]
    drawn = (f"{placed:,} jobs drawn" if sent == placed else
             f"a sample of {sent:,} of its {placed:,} jobs drawn, jobs per tier")
    hidden = data["left_out"]
    return (f"{rows}, for {data['queue']}, {drawn}: {counts or 'none'}"
            + (f"; {hidden:,} with an infinite score, not drawn." if hidden else "."))


class InspectorFigure(PageFigure):
    """The inspector's page model: the URL, prefix and queue to read (checked by
    the kernel when Inspect is pressed), and what the kernel read."""

    module = "inspector"

    page_writes = ("url", "prefix", "queue")  # what its page's controls move
    url = traitlets.Unicode("").tag(sync=True)
    url_enabled = traitlets.Bool(True).tag(sync=True)  # off in the app: its own Redis only
    url_placeholder = traitlets.Unicode("").tag(sync=True)
    prefix = traitlets.Unicode("emq").tag(sync=True)
    queue = traitlets.Unicode("").tag(sync=True)
    progress = traitlets.List([0, 0]).tag(sync=True)  # [read, of] jobs, chunk by chunk
    queue_map = traitlets.Dict().tag(sync=True)  # see queue_map()
    summary = traitlets.Unicode("").tag(sync=True)  # the report's text

    @traitlets.validate("url", "prefix", "queue")
    def _short(self, proposal: dict) -> str:
        """A text from the page is taken up to TEXT_MAX characters; the names
        themselves are checked when Inspect reads them (as inspect_queue does)."""
        name, value = proposal["trait"].name, proposal["value"]
        good = self.__dict__.setdefault("_good_values", {})
        if len(value) > TEXT_MAX:
            self.status = f"refused {name}: {len(value):,} characters, more than {TEXT_MAX:,}"
            return good.get(name, proposal["trait"].default())
        good[name] = value
        return value

    @traitlets.validate(*_KERNEL_ONLY)
    def _from_kernel(self, proposal: dict) -> object:
        """What the kernel read (and where it may read) is written by the kernel alone."""
        return self._kernel_only(proposal)


class InspectorView(PageView):
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
    shown_traits = ("prefix", "queue", "queue_map")
    # notebook 06 asks what the map will show: the view is shown unread, and read by the reader's press
    guess_first = True

    def __init__(self, url: str = "", *, prefix: str = "emq", queue: str = "", tiers: int = 8) -> None:
        for what, value in (("url", url), ("prefix", prefix), ("queue", queue)):
            check_str(what, value, empty=True)
        self.tiers = check_int("tiers", tiers, 1, 20)
        self.report = None
        self.own_only = os.environ.get(self.MODE_ENV, "any") not in ("any", "")
        shown = url
        if self.own_only:  # visitors see neither the app's URL nor a password
            shown = "" if self._is_own(url) else redact_url(url)
        figure = InspectorFigure(url=shown, prefix=prefix, queue=queue)
        with figure.kernel_writes():
            figure.url_enabled = not self.own_only
            figure.url_placeholder = "this app's own Redis" if self.own_only else "REDIS_URL or the embedded server"
        super().__init__(figure)
        self._reads = 0
        # the guarded click: an error is one line in the status, never raised
        self._on_run = self._callback(self.inspect, ())
        figure.on_msg(lambda _w, content, _b: self._on_run() if isinstance(content, dict)
                      and content.get("kind") == "inspect" else None)

    def answered(self) -> bool:
        return bool(self.figure.queue_map.get("rows"))

    def __repr__(self) -> str:
        return f"InspectorView(prefix={self.figure.prefix!r}, queue={self.figure.queue!r})"

    @property
    def drawn(self) -> dict[int, int]:
        """Tier -> jobs of the last report placed in its row (sent or not)."""
        data = self.figure.queue_map
        return {int(t): n for t, n in zip(data.get("rows", ()), data.get("counts", ()))}

    @staticmethod
    def _is_own(url: str) -> bool:
        from echomq_viz.redis_side.server import ENV_URL

        return url.strip() in ("", os.environ.get(ENV_URL, "").strip())

    def _progress(self, done: int, total: int) -> None:
        # About a hundred updates sent to the page, however many chunks.
        last = self.figure.progress[0]
        if done >= total or done - last >= max(total // 100, 1):
            with self.figure.kernel_writes():
                self.figure.progress = [done, total]

    def _connect(self):
        """A client for the URL in the box, or a refusal before any connection."""
        from echomq_viz.redis_side.server import connect

        url = self.figure.url.strip()  # the box is disabled in own mode, but a crafted message can still set it
        if self.own_only and not self._is_own(url):
            raise PermissionError(f"this app inspects only its own Redis, no other URL ({self.MODE_ENV}=own)")
        return connect(url or None)

    def inspect(self):
        """Read the queue and show the report; returns the :class:`QueueReport`."""
        from echomq_viz.experiments.inspection import check_names, inspect_queue

        with self.figure.kernel_writes():  # the last read goes: under a refusal it passed for this queue's
            self.figure.queue_map, self.figure.summary, self.figure.progress = {}, "", [0, 0]
        self.report = None
        queue, prefix = self.figure.queue.strip(), self.figure.prefix.strip()
        check_names(queue, prefix)  # before any connection, as inspect_queue checks them
        if self.own_only and other_owners_in(f"{prefix}:{queue}"):
            raise PermissionError("this app inspects no other visitor's demo queues: only this page's own "
                                  "(Demo(...).queue) and queues that are not demos")
        try:
            client = self._connect()
            try:
                report = inspect_queue(client, queue, prefix, progress=self._progress)
            finally:
                client.close()
        except Exception as exc:
            clean = _without_password(exc, self.figure.url)
            if clean is exc:
                raise
            raise clean from None  # the chained original would show the password again
        self.report = report
        self._reads += 1  # a read equal to the last still reaches the page, which waits for it
        data = queue_map(report, reads=self._reads)
        text = report.summary() + (f"\n({data['left_out']:,} jobs with an infinite score not drawn)"
                                   if data["left_out"] else "")
        with self.figure.kernel_writes():
            self.figure.summary = text
            self.figure.queue_map = data
        return report

    def summary_text(self) -> str:
        """The report under the figure, as the page shows it."""
        return self.figure.summary

    def describe(self) -> str:
        return describe_map(self.figure.queue_map)
