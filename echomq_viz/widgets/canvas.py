"""The ipympl side of the views not yet drawn in the page: a faster canvas,
the figure factory and the still images a static page shows.

This is the only module that touches ipympl's private state (``get_diff_image``
with ``_png_is_old``, ``_force_full`` and ``_last_buff``; ``syncing_data_url``;
``_data_url`` and ``_size``). Checked against ipympl 0.10.0 on matplotlib 3.11;
tests/widgets/test_canvas.py fails when a release changes any of it.
"""

from __future__ import annotations

import base64
import functools
import sys

import numpy as np
from matplotlib.figure import Figure

from echomq_viz.widgets.diff_png import changed_runs, png_rgba
from echomq_viz.widgets.view import still_png

__all__ = ["fast_canvas_class", "figure", "still_png", "snapshot_figures"]

DPI = 96
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
