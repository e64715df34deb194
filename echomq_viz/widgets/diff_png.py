"""A figure frame as a PNG, compressing only the rows that changed.

A slider move changes a band of rows of the figure; ipympl sends the whole
figure each time, the unchanged pixels transparent (a "diff" frame). The
deflate stream of a PNG may be cut into pieces that each end on a byte
(a sync flush), so the rows outside the band, all zero bytes, come from a
small cache of compressed zero rows, and only the band is compressed. The
pixels a reader decodes are exactly those of any other PNG encoder.
"""

from __future__ import annotations

import functools
import struct
import zlib

import numpy as np

__all__ = ["png_rgba", "changed_rows"]

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


def changed_rows(changed: np.ndarray) -> tuple[int, int]:
    """The first and one past the last row of a 2-D boolean mask holding a
    True; ``(0, 0)`` when none does."""
    rows = np.flatnonzero(changed.any(axis=1))
    return (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 0)


def png_rgba(pixels: np.ndarray, start: int = 0, stop: int | None = None) -> bytes:
    """RGBA pixels (one native ``uint32`` per pixel, rows top first) as a PNG
    (8-bit RGBA, no filter). Rows outside ``start:stop`` must be all zero:
    they are written from the cache, never read."""
    height, width = pixels.shape
    stop = height if stop is None else stop
    if not 0 <= start <= stop <= height:
        raise ValueError(f"rows must be a range inside 0..{height}, got {start}..{stop}")
    row_bytes = 1 + 4 * width  # each row starts with its filter type, 0: none
    band = np.zeros((stop - start, row_bytes), np.uint8)
    band[:, 1:] = pixels[start:stop].view(np.uint8).reshape(stop - start, 4 * width)
    adler = _adler_zeros(1, start * row_bytes)
    adler = zlib.adler32(band, adler)
    adler = _adler_zeros(adler, (height - stop) * row_bytes)
    idat = b"".join([_ZLIB_HEADER, _zero_rows(row_bytes, start), _deflate(band),
                     _zero_rows(row_bytes, height - stop), _LAST_BLOCK, struct.pack(">I", adler)])
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return b"".join([_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", idat), _chunk(b"IEND", b"")])
