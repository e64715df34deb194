"""What every view shares: the status line, the figure caption, guarded
callbacks and the display as widgets plus a still image.

A view declares its state in one block, then wires each control to one
action with :meth:`View._on_click` or :meth:`View._on_change`. The callback
they make clears the status, runs the action with its controls disabled and
shows any error as one red line: a widget callback has nowhere to raise to.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import ipywidgets as w

if TYPE_CHECKING:  # a kernel whose views are all drawn in the page never loads matplotlib
    from matplotlib.figure import Figure

from echomq_viz.experiments.live import Demo

__all__ = ["View", "still_png", "static_image", "Status", "one_line", "busy", "require_demo", "pre_html", "tiers_text", "shown_values",
           "SLIDER_STYLE", "WIDE", "SHOWN"]

SLIDER_STYLE = {"description_width": "90px"}
WIDE = w.Layout(width="620px")
# pre-wrap: a line longer than the output wraps, never runs out of sight
_PRE = "font-size:12px; font-family:var(--jp-code-font-family, monospace); white-space:pre-wrap"
_CAPTION = "font-size:12px; color:#333; margin:2px 0 6px 0; max-width:820px; line-height:1.45"
SHOWN = "echomq_viz"  # the output metadata recording what a view showed when its cell displayed it


def shown_values(root: w.Widget) -> dict[str, dict]:
    """What every control and text of a widget tree shows, by model id: a
    choice's ``index``, anything else's ``value``, as the widget state stores
    them. Figures are left out (a static image's ``value`` is its PNG, which
    the widget state stores as a buffer): their pixels are the stills' business."""
    shown: dict[str, dict] = {}
    todo = [root]
    while todo:
        widget = todo.pop()
        if widget.model_id in shown:
            continue
        key = ("index" if widget.has_trait("index") else None if isinstance(widget, w.Image)
               else "value" if widget.has_trait("value") else None)
        shown[widget.model_id] = {} if key is None else widget.get_state(key)
        todo.extend(child for child in getattr(widget, "children", ()) if isinstance(child, w.Widget))
    return {model_id: state for model_id, state in shown.items() if state}


def still_png(fig: Figure) -> bytes:
    """A matplotlib figure as a PNG, at its own dpi."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi="figure")
    return buffer.getvalue()


def static_image(fig: Figure) -> w.Image:
    """A figure no control moves, as an image widget: drawn once, in the
    kernel, its pixels stored with the notebook (no canvas, no kernel needed
    to show it)."""
    width = round(fig.get_figwidth() * fig.dpi)
    return w.Image(value=still_png(fig), format="png", layout=w.Layout(width=f"{width}px", max_width="100%"))


def pre_html(text: str) -> str:
    """Preformatted text as a view shows it."""
    return f"<pre style='{_PRE}'>{html.escape(text)}</pre>"


def tiers_text(tiers: int) -> str:
    """``"tiers 1-6"``, or ``"tier 1"`` alone."""
    return "tier 1" if tiers == 1 else f"tiers 1-{tiers}"


def one_line(exc: BaseException) -> str:
    """An exception as one short line: its type and first line of message."""
    first = (str(exc).strip().splitlines() or [""])[0]
    if len(first) > 200:
        first = first[:197] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class Status:
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


@contextlib.contextmanager
def busy(*controls: w.Widget) -> Iterator[None]:
    """Disable the controls while the block runs; each is left as it was."""
    before = [control.disabled for control in controls]
    for control in controls:
        control.disabled = True
    try:
        yield
    finally:
        for control, disabled in zip(controls, before):
            control.disabled = disabled


def require_demo(demo: object) -> Demo:
    if not isinstance(demo, Demo):
        raise TypeError(f"this view needs a Demo, e.g. Demo('viz-mine'), got {type(demo).__name__}")
    return demo


class View:
    """A figure with controls: displays as its widget tree, with a short
    deterministic text repr, a still image and a caption that describes the
    figure as it is now (its text alternative, read in order after it)."""

    widget: w.Widget
    fig: Figure
    demo: Demo | None = None
    _moving_from_code = False

    def __init__(self) -> None:
        self.status = Status()
        self.caption = w.HTML().add_class("echomq-viz-caption")  # the app names its figure after it

    def describe(self) -> str:
        """The figure in one or two sentences, as it is now."""
        raise NotImplementedError

    def _redraw_figure(self) -> None:
        """Show the caption of the figure as it is now (a page view redraws itself)."""
        self.caption.value = (f"<div style='{_CAPTION}'><b>Figure:</b> "
                              f"{html.escape(self.describe())}</div>")

    def _callback(self, action: Callable[[], object], controls: Iterable[w.Widget]) -> Callable[..., None]:
        """A widget callback for ``action``: the one guarded path of every control."""
        controls = tuple(controls)

        def callback(*_event) -> None:
            if self._moving_from_code:
                return
            self.status.clear()
            try:
                with busy(*controls):
                    action()
            except Exception as exc:  # shown, not raised: a widget callback has nowhere to raise to
                self.status.error(exc)

        return callback

    def _on_click(self, button: w.Button, action: Callable[[], object], *,
                  also_busy: Iterable[w.Widget] = ()) -> Callable[..., None]:
        """Run ``action`` on a click, with the button (and ``also_busy``) disabled meanwhile."""
        callback = self._callback(action, dict.fromkeys((button, *also_busy)))
        button.on_click(callback)
        return callback

    def _on_change(self, controls: Iterable[w.Widget], action: Callable[[], object], *,
                   disable: bool = False) -> None:
        """Run ``action`` when any control's value changes; with ``disable``
        the controls are disabled while it runs (for actions that ask Redis)."""
        controls = tuple(controls)
        callback = self._callback(action, controls if disable else ())
        for control in controls:
            control.observe(callback, "value")

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[None]:
        """Move controls from code without their actions running: the method
        that moves them runs the action itself, so its errors are raised."""
        self._moving_from_code = True
        try:
            yield
        finally:
            self._moving_from_code = False

    #: True for a view that asks the reader a question first: it is shown
    #: unanswered, and only the reader's own act answers it.
    guess_first = False

    def answered(self) -> bool:
        """Whether the view shows an answer: a guess made, a result revealed."""
        return False

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        if self._still_allowed():  # a still for readers without a kernel (GitHub, nbviewer)
            bundle["image/png"] = base64.b64encode(still_png(self.fig)).decode("ascii")
        # What this display showed, kept beside it: a later cell that moved the
        # view would leave the stored widget state differing from it (tests/launcher/test_stills.py).
        shown = {"view": repr(self), "caption": self.describe(), "guess_first": self.guess_first,
                 "answered": self.answered(), "values": shown_values(self.widget)}
        return bundle, {SHOWN: shown}

    def _still_allowed(self) -> bool:
        return True

    def _require_demo(self) -> Demo:
        if self.demo is None:
            raise RuntimeError("this view was made without a Demo: pass demo=Demo('viz-...')")
        return self.demo
