"""`dotprompt eval`, run in-process (tests/cli_inprocess.py) on the echo model: record, replay, thresholds, baselines, reports."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.cli_inprocess import cli
from tests.evals.eval_project import project


def replay_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in cli_env.items() if k != "GITHUB_STEP_SUMMARY"}, "CI": "true"}


def test_record_then_replay_offline_with_reports_and_a_saved_baseline(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", "--record", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr  # the worse variant misses its thresholds
    lines = [json.loads(x) for x in (prompts / "__recordings__" / "inv.jsonl").read_text().splitlines()]
    assert sorted(x["case"] for x in lines) == ["eval:a", "eval:b", "eval:c"] and all("file" not in x for x in lines)
    assert (prompts / "__recordings__" / "inv.worse.jsonl").is_file()

    summary = tmp_path / "summary.md"
    done = cli("eval", "--save-baseline", "base.json", "--junit", "j.xml", "--json", "r.json",
               "--markdown", "m.md", cwd=tmp_path, env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "inv on gold.jsonl: 3 rows" in done.stdout and "1 eval(s) passed, 0 failed" in done.stdout
    base = json.loads((tmp_path / "base.json").read_text())
    scores = base["evals"]["inv on gold.jsonl"]
    assert scores["overall"]["f1"] == 1.0 and scores["exact_match"] == 1.0 and scores["rows"] == 3
    assert scores["fields"]["items[*].d"]["support"] == 3 and scores["lists"]["items"]["matched"] == 3
    assert "| total | 3 | 1.000 |" in summary.read_text() and summary.read_text() == (tmp_path / "m.md").read_text()
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "0" and "currency" in [c.get("name") for c in suite.iter("testcase")]
    assert json.loads((tmp_path / "r.json").read_text())["evals"][0]["passed"] is True


def test_worse_variant_fails_thresholds_and_baseline_naming_fields_and_rows(tmp_path, cli_env):
    project(tmp_path)
    env = replay_env(cli_env)
    assert cli("eval", "--record", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=env).returncode == 1
    assert cli("eval", "--save-baseline", "base.json", cwd=tmp_path, env=env).returncode == 0
    done = cli("eval", "--variant", "worse", "--baseline", "base.json", "--junit", "j.xml", "--json", "r.json",
               cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "currency: f1 below threshold: 0.333 < 0.500; rows: a, b" in out
    assert "currency: f1 regressed: 0.333, baseline 1.000 (-0.667); rows: a, b" in out
    assert "date: f1 regressed: 0.000, baseline 1.000 (-1.000); rows: a, b, c" in out
    assert "total: f1 regressed" not in out and "number: f1 regressed" not in out
    failures = {c.get("name"): c.find("failure") for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert failures["currency"] is not None and failures["date"] is not None and failures["total"] is None
    report = json.loads((tmp_path / "r.json").read_text())["evals"][0]
    row_a = next(r for r in report["rows"] if r["id"] == "a")
    assert {"field": "currency", "where": "$.currency", "outcome": "wrong", "expected": "EUR", "predicted": "USD"} \
        in row_a["fields"]
    assert {"field": "date", "where": "$.date", "outcome": "missing", "expected": "2026-01-02T00:00:00",
            "predicted": None} in row_a["fields"]

    # A tolerance larger than the drop lets it through (the thresholds of the file still apply).
    done = cli("eval", "--variant", "worse", "--baseline", "base.json", "--max-regression", "1", cwd=tmp_path,
               env=env)
    assert "regressed" not in done.stdout and "currency: f1 below threshold" in done.stdout


def test_variants_side_by_side_in_one_table(tmp_path, cli_env):
    project(tmp_path)
    env = replay_env(cli_env)
    cli("eval", "--record", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=env)
    done = cli("eval", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=env)
    header = next(line for line in done.stdout.splitlines() if line.startswith("field"))
    assert header.split() == ["field", "support", "base", "worse"]
    currency = next(line for line in done.stdout.splitlines() if line.startswith("currency"))
    assert currency.split()[2:] == ["1.000", "0.333", "(2w", "0m", "0x)"]
    date = next(line for line in done.stdout.splitlines() if line.startswith("date"))
    assert date.split()[2:] == ["1.000", "0.000", "(0w", "3m", "0x)"]


def test_replay_without_recordings_fails_naming_rows_and_how_to_record(tmp_path, cli_env):
    project(tmp_path)
    done = cli("eval", cwd=tmp_path, env=replay_env(cli_env))
    assert done.returncode == 1
    assert "FAIL inv on gold.jsonl [default]: no recording for rows a, b, c (prompts/__recordings__/inv.jsonl)" in done.stdout
    assert "record the missing rows with `dotprompt eval --auto prompts/inv.test.yaml`" in done.stdout


def test_bad_files_exit_2_naming_file_and_line(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    (prompts / "gold.jsonl").write_text('{"id": "a", "input": {}, "expected": {}}\n{"id": "a"\n')
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "gold.jsonl:2: not valid JSON" in done.stderr
    (prompts / "inv.test.yaml").write_text("eval:\n  dataset: gold.jsonl\n  fields:\n    total: {scorer: nuber}\n"
                                           "  min: {f1: 2}\n")
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "inv.test.yaml:4:" in done.stderr and "unknown scorer 'nuber'" in done.stderr and "number" in done.stderr
    assert "inv.test.yaml:5:" in done.stderr and "eval.min.f1 must be a number from 0 to 1" in done.stderr
    (prompts / "inv.test.yaml").write_text("cases: []\n")
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "no evals found" in done.stderr
    done = cli("eval", "--baseline", "nope.json", "--dataset", "prompts/gold.jsonl", "--prompt", "inv",
               cwd=tmp_path, env=env)
    assert done.returncode == 2 and "nope.json: cannot read the baseline" in done.stderr


def test_dataset_and_prompt_on_the_command_line(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "inv.test.yaml").unlink()
    env = replay_env(cli_env)
    done = cli("eval", "--dataset", "prompts/gold.jsonl", "--prompt", "inv", "--record", cwd=tmp_path, env=env)
    # No scorer rules: exact comparison, so the tolerance-needing total and the date-time fail.
    assert done.returncode == 0, done.stdout + done.stderr
    assert "total" in done.stdout and "0.667 (1w 0m 0x)" in done.stdout


def test_check_reports_every_problem_of_an_eval_section(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "inv.test.yaml").write_text("eval:\n  dataset: gold.jsonl\n  fields:\n    total: {scorer: number, tolrance: 1}\n"
                                           "    items[0].d: text\n  min: {fields: {total: {f2: 0.5}}}\n  maxregression: 1\n")
    done = cli("check", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    assert "inv.test.yaml:4:" in done.stdout and "unknown key `tolrance` in eval.fields.total" in done.stdout
    assert "did you mean `tolerance`" in done.stdout
    assert "inv.test.yaml:5:" in done.stdout and "names one list index" in done.stdout
    assert "unknown key `f2` in eval.min.fields.total" in done.stdout
    assert "inv.test.yaml:7:" in done.stdout and "unknown key `maxregression` in eval" in done.stdout


@pytest.mark.slow
def test_progress_is_shown_on_a_terminal(tmp_path, cli_env):
    import os
    import pty
    import subprocess

    project(tmp_path)
    env = {k: v for k, v in cli_env.items() if k != "CI"}
    cli("eval", "--record", cwd=tmp_path, env=env)
    leader, follower = pty.openpty()
    done = subprocess.run([sys.executable, "-m", "dotprompt.cli", "eval"], cwd=tmp_path, env={**env, "COLUMNS": "100"},
                          stdout=subprocess.PIPE, stderr=follower, text=True, timeout=120)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0, done.stdout
    assert b"eval: 3 rows (replay)" in shown
    assert "inv on gold.jsonl: 3 rows" in done.stdout  # the report itself stays on stdout


def test_a_python_scorer_by_module_function(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "scoring.py").write_text("def same_prefix(expected, predicted):\n"
                                         "    return 0.5 if expected[:1] == predicted[:1] else 0.0\n"
                                         "def broken(expected, predicted):\n    raise KeyError('nope')\n")
    text = (prompts / "inv.test.yaml").read_text()
    rule = "    number: {scorer: 'scoring:same_prefix', threshold: 0.5}\n"
    (prompts / "inv.test.yaml").write_text(text.replace("    date: date\n", "    date: date\n" + rule))
    cli("eval", "--record", cwd=tmp_path, env=env)
    done = cli("eval", "--json", "r.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["evals"][0]["scores"]["fields"]["number"]["correct"] == 3
    (prompts / "inv.test.yaml").write_text(text.replace("    date: date\n", "    date: date\n    number: scoring:broken\n"))
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "row a: scorer scoring:broken raised KeyError: 'nope'" in done.stderr
    (prompts / "inv.test.yaml").write_text(text.replace("    date: date\n", "    date: date\n    number: scoring:absent\n"))
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "inv.test.yaml:6: eval.fields.number:" in done.stderr
    assert "'scoring' has no function 'absent'" in done.stderr


def test_variants_times_models_are_arms_with_their_own_recordings(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", "--record", "--model", "echo", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=env)
    header = next(line for line in done.stdout.splitlines() if line.startswith("field"))
    assert header.split() == ["field", "support", "base@echo", "worse@echo"]
    cases = {json.loads(x)["case"] for x in (prompts / "__recordings__" / "inv.jsonl").read_text().splitlines()}
    assert cases == {"eval:a@echo", "eval:b@echo", "eval:c@echo"}  # apart from the rows' default-model recordings
    done = cli("eval", "--model", "echo", "--variant", "-", "--save-baseline", "b.json", cwd=tmp_path, env=env)
    assert done.returncode == 0
    done = cli("eval", "--variant", "-", "--variant", "worse", "--save-baseline", "b.json", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "--save-baseline saves one variant on one model" in done.stderr
