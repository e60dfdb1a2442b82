"""Documents as prompt input: a PDF's text layer with each character's page and box.

`read_pdf(data)` gives a `PdfText`, the text a template receives (a `str`, pages separated by a form
feed) that can say where any span of it is: `boxes(start, end)`, per page, in PDF points. Input
variables marked `contentMediaType: application/pdf` (Picoschema `report(pdf): string`) are read
this way before the template renders (`read_documents`). Needs the `[pdf]` extra (pypdfium2).
"""

from .layout import PAGE_BREAK, Box, PageInfo, PdfText
from .pdf import PdfReadError, read_pdf

__all__ = ["PAGE_BREAK", "Box", "PageInfo", "PdfReadError", "PdfText", "read_pdf"]
