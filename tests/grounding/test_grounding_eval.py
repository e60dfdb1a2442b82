"""`dotprompt eval` on the example invoice gold set: grounding rate and flag precision/recall per field,
in the table and the JSON report (the replies replayed from the committed recordings)."""

from __future__ import annotations

import json

import pytest

from tests.cli_process import dotprompt
from tests.conftest import ROOT


@pytest.mark.slow  # the command line as a child process
def test_eval_reports_grounding_per_field(tmp_path, cli_env):
    report = tmp_path / "eval.json"
    done = dotprompt("eval", "prompts/extract.test.yaml", "--json", str(report), cwd=ROOT, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "currency (grounding)" in done.stdout and "flag P" in done.stdout
    grounding = json.loads(report.read_text())["evals"][0]["grounding"]
    currency = grounding["currency"]
    # Every wrong currency in the replies is one the invoice does not print (its code or its sign).
    assert currency["flagged_wrong"] >= 1 and currency["flag_precision"] == 1.0 and currency["flag_recall"] == 1.0
    overall = grounding["(overall)"]
    assert overall["looked"] == sum(v["looked"] for k, v in grounding.items() if k != "(overall)")
    assert 0 < overall["grounded_rate"] <= 1
