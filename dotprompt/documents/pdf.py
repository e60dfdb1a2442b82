"""Read a PDF's text layer with positions: the one door to pypdfium2 (the `[pdf]` extra).

pypdfium2 binds PDFium, the PDF engine of Chromium: it reads what real PDFs hold (CID fonts and
their CMaps, ToUnicode maps, ligatures, rotated pages) at C speed, gives each character's box, and
renders pages for the workbench, all from one wheel with no system library. PDFium is not
thread-safe, so every call into it holds one lock.
"""

from __future__ import annotations

import ctypes
import threading
import unicodedata
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .layout import PAGE_BREAK, PageInfo, PdfText

__all__ = ["PDFIUM_LOCK", "PdfReadError", "open_pdf", "read_pdf"]

PDFIUM_LOCK = threading.RLock()
_NAN = float("nan")
_NO_BOX = (_NAN, _NAN, _NAN, _NAN)
_LIGATURES = {chr(c) for c in range(0xFB00, 0xFB07)}  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ: written as their letters
_UNMAPPED = "\ufffd"  # a glyph with no Unicode (no ToUnicode entry): a replacement character, never NUL


class PdfReadError(ValueError):
    """The bytes are not a PDF pypdfium2 can open, or pypdfium2 is not installed."""


def _pdfium() -> tuple[Any, Any]:
    try:
        import pypdfium2
        import pypdfium2.raw
    except ImportError:
        raise PdfReadError("reading PDF inputs needs pypdfium2: pip install 'dotprompt[pdf]'") from None
    return pypdfium2, pypdfium2.raw


@contextmanager
def open_pdf(data: bytes) -> Iterator[Any]:
    """The PDF as a pypdfium2 document, under the lock, closed after."""
    pdfium, _ = _pdfium()
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise PdfReadError(f"not a PDF PDFium can read ({exc})") from None
        try:
            yield document
        finally:
            document.close()


def read_pdf(data: bytes, name: str = "", max_pages: int | None = None) -> PdfText:
    """The text layer of the PDF `data`, page by page, with each character's box."""
    _, raw = _pdfium()
    pieces: list[str] = []
    boxes: array[float] = array("f")
    pages: list[PageInfo] = []
    at = 0
    with open_pdf(data) as document:
        count = len(document)
        if max_pages is not None and count > max_pages:
            raise PdfReadError(f"{count:,} pages; at most {max_pages:,} are read (PDF_MAX_PAGES, dotprompt/documents/inputs.py)")
        for index in range(count):
            if index:
                pieces.append(PAGE_BREAK)
                boxes.extend(_NO_BOX)
                at += 1
            page = _page(document, index)
            try:
                text, page_boxes, has_images = _read_page(raw, page)
                width, height, rotation = _geometry(page)
            finally:
                page.close()
            pieces.append(text)
            boxes.extend(page_boxes)
            pages.append(PageInfo(index + 1, width, height, rotation, at, at + len(text), bool(text.strip()),
                                  has_images))
            at += len(text)
    return PdfText("".join(pieces), boxes, pages, name)


def _page(document: Any, index: int) -> Any:
    pdfium, _ = _pdfium()
    try:
        return document[index]
    except pdfium.PdfiumError as exc:
        raise PdfReadError(f"page {index + 1} cannot be read ({exc}); is the file damaged?") from None


def _read_page(raw: Any, page: Any) -> tuple[str, array[float], bool]:
    """One page's characters as text and boxes: pdfium's line breaks (`\\r\\n`) become `\\n` with no
    box; a ligature glyph becomes its letters, each with the glyph's box. The text comes in one call and
    the boxes in one tight loop: a 50-page PDF is read in well under a second."""
    textpage = page.get_textpage()
    try:
        handle = textpage.raw
        count = raw.FPDFText_CountChars(handle)
        text = _page_text(raw, handle, count)
        if len(text) != count:  # a character outside the BMP (two UTF-16 units): read one by one
            text = _text_by_char(raw, handle, count)
        boxes = _char_boxes(raw, handle, count)
    finally:
        textpage.close()
    text = text.replace("\x00", _UNMAPPED).replace("\ufffe", _UNMAPPED).replace("\uffff", _UNMAPPED)
    text, boxes = _line_breaks(text, boxes)
    if any(c in _LIGATURES for c in text):
        text, boxes = _ligatures(text, boxes)
    return text, boxes, _has_images(raw, page)


def _page_text(raw: Any, handle: Any, count: int) -> str:
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    written = raw.FPDFText_GetText(handle, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
    return buffer.raw[:max(written - 1, 0) * 2].decode("utf-16-le", errors="replace")


def _text_by_char(raw: Any, handle: Any, count: int) -> str:
    codes = (raw.FPDFText_GetUnicode(handle, i) for i in range(count))
    return "".join(chr(c) if 0 < c < 0x110000 else _UNMAPPED for c in codes)


def _char_boxes(raw: Any, handle: Any, count: int) -> array[float]:
    values: list[float] = []
    add = values.extend
    rect = raw.FS_RECTF()
    pointer = ctypes.byref(rect)
    loose = raw.FPDFText_GetLooseCharBox
    for i in range(count):
        add((rect.left, rect.bottom, rect.right, rect.top) if loose(handle, i, pointer) else _NO_BOX)
    return array("f", values)


def _line_breaks(text: str, boxes: array[float]) -> tuple[str, array[float]]:
    """`\\r\\n` (pdfium's line break) as `\\n`, drawn nowhere."""
    if "\n" not in text and "\r" not in text:
        return text, boxes
    out_text: list[str] = []
    out_boxes: array[float] = array("f")
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out_text.append(body)
        out_boxes.extend(boxes[4 * at:4 * (at + len(body))])
        if len(body) < len(line):
            out_text.append("\n")
            out_boxes.extend(_NO_BOX)
        at += len(line)
    return "".join(out_text), out_boxes


def _ligatures(text: str, boxes: array[float]) -> tuple[str, array[float]]:
    """A ligature character left as one (`ﬁ`) written as its letters, each with the glyph's box."""
    out_text: list[str] = []
    out_boxes: array[float] = array("f")
    for i, char in enumerate(text):
        letters = unicodedata.normalize("NFKC", char) if char in _LIGATURES else char
        out_text.append(letters)
        for _ in letters:
            out_boxes.extend(boxes[4 * i:4 * i + 4])
    return "".join(out_text), out_boxes


def _has_images(raw: Any, page: Any) -> bool:
    handle = page.raw
    return any(raw.FPDFPageObj_GetType(raw.FPDFPage_GetObject(handle, i)) == raw.FPDF_PAGEOBJ_IMAGE
               for i in range(raw.FPDFPage_CountObjects(handle)))


def _geometry(page: Any) -> tuple[float, float, int]:
    """Width and height of the page in its user space (before `/Rotate`, as the boxes are), and `/Rotate`."""
    width, height = page.get_size()  # as displayed: turned by /Rotate
    rotation = int(page.get_rotation())
    if rotation in (90, 270):
        width, height = height, width
    return round(width, 2), round(height, 2), rotation
