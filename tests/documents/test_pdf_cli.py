"""`dotprompt run --grounding` on a PDF input prints each span's page and boxes; scanned pages are named."""

from __future__ import annotations

import json
import re

from tests.cli_inprocess import cli
from tests.documents.pdfmaker import TOLERANCE, Maker

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel

define_model(ScriptedModel([{reply!r}] * 5), name="scripted")
'''
PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    report(pdf): string\noutput:\n  schema:\n"
          "    number: string\n    stamp: string\n---\nExtract: {{ report }}\n")


def project(tmp_path, reply: dict) -> Maker:
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS.format(reply=json.dumps(reply)))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "invoice.prompt").write_text(PROMPT)
    maker = Maker()
    maker.image(36, 36, 540, 720)
    maker.next_page()
    maker.text(150, 420, "INV-31")
    (tmp_path / "scan.pdf").write_bytes(maker.pdf())
    return maker


def test_run_grounding_prints_page_and_boxes(tmp_path, cli_env):
    maker = project(tmp_path, {"number": "INV-31", "stamp": "PAID"})
    done = cli("run", "invoice", "--input", '{"report": "scan.pdf"}', "--grounding", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    number = next(line for line in lines if line.startswith("  $.number"))
    match = re.fullmatch(r'  \$\.number = "INV-31"  exact  report\[1:7\] "INV-31" page 2 '
                         r'\[([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)\]', number)
    assert match, number
    placed = maker.placed["INV-31"]
    got = [float(v) for v in match.groups()]
    assert all(abs(a - b) <= TOLERANCE for a, b in zip(got, (placed.x0, placed.y0, placed.x1, placed.y1), strict=True))
    assert '  $.stamp = "PAID"  ungrounded  not in the input' in lines
    assert ("grounding: report page(s) 1 have no text layer (scanned?); no OCR is run, so nothing on them is in "
            "the prompt or can be found") in lines


def test_a_missing_pdf_is_one_line_naming_the_variable(tmp_path, cli_env):
    project(tmp_path, {"number": "INV-31", "stamp": "PAID"})
    done = cli("run", "invoice", "--input", '{"report": "nope.pdf"}', cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    assert "$.report: cannot read nope.pdf" in done.stderr and "Traceback" not in done.stderr


def test_batch_rows_carry_pages_and_boxes(tmp_path, cli_env):
    maker = project(tmp_path, {"number": "INV-31", "stamp": "PAID"})
    (tmp_path / "rows.jsonl").write_text(json.dumps({"report": "scan.pdf"}) + "\n")
    done = cli("run", "invoice", "--input-file", "rows.jsonl", "--output", "out.jsonl", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    grounding = record["grounding"]
    span = grounding["fields"]["$.number"]["spans"][0]
    assert span["page"] == 2 and abs(span["boxes"][0]["x0"] - maker.placed["INV-31"].x0) <= TOLERANCE
    assert grounding["pages_without_text"] == {"report": [1]}


def test_the_eval_report_carries_each_rows_pages_and_boxes(tmp_path, cli_env):
    maker = project(tmp_path, {"number": "INV-31", "stamp": "PAID"})
    (tmp_path / "gold.jsonl").write_text(json.dumps({"id": "a", "input": {"report": "scan.pdf"},
                                                     "expected": {"number": "INV-31", "stamp": "PAID"}}) + "\n")
    done = cli("eval", "--dataset", "gold.jsonl", "--prompt", "invoice", "--record", "--json", "eval.json",
               cwd=tmp_path, env=cli_env)
    report = json.loads((tmp_path / "eval.json").read_text())
    row = report["evals"][0]["rows"][0]
    span = row["grounding"]["fields"]["$.number"]["spans"][0]
    assert span["page"] == 2 and abs(span["boxes"][0]["y0"] - maker.placed["INV-31"].y0) <= TOLERANCE, done.stdout
    assert row["grounding"]["fields"]["$.stamp"]["status"] == "ungrounded"
