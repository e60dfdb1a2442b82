"""A PDF's text layer as one string, and the way back from any span of it to pages and boxes.

`PdfText` is the text a template receives (a `str`: pages in order, separated by a form feed, each
in the order its content stream draws it) and keeps, per character, the page it is on and its box.
Boxes are in PDF coordinates: points, in the page's user space (origin at the bottom left of the
media box, y up), before the page's `/Rotate` is applied, as PDF tools (pdf.js, PyMuPDF) give them.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PAGE_BREAK", "Box", "PageInfo", "PdfText"]

PAGE_BREAK = "\f"  # between two pages' texts, as pdftotext writes it: whitespace to every text rule
_LIGATURE_RUN = 8  # at most this many characters share one glyph's box (a ligature: f+f+i is 3)


@dataclass(frozen=True)
class Box:
    """A rectangle on one page (1-based), in PDF points: x0 left, y0 bottom, x1 right, y1 top."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float

    def to_dict(self) -> dict[str, Any]:
        return {"page": self.page, "x0": self.x0, "y0": self.y0, "x1": self.x1, "y1": self.y1}


@dataclass(frozen=True)
class PageInfo:
    """One page: its number (1-based), size in points, `/Rotate`, where its text is in the whole
    (`text[start:end]`), and whether it has a text layer (`has_text` False for a scanned page)."""

    number: int
    width: float
    height: float
    rotation: int
    start: int
    end: int
    has_text: bool
    has_images: bool

    @property
    def scanned(self) -> bool:
        """An image and no text: a scan (no OCR is run; its words are not in the text)."""
        return self.has_images and not self.has_text

    def to_dict(self) -> dict[str, Any]:
        return {"page": self.number, "width": self.width, "height": self.height, "rotation": self.rotation,
                "has_text": self.has_text, "scanned": self.scanned}


class PdfText(str):
    """The text of a PDF, with each character's page and box. Slicing or joining gives a plain `str`."""

    name: str
    pages: tuple[PageInfo, ...]
    _boxes: array[float]  # x0, y0, x1, y1 per character; NaN for a character drawn nowhere (a line break)
    _starts: list[int]

    def __new__(cls, text: str, boxes: array[float], pages: Sequence[PageInfo], name: str = "") -> PdfText:
        if len(boxes) != 4 * len(text):
            raise ValueError(f"{len(boxes)} box values for {len(text)} characters")
        made = super().__new__(cls, text)
        made.name = name
        made.pages = tuple(pages)
        made._boxes = boxes
        made._starts = [p.start for p in made.pages]
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # batch workers and the run log copy inputs
        return (PdfText, (str(self), self._boxes, self.pages, self.name))

    @property
    def page_texts(self) -> list[str]:
        """Each page's text, in order (`{% for page in report.page_texts %}`)."""
        return [str.__getitem__(self, slice(p.start, p.end)) for p in self.pages]

    @property
    def scanned_pages(self) -> list[int]:
        """Numbers of the pages that hold an image and no text layer."""
        return [p.number for p in self.pages if p.scanned]

    def page_at(self, offset: int) -> int | None:
        """The page number of the character at `offset`, None for a page break."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0 or offset >= self.pages[i].end:
            return None
        return self.pages[i].number

    def boxes(self, start: int, end: int) -> list[Box]:
        """The boxes of `text[start:end]`: one per line it covers on each page, in reading order."""
        out: list[Box] = []
        current: list[float] | None = None
        page = None
        for i in range(max(start, 0), min(end, len(self))):
            box = self._char_box(i)
            if box is None:
                continue
            here = self.page_at(i)
            if current is not None and here == page and _same_line(current, box):
                current = [min(current[0], box[0]), min(current[1], box[1]),
                           max(current[2], box[2]), max(current[3], box[3])]
                continue
            if current is not None and page is not None:
                out.append(Box(page, *_rounded(current)))
            current, page = list(box), here
        if current is not None and page is not None:
            out.append(Box(page, *_rounded(current)))
        return out

    def _char_box(self, i: int) -> tuple[float, float, float, float] | None:
        x0, y0, x1, y1 = self._boxes[4 * i:4 * i + 4]
        if math.isnan(x0):
            return None
        # A ligature's letters (pdfium gives f and i of `ﬁ` the glyph's box each) share its width.
        first, last = i, i
        while first > max(i - _LIGATURE_RUN, 0) and self._boxes[4 * first - 4:4 * first] == self._boxes[4 * i:4 * i + 4]:
            first -= 1
        while last + 1 < min(i + _LIGATURE_RUN, len(self)) and \
                self._boxes[4 * last + 4:4 * last + 8] == self._boxes[4 * i:4 * i + 4]:
            last += 1
        if first == last:
            return x0, y0, x1, y1
        share = (x1 - x0) / (last - first + 1)
        return x0 + share * (i - first), y0, x0 + share * (i - first + 1), y1


def _same_line(current: list[float], box: tuple[float, float, float, float]) -> bool:
    """Whether `box` continues the line of `current`: its middle within the line's height, and not
    far back to the left (the next line of a column starts left of where this one ends)."""
    middle = (box[1] + box[3]) / 2
    return current[1] <= middle <= current[3] and box[0] >= current[0] - 1


def _rounded(box: list[float]) -> tuple[float, float, float, float]:
    return round(box[0], 2), round(box[1], 2), round(box[2], 2), round(box[3], 2)
