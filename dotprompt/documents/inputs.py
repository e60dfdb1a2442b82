"""Input variables marked as PDF documents, read into their text before the template renders.

A top-level property of the input schema with `contentMediaType: application/pdf` (Picoschema:
`report(pdf): string`) is a document: its value may be the PDF's bytes, a path to a `.pdf` file
(`str` or `os.PathLike`, relative to the working folder) or a `data:application/pdf;base64,...` URL.
It becomes a `PdfText`: the text the template receives, which grounding maps back to pages and boxes.
A file that is not a PDF is refused before anything of it is read into the prompt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._util.cache import LRU
from ..errors import InputProblem, InputValidationError
from .layout import PdfText
from .pdf import PdfReadError, read_pdf

__all__ = ["PDF_MAX_BYTES", "PDF_MAX_PAGES", "PDF_MEDIA_TYPE",
           "document_fields", "loggable", "media_document", "pdf_bytes", "read_documents"]

# A PDF input larger or longer than these is refused with an error naming the variable, before its text
# is extracted.
PDF_MAX_BYTES: Final = 200 * 1024 * 1024
"""The largest PDF read as a document input, in bytes."""

PDF_MAX_PAGES: Final = 5_000
"""The most pages of one PDF read as a document input."""

PDF_MEDIA_TYPE = "application/pdf"
_DATA_URL = "data:application/pdf;base64,"
_MAGIC = b"%PDF-"
_READ: LRU[PdfText] = LRU(8)  # a prompt renders, then grounds, the same input: read each PDF once


def document_fields(schema: Any) -> list[str]:
    """The top-level input properties marked as PDF documents."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return []
    return [name for name, prop in properties.items()
            if isinstance(prop, Mapping) and prop.get("contentMediaType") == PDF_MEDIA_TYPE]


def read_documents(data: Any, fields: Sequence[str], prompt: str) -> Any:
    """`data` with each document variable (`fields`: `document_fields` of the input schema) replaced by
    its `PdfText`; an unreadable one is an `InputValidationError` naming the variable and what to pass instead."""
    if not fields or not isinstance(data, Mapping):
        return data
    out = dict(data)
    problems = []
    for name in fields:
        if name in out and out[name] is not None and not isinstance(out[name], PdfText):
            try:
                out[name] = _read(out[name], name)
            except PdfReadError as exc:
                problems.append(InputProblem(f"$.{name}", f"{exc} (the input schema marks it "
                                                          f"contentMediaType: {PDF_MEDIA_TYPE})"))
    if problems:
        raise InputValidationError(prompt, problems)
    return out


def loggable(data: Any, fields: Sequence[str]) -> Any:
    """`data` as the run log keeps it: a document given inline (bytes, a data: URL) as its size and hash,
    not megabytes of repr; a path stays a path (the run can be replayed from it). `fields`: `document_fields`."""
    if not fields or not isinstance(data, Mapping):
        return data
    out = dict(data)
    for name in fields:
        value = out.get(name)
        if isinstance(value, (bytes, bytearray, memoryview)) or (isinstance(value, str) and value.startswith("data:")):
            raw = bytes(value) if not isinstance(value, str) else value.encode()
            out[name] = f"<PDF given inline: {len(raw):,} bytes, sha256 {hashlib.sha256(raw).hexdigest()[:16]}>"
    return out


def media_document(url: str, content_type: str | None, name: str) -> PdfText | None:
    """The text of a media part that is a PDF given inline (a `data:` URL), read for grounding; None
    for any other part (an image, a PDF at an http URL, which is never fetched). A PDF that cannot be
    read is an error naming the part: the model would be sent a broken file."""
    if not url.startswith("data:"):
        return None
    header, comma, payload = url[len("data:"):].partition(",")
    params = header.split(";")
    if PDF_MEDIA_TYPE not in (params[0], content_type) or not comma or "base64" not in params[1:]:
        return None
    try:
        return _read(_DATA_URL + payload, name)
    except PdfReadError as exc:
        raise PdfReadError(f"media part {name} ({PDF_MEDIA_TYPE}): {exc}") from None


def pdf_bytes(value: Any) -> bytes:
    """The PDF a document value names (bytes, a .pdf path, a data: URL), checked as `read_documents` checks it."""
    return _checked(value)[0]


def _checked(value: Any) -> tuple[bytes, str]:
    data, where = _bytes_of(value)
    if len(data) > PDF_MAX_BYTES:
        raise PdfReadError(f"{where} is {len(data):,} bytes; at most {PDF_MAX_BYTES:,} are read "
                           "(PDF_MAX_BYTES, dotprompt/documents/inputs.py)")
    if not data.startswith(_MAGIC):
        raise PdfReadError(f"{where} is not a PDF (it does not start with %PDF-); pass a .pdf file's path or bytes")
    return data, where


def _read(value: Any, name: str) -> PdfText:
    data, where = _checked(value)
    digest = hashlib.sha256(data).hexdigest()
    found = _READ.get((name, digest), digest)
    if found is None:
        try:
            found = read_pdf(data, name, max_pages=PDF_MAX_PAGES)
        except PdfReadError as exc:
            raise PdfReadError(f"{where}: {exc}") from None
        _READ.put((name, digest), digest, found)
    return found


def _bytes_of(value: Any) -> tuple[bytes, str]:
    """The PDF's bytes and how to name where they came from in an error."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), "the bytes given"
    if isinstance(value, str) and value.startswith(_DATA_URL):
        try:
            return base64.b64decode(value[len(_DATA_URL):], validate=True), "the data: URL"
        except (binascii.Error, ValueError):
            raise PdfReadError("the data: URL is not valid base64") from None
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if not isinstance(path, str) or not path.lower().endswith(".pdf"):
            raise PdfReadError(f"{str(path)[:80]!r} is not a path to a .pdf file; pass a .pdf file's path, its bytes "
                               f"or a data:{PDF_MEDIA_TYPE};base64 URL")
        try:
            with open(path, "rb") as file:
                return file.read(PDF_MAX_BYTES + 1), path
        except OSError as exc:
            raise PdfReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    raise PdfReadError(f"expected a .pdf file's path, its bytes or a data: URL, got {type(value).__name__}")
