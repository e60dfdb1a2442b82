"""A PDF page as a PNG image with boxes drawn on it: how the workbench shows where values were found.

PDFium renders the page as a viewer shows it (its `/Rotate` applied) and maps each box from PDF
coordinates to pixels (`FPDF_PageToDevice`), so a box lands on its text whatever the page's
rotation. The PNG is written here (zlib, no imaging library): the `[pdf]` extra is all it needs.
"""

from __future__ import annotations

import ctypes
import math
import struct
import zlib
from collections.abc import Sequence
from typing import Any, Final

from .layout import Box
from .pdf import PdfReadError, open_pdf

__all__ = ["HIGHLIGHT", "PDF_RENDER_MAX_PIXELS", "PDF_RENDER_SCALE", "page_png"]

PDF_RENDER_SCALE: Final = 1.5
"""Pixels per PDF point of a page the workbench shows (108 dpi): text readable, boxes sharp."""

PDF_RENDER_MAX_PIXELS: Final = 6_000_000
"""The largest page image drawn; a larger page (a poster, a map) is drawn at a smaller scale."""

HIGHLIGHT = (220, 20, 120)  # the boxes' outline: a magenta no printed page uses for text
_LINE = 2  # pixels


def page_png(data: bytes, page: int, boxes: Sequence[Box] = (), *, scale: float = PDF_RENDER_SCALE,
             max_pixels: int = PDF_RENDER_MAX_PIXELS) -> bytes:
    """Page `page` (1-based) of the PDF `data` as a PNG, each of `boxes` on that page outlined."""
    with open_pdf(data) as document:
        if not 1 <= page <= len(document):
            raise PdfReadError(f"there is no page {page}: the PDF has {len(document)}")
        handle = document[page - 1]
        try:
            width, height = handle.get_size()
            scale = min(scale, math.sqrt(max_pixels / max(width * height, 1.0)))
            bitmap = handle.render(scale=scale)
            size = bitmap.width, bitmap.height
            rgb = _rgb(bytes(bitmap.buffer), bitmap.width, bitmap.height, bitmap.stride, bitmap.n_channels)
            for box in boxes:
                if box.page == page:
                    _outline(rgb, size, _device_rect(handle, size, box))
        finally:
            handle.close()
    return _png(rgb, *size)


def _rgb(buffer: bytes, width: int, height: int, stride: int, channels: int) -> bytearray:
    """PDFium's BGR (or BGRx) rows as packed RGB rows."""
    out = bytearray(width * height * 3)
    for row in range(height):
        line = buffer[row * stride:row * stride + width * channels]
        at = row * width * 3
        out[at:at + width * 3:3] = line[2::channels]
        out[at + 1:at + width * 3:3] = line[1::channels]
        out[at + 2:at + width * 3:3] = line[0::channels]
    return out


def _device_rect(page: Any, size: tuple[int, int], box: Box) -> tuple[int, int, int, int]:
    """The box in pixels of the rendered page: left, top, right, bottom."""
    import pypdfium2.raw as raw

    xs, ys = [], []
    for x, y in ((box.x0, box.y0), (box.x1, box.y1)):
        dx, dy = ctypes.c_int(), ctypes.c_int()
        raw.FPDF_PageToDevice(page.raw, 0, 0, size[0], size[1], 0, x, y, ctypes.byref(dx), ctypes.byref(dy))
        xs.append(dx.value)
        ys.append(dy.value)
    return min(xs), min(ys), max(xs), max(ys)


def _outline(rgb: bytearray, size: tuple[int, int], rect: tuple[int, int, int, int]) -> None:
    width, height = size
    left, top = max(rect[0] - _LINE, 0), max(rect[1] - _LINE, 0)
    right, bottom = min(rect[2] + _LINE, width - 1), min(rect[3] + _LINE, height - 1)
    if left > right or top > bottom:
        return
    colour = bytes(HIGHLIGHT)
    for row in (*range(top, min(top + _LINE, bottom + 1)), *range(max(bottom - _LINE + 1, top), bottom + 1)):
        rgb[3 * (row * width + left):3 * (row * width + right + 1)] = colour * (right - left + 1)
    for row in range(top, bottom + 1):
        for column in (*range(left, min(left + _LINE, right + 1)), *range(max(right - _LINE + 1, left), right + 1)):
            rgb[3 * (row * width + column):3 * (row * width + column) + 3] = colour


def _png(rgb: bytearray, width: int, height: int) -> bytes:
    """RGB rows as a PNG (filter 0 on every row)."""
    stride = width * 3
    raw = b"".join(b"\x00" + bytes(rgb[row * stride:(row + 1) * stride]) for row in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
