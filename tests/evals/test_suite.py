"""An eval run from Python (`dotprompt.evals.run_evals`), held equal to `dotprompt eval` on the same project."""

from __future__ import annotations

import json

import pytest

from dotprompt import PromptLibrary, UsageError
from dotprompt.evals import EvalOptions, run_evals
from dotprompt.evals.report import to_json
from tests.cli_inprocess import cli
from tests.evals.eval_project import project


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # eval names are relative to the project root, as the command's are
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_an_eval_run_from_python_gives_what_the_command_reports(tmp_path, cli_env, offline):
    prompts = project(tmp_path)
    started, rows = [], []
    recorded = run_evals(PromptLibrary("prompts"), EvalOptions(variants=["-", "worse"], mode="record"),
                         on_start=lambda total, mode: started.append((total, mode)), on_row=rows.append)
    assert started == [(6, "record")] and len(rows) == 6
    assert [(v.title, v.passed) for v in recorded.verdicts] == [("inv on gold.jsonl [base]", True),
                                                                ("inv on gold.jsonl [worse]", False)]
    assert not recorded.passed and recorded.file_errors == []
    assert (prompts / "__recordings__" / "inv.worse.jsonl").is_file()

    baseline = tmp_path / "base.json"
    saved = run_evals(PromptLibrary("prompts"), EvalOptions(save_baseline=baseline))
    assert saved.passed and json.loads(baseline.read_text())["evals"]["inv on gold.jsonl"]["overall"]["f1"] == 1.0

    ours = run_evals(PromptLibrary("prompts"), EvalOptions(variants=["worse"], baseline=baseline))
    done = cli("eval", "--variant", "worse", "--baseline", "base.json", "--json", "r.json", cwd=tmp_path,
               env={**cli_env, "CI": "true"})
    assert done.returncode == 1 and not ours.passed
    assert to_json(ours.verdicts) == json.loads((tmp_path / "r.json").read_text())
    assert any("currency: f1 regressed" in line for line in ours.verdicts[0].failures())


def test_options_that_do_not_go_together_are_a_usage_error_before_anything_runs(tmp_path, offline):
    prompts = project(tmp_path)
    with pytest.raises(UsageError, match="--save-baseline saves one variant on one model"):
        run_evals(PromptLibrary("prompts"), EvalOptions(variants=["-", "worse"], save_baseline=tmp_path / "b.json"))
    with pytest.raises(UsageError, match="--prompt evaluates a dataset without a test file"):
        run_evals(PromptLibrary("prompts"), EvalOptions(prompt="inv"))
    with pytest.raises(UsageError, match="a library with a folder"):
        run_evals(PromptLibrary(None))
    assert not (prompts / "__recordings__").exists() and not (tmp_path / "b.json").exists()


def test_a_folder_without_evals_gives_an_outcome_that_did_not_pass(tmp_path, offline):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.test.yaml").write_text("cases: []\n")
    outcome = run_evals(PromptLibrary(tmp_path / "prompts"))
    assert outcome.verdicts == [] and not outcome.passed
