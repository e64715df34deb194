"""Notebook 01's hero: one score, two keys, on a staircase of tiers and a 64-bit strip."""

from __future__ import annotations

import html

import ipywidgets as w
from matplotlib.figure import Figure

from echomq_viz.figures import plots
from echomq_viz.core.checks import check_int
from echomq_viz.experiments.live import Demo
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, PRIORITY_LIMIT_TEXT, TIER_SPAN, priority_score
from echomq_viz.widgets.canvas import Blitter, figure
from echomq_viz.widgets.view import SLIDER_STYLE, WIDE, View, require_demo, tiers_text

__all__ = ["HeroView", "hero_figure", "score_text", "add_and_compare"]


def hero_figure(priority: int, counter: int, tiers: int = 6) -> tuple[Figure, plots.Staircase, plots.BitStrip]:
    """The hero figure, drawn once: the staircase of tiers above the 64-bit strip."""
    fig = figure(8.0, 4.0)
    grid = fig.add_gridspec(2, 1, height_ratios=[4.2, 1], hspace=0.65,
                            left=0.08, right=0.98, top=0.92, bottom=0.14)
    stairs = plots.draw_staircase(fig.add_subplot(grid[0]), range(1, tiers + 1), priority, counter)
    strip = plots.draw_bit_strip(fig.add_subplot(grid[1]), priority, counter)
    return fig, stairs, strip


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


def score_text(priority: int, counter: int) -> str:
    """The hero's readout as text: the score in decimal, hex and 64 bits."""
    priority = check_int("priority", priority, 1, PRIORITY_LIMIT, why=PRIORITY_LIMIT_TEXT)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    score = priority_score(priority, counter)
    bits = format(score, "064b")
    return (f"score = {thousands(priority)} × 0x100000000 + {thousands(counter % TIER_SPAN)}\n"
            f"      = {score:,}\n"
            f"      = {plots.format_hex(score)}\n"
            f"      = {bits[:32]} {bits[32:]}")


class HeroView(View):
    """Priority and counter sliders, the score in decimal and hex, the 64-bit
    strip and the staircase of tiers. With the live switch on, every change
    adds a job through ``addPrioritizedJob-9`` and shows what Redis stored.

    :param demo: the demo queue for the live switch; None disables it.
    :param tiers: how many tiers the staircase shows (priorities 1..tiers).
    """

    def __init__(self, demo: Demo | None = None, *, priority: int = 1, counter: int = 1,
                 tiers: int = 6) -> None:
        tiers = check_int("tiers", tiers, 1, 20)
        priority = check_int("priority", priority, 1, tiers)
        counter = check_int("counter", counter, 0, COUNTER_MASK)
        super().__init__()
        self.demo = None if demo is None else require_demo(demo)
        self.fig, self.stairs, self.strip = hero_figure(priority, counter, tiers)
        self.priority = w.IntSlider(value=priority, min=1, max=tiers, description="priority",
                                    style=SLIDER_STYLE, layout=WIDE)
        self.counter = w.IntSlider(value=counter, min=0, max=COUNTER_MASK, description="counter",
                                   readout_format=",d", style=SLIDER_STYLE, layout=WIDE)
        self.counter_box = w.BoundedIntText(value=counter, min=0, max=COUNTER_MASK,
                                            description="exact counter", style=SLIDER_STYLE)
        self.readout = w.HTML()
        self.live = w.Checkbox(value=False, description="live on Redis: each change adds a job",
                               disabled=demo is None, indent=False)
        self.live_result = w.HTML()
        self.live_text = ""
        # The bars change only with the priority: a counter drag redraws the dot,
        # the arrow and the strip on a background that already holds them.
        self.blitter = Blitter(self.fig, [*plots.staircase_moving_artists(self.stairs),
                                          *plots.strip_artists(self.strip)],
                               layer=self.stairs.bars, layer_key=lambda: self.priority.value)
        self.widget = w.VBox([
            self.priority, w.HBox([self.counter, self.counter_box]), self.readout,
            self.fig.canvas, self.caption, self.live, self.live_result, self.status.widget,
        ])
        w.link((self.counter, "value"), (self.counter_box, "value"))
        self._on_change([self.priority, self.counter], self._follow_sliders)
        self._on_change([self.live], self._switch_live)
        self._redraw()

    def __repr__(self) -> str:
        return f"HeroView(priority={self.priority.value}, counter={self.counter.value})"

    def set(self, priority: int | None = None, counter: int | None = None) -> "HeroView":
        """Move the sliders from code, exactly as a drag would; a value no
        slider can show is refused, and then neither slider moves."""
        if priority is not None:
            priority = check_int("priority", priority, 1, self.priority.max)
        if counter is not None:
            counter = check_int("counter", counter, 0, COUNTER_MASK)
        if priority is not None:
            self.priority.value = priority
        if counter is not None:
            self.counter.value = counter
        return self

    def readout_text(self) -> str:
        return score_text(self.priority.value, self.counter.value)

    def describe(self) -> str:
        p, c = self.priority.value, self.counter.value
        return (f"Staircase of {tiers_text(self.priority.max)}; the current job (priority {p:,}, counter {c:,}) "
                f"sits in tier {p:,} at score {priority_score(p, c):,}; "
                "bits 32-52 hold the tier, bits 0-31 the counter.")

    def _redraw(self) -> None:
        p, c = self.priority.value, self.counter.value
        plots.update_staircase(self.stairs, p, c)
        plots.update_bit_strip(self.strip, p, c)
        self.readout.value = _score_html(p, c)
        self._redraw_figure()

    def _follow_sliders(self) -> None:
        self._redraw()
        if self.live.value:
            self.add_on_redis()
        else:  # the last live line spoke of another score: it goes with it
            self.live_text = ""
            self.live_result.value = ""

    def _switch_live(self) -> None:
        # Live: Redis is asked on release only; off: the figure follows the drag.
        on = self.live.value
        for slider in (self.priority, self.counter):
            slider.continuous_update = not on
        if on:
            self.add_on_redis()

    def add_on_redis(self) -> tuple[str, float]:
        """Add the slider's job through the real script; show both scores."""
        demo = self._require_demo()
        job_id, stored, self.live_text = _add(demo, self.priority.value, self.counter.value)
        colour = "#1b7f3b" if self.live_text.endswith("equal") else "#b00020"
        self.live_result.value = f"<span style='color:{colour}'>{html.escape(self.live_text)}</span>"
        return job_id, stored


def _add(demo: Demo, priority: int, counter: int) -> tuple[str, float, str]:
    job_id, stored = demo.add_at_counter(f"hero-p{priority}-c{counter}", priority, counter)
    computed = priority_score(priority, counter)
    return job_id, stored, (f"job {job_id} via addPrioritizedJob-9: Redis stored {int(stored):,}, "
                            f"Python computed {computed:,}: {'equal' if stored == computed else 'DIFFERENT'}")


def add_and_compare(demo: Demo, priority: int, counter: int) -> str:
    """What the live switch does for one slider position, without a view:
    add a job at exactly this counter through ``addPrioritizedJob-9`` and
    compare the score Redis stored with Python's. Returns the view's line."""
    demo = require_demo(demo)
    priority = check_int("priority", priority, 1, PRIORITY_LIMIT, why=PRIORITY_LIMIT_TEXT)
    counter = check_int("counter", counter, 0, COUNTER_MASK)
    return _add(demo, priority, counter)[2]
