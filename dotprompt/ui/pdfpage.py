"""A page of a live run's PDF input as an image, with the boxes of every value grounded on it outlined.

`GET /api/live/{id}/pdf?variable=report&page=2` answers a PNG (dotprompt/documents/render.py). The
PDF is the run's own input: a variable the prompt reads as a document, or one that holds the PDF as a
`data:` URL for a media part. Nothing else is read: the page never names a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..documents.inputs import pdf_bytes
from ..documents.layout import Box
from ..documents.pdf import PdfReadError
from ..documents.render import page_png
from ..errors import UsageError

__all__ = ["page_image"]


def page_image(live: Any, variable: str, page: int) -> bytes:
    """The PNG of `page` of the run's PDF input `variable`, its grounded boxes outlined."""
    response = getattr(live, "response", None)
    grounding = getattr(response, "grounding", None)
    if grounding is None:
        raise UsageError("this run has no grounding to show (it has not ended, or its output was not grounded)")
    value = live.input.get(variable) if isinstance(live.input, Mapping) else None
    if value is None:
        raise UsageError(f"the run's input has no PDF in {variable!r}; pages are shown for PDF input variables and "
                         "variables holding a PDF data: URL")
    try:
        return page_png(pdf_bytes(value), page, _boxes(grounding, variable, page))
    except PdfReadError as exc:
        raise UsageError(f"page {page} of {variable!r} cannot be shown: {exc}") from None


def _boxes(grounding: Any, variable: str, page: int) -> list[Box]:
    return [box for found in grounding.values() for span in found.spans if span.variable == variable
            for box in span.boxes if box.page == page]
