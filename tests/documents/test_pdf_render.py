"""The workbench's page image: the page as a viewer shows it, each box outlined where its text is drawn."""

from __future__ import annotations

import pytest

from dotprompt.documents import Box, read_pdf
from dotprompt.documents.pdf import PdfReadError
from dotprompt.documents.render import HIGHLIGHT, page_png
from tests.documents.pdfmaker import Maker, png_rows, png_size


def pixel(rows: list[bytes], x: int, y: int) -> tuple[int, ...]:
    return tuple(rows[y][3 * x:3 * x + 3])


def highlighted(rows: list[bytes]) -> list[tuple[int, int]]:
    colour = bytes(HIGHLIGHT)
    return [(x, y) for y, row in enumerate(rows) for x in range(len(row) // 3) if row[3 * x:3 * x + 3] == colour]


def drawn_box(maker: Maker, rotation: int = 0) -> tuple[bytes, Box]:
    maker.text(100, 500, "Total 1,234.50", size=20)
    data = maker.pdf(rotation=rotation)
    text = read_pdf(data)
    return data, text.boxes(0, len(text))[0]


def test_the_box_is_outlined_around_its_text():
    data, box = drawn_box(Maker())
    png = page_png(data, 1, [box], scale=1.0)
    assert png_size(png) == (612, 792)
    rows = png_rows(png)
    marked = highlighted(rows)
    xs, ys = [x for x, _ in marked], [y for _, y in marked]
    # PDF y grows upwards from the page's foot; pixel rows grow downwards from its top.
    assert abs(min(xs) - box.x0) <= 3 and abs(max(xs) - box.x1) <= 3
    assert abs(min(ys) - (792 - box.y1)) <= 3 and abs(max(ys) - (792 - box.y0)) <= 3
    inside = [pixel(rows, x, y) for y in range(int(792 - box.y1) + 3, int(792 - box.y0) - 2)
              for x in range(int(box.x0) + 3, int(box.x1) - 2)]
    assert any(p[0] < 100 for p in inside), "the text is drawn inside the box"


def test_a_rotated_page_is_shown_upright_with_its_box_turned_too():
    data, box = drawn_box(Maker(), rotation=90)
    png = page_png(data, 1, [box], scale=1.0)
    assert png_size(png) == (612, 792)  # a landscape media box turned by /Rotate 90: upright
    marked = highlighted(png_rows(png))
    xs, ys = [x for x, _ in marked], [y for _, y in marked]
    # Turned clockwise: the PDF's y runs left to right, its x top to bottom.
    assert abs(min(xs) - box.y0) <= 3 and abs(max(xs) - box.y1) <= 3
    assert abs(min(ys) - box.x0) <= 3 and abs(max(ys) - box.x1) <= 3


def test_a_huge_page_is_drawn_smaller():
    maker = Maker(width=14400, height=14400)
    maker.text(100, 100, "x")
    width, height = png_size(page_png(maker.pdf(), 1, scale=2.0, max_pixels=1_000_000))
    assert width * height <= 1_000_000 and width > 900


def test_a_page_that_does_not_exist_is_an_error():
    maker = Maker()
    maker.text(100, 100, "x")
    with pytest.raises(PdfReadError, match="there is no page 3: the PDF has 1"):
        page_png(maker.pdf(), 3)
