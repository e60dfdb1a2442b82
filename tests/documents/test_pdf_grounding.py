"""PDF grounding on every page kind: each value's box within 2 pt of where the test drew it.

The PDFs are made here (tests/documents/pdfmaker.py): several pages, two columns, a table, a page
turned by /Rotate, CJK text, ligatures and a scanned page with no text layer.
"""

from __future__ import annotations

import pytest

from dotprompt.documents import PAGE_BREAK, PdfText, read_pdf
from dotprompt.grounding import ground, input_sources
from tests.documents.pdfmaker import CJK, TOLERANCE, Maker


def assert_placed(found, placed) -> None:
    """The value's first span is on the page it was drawn on, in one box around where it was drawn."""
    assert found.grounded, found
    span = found.spans[0]
    assert span.page == placed.page, (span, placed)
    assert len(span.boxes) == 1, span.boxes
    box = span.boxes[0]
    assert box.page == placed.page
    for got, want in zip((box.x0, box.y0, box.x1, box.y1), (placed.x0, placed.y0, placed.x1, placed.y1), strict=True):
        assert abs(got - want) <= TOLERANCE, (box, placed)


def grounded(maker: Maker, output: dict, pdf: bytes | None = None):
    text = read_pdf(pdf if pdf is not None else maker.pdf(), "report")
    return text, ground(output, input_sources({"report": text}))


def test_several_pages_each_value_on_its_page():
    maker = Maker()
    maker.text(72, 720, "Invoice INV-2041")
    maker.text(72, 700, "Issued 14 March 2026")
    maker.next_page()
    maker.text(300, 400, "Subtotal 1,180.00 EUR")
    maker.next_page()
    maker.text(90, 120, "Signed by Maria Lopez")
    text, found = grounded(maker, {"number": "INV-2041", "subtotal": "1,180.00", "signer": "Maria Lopez"})
    assert [p.number for p in text.pages] == [1, 2, 3]
    assert text.count(PAGE_BREAK) == 2 and "Subtotal" in text.page_texts[1]
    placed = maker.placed
    assert_placed(found["$.number"], _part(placed["Invoice INV-2041"], "INV-2041"))
    assert_placed(found["$.subtotal"], _part(placed["Subtotal 1,180.00 EUR"], "1,180.00"))
    assert_placed(found["$.signer"], _part(placed["Signed by Maria Lopez"], "Maria Lopez"))


def test_two_columns_read_column_by_column():
    maker = Maker()
    left = ["The supplier delivers", "within ten days of", "each purchase order."]
    right = ["Payment is due", "thirty days after", "invoice receipt."]
    for i, line in enumerate(left):
        maker.text(72, 700 - 14 * i, line)
    for i, line in enumerate(right):
        maker.text(320, 700 - 14 * i, line)
    text, found = grounded(maker, {"term": "thirty days after", "delivery": "within ten days of"})
    assert text.index("each purchase order.") < text.index("Payment is due")  # the left column first
    assert_placed(found["$.term"], maker.placed["thirty days after"])
    assert_placed(found["$.delivery"], maker.placed["within ten days of"])


def test_a_table_cell_by_cell():
    maker = Maker()
    rows = [("Item", "Qty", "Amount"), ("Blue widget", "12", "144.00"), ("Red gadget", "3", "87.50")]
    for r, row in enumerate(rows):
        y = 700 - 20 * r
        for c, cell in enumerate(row):
            maker.text(80 + 150 * c, y, cell, key=f"{r},{c}")
        maker.line(72, y - 6, 522, y - 6)
    for c in range(4):
        maker.line(72 + 150 * c, 714, 72 + 150 * c, 654)
    _, found = grounded(maker, {"items": [{"name": "Red gadget", "qty": 3, "amount": 87.5}]})
    assert_placed(found["$.items[0].name"], maker.placed["2,0"])
    assert_placed(found["$.items[0].amount"], maker.placed["2,2"])
    assert found["$.items[0].qty"].spans[0].text == "3"
    assert_placed(found["$.items[0].qty"], maker.placed["2,1"])


def test_a_rotated_page_keeps_pdf_coordinates():
    maker = Maker()
    maker.text(72, 700, "Cover page")
    maker.next_page()
    maker.text(100, 500, "Contract number C-77812")
    text, found = grounded(maker, {"contract": "C-77812"}, pdf=maker.pdf(rotation=90))
    assert [p.rotation for p in text.pages] == [0, 90]
    # reportlab writes a turned page as a landscape media box shown upright: 792 x 612 in its own user space
    assert (text.pages[1].width, text.pages[1].height) == (792, 612)
    assert_placed(found["$.contract"], _part(maker.placed["Contract number C-77812"], "C-77812"))


def test_cjk_text():
    maker = Maker()
    maker.text(100, 600, "发票号码", font=CJK, size=14)
    maker.text(100, 570, "合同金额", font=CJK, size=14)
    text, found = grounded(maker, {"label": "合同金额"})
    assert "发票号码" in text
    assert found["$.label"].status == "exact"
    assert_placed(found["$.label"], maker.placed["合同金额"])


def test_ligatures_are_their_letters_and_share_the_glyph_box():
    maker = Maker()
    maker.text(72, 700, "The ﬁnancial oﬃcer", key="line")  # ﬃ is not in Vera: written as f, f, i
    maker.text(72, 680, "ﬁnal ﬂoor plan", key="plan")
    text, found = grounded(maker, {"plan": "final floor plan"})
    assert "final floor plan" in text and "ﬁ" not in text and "ﬂ" not in text
    assert found["$.plan"].status == "exact"
    assert_placed(found["$.plan"], maker.placed["plan"])
    start = text.index("final")
    f_box, i_box = text.boxes(start, start + 1)[0], text.boxes(start + 1, start + 2)[0]
    assert f_box.x1 == pytest.approx(i_box.x0, abs=0.01) and f_box.x0 < i_box.x0  # the glyph's width, shared


def test_a_scanned_page_is_reported_and_holds_no_text():
    maker = Maker()
    maker.text(72, 700, "Page one has text")
    maker.next_page()
    maker.image(36, 36, 540, 720)
    maker.next_page()
    maker.text(72, 700, "Page three total 99.10")
    text, found = grounded(maker, {"total": 99.1, "stamp": "APPROVED"})
    assert text.scanned_pages == [2]
    assert [p.has_text for p in text.pages] == [True, False, True]
    assert text.page_texts[1] == ""
    assert_placed(found["$.total"], _part(maker.placed["Page three total 99.10"], "99.10"))
    assert found["$.stamp"].status == "ungrounded"


def test_a_span_over_two_lines_has_a_box_per_line():
    maker = Maker()
    maker.text(72, 700, "Ship to: Unit 4, Harbour")
    maker.text(72, 686, "Road, Leith")
    _, found = grounded(maker, {"address": "Unit 4, Harbour Road, Leith"})
    span = found["$.address"].spans[0]
    assert found["$.address"].status == "normalised"  # a line break where the value has a space
    assert [b.page for b in span.boxes] == [1, 1]
    first, second = span.boxes
    assert abs(first.x0 - _part(maker.placed["Ship to: Unit 4, Harbour"], "Unit 4, Harbour").x0) <= TOLERANCE
    assert abs(second.x1 - maker.placed["Road, Leith"].x1) <= TOLERANCE and second.y1 < first.y0 + 1


def test_spans_serialise_with_page_and_boxes():
    maker = Maker()
    maker.text(72, 700, "Order 5512")
    _, found = grounded(maker, {"order": "5512"})
    span = found.to_dict()["fields"]["$.order"]["spans"][0]
    assert span["page"] == 1 and set(span["boxes"][0]) == {"page", "x0", "y0", "x1", "y1"}


def test_text_inputs_carry_no_page():
    found = ground({"a": "Order 5512"}, {"text": "Order 5512"})
    assert found["$.a"].spans[0].page is None and "page" not in found.to_dict()["fields"]["$.a"]["spans"][0]


def test_pdf_text_is_a_str_that_pickles_with_its_layout():
    import pickle

    maker = Maker()
    maker.text(72, 700, "Order 5512")
    text = read_pdf(maker.pdf(), "report")
    copy = pickle.loads(pickle.dumps(text))
    assert isinstance(copy, PdfText) and copy == text and copy.boxes(6, 10) == text.boxes(6, 10)


def _part(placed, part: str):
    """The box of `part` inside a drawn string: the string's box cut at the part's width."""
    from reportlab.pdfbase import pdfmetrics

    from tests.documents.pdfmaker import LATIN, Placed

    before = placed.text[:placed.text.index(part)]
    size = (placed.y1 - placed.y0) / sum(abs(v) for v in pdfmetrics.getAscentDescent(LATIN, 1))
    x0 = placed.x0 + pdfmetrics.stringWidth(before, LATIN, size)
    return Placed(part, placed.page, x0, placed.y0, x0 + pdfmetrics.stringWidth(part, LATIN, size), placed.y1)


def test_a_value_across_a_page_break_has_a_box_on_each_page():
    maker = Maker()
    maker.text(72, 60, "Deliver to Harbour", key="first")
    maker.next_page()
    maker.text(72, 740, "Road 12, Leith", key="second")
    text, found = grounded(maker, {"address": "Harbour Road 12"})
    span = found["$.address"].spans[0]
    assert span.page == 1 and [b.page for b in span.boxes] == [1, 2]
    assert abs(span.boxes[1].x0 - maker.placed["second"].x0) <= TOLERANCE
    assert PAGE_BREAK in text[span.start:span.end]
