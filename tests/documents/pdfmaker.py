"""PDFs the tests make themselves (reportlab, no network, no system font), and where each value went.

`Maker` draws strings and remembers, for each, the box the test expects grounding to give back: from
the string's start `x` to `x + width`, from `baseline + descent` to `baseline + ascent`, in PDF points,
as the font's own metrics say. Fonts: Bitstream Vera, shipped inside reportlab and embedded (it has the
ﬁ and ﬂ ligatures), and STSong-Light, one of the CJK fonts every PDF reader carries (Adobe-GB1), so CJK
text needs no font file at all.
"""

from __future__ import annotations

import io
import os
import zlib
from dataclasses import dataclass, field

import reportlab
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

LATIN = "Vera"
CJK = "STSong-Light"
TOLERANCE = 2.0  # points: how close a box must be to where the string was drawn

pdfmetrics.registerFont(TTFont(LATIN, os.path.join(os.path.dirname(reportlab.__file__), "fonts", "Vera.ttf")))
pdfmetrics.registerFont(UnicodeCIDFont(CJK))


@dataclass
class Placed:
    text: str
    page: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass
class Maker:
    width: float = 612
    height: float = 792
    placed: dict[str, Placed] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.buffer = io.BytesIO()
        self.canvas = canvas.Canvas(self.buffer, pagesize=(self.width, self.height), pageCompression=1)
        self.page = 1

    def text(self, x: float, y: float, text: str, *, font: str = LATIN, size: float = 11, key: str | None = None) -> float:
        """Draw `text` with its baseline at `y`; remember its box under `key` (default: the text). Returns its width."""
        self.canvas.setFont(font, size)
        self.canvas.drawString(x, y, text)
        width = pdfmetrics.stringWidth(text, font, size)
        ascent, descent = pdfmetrics.getAscentDescent(font, size)
        self.placed[key or text] = Placed(text, self.page, x, y + descent, x + width, y + ascent)
        return width

    def line(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.canvas.line(x0, y0, x1, y1)

    def image(self, x: float, y: float, width: float, height: float) -> None:
        """A grey image, as a scanner would put a page: no text layer."""
        self.canvas.drawInlineImage(_grey_png(), x, y, width, height)

    def next_page(self, rotation: int = 0) -> None:
        """End this page (turned by `rotation` degrees: the page's /Rotate) and start the next."""
        self.canvas.setPageRotation(rotation)
        self.canvas.showPage()
        self.page += 1

    def pdf(self, rotation: int = 0) -> bytes:
        self.canvas.setPageRotation(rotation)
        self.canvas.showPage()
        self.canvas.save()
        return self.buffer.getvalue()


def _grey_png() -> object:
    from PIL import Image

    return Image.frombytes("L", (64, 64), bytes((x * 4) % 256 for x in range(64 * 64)))


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def png_rows(data: bytes) -> list[bytes]:
    """The unfiltered RGB rows of a PNG written with filter 0 (as dotprompt writes them)."""
    width, height = png_size(data)
    body, at = b"", 8
    while at < len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        if kind == b"IDAT":
            body += data[at + 8:at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(body)
    stride = 1 + 3 * width
    return [raw[r * stride + 1:(r + 1) * stride] for r in range(height)]
