"""Hostile PDFs: each is read, or refused with a clear error, in bounded time and memory.

Each case runs in a child process with a time and memory limit (tests/isolation.py)."""

from __future__ import annotations

import json

import pytest

from tests.isolation import assert_finishes

pytestmark = pytest.mark.slow  # child processes

PRELUDE = r'''
import json, zlib
from dotprompt.documents import PdfReadError, read_pdf

def pdf(objects, root=1):
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)

def page(content, parent=2):
    stream = zlib.compress(content)
    return [b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>" % parent,
            b"<< /Filter /FlateDecode /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]

def outcome(data, **kwargs):
    try:
        text = read_pdf(data, "report", **kwargs)
    except PdfReadError as exc:
        print(json.dumps({"error": str(exc)}))
    else:
        print(json.dumps({"text": str(text)[:200], "pages": len(text.pages)}))
'''

GOOD = b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
CASES = {
    "garbage after the header": ("outcome(b'%PDF-1.7\\n' + bytes(range(256)) * 400)",
                                 lambda r: "not a PDF PDFium can read" in r["error"]),
    "a page tree that holds itself": (
        "outcome(pdf([b'<< /Type /Catalog /Pages 2 0 R >>', b'<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>',"
        " *page(b'BT /F1 12 Tf 72 700 Td (Loop) Tj ET')]))",
        lambda r: "page 2 cannot be read" in r.get("error", "") or r["pages"] <= 2),
    "a truncated file": (
        "data = pdf([b'<< /Type /Catalog /Pages 2 0 R >>', b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',"
        " *page(b'BT /F1 12 Tf 72 700 Td (Half a file) Tj ET')])\noutcome(data[:len(data) * 2 // 3])",
        lambda r: "error" in r or "Half a file" in r["text"]),
    "more pages than the limit": (
        "outcome(pdf([b'<< /Type /Catalog /Pages 2 0 R >>',"
        " b'<< /Type /Pages /Kids [3 0 R 3 0 R 3 0 R] /Count 3 >>',"
        " *page(b'BT /F1 12 Tf 72 700 Td (Page) Tj ET')]), max_pages=2)",
        lambda r: "at most 2 are read" in r.get("error", "") or r["pages"] <= 2),
    "a million text objects in one small stream": (
        "outcome(pdf([b'<< /Type /Catalog /Pages 2 0 R >>', b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',"
        " *page(b'BT /F1 12 Tf 72 700 Td (A) Tj ET\\n' * 200_000)]))", lambda r: r["pages"] == 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_pdf_is_read_or_refused_within_limits(name):
    code, check = CASES[name]
    result = assert_finishes(PRELUDE + code, timeout=60, memory_mb=1500).json()
    assert check(result), json.dumps(result)[:500]
