"""The ipympl side of the views: a faster canvas, the figure factory, blitting
and the still images a static page shows.

This is the only module that touches ipympl's private state (``get_diff_image``
with ``_png_is_old``, ``_force_full`` and ``_last_buff``; ``syncing_data_url``;
``_data_url`` and ``_size``). Checked against ipympl 0.10.0 on matplotlib 3.11;
tests/test_canvas.py fails when a release changes any of it.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
from typing import Iterator, Sequence

import numpy as np
from matplotlib.figure import Figure

__all__ = ["fast_canvas_class", "figure", "Blitter", "still_png", "snapshot_figures"]

DPI = 96
PNG_DATA_URL = "data:image/png;base64,"


@functools.lru_cache(maxsize=None)
def fast_canvas_class() -> type:
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
