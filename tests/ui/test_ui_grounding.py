"""The workbench shows grounding (Debian's chromium): a logged run's values with their spans marked in
the input text and the ungrounded ones marked, and the same per row of an eval report (the invoice
example's eval, run for real on its recordings)."""

from __future__ import annotations

import json

import pytest

from tests.cli_process import dotprompt
from tests.conftest import ROOT
from tests.ui.workbench_project import running_ui

pytestmark = pytest.mark.slow  # a browser and a real server: the full run, not the fast loop

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel

define_model(ScriptedModel([{reply!r}] * 5), name="scripted")
'''
PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    text: string\n    ref: string\noutput:\n  schema:\n"
          "    invoice: string\n    customer: string\n    total: number\n    currency: string\n    note: string\n"
          "---\nExtract: {{ text }} {{ ref }}\n")
# An emoji before the spans: the page cuts the text by code point, as Python's offsets count.
INVOICE = "\U0001f9fe Invoice INV-7 for 鈴木一郎様\nTotal: 42,50 EUR <b>bold</b>"
REPLY = {"invoice": "INV-7", "customer": "鈴木一郎", "total": 42.5, "currency": "<img src=x onerror=alert(1)>",
         "note": "the customer wants the invoice sent again by email"}


@pytest.fixture(scope="module")
def workbench(tmp_path_factory):
    root = tmp_path_factory.mktemp("grounding-ui")
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["project_tools.py"]\n'
                                         'log_path = "runs.db"\n')
    (root / "project_tools.py").write_text(TOOLS.format(reply=json.dumps(REPLY)))
    (root / "prompts" / "reports").mkdir(parents=True)
    (root / "prompts" / "invoice.prompt").write_text(PROMPT)
    # A child process each (Playwright's event loop runs in this one): the run logged, the eval's report.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "XDG_DATA_HOME": str(root / "data"), "PYTHONIOENCODING": "utf-8",
           "DOTPROMPT_LOCAL_DIR": str(root / "no-local-model"), "CI": "true"}
    (root / "in.json").write_text(json.dumps({"text": INVOICE, "ref": "INV-7"}))
    done = dotprompt("run", "invoice", "--input", "@in.json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    report = root / "prompts" / "reports" / "extract.eval.json"
    done = dotprompt("eval", "prompts/extract.test.yaml", "--json", str(report), cwd=ROOT, env=env)
    assert report.is_file(), done.stdout + done.stderr
    with running_ui(root, env) as url:
        yield url, report


def open_route(page, url: str, route: str) -> None:
    page.goto(url + route)
    page.wait_for_selector("#view[data-testid=ready]")


def test_a_run_shows_each_value_marked_in_its_input(page, workbench):
    url, _ = workbench
    open_route(page, url, "#/runs/1")
    view = page.locator("#run-grounding")
    marks = view.locator("pre[data-name=text] mark.span")
    assert marks.evaluate_all("ms => ms.map(m => [m.textContent, m.getAttribute('data-field'), m.className])") == [
        ["INV-7", "$.invoice", "span exact"], ["鈴木一郎", "$.customer", "span exact"],
        ["42,50", "$.total", "span normalised"]]
    # The whole text is there, around the marks, as text.
    assert view.locator("pre[data-name=text]").text_content() == INVOICE
    assert view.locator("pre[data-name=ref] mark.span").text_content() == "INV-7"
    missing = view.locator("tr.grounding-value.ungrounded")
    assert missing.count() == 1 and missing.get_attribute("data-field") == "$.currency"
    assert "not in the input" in missing.inner_text() and "<img src=x onerror=alert(1)>" in missing.inner_text()
    note = view.locator("tr.grounding-value.not_applicable[data-field='$.note']").inner_text()
    assert "generated text" in note
    assert "1 of 5 value(s) not found in the input" in view.locator(".grounding-summary").inner_text()
    assert page.locator("#view img, #view b").count() == 0 and page.dialogs == [] and page.errors == []


def test_an_eval_report_shows_the_grounding_of_each_row(page, workbench):
    url, report = workbench
    rows = json.loads(report.read_text())["evals"][0]["rows"]
    grounded = [r for r in rows if r.get("grounding")]
    assert grounded and all(set(r["grounding_sources"]) <= {"text", "currency_hint"} for r in grounded)
    open_route(page, url, "#/evals")
    page.click("#reports a")
    page.wait_for_selector("#view[data-testid=ready]")
    details = page.locator("details.grounding-row")
    assert details.count() == len(grounded)
    flagged = next(r for r in grounded if any(f["status"] == "ungrounded" for f in r["grounding"]["fields"].values()))
    row = details.filter(has_text=f"row {flagged['id']} ")
    row.locator("summary").click()
    paths = [p for p, f in flagged["grounding"]["fields"].items() if f["status"] == "ungrounded"]
    shown = row.locator("tr.grounding-value.ungrounded").evaluate_all("rs => rs.map(r => r.getAttribute('data-field'))")
    assert shown == paths
    # Each value's marks hold exactly its spans' text (a piece another value's span also covers is cut there).
    for path, field in flagged["grounding"]["fields"].items():
        for variable in {s["variable"] for s in field.get("spans", [])}:
            spans = sorted((s for s in field["spans"] if s["variable"] == variable), key=lambda s: s["start"])
            text = flagged["grounding_sources"][variable]
            assert all(text[s["start"]:s["end"]] == s["text"] for s in spans)
            marks = row.locator(f"pre[data-name='{variable}'] mark.span").evaluate_all(
                "(ms, path) => ms.filter(m => m.getAttribute('data-field').split(' ').includes(path))"
                ".map(m => m.textContent).join('')", path)
            covered = "".join(text[i] for i in sorted({i for s in spans for i in range(s["start"], s["end"])}))
            assert marks == covered, (path, marks, covered)
    assert page.dialogs == [] and page.errors == []


