"""Interactive views for the notebooks: ipywidgets controls around ipympl figures.

Every view builds its figure once and, on each slider move, updates the
artists from :mod:`echomq_viz.plots` in place and redraws: ``draw_idle``, or,
for the hero figure, blitting only the artists that moved. Redis
round trips (through :class:`echomq_viz.live.Demo`) happen on a button or on
slider release, with the button disabled while busy. Any error inside a
callback becomes one red line in the view's status, never a traceback.

Each view displays itself (``display(view)`` or a cell ending in ``view``)
and offers plain-text methods (``readout_text`` and the like) that checked
notebook cells print.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import io
import re
from typing import Callable, Iterator, Sequence

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure

from . import plots
from .live import Comparison, Demo, seeded_priorities
from .live import checked_int as _int_in, checked_job as _job_pair  # one check for Demo and views
from .score import (COUNTER_MASK, TIER_SPAN, equal_score_groups, is_exact, priority_score, split_score,
                    stored_score)
from .scripts import LUA_DIR, Job, resolve_includes, validate_priority

__all__ = [
    "HeroView", "ComparisonView", "ConsumeView", "BandsView", "FrontierView", "WrapView", "InspectorView",
    "show_lua", "one_line",
]

_SLIDER_STYLE = {"description_width": "90px"}
_PRE = "font-size:12px; font-family:var(--jp-code-font-family, monospace); white-space:pre"
_WIDE = w.Layout(width="620px")


# -- shared plumbing -------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _fast_canvas():
    """The canvas class for every view (made once, on first use: ipympl loads lazily)."""
    from ipympl.backend_nbagg import Canvas
    from PIL import Image

    class FastCanvas(Canvas):
        """ipympl's canvas, sending each frame as a PNG compressed at level 1.

        matplotlib's web backend re-encodes the changed pixels on every
        update at PIL's default level 6; on a slider drag that encoding is the
        largest cost. Level 1 is about 2.5x faster and still a few kB on
        localhost. Otherwise the same as ``FigureCanvasWebAggCore.get_diff_image``.
        """

        def get_diff_image(self):
            if not self._png_is_old:
                return None
            pixels = np.asarray(self.get_renderer().buffer_rgba())
            buff = pixels.view(np.uint32).squeeze(2)  # one uint32 per pixel: one comparison
            if (self._force_full or buff.shape != self._last_buff.shape
                    or (pixels[:, :, 3] != 255).any()):
                self.set_image_mode("full")
                output = buff
            else:
                self.set_image_mode("diff")
                output = np.where(buff != self._last_buff, buff, 0)
            self._last_buff = buff.copy()
            self._force_full = False
            self._png_is_old = False
            with io.BytesIO() as png:
                Image.fromarray(output.view(np.uint8).reshape((*output.shape, 4))).save(
                    png, format="png", compress_level=1)
                return png.getvalue()

    return FastCanvas


def _figure(width: float, height: float) -> Figure:
    """A figure on an ipympl canvas, outside pyplot's registry, not auto-shown."""
    from ipympl.backend_nbagg import FigureManager

    fig = Figure(figsize=(width, height), dpi=96)
    canvas = _fast_canvas()(fig)
    FigureManager(canvas, id(fig))
    canvas.header_visible = False
    canvas.footer_visible = False
    canvas.toolbar_visible = False
    canvas.resizable = False
    # ipympl 0.10 syncs an unprefixed data URL until a page attaches; a page
    # that receives it first shows a blank figure for good. Frames still flow.
    canvas.syncing_data_url = False
    canvas.layout.width = f"{int(width * 96) + 4}px"
    return fig


def one_line(exc: BaseException) -> str:
    """An exception as one short line: its type and first line of message."""
    first = (str(exc).strip().splitlines() or [""])[0]
    if len(first) > 200:
        first = first[:197] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class _Status:
    """One line under a view: empty, a note, or a red error."""

    def __init__(self) -> None:
        self.widget = w.HTML(value="", layout=w.Layout(min_height="1.6em"))
        self.text = ""

    def note(self, text: str) -> None:
        self.text = text
        self.widget.value = f"<span style='color:#555'>{html.escape(text)}</span>"

    def error(self, exc: BaseException) -> None:
        self.text = "error: " + one_line(exc)
        self.widget.value = f"<span style='color:#b00020'>&#9888; {html.escape(self.text)}</span>"

    def clear(self) -> None:
        self.text = ""
        self.widget.value = ""


def _guarded(method: Callable) -> Callable:
    """Run a callback; turn any exception into the view's one-line status."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            result = method(self, *args, **kwargs)
        except Exception as exc:  # shown, not raised: a widget callback has nowhere to raise to
            self.status.error(exc)
            return None
        return result

    return wrapper


@contextlib.contextmanager
def _busy(*controls: w.Widget) -> Iterator[None]:
    for control in controls:
        control.disabled = True
    try:
        yield
    finally:
        for control in controls:
            control.disabled = False


class _Blitter:
    """Redraw only the artists that move, on a cached background.

    Matplotlib's blitting recipe on an ipympl canvas: the moving artists are
    marked animated (a full draw skips them), the rest is drawn once and kept
    as a background; an update restores it, draws the moving artists and
    sends the changed pixels. Any full draw (first display, resize) refreshes
    the background.
    """

    def __init__(self, figure: Figure, artists: Sequence) -> None:
        self.figure, self.artists = figure, list(artists)
        self.background = None
        for artist in self.artists:
            artist.set_animated(True)
        figure.canvas.mpl_connect("draw_event", self._on_draw)
        figure.canvas.draw()  # a background to blit on from the first move

    def _on_draw(self, event=None) -> None:
        self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)
        self._draw_artists()

    def _draw_artists(self) -> None:
        for artist in self.artists:
            self.figure.draw_artist(artist)

    def update(self) -> None:
        canvas = self.figure.canvas
        if self.background is None:
            canvas.draw_idle()
            return
        canvas.restore_region(self.background)
        self._draw_artists()
        canvas.blit(self.figure.bbox)

    @contextlib.contextmanager
    def all_drawn(self) -> Iterator[None]:
        """Draw the animated artists too, e.g. for savefig."""
        for artist in self.artists:
            artist.set_animated(False)
        try:
            yield
        finally:
            for artist in self.artists:
                artist.set_animated(True)


def _require(demo: object) -> Demo:
    if not isinstance(demo, Demo):
        raise TypeError(f"this view needs a Demo, e.g. Demo('viz-mine'), got {type(demo).__name__}")
    return demo


class _View:
    """Displays as its widget tree, with a short deterministic text repr."""

    widget: w.Widget
    status: _Status

    fig: Figure

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        if not self._still_allowed():
            return bundle
        # A still of the figure for readers without a kernel (GitHub, nbviewer).
        buffer = io.BytesIO()
        blitter = getattr(self, "blitter", None)
        with blitter.all_drawn() if blitter else contextlib.nullcontext():
            self.fig.savefig(buffer, format="png")
        bundle["image/png"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        return bundle

    def _still_allowed(self) -> bool:
        return True

    def _require_demo(self) -> Demo:
        if self.demo is None:
            raise RuntimeError("this view was made without a Demo: pass demo=Demo('viz-...')")
        return self.demo


def _score_html(priority: int, counter: int) -> str:
    score = priority_score(priority, counter)
    tier = f"<b style='color:{plots.TIER_BITS_COLOR}'>{priority:,}</b>"
    count = f"<b style='color:{plots.COUNTER_BITS_COLOR}'>{counter % TIER_SPAN:,}</b>"
    hex_text = plots.format_hex(score)
    hex_html = (f"0x<span style='color:{plots.TIER_BITS_COLOR}'>{hex_text[2:10]}</span>_"
                f"<span style='color:{plots.COUNTER_BITS_COLOR}'>{hex_text[11:]}</span>")
    bits = format(score, "064b")
    bits_html = (f"<span style='color:{plots.TIER_BITS_COLOR}'>{bits[:32]}</span> "
                 f"<span style='color:{plots.COUNTER_BITS_COLOR}'>{bits[32:]}</span>")
    return (
        "<div style='font-family:monospace; font-size:13px; line-height:1.5'>"
        f"score = {tier} &times; 0x100000000 + {count}<br>"
        f"&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;= <b>{score:,}</b><br>"
        f"&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;= {hex_html}<br>"
        f"&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;= {bits_html}</div>"
    )


def _score_text(priority: int, counter: int) -> str:
    score = priority_score(priority, counter)
    bits = format(score, "064b")
    return (f"score = {priority} × 0x100000000 + {counter % TIER_SPAN:,}\n"
            f"      = {score:,}\n"
            f"      = {plots.format_hex(score)}\n"
            f"      = {bits[:32]} {bits[32:]}")


# -- notebook 01: the hero figure ---------------------------------------------------


def hero_figure(priority: int, counter: int, tiers: int = 6) -> tuple[Figure, plots.Staircase, plots.BitStrip]:
    """The hero figure, drawn once: the staircase of tiers above the 64-bit strip."""
    fig = _figure(8.0, 4.0)
    grid = fig.add_gridspec(2, 1, height_ratios=[4.2, 1], hspace=0.65,
                            left=0.08, right=0.98, top=0.92, bottom=0.14)
    stairs = plots.draw_staircase(fig.add_subplot(grid[0]), range(1, tiers + 1), priority, counter)
    strip = plots.draw_bit_strip(fig.add_subplot(grid[1]), priority, counter)
    return fig, stairs, strip


class HeroView(_View):
    """Priority and counter sliders, the score in decimal and hex, the 64-bit
    strip and the staircase of tiers. With the live switch on, every change
    adds a job through ``addPrioritizedJob-9`` and shows what Redis stored.

    :param demo: the demo queue for the live switch; None disables it.
    :param tiers: how many tiers the staircase shows (priorities 1..tiers).
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 1, counter: int = 1,
                 tiers: int = 6) -> None:
        tiers = _int_in("tiers", tiers, 1, 20)
        priority = _int_in("priority", priority, 1, tiers)
        counter = _int_in("counter", counter, 0, COUNTER_MASK)
        self.demo = None if demo is None else _require(demo)
        self.status = _Status()
        self.fig, self.stairs, self.strip = hero_figure(priority, counter, tiers)
        self.priority = w.IntSlider(value=priority, min=1, max=tiers, description="priority",
                                    style=_SLIDER_STYLE, layout=_WIDE)
        self.counter = w.IntSlider(value=counter, min=0, max=COUNTER_MASK, description="counter",
                                   readout_format=",d", style=_SLIDER_STYLE, layout=_WIDE)
        self.counter_box = w.BoundedIntText(value=counter, min=0, max=COUNTER_MASK,
                                            description="exact counter", style=_SLIDER_STYLE)
        w.link((self.counter, "value"), (self.counter_box, "value"))
        self.readout = w.HTML()
        self.live = w.Checkbox(value=False, description="live on Redis: each change adds a job",
                               disabled=demo is None, indent=False)
        self.live_result = w.HTML()
        self.live_text = ""
        self.priority.observe(self._on_change, "value")
        self.counter.observe(self._on_change, "value")
        self.live.observe(self._on_live, "value")
        self.blitter = _Blitter(self.fig, [*plots.staircase_artists(self.stairs),
                                           *plots.strip_artists(self.strip)])
        self._redraw()
        self.widget = w.VBox([
            self.priority, w.HBox([self.counter, self.counter_box]), self.readout,
            self.fig.canvas, self.live, self.live_result, self.status.widget,
        ])

    def __repr__(self) -> str:
        return f"HeroView(priority={self.priority.value}, counter={self.counter.value})"

    def set(self, priority: int | None = None, counter: int | None = None) -> "HeroView":
        """Move the sliders from code, exactly as a drag would; a value no
        slider can show is refused, and then neither slider moves."""
        if priority is not None:
            priority = _int_in("priority", priority, 1, self.priority.max)
        if counter is not None:
            counter = _int_in("counter", counter, 0, COUNTER_MASK, " (2**32 - 1)")
        if priority is not None:
            self.priority.value = priority
        if counter is not None:
            self.counter.value = counter
        return self

    def readout_text(self) -> str:
        return _score_text(self.priority.value, self.counter.value)

    def _redraw(self) -> None:
        p, c = self.priority.value, self.counter.value
        plots.update_staircase(self.stairs, p, c)
        plots.update_bit_strip(self.strip, p, c)
        self.readout.value = _score_html(p, c)
        self.blitter.update()

    @_guarded
    def _on_change(self, change=None) -> None:
        self.status.clear()
        self._redraw()
        if self.live.value:
            self.add_on_redis()

    @_guarded
    def _on_live(self, change) -> None:
        # Live: Redis is asked on release only; off: the figure follows the drag.
        for slider in (self.priority, self.counter):
            slider.continuous_update = not change["new"]
        if change["new"]:
            self.add_on_redis()

    def add_on_redis(self) -> tuple[str, float]:
        """Add the slider's job through the real script; show both scores."""
        demo = self._require_demo()
        p, c = self.priority.value, self.counter.value
        job_id, stored = demo.add_at_counter(f"hero-p{p}-c{c}", p, c)
        computed = priority_score(p, c)
        same = stored == computed
        self.live_text = (f"job {job_id} via addPrioritizedJob-9: Redis stored {int(stored):,}, "
                          f"Python computed {computed:,}: {'equal' if same else 'DIFFERENT'}")
        colour = "#1b7f3b" if same else "#b00020"
        self.live_result.value = f"<span style='color:{colour}'>{html.escape(self.live_text)}</span>"
        return job_id, stored


# -- notebook 02: the comparison -----------------------------------------------------------


class ComparisonView(_View):
    """Job A one tier better, job B far ahead on the counter. Predict, reveal
    the composite scores, then let the real scripts on Redis decide.

    :param a, b: the starting ``(priority, counter)`` of each job.
    """

    def __init__(self, demo: Demo | None = None, *, a: tuple[int, int] = (1, 4_000_000_000),
                 b: tuple[int, int] = (2, 1), max_priority: int = 5) -> None:
        max_priority = _int_in("max_priority", max_priority, 1, 20)
        a, b = _job_pair("job A", a, max_priority), _job_pair("job B", b, max_priority)
        self.demo = None if demo is None else _require(demo)
        self.status = _Status()
        self.result: Comparison | None = None

        def sliders(label: str, job: tuple[int, int]) -> tuple[w.IntSlider, w.IntSlider]:
            return (
                w.IntSlider(value=job[0], min=1, max=max_priority, description=f"{label} priority",
                            style=_SLIDER_STYLE, layout=w.Layout(width="300px")),
                w.IntSlider(value=job[1], min=0, max=COUNTER_MASK, description=f"{label} counter",
                            readout_format=",d", style=_SLIDER_STYLE, layout=w.Layout(width="420px")),
            )

        self.a_priority, self.a_counter = sliders("job A", a)
        self.b_priority, self.b_counter = sliders("job B", b)
        self.prediction = w.ToggleButtons(options=[("A pops first", "A"), ("B pops first", "B")],
                                          value=None, description="Your guess:")
        self.fig = _figure(5.6, 3.4)
        ax = self.fig.add_axes((0.14, 0.1, 0.82, 0.78))
        self.pair = plots.draw_score_pair(ax, a, b)
        self.fig.canvas.layout.visibility = "hidden"  # no peeking before a guess
        self.explanation = w.HTML()
        self.run_button = w.Button(description="Run it on Redis", icon="play",
                                   disabled=demo is None, button_style="primary")
        self.redis_result = w.HTML()
        self.redis_text = ""
        for slider in (self.a_priority, self.a_counter, self.b_priority, self.b_counter):
            slider.observe(self._on_change, "value")
        self.prediction.observe(self._on_change, "value")
        self.run_button.on_click(self._on_run)
        self.widget = w.VBox([
            w.HBox([self.a_priority, self.a_counter]), w.HBox([self.b_priority, self.b_counter]),
            self.prediction, self.fig.canvas, self.explanation,
            w.HBox([self.run_button, self.redis_result]), self.status.widget,
        ])

    def __repr__(self) -> str:
        return (f"ComparisonView(a={self.job_a}, b={self.job_b}, "
                f"prediction={self.prediction.value!r})")

    @property
    def job_a(self) -> tuple[int, int]:
        return self.a_priority.value, self.a_counter.value

    @property
    def job_b(self) -> tuple[int, int]:
        return self.b_priority.value, self.b_counter.value

    def _still_allowed(self) -> bool:
        return self.prediction.value is not None  # no spoiler before a guess

    def predict(self, choice: str) -> "ComparisonView":
        """Make the reader's guess from code: ``"A"`` or ``"B"``."""
        self.prediction.value = choice
        return self

    def verdict_text(self) -> str:
        """Both composite scores, which is smaller, and why."""
        (pa, ca), (pb, cb) = self.job_a, self.job_b
        sa, sb = priority_score(pa, ca), priority_score(pb, cb)
        lines = [f"A: {pa} × 0x100000000 + {ca % TIER_SPAN:>13,} = {sa:>16,}",
                 f"B: {pb} × 0x100000000 + {cb % TIER_SPAN:>13,} = {sb:>16,}"]
        if sa == sb:
            lines.append("Equal scores: ZPOPMIN then orders by member, not by arrival.")
            return "\n".join(lines)
        first = "A" if sa < sb else "B"
        if pa != pb:
            why = (f"The tiers differ, so the high bits decide: one priority step is {TIER_SPAN:,},\n"
                   f"more than any counter gap (at most {COUNTER_MASK:,}).")
        else:
            why = "Same tier: the high bits tie and the low bits, the arrival counter, decide."
        lines.append(f"{first} has the smaller score, so ZPOPMIN pops {first} first.")
        lines.append(why)
        return "\n".join(lines)

    @_guarded
    def _on_change(self, change=None) -> None:
        self.status.clear()
        plots.update_score_pair(self.pair, self.job_a, self.job_b)
        if self.prediction.value is not None:
            self.fig.canvas.layout.visibility = "visible"
            self.explanation.value = f"<pre style='{_PRE}'>{html.escape(self.verdict_text())}</pre>"
        self.fig.canvas.draw_idle()

    @_guarded
    def _on_run(self, button=None) -> None:
        self.status.clear()
        self.run_on_redis()

    def run_on_redis(self) -> Comparison:
        """Add A and B through ``addPrioritizedJob-9`` (pc set so the counters
        match the sliders), then consume once with ``moveToActive-11``."""
        demo = self._require_demo()
        with _busy(self.run_button):
            result = demo.compare(self.job_a, self.job_b)
        self.result = result
        guess = self.prediction.value
        verdict = "no guess made" if guess is None else (
            "you were right" if guess == result.popped else "not what you guessed")
        self.redis_text = (f"Redis popped job {result.popped} first "
                           f"(stored scores A {int(result.score_a):,}, B {int(result.score_b):,}): "
                           f"{verdict}")
        self.redis_result.value = html.escape(self.redis_text)
        return result


# -- notebook 03: the consume dive ---------------------------------------------------------


class ConsumeView(_View):
    """A seeded batch in the real sorted set, popped one by one through the
    real consume script.

    :param priorities: the batch, in arrival order.
    :param waiting: how many jobs without priority to add after the batch.
    """

    def __init__(self, demo: Demo, *, priorities: Sequence[int], waiting: int = 1) -> None:
        self.demo = _require(demo)
        self.status = _Status()
        # Checked before anything touches Redis: a bad batch must not empty the queue.
        self.batch = [validate_priority(p) for p in priorities]
        if not 1 <= len(self.batch) <= 40:
            raise ValueError(f"the batch must hold 1..40 jobs, got {len(self.batch)}")
        self.waiting = _int_in("waiting", waiting, 0, 10)
        self.popped: list[Job] = []
        capacity = len(self.batch) + waiting
        self.fig = _figure(8.4, 2.1)
        self.queue_strip = plots.draw_queue_strip(
            self.fig.add_axes((0.02, 0.56, 0.96, 0.3)), capacity,
            "queued, next out at the left: the wait list, then the sorted set by score")
        self.popped_strip = plots.draw_queue_strip(
            self.fig.add_axes((0.02, 0.07, 0.96, 0.3)), capacity, "popped by moveToActive-11, in order")
        self.refill_button = w.Button(description="Fresh batch", icon="refresh")
        self.step_button = w.Button(description="Pop one", icon="step-forward", button_style="primary")
        self.drain_button = w.Button(description="Drain", icon="fast-forward")
        self.table = w.HTML()
        self.log = w.HTML()
        self.refill_button.on_click(self._on_refill)
        self.step_button.on_click(self._on_step)
        self.drain_button.on_click(self._on_drain)
        self.widget = w.VBox([
            w.HBox([self.refill_button, self.step_button, self.drain_button]),
            self.fig.canvas, self.log, self.table, self.status.widget,
        ])
        self.refill()

    def __repr__(self) -> str:
        return f"ConsumeView(queue={self.demo.queue!r}, batch={len(self.batch)}, popped={len(self.popped)})"

    @property
    def _buttons(self) -> tuple[w.Button, ...]:
        return self.refill_button, self.step_button, self.drain_button

    def refill(self) -> None:
        """Empty the demo queue and add the batch, then the wait-list jobs."""
        with _busy(*self._buttons):
            self.demo.reset()
            self.demo.add_batch(self.batch)
            for n in range(self.waiting):
                self.demo.add_waiting(f"no-priority-{n}")
            self.popped = []
            self._show()

    def step(self) -> Job | None:
        """Pop one job through the consume script."""
        with _busy(*self._buttons):
            job = self.demo.pop()
            if job is not None:
                self.popped.append(job)
            self._show()
        return job

    def drain(self) -> list[Job]:
        """Pop until the consume script finds nothing."""
        with _busy(*self._buttons):
            taken = self.demo.drain()
            self.popped.extend(taken)
            self._show()
        return taken

    def expected_order(self) -> list[str]:
        """Job ids sorted by (priority, arrival), the wait-list jobs first."""
        prioritized = sorted(range(len(self.batch)), key=lambda i: (self.batch[i], i))
        wait_ids = [str(len(self.batch) + n + 1) for n in range(self.waiting)]
        return wait_ids + [str(i + 1) for i in prioritized]

    def table_text(self) -> str:
        """The wait list and the sorted set as Redis holds them, in pop order."""
        return self._table_text(self.demo.waiting(), self.demo.entries())

    def _table_text(self, waiting: Sequence[str], entries: Sequence) -> str:
        rows = [f"{'job':>5}  {'score':>15}  {'tier':>4}  {'counter':>7}  where"]
        rows += [f"{job_id:>5}  {'-':>15}  {'-':>4}  {'-':>7}  wait list" for job_id in waiting]
        rows += [f"{e.job_id:>5}  {int(e.score):>15,}  {e.priority:>4}  {e.counter:>7}  prioritized"
                 for e in entries]
        pc = self.demo.priority_counter()
        rows.append(f"pc = {pc}" if pc is not None else "pc: deleted (the last consume found the set empty)")
        return "\n".join(rows)

    def popped_text(self) -> str:
        return " ".join(f"{job.id}({'wait' if job.score is None else 'p' + str(job.priority)})"
                        for job in self.popped) or "(nothing popped yet)"

    def _show(self) -> None:
        waiting, entries = self.demo.waiting(), self.demo.entries()  # one read for strip and table
        plots.update_queue_strip(self.queue_strip,
                                 [(job_id, 0) for job_id in waiting] + [(e.job_id, e.priority) for e in entries])
        plots.update_queue_strip(self.popped_strip, [(j.id, j.priority) for j in self.popped])
        self.table.value = f"<pre style='{_PRE}'>{html.escape(self._table_text(waiting, entries))}</pre>"
        self.log.value = (f"<pre style='{_PRE}'>popped: {html.escape(self.popped_text())}</pre>")
        self.fig.canvas.draw_idle()

    @_guarded
    def _on_refill(self, button=None) -> None:
        self.status.clear()
        self.refill()

    @_guarded
    def _on_step(self, button=None) -> None:
        self.status.clear()
        if self.step() is None:
            self.status.note("the consume script found no job; it deleted pc")

    @_guarded
    def _on_drain(self, button=None) -> None:
        self.status.clear()
        self.drain()


# -- notebook 04: the bands -------------------------------------------------------------------


class BandsView(_View):
    """Tiers as bands of the score axis, with real jobs from the demo queue
    as points inside them, and a zoom on the edge between two tiers.

    Sliders act on release: each change refills the demo queue on Redis.
    """

    def __init__(self, demo: Demo, *, tiers: int = 4, jobs: int = 200, start: int = 0,
                 seed: int = 4) -> None:
        self.demo = _require(demo)
        tiers = _int_in("tiers", tiers, 1, 8)
        jobs = _int_in("jobs", jobs, 10, 5000)
        start = _int_in("start", start, 0, COUNTER_MASK - 5000)
        self.status = _Status()
        self.seed = _int_in("seed", seed, 0, 2**32)
        self.fig = _figure(8.4, 4.6)
        self.close_up = plots.draw_bands(self.fig.add_axes((0.08, 0.11, 0.5, 0.8)), 8, zoomed=True)
        self.full = plots.draw_bands(self.fig.add_axes((0.69, 0.52, 0.29, 0.39)), 8)
        self.close_up.points.axes.set_title("the jobs up close", fontsize=10)
        self.full.points.axes.set_title("at full scale", fontsize=10)
        self.edge = plots.draw_tier_boundary(self.fig.add_axes((0.69, 0.11, 0.29, 0.13)), 1)
        self.tiers = w.IntSlider(value=tiers, min=1, max=8, description="tiers",
                                 continuous_update=False, style=_SLIDER_STYLE, layout=_WIDE)
        self.jobs = w.IntSlider(value=jobs, min=10, max=5000, step=10, description="jobs",
                                continuous_update=False, style=_SLIDER_STYLE, layout=_WIDE)
        self.start = w.IntSlider(value=start, min=0, max=COUNTER_MASK - 5000, description="pc starts at",
                                 readout_format=",d", continuous_update=False, style=_SLIDER_STYLE,
                                 layout=_WIDE)
        self.counts_label = w.HTML()
        self.counts: dict[int, int] = {}
        for slider in (self.tiers, self.jobs, self.start):
            slider.observe(self._on_change, "value")
        self.widget = w.VBox([self.tiers, self.jobs, self.start, self.fig.canvas,
                              self.counts_label, self.status.widget])
        self.refresh()

    def __repr__(self) -> str:
        return (f"BandsView(tiers={self.tiers.value}, jobs={self.jobs.value}, "
                f"start={self.start.value})")

    def refresh(self) -> dict[int, int]:
        """Refill the demo queue on Redis and redraw from what it holds."""
        with _busy(self.tiers, self.jobs, self.start):
            tiers = self.tiers.value
            self.demo.reset()
            self.demo.set_counter(self.start.value)
            self.demo.add_batch(seeded_priorities(self.seed, self.jobs.value, range(1, tiers + 1)))
            scores = [e.score for e in self.demo.entries()]
            plots.update_bands(self.close_up, scores, tiers)
            plots.update_bands(self.full, scores, tiers)
            self.counts = self.demo.counts(range(1, tiers + 1))
            self.counts_label.value = html.escape(self.counts_text())
            self.fig.canvas.draw_idle()
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

    @_guarded
    def _on_change(self, change=None) -> None:
        self.status.clear()
        self.refresh()


# -- notebook 05: where exactness ends -----------------------------------------------------------

FRONTIER_PRIORITIES = (
    ("2^21 − 2", 2**21 - 2), ("2^21 − 1 (the limit)", 2**21 - 1), ("2^21", 2**21),
    ("2^21 + 1", 2**21 + 1), ("2^22", 2**22), ("2^23", 2**23), ("2^24", 2**24),
)


class FrontierView(_View):
    """A priority slider across the 2**21 - 1 line that marks which of 16
    consecutive counters keep an exact score; with a demo, the same 16 jobs
    go through the real script (limit lifted, for teaching) and Redis pops them.
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 2**21, first_counter: int = 4,
                 width: int = 16) -> None:
        allowed = [value for _, value in FRONTIER_PRIORITIES]
        if priority not in allowed:
            raise ValueError(f"priority must be one of {', '.join(f'{v:,}' for v in allowed)}, got {priority!r}")
        self.width = _int_in("width", width, 2, 64)
        first_counter = _int_in("first_counter", first_counter, 0, COUNTER_MASK - self.width)
        self.demo = None if demo is None else _require(demo)
        self.status = _Status()
        self.fig = _figure(7.2, 3.6)
        ax = self.fig.add_axes((0.11, 0.14, 0.86, 0.76))
        self.frontier = plots.draw_frontier(ax, priority, range(first_counter, first_counter + width))
        self.priority = w.SelectionSlider(options=FRONTIER_PRIORITIES, value=priority,
                                          description="priority", style=_SLIDER_STYLE, layout=_WIDE)
        self.first_counter = w.IntSlider(value=first_counter, min=0, max=COUNTER_MASK - width,
                                         description="first counter", readout_format=",d",
                                         style=_SLIDER_STYLE, layout=_WIDE)
        self.summary = w.HTML()
        self.run_button = w.Button(description="Add these 16 jobs on Redis", icon="play",
                                   disabled=demo is None, button_style="warning",
                                   layout=w.Layout(width="260px"))
        self.redis_result = w.HTML()
        self.redis_text = ""
        self.priority.observe(self._on_change, "value")
        self.first_counter.observe(self._on_change, "value")
        self.run_button.on_click(self._on_run)
        self._redraw()
        self.widget = w.VBox([self.priority, self.first_counter, self.fig.canvas, self.summary,
                              w.HBox([self.run_button, self.redis_result]), self.status.widget])

    def __repr__(self) -> str:
        return f"FrontierView(priority={self.priority.value}, first_counter={self.first_counter.value})"

    @property
    def counters(self) -> range:
        return range(self.first_counter.value, self.first_counter.value + self.width)

    def summary_text(self) -> str:
        """Which counters round and which share a stored score."""
        p = self.priority.value
        stored = [stored_score(p, c) for c in self.counters]
        rounded = [c for c, s in zip(self.counters, stored) if not is_exact(p, c)]
        labels = list(self.counters)
        groups = [[labels[i] for i in group] for group in equal_score_groups(stored)]
        lines = [f"priority {p:,}: scores {'exact' if not rounded else 'ROUNDED for counters ' + ', '.join(map(str, rounded))}"]
        lines += [f"counters {', '.join(map(str, g))} share the score {int(stored_score(p, g[0])):,}"
                  for g in groups]
        return "\n".join(lines)

    def _redraw(self) -> None:
        plots.update_frontier(self.frontier, self.priority.value, self.counters)
        self.summary.value = f"<pre style='{_PRE}'>{html.escape(self.summary_text())}</pre>"
        self.fig.canvas.draw_idle()

    @_guarded
    def _on_change(self, change=None) -> None:
        self.status.clear()
        self._redraw()

    @_guarded
    def _on_run(self, button=None) -> None:
        self.status.clear()
        self.run_on_redis()

    def run_on_redis(self) -> list[str]:
        """Empty the demo queue, add the 16 jobs through the real script with
        its limit lifted (teaching only), drain it, and report the pop order.

        :returns: the job ids in the order the consume script handed them out.
        """
        demo = self._require_demo()
        with _busy(self.run_button):
            demo.reset()
            p = self.priority.value
            demo.set_counter(self.first_counter.value - 1 if self.first_counter.value else COUNTER_MASK)
            added = [demo.add_past_the_limit_for_teaching(f"arrival-{n}", p)[0]
                     for n in range(self.width)]
            order = [job.id for job in demo.drain()]
        fifo = order == added
        self.redis_text = (f"added {' '.join(added)}; Redis popped {' '.join(order)}: "
                           f"{'first in, first out' if fifo else 'FIFO BROKEN'}")
        colour = "#1b7f3b" if fifo else "#b00020"
        self.redis_result.value = f"<span style='color:{colour}'>{html.escape(self.redis_text)}</span>"
        return order


class WrapView(_View):
    """A queue that never empties: ``pc`` passes 2**32 and the counter part of
    the score wraps to 0, so newer jobs jump ahead inside their tier."""

    def __init__(self, demo: Demo, *, start: int = TIER_SPAN - 3, jobs: int = 6,
                 priority: int = 3) -> None:
        self.demo = _require(demo)
        start = _int_in("start", start, TIER_SPAN - 10, TIER_SPAN + 2)
        self.status = _Status()
        self.jobs = _int_in("jobs", jobs, 1, 12)
        self.job_priority = validate_priority(priority)
        self.fig = _figure(7.2, 1.6)
        self.arrivals = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.55, 0.96, 0.3)), jobs,
                                               "arrival order")
        self.pops = plots.draw_queue_strip(self.fig.add_axes((0.02, 0.05, 0.96, 0.3)), jobs,
                                           "pop order (moveToActive-11)")
        self.start = w.IntSlider(value=start, min=TIER_SPAN - 10, max=TIER_SPAN + 2,
                                 description="pc starts at", readout_format=",d",
                                 style=_SLIDER_STYLE, layout=_WIDE)
        self.run_button = w.Button(description=f"Add {jobs} jobs, then drain", icon="play",
                                   button_style="primary", layout=w.Layout(width="220px"))
        self.table = w.HTML()
        self.text = ""
        self.run_button.on_click(self._on_run)
        self.widget = w.VBox([self.start, self.run_button, self.fig.canvas, self.table,
                              self.status.widget])

    def __repr__(self) -> str:
        return f"WrapView(start={self.start.value}, jobs={self.jobs})"

    @_guarded
    def _on_run(self, button=None) -> None:
        self.status.clear()
        self.run()

    def run(self) -> list[str]:
        """Set ``pc``, add the jobs one after another, drain; show both orders."""
        with _busy(self.run_button):
            self.demo.reset()
            self.demo.set_counter(self.start.value)
            added = [self.demo.add(f"arrival-{n}", self.job_priority) for n in range(self.jobs)]
            entries = {e.job_id: e for e in self.demo.entries()}
            popped = [job.id for job in self.demo.drain()]
        rows = [f"{'job':>4}  {'INCR pc':>13}  {'counter part':>12}  {'score':>14}"]
        for job_id in added:
            e = entries[job_id]
            incr = self.start.value + added.index(job_id) + 1
            rows.append(f"{job_id:>4}  {incr:>13,}  {e.counter:>12,}  {int(e.score):>14,}")
        rows.append(f"added:  {' '.join(added)}")
        rows.append(f"popped: {' '.join(popped)}" + ("" if popped == added else "  <- newer jobs jumped ahead"))
        self.text = "\n".join(rows)
        self.table.value = f"<pre style='{_PRE}'>{html.escape(self.text)}</pre>"
        plots.update_queue_strip(self.arrivals, [(j, self.job_priority) for j in added])
        plots.update_queue_strip(self.pops, [(j, self.job_priority) for j in popped])
        self.fig.canvas.draw_idle()
        return popped


# -- notebook 06: inspecting a real queue -----------------------------------------------------------


class InspectorView(_View):
    """Point at a Redis, prefix and queue; read its prioritized set (read
    commands only), draw the jobs in their tier bands and list what is wrong.

    ``ECHOMQ_VIZ_INSPECT`` says where it may connect. ``any``, or unset
    (JupyterLab: one person at one desk), allows any URL. ``own``, set by
    ``echomq-viz app``, whose visitors must not make the server reach other
    hosts, ports or sockets, disables the URL box and refuses every URL but the
    app's own (``REDIS_URL``) before any connection; any other value counts as
    ``own``. Errors shown never include a password.

    :param url: a Redis URL; empty for ``REDIS_URL`` or the embedded server.
    :param queue: the queue name as it appears in the keys (``{Q}`` for EchoMQ).
    :param tiers: how many tiers (from 1) the figure draws.
    """

    MODE_ENV = "ECHOMQ_VIZ_INSPECT"

    def __init__(self, url: str = "", *, prefix: str = "emq", queue: str = "", tiers: int = 8) -> None:
        import os

        for what, value in (("url", url), ("prefix", prefix), ("queue", queue)):
            if not isinstance(value, str):
                raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
        self.status = _Status()
        self.report = None
        self.tiers = _int_in("tiers", tiers, 1, 20)
        self.own_only = os.environ.get(self.MODE_ENV, "any") not in ("any", "")
        shown = url
        if self.own_only:  # visitors see neither the app's URL nor a password
            shown = "" if self._is_own(url) else self._redacted(url)
        self.url = w.Text(value=shown, description="Redis URL", disabled=self.own_only, style=_SLIDER_STYLE,
                          placeholder="this app's own Redis" if self.own_only else "REDIS_URL or the embedded server",
                          layout=_WIDE)
        self.prefix = w.Text(value=prefix, description="prefix", style=_SLIDER_STYLE)
        self.queue = w.Text(value=queue, description="queue", placeholder="{orders}", style=_SLIDER_STYLE)
        self.run_button = w.Button(description="Inspect (read-only)", icon="search", button_style="primary",
                                   layout=w.Layout(width="200px"))
        self.progress = w.IntProgress(value=0, min=0, max=1, description="reading", style=_SLIDER_STYLE)
        self.summary = w.HTML()
        self.fig = _figure(8.4, 3.4)
        self.bands = plots.draw_bands(self.fig.add_axes((0.08, 0.14, 0.9, 0.76)), tiers, zoomed=True)
        self.run_button.on_click(self._on_run)
        self.widget = w.VBox([self.url, w.HBox([self.prefix, self.queue]),
                              w.HBox([self.run_button, self.progress]), self.fig.canvas,
                              self.summary, self.status.widget])

    def __repr__(self) -> str:
        return f"InspectorView(prefix={self.prefix.value!r}, queue={self.queue.value!r})"

    @staticmethod
    def _is_own(url: str) -> bool:
        import os

        from .server import ENV_URL

        return url.strip() in ("", os.environ.get(ENV_URL, "").strip())

    @staticmethod
    def _redacted(text: str) -> str:
        """``text`` with the user info of every URL and every ``password=`` masked."""
        import re

        return re.sub(r"(?i)(?<=://)[^\s@]*@|(?<=password=)[^&\s'\"]+",
                      lambda m: "***@" if m.group().endswith("@") else "***", text)

    @_guarded
    def _on_run(self, button=None) -> None:
        self.status.clear()
        self.inspect()

    def _progress(self, done: int, total: int) -> None:
        # About a hundred updates sent to the browser, however many chunks.
        if done >= total or done - self.progress.value >= max(total // 100, 1):
            self.progress.max = max(total, 1)
            self.progress.value = done

    def _connect(self):
        """A client for the URL in the box, or a refusal before any connection."""
        from .server import connect

        url = self.url.value.strip()  # the box is disabled in own mode, but a crafted message can still set it
        if self.own_only and not self._is_own(url):
            raise PermissionError(f"this app inspects only its own Redis, no other URL ({self.MODE_ENV}=own)")
        return connect(url or None)

    def inspect(self):
        """Read the queue and show the report; returns the :class:`QueueReport`."""
        from .inspection import inspect_queue

        try:
            with _busy(self.run_button):
                self.progress.value = 0
                client = self._connect()
                try:
                    report = inspect_queue(client, self.queue.value.strip(), self.prefix.value.strip(),
                                           progress=self._progress)
                finally:
                    client.close()
        except Exception as exc:
            text = self._redacted(str(exc))
            if text == str(exc):
                raise
            try:
                clean = type(exc)(text)
            except Exception:  # an exception type that wants other arguments
                clean = RuntimeError(text)
            raise clean from None  # the chained original would show the password again
        self.report = report
        shown = report.plottable & (report.tiers >= 1) & (report.tiers <= self.tiers)
        plots.update_bands(self.bands, report.scores[shown], self.tiers)
        hidden = report.total - int(shown.sum())
        text = report.summary() + (f"\n({hidden:,} jobs outside tiers 1..{self.tiers} not drawn)" if hidden else "")
        self.summary.value = f"<pre style='{_PRE}'>{html.escape(text)}</pre>"
        self.fig.canvas.draw_idle()
        return report


# -- showing the Lua --------------------------------------------------------------------------


class _Code:
    """Source code with highlighting in the notebook and plain text elsewhere."""

    def __init__(self, source: str, title: str) -> None:
        self.source, self.title = source, title

    def _repr_html_(self) -> str:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import LuaLexer

            body = highlight(self.source, LuaLexer(), HtmlFormatter(noclasses=True, nobackground=True))
        except ImportError:
            body = f"<pre>{html.escape(self.source)}</pre>"
        return f"<details open><summary><code>{html.escape(self.title)}</code></summary>{body}</details>"

    def __repr__(self) -> str:
        return f"-- {self.title}\n{self.source}"


_LUA_NAME = re.compile(r"(includes/)?[A-Za-z][A-Za-z0-9]*")


def show_lua(name: str, *, assembled: bool = False) -> _Code:
    """The Lua of a script (``"moveToActive"``) or include
    (``"includes/getPriorityScore"``) as it lives in ``lua/``; with
    ``assembled``, a script with its includes inlined, exactly as Redis runs it."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, e.g. 'moveToActive', got {type(name).__name__} {name!r}")
    if not _LUA_NAME.fullmatch(name):
        raise ValueError(f"name must be a script or include name without '-N.lua', e.g. 'moveToActive' "
                         f"or 'includes/getPriorityScore', got {name!r}")
    if not isinstance(assembled, bool):
        raise TypeError(f"assembled must be a bool, got {type(assembled).__name__} {assembled!r}")
    if name.startswith("includes/"):
        path = LUA_DIR / f"{name}.lua"
        matches = [path] if path.is_file() else []
    else:
        matches = sorted(LUA_DIR.glob(f"{name}-*.lua"))
    if len(matches) != 1:
        raise LookupError(f"no Lua file for {name!r} in {LUA_DIR}")
    path = matches[0]
    title = f"lua/{path.relative_to(LUA_DIR)}"
    if assembled:
        return _Code(resolve_includes(path, LUA_DIR), f"{title}, includes inlined")
    return _Code(path.read_text(encoding="utf-8"), title)
