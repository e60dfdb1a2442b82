"""`dotprompt check --format sarif`, run in-process (tests/cli_inprocess.py), validated against a SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from dotprompt.lint.codes import CODES
from tests.cli_inprocess import cli

SARIF_SUBSET = json.loads((Path(__file__).parent / "fixtures" / "sarif-2.1.0-subset.schema.json").read_text())


def _validate(log: dict) -> None:
    jsonschema.Draft7Validator(SARIF_SUBSET, format_checker=jsonschema.FormatChecker()).validate(log)


def test_sarif_log_of_errors_and_warnings(tmp_path, cli_env):
    prompts = tmp_path / "prompts"
    (prompts / "billing").mkdir(parents=True)
    (prompts / "billing" / "refund me.prompt").write_text("---\nmaxTurns: 0\nmax_turns: 3\n---\nx")
    (prompts / "ok.prompt").write_text("hello")
    done = cli("check", "prompts", "--format", "sarif", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)  # stdout is the log and nothing else
    _validate(log)
    run_ = log["runs"][0]
    assert run_["tool"]["driver"]["name"] == "dotprompt"
    results = sorted(run_["results"], key=lambda r: r["locations"][0]["physicalLocation"]["region"]["startLine"])
    assert [(r["level"], r["ruleId"]) for r in results] == [("error", "invalid-prompt-file"), ("warning", "unknown-key")]
    rules = run_["tool"]["driver"]["rules"]  # one per code of the table, its level the rule's default
    assert [rules[r["ruleIndex"]]["id"] for r in results] == ["invalid-prompt-file", "unknown-key"]
    assert rules[results[1]["ruleIndex"]]["defaultConfiguration"] == {"level": "warning"}
    assert [rule["id"] for rule in rules] == list(CODES)
    first = results[0]["locations"][0]["physicalLocation"]
    # relative to the folder the check ran from, URL-encoded, so code scanning can place it
    assert first["artifactLocation"] == {"uri": "prompts/billing/refund%20me.prompt", "uriBaseId": "%SRCROOT%"}
    assert first["region"] == {"startLine": 2, "startColumn": 1}
    assert results[0]["message"]["text"] == "`maxTurns` must be at least 1"
    assert "did you mean `maxTurns`" in results[1]["message"]["text"]


def test_sarif_log_of_a_clean_folder_is_valid_and_empty(tmp_path, cli_env):
    (tmp_path / "ok.prompt").write_text("hello")
    done = cli("check", str(tmp_path), "--format", "sarif", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    log = json.loads(done.stdout)
    _validate(log)
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []


def test_the_subset_schema_refuses_what_sarif_refuses():
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"message": {"text": "m"}, "level": "error",
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.prompt"}, "region": {"startLine": 1}}}]}]}]}
    _validate(good)
    for broken in ({**good, "version": "2.0.0"},
                   {"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]},
                   {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
                       {"message": {"text": "m"}, "level": "fatal"}]}]},
                   {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
                       {"message": {"text": "m"}, "locations": [{"physicalLocation": {
                           "artifactLocation": {"uri": "a"}, "region": {"startLine": 0}}}]}]}]}):
        try:
            _validate(broken)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"accepted {broken}")
