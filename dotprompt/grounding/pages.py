"""Spans found in a PDF input, placed on its pages: each gets the page and the boxes it covers.

Text grounding works on the text alone; this step runs after it, for the variables whose text is a
`PdfText` (dotprompt/documents), and adds where each span is drawn: `Span.page`, `Span.boxes`, and
which pages hold no text layer (`Grounding.pages_without_text`: a scan, whose words cannot be found).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ..documents.layout import PdfText
from .result import FieldGrounding, Grounding, Span

__all__ = ["documents_in", "with_pages"]


def documents_in(sources: Mapping[str, str]) -> dict[str, PdfText]:
    """The named texts that are PDF documents."""
    return {name: text for name, text in sources.items() if isinstance(text, PdfText)}


def with_pages(grounding: Grounding, documents: Mapping[str, PdfText]) -> Grounding:
    """`grounding` with every span that falls in one of `documents` placed on its page and boxes."""
    if not documents:
        return grounding
    fields = {path: _placed(found, documents) for path, found in grounding.fields.items()}
    scanned = {name: text.scanned_pages for name, text in documents.items() if text.scanned_pages}
    return Grounding(fields, grounding.skipped, scanned)


def _placed(found: FieldGrounding, documents: Mapping[str, PdfText]) -> FieldGrounding:
    if not any(span.variable in documents for span in found.spans):
        return found
    return dataclasses.replace(found, spans=tuple(_span(span, documents.get(span.variable)) for span in found.spans))


def _span(span: Span, document: PdfText | None) -> Span:
    if document is None:
        return span
    boxes = tuple(document.boxes(span.start, span.end))
    page = boxes[0].page if boxes else document.page_at(span.start)
    return dataclasses.replace(span, page=page, boxes=boxes)
