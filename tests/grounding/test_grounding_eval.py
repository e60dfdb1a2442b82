"""`dotprompt eval` on the invoice gold set: grounding rate and flag precision/recall per field, in the
table and the JSON report. It runs on the planted fixture arm (tests/evals/planted/), whose wrong
values are known by construction; the example's real figures are in docs/testing.md."""

from __future__ import annotations

import json

import pytest

from tests.cli_process import dotprompt
from tests.conftest import ROOT

PLANTED = "tests/evals/planted/extract.test.yaml"


@pytest.mark.slow  # the command line as a child process
def test_eval_reports_grounding_per_field(tmp_path, cli_env):
    report = tmp_path / "eval.json"
    done = dotprompt("eval", PLANTED, "--json", str(report), cwd=ROOT, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "currency (grounding)" in done.stdout and "flag P" in done.stdout
    grounding = json.loads(report.read_text())["evals"][0]["grounding"]
    currency = grounding["currency"]
    # Every planted wrong currency is one the invoice does not print (its code or its sign).
    assert currency["flagged_wrong"] >= 1 and currency["flag_precision"] == 1.0 and currency["flag_recall"] == 1.0
    overall = grounding["(overall)"]
    assert overall["looked"] == sum(v["looked"] for k, v in grounding.items() if k != "(overall)")
    assert 0 < overall["grounded_rate"] <= 1
