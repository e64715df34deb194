"""A figure frame as a PNG, compressing only the rows that changed.

A slider move changes a few runs of rows of the figure; ipympl sends the
whole figure each time, the unchanged pixels transparent (a "diff" frame).
The deflate stream of a PNG may be cut into pieces that each end on a byte
(a sync flush), so the rows outside the runs, all zero bytes, come from a
small cache of compressed zero rows, and only the runs are compressed. The
pixels a reader decodes are exactly those of any other PNG encoder.
"""

from __future__ import annotations

import functools
import struct
import zlib
from typing import Sequence

import numpy as np

__all__ = ["png_rgba", "changed_runs"]

LEVEL = 1  # zlib level: a few kB on localhost, and cheap
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x01"  # deflate, 32 kB window, no dictionary
_LAST_BLOCK = b"\x03\x00"  # an empty final block ends the deflate stream
_ADLER_MOD = 65521


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _deflate(data) -> bytes:
    """``data`` as raw deflate blocks ending on a byte: a piece of a longer stream."""
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)


@functools.lru_cache(maxsize=256)
def _zero_rows_power(row_bytes: int, rows: int) -> bytes:
    return _deflate(bytes(row_bytes * rows))


def _zero_rows(row_bytes: int, rows: int) -> bytes:
    """``rows`` rows of zero bytes, deflated: one cached piece per power of two."""
    return b"".join(_zero_rows_power(row_bytes, 1 << bit) for bit in range(rows.bit_length()) if rows >> bit & 1)


def _adler_zeros(adler: int, count: int) -> int:
    """The Adler-32 checksum ``adler`` continued over ``count`` zero bytes."""
    low, high = adler & 0xFFFF, adler >> 16
    return ((high + count * low) % _ADLER_MOD) << 16 | low


def changed_runs(changed: np.ndarray, gap: int = 8) -> list[tuple[int, int]]:
    """The runs of rows of a 2-D boolean mask that hold a True, as
    ``(start, stop)``; runs at most ``gap`` unchanged rows apart are one run
    (each run costs a piece of its own)."""
    rows = np.flatnonzero(changed.any(axis=1))
    if not rows.size:
        return []
    breaks = np.flatnonzero(np.diff(rows) > gap + 1)
    starts = [int(rows[0]), *(int(r) for r in rows[breaks + 1])]
    stops = [*(int(r) + 1 for r in rows[breaks]), int(rows[-1]) + 1]
    return list(zip(starts, stops))


def png_rgba(pixels: np.ndarray, runs: Sequence[tuple[int, int]] | None = None) -> bytes:
    """RGBA pixels (one native ``uint32`` per pixel, rows top first) as a PNG
    (8-bit RGBA, no filter). With ``runs`` (row ranges, in order, apart),
    the rows outside them must be all zero: they are written from the cache,
    never read."""
    height, width = pixels.shape
    runs = [(0, height)] if runs is None else list(runs)
    if any(not 0 <= start <= stop <= height for start, stop in runs) or any(
            stop > start for (_, stop), (start, _) in zip(runs, runs[1:])):
        raise ValueError(f"runs must be row ranges in order inside 0..{height}, got {runs}")
    row_bytes = 1 + 4 * width  # each row starts with its filter type, 0: none
    idat, adler, row = [_ZLIB_HEADER], 1, 0
    for start, stop in runs:
        band = np.zeros((stop - start, row_bytes), np.uint8)
        band[:, 1:] = pixels[start:stop].view(np.uint8).reshape(stop - start, 4 * width)
        adler = zlib.adler32(band, _adler_zeros(adler, (start - row) * row_bytes))
        idat += [_zero_rows(row_bytes, start - row), _deflate(band)]
        row = stop
    adler = _adler_zeros(adler, (height - row) * row_bytes)
    idat += [_zero_rows(row_bytes, height - row), _LAST_BLOCK, struct.pack(">I", adler)]
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return b"".join([_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", b"".join(idat)), _chunk(b"IEND", b"")])
