"""The ipympl side of the views: a faster canvas, the figure factory, blitting
and the still images a static page shows.

This is the only module that touches ipympl's private state (``get_diff_image``
with ``_png_is_old``, ``_force_full`` and ``_last_buff``; ``syncing_data_url``;
``_data_url`` and ``_size``). Checked against ipympl 0.10.0 on matplotlib 3.11;
tests/widgets/test_canvas.py fails when a release changes any of it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import io
import sys
from typing import Callable, Hashable, Iterator, Sequence

import numpy as np
from matplotlib.figure import Figure

from echomq_viz.widgets.diff_png import changed_runs, png_rgba

__all__ = ["fast_canvas_class", "figure", "Blitter", "still_png", "snapshot_figures"]

DPI = 96
FRAME_INTERVAL_S = 0.02  # a kernel sends a blitted figure at most 50 times a second
PNG_DATA_URL = "data:image/png;base64,"


@functools.lru_cache(maxsize=None)
def fast_canvas_class() -> type:
    """The canvas class for every view (made once, on first use: ipympl loads lazily)."""
    from ipympl.backend_nbagg import Canvas

    class FastCanvas(Canvas):
        """ipympl's canvas, sending each frame as a cheaper PNG.

        matplotlib's web backend re-encodes every pixel on every update at
        PIL's default level 6; on a slider drag that encoding was the largest
        cost. Here a diff frame compresses only the rows that changed,
        at level 1 (:mod:`.diff_png`): the same pixels, a few kB on localhost.
        Otherwise the same as ``FigureCanvasWebAggCore.get_diff_image``.
        """

        _sent_opaque = False  # the last frame sent had no transparent pixel

        def get_diff_image(self):
            if not self._png_is_old:
                return None
            pixels = np.asarray(self.get_renderer().buffer_rgba())
            buff = pixels.view(np.uint32).squeeze(2)  # one uint32 per pixel: one comparison
            runs = []
            diff = not self._force_full and buff.shape == self._last_buff.shape and self._sent_opaque
            if diff:
                changed = buff != self._last_buff
                runs = changed_runs(changed)
                # rows outside the runs are the last frame's, which was opaque
                diff = all(_opaque(buff[start:stop], pixels[start:stop]) for start, stop in runs)
            if diff:
                self.set_image_mode("diff")
                output = np.zeros_like(buff)
                for start, stop in runs:
                    output[start:stop] = np.where(changed[start:stop], buff[start:stop], 0)
                    self._last_buff[start:stop] = buff[start:stop]
                png = png_rgba(output, runs)
            else:
                self.set_image_mode("full")
                png = png_rgba(buff)
                self._last_buff = buff.copy()
                self._sent_opaque = _opaque(buff, pixels)
            self._force_full = False
            self._png_is_old = False
            return png

    return FastCanvas


_OPAQUE = np.uint32(0xFF000000)  # alpha 255 in a native little-endian RGBA pixel: the high byte


def _opaque(buff: np.ndarray, pixels: np.ndarray) -> bool:
    """Every pixel fully opaque (a diff frame cannot carry transparency)."""
    if sys.byteorder == "little":
        return not (buff < _OPAQUE).any()  # one pass over contiguous memory
    return bool((pixels[:, :, 3] == 255).all())


def figure(width: float, height: float) -> Figure:
    """A figure on a fast ipympl canvas, outside pyplot's registry, not auto-shown."""
    from ipympl.backend_nbagg import FigureManager

    fig = Figure(figsize=(width, height), dpi=DPI)
    canvas = fast_canvas_class()(fig)
    FigureManager(canvas, id(fig))
    canvas.header_visible = False
    canvas.footer_visible = False
    canvas.toolbar_visible = False
    canvas.resizable = False
    # ipympl 0.10 syncs an unprefixed data URL until a page attaches; a page
    # that receives it first shows a blank figure for good. Frames still flow.
    canvas.syncing_data_url = False
    canvas.layout.width = f"{int(width * DPI) + 4}px"
    return fig


class Blitter:
    """Redraw only the artists that move, on a cached background.

    Matplotlib's blitting recipe on an ipympl canvas: the moving artists are
    marked animated (a full draw skips them), the rest is drawn once and kept
    as a background; an update restores it, draws the moving artists and
    sends the changed pixels. Any full draw (first display, resize) refreshes
    the background.

    ``layer`` artists change less often than the others, only when
    ``layer_key()`` does (a view's bars that follow one slider, say): they
    are drawn onto a copy of the background kept for the current key, and an
    update with the same key starts from that copy. The pixels are those of
    drawing every artist in order, layer first, each time.
    """

    def __init__(self, figure: Figure, artists: Sequence, *, layer: Sequence = (),
                 layer_key: Callable[[], Hashable] | None = None) -> None:
        if layer and layer_key is None:
            raise TypeError("a Blitter layer needs a layer_key: what its artists' look depends on")
        self.figure, self.artists, self.layer = figure, list(artists), list(layer)
        self.layer_key = layer_key
        self.background = None
        self._layered: tuple[Hashable, object] | None = None  # (key, background with the layer drawn)
        self._scheduled: tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None = None  # the next frame
        self._last_frame: tuple[object, float] = (None, float("-inf"))  # (loop, when) of the last one sent
        for artist in (*self.layer, *self.artists):
            artist.set_animated(True)
        figure.canvas.mpl_connect("draw_event", self._on_draw)
        figure.canvas.draw()  # a background to blit on from the first move

    def _on_draw(self, event=None) -> None:
        # A still (savefig) draws the animated artists too (matplotlib does
        # while saving): that picture is no background to blit on. They are
        # still drawn over it once more, as the stored stills always were.
        if not self.figure.canvas.is_saving():
            self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)
            self._layered = None
        self._draw(self.layer)
        self._draw(self.artists)

    def _draw(self, artists: Sequence) -> None:
        for artist in artists:
            self.figure.draw_artist(artist)

    def _restore_layer(self) -> None:
        """The background with the layer drawn for the current key."""
        canvas = self.figure.canvas
        if not self.layer:
            canvas.restore_region(self.background)
            return
        key = self.layer_key()
        if self._layered is not None and self._layered[0] == key:
            canvas.restore_region(self._layered[1])
            return
        canvas.restore_region(self.background)
        self._draw(self.layer)
        self._layered = (key, canvas.copy_from_bbox(self.figure.bbox))

    def update(self) -> None:
        """Send the artists' new look: at once outside an event loop (a
        script, a test); inside one (a kernel), on the loop's next turn and
        at most one frame per ``FRAME_INTERVAL_S``. Changes that come
        meanwhile (a burst of slider events, two sliders set by one call)
        share that frame, drawn from the latest state: a frame is never
        followed by an older one."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._scheduled = None  # a frame left on a loop that ended: this one replaces it
            self._blit()
            return
        pending = self._scheduled
        if pending is not None and pending[0] is loop and not pending[1].cancelled():
            return  # the frame to come draws this change too
        last_loop, last_time = self._last_frame
        since = loop.time() - last_time if last_loop is loop else float("inf")
        self._scheduled = (loop, loop.call_later(max(0.0, FRAME_INTERVAL_S - since), self._flush, loop))

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = None
        self._last_frame = (loop, loop.time())
        self._blit()

    def _blit(self) -> None:
        canvas = self.figure.canvas
        if self.background is None:
            canvas.draw_idle()
            return
        self._restore_layer()
        self._draw(self.artists)
        canvas.blit(self.figure.bbox)

    @contextlib.contextmanager
    def all_drawn(self) -> Iterator[None]:
        """Draw the animated artists too, e.g. for savefig."""
        everything = (*self.layer, *self.artists)
        for artist in everything:
            artist.set_animated(False)
        try:
            yield
        finally:
            for artist in everything:
                artist.set_animated(True)


def still_png(fig: Figure, blitter: Blitter | None = None) -> bytes:
    """The figure as a PNG, moving artists included."""
    buffer = io.BytesIO()
    with blitter.all_drawn() if blitter else contextlib.nullcontext():
        fig.savefig(buffer, format="png", dpi="figure")
    return buffer.getvalue()


def snapshot_figures() -> int:
    """Store every ipympl canvas's current image and size in its widget state.

    ipympl does this itself only while no page is attached and only on a
    redraw, which a headless run (the static export) never triggers. Returns
    how many canvases were stored.
    """
    try:
        from ipympl.backend_nbagg import Canvas
    except ImportError:
        return 0
    from ipywidgets import widgets

    registry = getattr(widgets.widget, "_instances", None) or getattr(widgets.Widget, "widgets", {})
    canvases = [widget for widget in list(registry.values()) if isinstance(widget, Canvas)]
    for canvas in canvases:
        fig = canvas.figure
        png = still_png(fig)
        canvas.syncing_data_url = True  # a view may have switched it off
        ratio = getattr(canvas, "device_pixel_ratio", 1) or 1
        canvas._size = (fig.get_figwidth() * fig.dpi / ratio, fig.get_figheight() * fig.dpi / ratio)
        canvas._data_url = PNG_DATA_URL + base64.b64encode(png).decode("ascii")
    return len(canvases)
