"""The workbench on a PDF input: a run's grounding names pages, and a page is drawn with its boxes outlined.

A real `dotprompt ui` on loopback (its model a scripted double the project defines), driven over HTTP
and in Debian's chromium.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
import httpx

from dotprompt.documents.render import HIGHLIGHT
from tests.documents.pdfmaker import Maker, png_rows, png_size
from tests.ui.workbench_project import environment, running_ui

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel

define_model(ScriptedModel([{reply!r}] * 50), name="scripted")
'''
PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    report(pdf): string, the invoice\noutput:\n  schema:\n"
          "    number: string\n    total: string\n---\nExtract: {{ report }}\n")
REPLY = {"number": "INV-77", "total": "310.00"}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, Maker]:
    root = tmp_path_factory.mktemp("pdf-workbench")
    (root / "prompts").mkdir()
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["tools.py"]\n')
    (root / "tools.py").write_text(TOOLS.format(reply=json.dumps(REPLY)))
    (root / "prompts" / "invoice.prompt").write_text(PROMPT)
    maker = Maker()
    maker.text(72, 700, "Invoice INV-77", key="number")
    maker.next_page()
    maker.text(300, 200, "Total 310.00", key="total")
    (root / "invoice.pdf").write_bytes(maker.pdf())
    return root, maker


@pytest.fixture(scope="module")
def workbench(project) -> tuple[str, Path, Maker]:
    root, maker = project
    with running_ui(root, environment("http://127.0.0.1:9/v1", root)) as url:
        yield url, root, maker


def finished_run(url: str) -> tuple[httpx.Client, str, dict]:
    http = httpx.Client(base_url=url, timeout=30)
    token = http.get("/api/session").json()["token"]
    started = http.post("/api/live", json={"name": "invoice", "input": {"report": "invoice.pdf"}},
                        headers={"x-csrf-token": token})
    assert started.status_code == 200, started.text
    run = started.json()["id"]
    events = []
    with http.stream("GET", f"/api/live/{run}/events") as stream:
        events = [json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: ")]
    return http, run, next(e for e in events if e["type"] == "done")


def test_the_run_shows_pages_and_a_page_is_drawn_with_its_boxes(workbench):
    url, _, maker = workbench
    http, run, done = finished_run(url)
    total = done["grounding"]["fields"]["$.total"]["spans"][0]
    assert total["page"] == 2 and total["variable"] == "report"
    answer = http.get(f"/api/live/{run}/pdf", params={"variable": "report", "page": 2})
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    width, height = png_size(answer.content)
    scale = width / 612
    assert abs(height / 792 - scale) < 0.01
    rows = png_rows(answer.content)
    marked = [(x, y) for y, row in enumerate(rows) for x in range(width) if row[3 * x:3 * x + 3] == bytes(HIGHLIGHT)]
    placed = maker.placed["total"]
    xs, ys = [x / scale for x, _ in marked], [792 - y / scale for _, y in marked]
    # The outline runs around where the test drew "Total 310.00"'s amount (PDF y upwards), a few pixels out.
    assert min(xs) > placed.x0 + 20 and abs(max(xs) - placed.x1) <= 4
    assert abs(min(ys) - placed.y0) <= 4 and abs(max(ys) - placed.y1) <= 4


def test_a_page_of_a_variable_that_is_no_pdf_is_a_clear_error(workbench):
    url, _, _ = workbench
    http, run, _ = finished_run(url)
    answer = http.get(f"/api/live/{run}/pdf", params={"variable": "other", "page": 1})
    assert answer.status_code == 400 and "has no PDF in 'other'" in answer.json()["error"]["message"]
    assert http.get("/api/live/nope/pdf", params={"variable": "report", "page": 1}).status_code == 404


def test_in_the_browser_a_page_link_shows_the_page(page, workbench):
    url, _, _ = workbench
    page.goto(url + "#/prompt/invoice")
    page.wait_for_selector("#view[data-testid=ready]")
    page.fill("#field-report", "invoice.pdf")  # a path, read by the server from its working folder
    page.click("#run")
    page.wait_for_selector("#grounding")
    assert "page 2" in page.locator("#grounding").inner_text()
    page.locator("[data-testid=pdf-page-link]").last.click()
    image = page.locator("#pdf-page img")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not image.evaluate("i => i.complete && i.naturalWidth > 0"):
        time.sleep(0.1)
    assert image.evaluate("i => i.naturalWidth") > 600
    assert page.errors == []
