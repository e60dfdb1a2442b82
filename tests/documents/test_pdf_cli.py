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
