"""The ipympl canvas work: what we rely on in ipympl's private state still holds.

echomq_viz.widgets.canvas overrides ``get_diff_image`` and sets ``syncing_data_url``,
``_data_url`` and ``_size``, none of which ipympl documents. These tests fail when
an ipympl (or matplotlib web backend) release changes any of it, before a reader
sees a blank or stale figure.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from echomq_viz.widgets import canvas as fast


def frames_of(canvas) -> list[tuple[str, np.ndarray]]:
    """Record each frame the canvas sends: (image mode, decoded RGBA pixels)."""
    frames = []
    send_binary = canvas.send_binary

    def recording(data):
        frames.append((canvas._current_image_mode, np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))))
        return send_binary(data)

    canvas.send_binary = recording
    return frames


def ipympl_figure(width: float, height: float) -> Figure:
    """The same figure on ipympl's own canvas, for comparison."""
    from ipympl.backend_nbagg import Canvas, FigureManager

    fig = Figure(figsize=(width, height), dpi=96)
    FigureManager(Canvas(fig), id(fig))
    return fig


def draw_line(fig: Figure):
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    (line,) = ax.plot([0, 1, 2], [0, 1, 0], lw=3)
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 2)
    return line


def test_ipympl_canvas_still_declares_the_private_state_we_use():
    from ipympl.backend_nbagg import Canvas

    traits = Canvas.class_traits()
    for name in ("_data_url", "_size"):  # synced: they reach the stored widget state
        assert name in traits and traits[name].metadata.get("sync") is True, name
    for name in ("_png_is_old", "_force_full", "_current_image_mode"):
        assert name in traits, name
    fig = ipympl_figure(2, 1)
    canvas = fig.canvas
    assert canvas.syncing_data_url is True  # until a page says "initialized"
    assert isinstance(canvas._last_buff, np.ndarray)
    assert canvas._png_is_old is True and canvas._force_full is True  # the first frame is full
    assert callable(canvas.get_renderer) and callable(canvas.set_image_mode)


def test_ipympl_stops_syncing_the_data_url_when_told_and_when_a_page_attaches():
    fig = fast.figure(2, 1)
    canvas = fig.canvas
    sent = []
    canvas._send = lambda msg, buffers=None: sent.append(set(msg.get("state", ())))
    assert canvas.syncing_data_url is False  # our factory switched it off
    canvas.send_state()
    assert "_size" in sent[-1] and "_data_url" not in sent[-1] and "_size" in sent[-1]
    canvas.syncing_data_url = True
    canvas.send_state()
    assert "_data_url" in sent[-1]
    canvas._handle_message(canvas, {"type": "initialized"}, [])
    assert canvas.syncing_data_url is False  # what ipympl does itself once a page is there


def test_fast_canvas_frames_are_the_pixels_ipympl_would_send():
    ours, theirs = fast.figure(3, 2), ipympl_figure(3, 2)
    assert type(ours.canvas) is not type(theirs.canvas)
    lines = [draw_line(fig) for fig in (ours, theirs)]
    sent = [frames_of(fig.canvas) for fig in (ours, theirs)]
    for fig in (ours, theirs):
        fig.canvas.draw()
    for line in lines:
        line.set_ydata([1, 0, 1])
    for fig in (ours, theirs):
        fig.canvas.draw()
    ours_frames, their_frames = sent
    assert [mode for mode, _ in ours_frames] == [mode for mode, _ in their_frames] == ["full", "diff"]
    for (_, mine), (_, reference) in zip(ours_frames, their_frames):
        assert mine.shape == reference.shape == (192, 288, 4)
        assert np.array_equal(mine, reference)
    diff = ours_frames[1][1]
    assert 0 < (diff[..., 3] > 0).sum() < diff.shape[0] * diff.shape[1]  # only the changed pixels
    assert ours.canvas.get_diff_image() is None  # nothing new to send


def test_fast_canvas_sends_a_full_frame_when_asked():
    fig = fast.figure(2, 1)
    draw_line(fig)
    frames = frames_of(fig.canvas)
    fig.canvas.draw()
    fig.canvas.draw()
    fig.canvas._force_full = True  # what a browser's "refresh" message does
    fig.canvas.draw()
    assert [mode for mode, _ in frames] == ["full", "diff", "full"]
    assert not frames[1][1][..., 3].any()  # nothing changed: an empty diff
    assert np.array_equal(frames[0][1], frames[2][1])


def test_snapshot_stores_every_figure_image_and_size_in_the_widget_state():
    fig = fast.figure(2.5, 1.5)
    draw_line(fig)
    other = ipympl_figure(1, 1)  # any ipympl canvas, not only ours
    assert fig.canvas._data_url is None
    fast.snapshot_figures()
    for figure in (fig, other):
        canvas = figure.canvas
        assert canvas.syncing_data_url is True
        prefix = "data:image/png;base64,"
        assert canvas._data_url.startswith(prefix)
        image = Image.open(io.BytesIO(base64.b64decode(canvas._data_url[len(prefix):])))
        width, height = figure.get_figwidth() * 96, figure.get_figheight() * 96
        assert image.size == (round(width), round(height))
        assert tuple(canvas._size) == pytest.approx((width, height))


def test_the_export_cell_only_calls_the_snapshot():
    from echomq_viz.launcher import export

    fig = fast.figure(1, 1)
    names: dict = {}
    exec(export._SNAPSHOT_CELL, names)
    assert fig.canvas._data_url.startswith("data:image/png;base64,")
    assert set(names) <= {"__builtins__"}  # leaves nothing behind in the notebook's namespace
    assert "_data_url" not in export._SNAPSHOT_CELL and "syncing_data_url" not in export._SNAPSHOT_CELL


def test_diff_png_decodes_to_the_very_pixels_given():
    from echomq_viz.widgets.diff_png import changed_runs, png_rgba

    rng = np.random.default_rng(5)
    cases = [(1, 1, [(0, 1)]), (7, 3, [(2, 5)]), (384, 768, [(40, 71), (179, 230), (300, 330)]),
             (40, 9, []), (40, 9, [(0, 3), (39, 40)]), (300, 5, [(0, 300)])]
    for height, width, runs in cases:
        pixels = np.zeros((height, width), np.uint32)
        for start, stop in runs:
            pixels[start:stop] = rng.integers(1, 2**32, (stop - start, width), dtype=np.uint32)
        assert changed_runs(pixels != 0, gap=0) == runs
        for given in (runs, None):  # the runs, or every row
            decoded = np.asarray(Image.open(io.BytesIO(png_rgba(pixels, given))).convert("RGBA"))
            assert np.array_equal(decoded.view(np.uint32).squeeze(2), pixels), (height, width, given)
    assert changed_runs(np.array([[1], [0], [1], [0], [0], [1]], bool), gap=1) == [(0, 3), (5, 6)]
    with pytest.raises(ValueError, match=r"runs must be row ranges in order inside 0..7, got \[\(5, 3\)\]"):
        png_rgba(np.zeros((7, 3), np.uint32), [(5, 3)])
    with pytest.raises(ValueError, match="in order"):
        png_rgba(np.zeros((7, 3), np.uint32), [(3, 5), (4, 6)])


def test_a_figure_with_transparent_pixels_gets_full_frames_as_in_ipympl():
    ours, theirs = fast.figure(3, 2), ipympl_figure(3, 2)
    lines = []
    for fig in (ours, theirs):
        fig.patch.set_alpha(0.0)  # a see-through background: no diff frame can carry it
        lines.append(draw_line(fig))
    sent = [frames_of(fig.canvas) for fig in (ours, theirs)]
    for ydata in ([0, 1, 0], [1, 0, 1], [2, 2, 0]):
        for fig, line in zip((ours, theirs), lines):
            line.set_ydata(ydata)
            fig.canvas.draw()
    assert [mode for mode, _ in sent[0]] == [mode for mode, _ in sent[1]] == ["full"] * 3
    for (_, mine), (_, reference) in zip(*sent):
        assert np.array_equal(mine, reference)
    ours.patch.set_alpha(1.0)  # opaque again: diff frames again, after one full frame
    ours.canvas.draw()
    ours.canvas.draw()
    assert [mode for mode, _ in sent[0]][3:] == ["full", "diff"]


