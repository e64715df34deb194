"""Artists that draw the very pixels of matplotlib's own, for less, where a
figure redraws them on every move of a control (the score's staircase and
64-bit strip of :mod:`.plots`, as ``benchmarks/page_views.py``'s matplotlib
reference redraws them; the hero itself is drawn in the page).

- :class:`CellImage`: an image of a few colour codes drawn nearest-neighbour
  (the 64-bit strip), where matplotlib resamples all its columns every time.
- :class:`SlidingArrow`: an arrow that keeps its length and direction on
  screen as it moves (the hero's jump one tier up), where matplotlib finds
  its shrunk ends and its head by bisection on every draw.
"""

from __future__ import annotations

import numpy as np
from matplotlib import cbook
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path

__all__ = ["CellImage", "SlidingArrow"]


def _as_data(values: np.ndarray) -> np.ndarray:
    """Probe values as ``set_data`` keeps an image's data (masked where invalid)."""
    return cbook.safe_masked_invalid(values, copy=True)


class CellImage(AxesImage):
    """An image of a few colour codes drawn nearest-neighbour, as ``imshow``
    draws it, for less. Every screen pixel shows one data cell whatever the
    values, so which cell each pixel shows is found once per layout, at its
    second draw (from matplotlib's own drawing of probes: each code alone,
    then the cell numbers bit by bit), and a draw only looks colours up; a
    figure drawn once costs what it did. A layout where a code's colour is
    not the same at every pixel, or where the lookup does not give
    matplotlib's own picture of the current data, is drawn by matplotlib."""

    _layout: tuple | None = None  # (key, cell of each pixel or None, colour of each code, x, y, trans)
    _first_key: tuple | None = None  # the layout of the first draw: probed from the second on
    _rows_alike = False  # every row of pixels shows the same cells

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        if unsampled or self._A is None or self._A.ndim != 2:
            return super().make_image(renderer, magnification, unsampled)
        key = (renderer.width, renderer.height, magnification, self.axes.bbox.bounds, self.axes.viewLim.bounds,
               tuple(self.get_extent()), self._A.shape, self.get_clip_on(), self.norm.vmin, self.norm.vmax,
               self.get_cmap().name, self.get_alpha(), self.get_interpolation())
        if self._layout is None or self._layout[0] != key:
            if self._first_key != key:  # drawn once in this layout: maybe never again, as matplotlib does
                self._first_key = key
                return super().make_image(renderer, magnification, unsampled)
            self._layout = (key, *self._find_layout(renderer, magnification))
        _, cells, colours, x, y, trans = self._layout
        if cells is None:
            return super().make_image(renderer, magnification, unsampled)
        codes = np.asarray(self._A).ravel()
        pixels = np.empty(cells.shape, np.uint32)  # one RGBA pixel as one number: one gather
        pixels[...] = colours.view(np.uint32)[codes[cells[0] if self._rows_alike else cells], 0]
        return pixels.view(np.uint8).reshape(*cells.shape, 4), x, y, trans

    def _find_layout(self, renderer, magnification) -> tuple:
        data = self._A
        codes = int(self.norm.vmax) + 1
        try:
            plain = []
            for code in range(codes):
                self._A = _as_data(np.full(data.shape, code, dtype=data.dtype))
                plain.append(super().make_image(renderer, magnification))
            image, x, y, trans = plain[0]
            if image is None or any(p[0] is None or p[0].shape != image.shape for p in plain):
                return None, None, x, y, trans
            colours = np.array([p[0].reshape(-1, 4)[0] for p in plain])
            if any((p[0] != colour).any() for p, colour in zip(plain, colours)) or codes < 2 \
                    or (colours[0] == colours[1]).all():
                return None, None, x, y, trans  # a colour varies (edges, alpha): draw as usual
            numbers = np.arange(data.size).reshape(data.shape)
            cells = np.zeros(image.shape[:2], dtype=np.intp)
            for bit in range(max(1, (data.size - 1).bit_length())):
                self._A = _as_data(((numbers >> bit) & 1).astype(data.dtype))
                probe = super().make_image(renderer, magnification)[0]
                cells |= (probe == colours[1]).all(axis=-1).astype(np.intp) << bit
        finally:
            self._A = data
        if not np.array_equal(colours[np.asarray(data).ravel()[cells]], super().make_image(renderer, magnification)[0]):
            return None, None, x, y, trans
        self._rows_alike = bool((cells == cells[0]).all())  # one data row: every pixel row the same
        return cells, np.ascontiguousarray(colours, dtype=np.uint8), x, y, trans


class SlidingArrow(FancyArrowPatch):
    """A ``FancyArrowPatch`` from ``posA`` to ``posB`` whose shape is found
    once per screen vector between its ends and then only moved.

    The shape (the ends shrunk, the head) depends on where the ends are only
    through that vector, so an arrow that slides keeps it: matplotlib's own
    shape, found for the first position, shifted to each next one. It is
    found again whenever anything it depends on changes (the vector to a
    millionth of a pixel, the dpi, the style, the width, the shrinks).
    """

    _shape: tuple | None = None  # (key, [(vertices from the tail, codes)], fillable): matplotlib's own shape

    def _get_path_in_displaycoord(self):
        if self._posA_posB is None or self.patchA is not None or self.patchB is not None:
            return super()._get_path_in_displaycoord()
        ends = self.get_transform().transform([self._convert_xy_units(p) for p in self._posA_posB])
        tail, vector = ends[0], ends[1] - ends[0]
        key = (*np.round(vector, 6), self._dpi_cor, self.get_mutation_scale(), self.get_mutation_aspect(),
               self.get_linewidth(), self.shrinkA, self.shrinkB, id(self.get_arrowstyle()),
               id(self.get_connectionstyle()))
        if self._shape is None or self._shape[0] != key:
            paths, fillable = super()._get_path_in_displaycoord()
            if not np.iterable(fillable):  # one path, as draw() takes it too
                paths, fillable = [paths], [fillable]
            self._shape = (key, [(path.vertices - tail, path.codes) for path in paths], fillable)
            return paths, fillable
        _, parts, fillable = self._shape
        return [Path(vertices + tail, codes) for vertices, codes in parts], fillable
