"""A prompt whose input is a PDF: the template gets its text, `response.grounding` its pages and boxes."""

from __future__ import annotations

import base64
import json

import pytest

from dotprompt import InputValidationError, PromptLibrary, UsageError
from dotprompt.doubles import ScriptedModel
from dotprompt.errors import PromptFileError
from tests.documents.pdfmaker import TOLERANCE, Maker

PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    report{kind}: string\n    note?: string\noutput:\n"
          "  schema:\n    number: string\n    total: string\n---\nExtract from:\n{{{{ report }}}}\n")


def invoice() -> tuple[Maker, bytes]:
    maker = Maker()
    maker.text(72, 700, "INV-9001", key="number")
    maker.next_page()
    maker.text(200, 300, "1,234.50", key="total")
    return maker, maker.pdf()


def library(tmp_path, kind: str = "(pdf)", schema: str | None = None) -> PromptLibrary:
    text = PROMPT.format(kind=kind)
    if schema is not None:
        text = text.replace("    report(pdf): string\n", schema)
    (tmp_path / "invoice.prompt").write_text(text)
    return PromptLibrary(tmp_path)


def reply(model_output: dict) -> ScriptedModel:
    return ScriptedModel([json.dumps(model_output)])


@pytest.mark.parametrize("form", ["path", "bytes", "data_url"])
def test_the_template_receives_the_text_and_grounding_the_boxes(tmp_path, form):
    maker, pdf = invoice()
    (tmp_path / "inv.pdf").write_bytes(pdf)
    value = {"path": str(tmp_path / "inv.pdf"), "bytes": pdf,
             "data_url": "data:application/pdf;base64," + base64.b64encode(pdf).decode()}[form]
    prompt = library(tmp_path).load("invoice")
    rendered = prompt.render({"report": value})
    assert rendered.messages[0].content[0].text == "Extract from:\nINV-9001\f1,234.50"
    response = prompt({"report": value}, model=reply({"number": "INV-9001", "total": "1,234.50"}))
    for path, key in (("$.number", "number"), ("$.total", "total")):
        span, placed = response.grounding[path].spans[0], maker.placed[key]
        assert (span.variable, span.page) == ("report", placed.page)
        box = span.boxes[0]
        assert abs(box.x0 - placed.x0) <= TOLERANCE and abs(box.x1 - placed.x1) <= TOLERANCE
        assert abs(box.y0 - placed.y0) <= TOLERANCE and abs(box.y1 - placed.y1) <= TOLERANCE
    spans = response.to_dict()["grounding"]["fields"]["$.total"]["spans"]
    assert spans[0]["page"] == 2 and spans[0]["boxes"][0]["page"] == 2


def test_json_schema_marks_a_document_by_content_media_type(tmp_path):
    _, pdf = invoice()
    schema = "    report:\n      type: string\n      contentMediaType: application/pdf\n"
    prompt = library(tmp_path, schema=schema).load("invoice")
    assert "INV-9001" in prompt.render({"report": pdf}).messages[0].content[0].text


def test_an_unmarked_variable_is_left_as_it_is(tmp_path):
    prompt = library(tmp_path, kind="").load("invoice")
    assert "inv.pdf" in prompt.render({"report": "inv.pdf"}).messages[0].content[0].text


@pytest.mark.parametrize(("value", "says"), [
    ("notes.txt", "'notes.txt' is not a path to a .pdf file"),
    ("missing.pdf", "cannot read missing.pdf"),
    (b"hello", "is not a PDF (it does not start with %PDF-)"),
    (b"%PDF-1.7 garbage", "not a PDF PDFium can read"),
    ("data:application/pdf;base64,@@", "not valid base64"),
    (42, "expected a .pdf file's path, its bytes or a data: URL, got int"),
])
def test_a_value_that_is_no_pdf_is_an_input_error_naming_the_variable(tmp_path, monkeypatch, value, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("secret")
    prompt = library(tmp_path).load("invoice")
    with pytest.raises(InputValidationError) as caught:
        prompt.render({"report": value})
    assert "$.report" in str(caught.value) and says in str(caught.value)
    assert "contentMediaType: application/pdf" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_a_text_file_renamed_pdf_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "passwd.pdf").write_text("root:x:0:0")
    with pytest.raises(InputValidationError, match=r"passwd\.pdf is not a PDF") as caught:
        library(tmp_path).load("invoice").render({"report": "passwd.pdf"})
    assert "root" not in str(caught.value)


def test_picoschema_pdf_takes_a_string_only(tmp_path):
    (tmp_path / "bad.prompt").write_text("---\ninput:\n  schema:\n    report(pdf): number\n---\n{{ report }}\n")
    with pytest.raises(PromptFileError, match=r"a \(pdf\) field is a string"):
        PromptLibrary(tmp_path).load("bad")


MEDIA_PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    scan: string\noutput:\n  schema:\n"
                "    number: string\n    total: string\n---\n"
                "Extract:\n{{{{ media(url={url}, content_type=\"application/pdf\") }}}}\n")


@pytest.mark.parametrize("holder", ["variable", "literal"])
def test_a_pdf_media_part_is_grounded_with_its_boxes(tmp_path, holder):
    maker, pdf = invoice()
    url = "data:application/pdf;base64," + base64.b64encode(pdf).decode()
    template_url = "scan" if holder == "variable" else json.dumps(url)
    (tmp_path / "media.prompt").write_text(MEDIA_PROMPT.format(url=template_url))
    prompt = PromptLibrary(tmp_path).load("media")
    model = reply({"number": "INV-9001", "total": "1,234.50"})
    response = prompt({"scan": url if holder == "variable" else "unused"}, model=model)
    sent = model.requests[0].messages[0].content
    assert sent[1].media.content_type == "application/pdf" and sent[1].media.url == url  # the model gets the PDF itself
    span, placed = response.grounding["$.total"].spans[0], maker.placed["total"]
    assert span.variable == ("scan" if holder == "variable" else "media1")
    assert span.page == 2 and abs(span.boxes[0].x0 - placed.x0) <= TOLERANCE


def test_a_broken_pdf_media_part_is_an_error_naming_it(tmp_path):
    url = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.7 broken").decode()
    (tmp_path / "media.prompt").write_text(MEDIA_PROMPT.format(url="scan"))
    with pytest.raises(UsageError, match=r"media part scan \(application/pdf\).*not a PDF PDFium can read"):
        PromptLibrary(tmp_path).load("media")({"scan": url}, model=reply({"number": "x", "total": "y"}))


def test_picoschema_pdf_keeps_its_description():
    from dotprompt.schema.picoschema import to_json_schema

    schema = to_json_schema({"report(pdf)": "string, the signed contract", "pages?(pdf)": "string"}, {}.get)
    assert schema["properties"]["report"] == {"type": "string", "description": "the signed contract",
                                              "contentMediaType": "application/pdf"}
    assert schema["properties"]["pages"]["contentMediaType"] == "application/pdf"


def test_the_run_log_keeps_an_inline_pdf_as_its_size_and_hash(tmp_path):
    import sqlite3

    _, pdf = invoice()
    (tmp_path / "invoice.prompt").write_text(PROMPT.format(kind="(pdf)"))
    lib = PromptLibrary(tmp_path, log=str(tmp_path / "runs.db"))
    lib.load("invoice")({"report": pdf}, model=reply({"number": "INV-9001", "total": "1,234.50"}))
    assert lib.run_log.flush()
    with sqlite3.connect(tmp_path / "runs.db") as db:
        logged = json.loads(db.execute("select input from runs").fetchone()[0])
    assert logged["report"].startswith(f"<PDF given inline: {len(pdf):,} bytes, sha256 ")
