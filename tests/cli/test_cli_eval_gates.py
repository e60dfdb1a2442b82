"""`dotprompt eval` as a CI gate: failed runs, baselines that do not cover an eval, report folders, record hints."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import httpx
import pytest

from tests.cli_inprocess import cli
from tests.evals.eval_project import project
from tests.providers.mock_server import Loopback


def replay_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in cli_env.items() if k != "GITHUB_STEP_SUMMARY"}, "CI": "true"}


def test_report_paths_in_missing_folders_are_created(tmp_path, cli_env):
    project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", "--record", "--junit", "reports/junit.xml", "--json", "reports/r.json", "--markdown",
               "reports/md/m.md", "--save-baseline", "baselines/base.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ET.parse(tmp_path / "reports" / "junit.xml").getroot().get("failures") == "0"
    assert json.loads((tmp_path / "reports" / "r.json").read_text())["evals"][0]["passed"] is True
    assert "## dotprompt eval" in (tmp_path / "reports" / "md" / "m.md").read_text()
    assert json.loads((tmp_path / "baselines" / "base.json").read_text())["evals"]


def test_a_report_path_that_cannot_be_written_is_one_line_before_the_run(tmp_path, cli_env):
    prompts = project(tmp_path)
    (tmp_path / "reports").write_text("a file, not a folder")
    done = cli("eval", "--record", "--json", "reports/r.json", cwd=tmp_path, env=replay_env(cli_env))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--json reports/r.json: cannot create the folder reports" in done.stderr, done.stderr
    assert not (prompts / "__recordings__").exists()  # nothing ran


def test_the_no_recording_hint_names_the_command_that_records_eval_rows(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert "dotprompt test --record" not in done.stdout
    assert "no recording for rows a, b, c (prompts/__recordings__/inv.jsonl): record the " \
           "missing rows with `dotprompt eval --auto prompts/inv.test.yaml`" in done.stdout, done.stdout
    # ... and following it records them: the eval then replays offline and passes.
    assert cli("eval", "--auto", "prompts/inv.test.yaml", cwd=tmp_path, env=env).returncode == 0
    assert (prompts / "__recordings__" / "inv.jsonl").is_file()
    assert cli("eval", cwd=tmp_path, env=env).returncode == 0


FAILING_PROMPT = """---
model: openai/gpt-test
input:
  schema:
    text: string
output:
  schema:
    total: number
    vendor?: string
---
Extract the total from: {{ text }}
"""
ROWS = [{"id": "a", "input": {"text": "total 1"}, "expected": {"total": 1}},
        {"id": "b", "input": {"text": "total 2 (the server fails on this one)"}, "expected": {"total": 2}},
        {"id": "c", "input": {"text": "total 3"}, "expected": {"total": 3}}]


def _reply(request: httpx.Request) -> httpx.Response:
    """HTTP 500 for every row whose text says so (or for all when the test sets it), else the total it names."""
    text = json.loads(request.content)["messages"][-1]["content"]
    if "fails" in text or "fails" in _reply.mode:
        return httpx.Response(500, json={"error": {"message": "upstream exploded", "type": "server_error"}})
    total = int(text.rsplit("total ", 1)[1][0])
    return httpx.Response(200, json={
        "id": "c1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": json.dumps({"total": total})}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})


@pytest.fixture
def provider(cli_env):
    _reply.mode = ""
    with Loopback(_reply) as server:
        yield {**replay_env(cli_env), "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-test-eval-key-0001"}


def failing_project(tmp_path, eval_section: str):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "ex.prompt").write_text(FAILING_PROMPT)
    (prompts / "ex.test.yaml").write_text(eval_section)
    (prompts / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return prompts


GATES = "eval:\n  dataset: gold.jsonl\n  min: {precision: 0.9, fields: {total: {precision: 0.95}}}\n"


def test_every_model_call_failing_fails_the_eval_naming_each_row_and_its_error(tmp_path, provider):
    failing_project(tmp_path, GATES)
    _reply.mode = "fails"
    done = cli("eval", "--record", "--json", "r.json", "--junit", "j.xml", cwd=tmp_path, env=provider)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "0 eval(s) passed, 1 failed" in out
    assert "nothing was scored: 3 of 3 rows failed to run (whatever max_failure_rate allows): a, b, c" in out, out
    assert "row a: failed to run: ModelError" in out and "upstream exploded" in out and "HTTP 500" in out
    # The gates on precision were computed from no prediction: they fail too, and say why.
    assert "(overall): precision below threshold: 0.000 < 0.900 (no value was predicted: 3 rows failed to run)" in out
    assert "total: precision below threshold: 0.000 < 0.950 (no value was predicted: 3 rows failed to run)" in out
    assert "sk-test-eval-key" not in out
    report = json.loads((tmp_path / "r.json").read_text())["evals"][0]
    assert report["passed"] is False and report["scores"]["failed"] == 3
    assert [r["error"].split(":")[0] for r in report["rows"]] == ["ModelError"] * 3
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert cases["(failed rows)"].find("failure") is not None


def test_a_failure_rate_the_eval_allows_scores_the_rows_that_ran_and_notes_the_rest(tmp_path, provider):
    failing_project(tmp_path, GATES + "  max_failure_rate: 0.34\n")
    done = cli("eval", "--record", "--json", "r.json", cwd=tmp_path, env=provider)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOTE ex on gold.jsonl [default]: 1 of 3 rows failed to run (max_failure_rate 0.34 allows 1): b" \
        in done.stdout, done.stdout
    assert "NOTE ex on gold.jsonl [default]: row b: failed to run: ModelError" in done.stdout
    scores = json.loads((tmp_path / "r.json").read_text())["evals"][0]["scores"]
    assert scores["rows"] == 2 and scores["failed"] == 1 and scores["fields"]["total"]["support"] == 2
    assert scores["overall"]["f1"] == 1.0

    (tmp_path / "prompts" / "ex.test.yaml").write_text(GATES + "  max_failure_rate: 0.3\n")
    done = cli("eval", "--record", cwd=tmp_path, env=provider)
    assert done.returncode == 1 and "1 of 3 rows failed to run (max_failure_rate 0.3 allows 0): b" in done.stdout


def test_an_eval_that_scored_nothing_fails_whatever_the_failure_rate_allows(tmp_path, provider):
    failing_project(tmp_path, "eval:\n  dataset: gold.jsonl\n  max_failure_rate: 1\n")  # no min: at all
    _reply.mode = "fails"
    done = cli("eval", "--record", "--junit", "j.xml", cwd=tmp_path, env=provider)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 eval(s) passed, 1 failed" in done.stdout
    assert "nothing was scored: 3 of 3 rows failed to run (whatever max_failure_rate allows): a, b, c" in done.stdout
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert cases["(failed rows)"].find("failure") is not None
    assert {c.get("file") for c in cases.values()} == {"prompts/ex.test.yaml"}  # from the project folder


def test_a_table_of_nothing_scored_shows_no_figure(tmp_path, provider):
    failing_project(tmp_path, GATES)
    _reply.mode = "fails"
    out = cli("eval", "--record", cwd=tmp_path, env=provider).stdout
    assert "ex on gold.jsonl: 3 rows (3 failed to run, not scored)" in out
    assert [line.split() for line in out.splitlines() if line.startswith("(")][:2] == \
        [["(overall", "F1)", "0", "-"], ["(exact", "match)", "0", "-"]], out


def two_datasets(tmp_path):
    """One prompt evaluated on `a/gold.jsonl` (its own test file) and on `b/gold.jsonl` (another test file)."""
    prompts = project(tmp_path)
    rows = (prompts / "gold.jsonl").read_text()
    for folder in ("a", "b"):
        (prompts / folder).mkdir()
        (prompts / folder / "gold.jsonl").write_text(rows)
    tests = (prompts / "inv.test.yaml").read_text()
    (prompts / "inv.test.yaml").write_text(tests.replace("dataset: gold.jsonl", "dataset: a/gold.jsonl"))
    (prompts / "b.test.yaml").write_text("prompt: inv\n" + tests.replace("dataset: gold.jsonl", "dataset: b/gold.jsonl"))
    return prompts


def test_two_evals_of_one_prompt_on_datasets_of_one_name_keep_their_own_baselines(tmp_path, cli_env):
    prompts = two_datasets(tmp_path)
    env = replay_env(cli_env)
    assert cli("eval", "--record", cwd=tmp_path, env=env).returncode == 0
    assert cli("eval", "--save-baseline", "base.json", cwd=tmp_path, env=env).returncode == 0
    saved = json.loads((tmp_path / "base.json").read_text())
    assert saved["dotprompt_eval_baseline"] == 2
    assert sorted(saved["evals"]) == ["inv on a/gold.jsonl", "inv on b/gold.jsonl (b.test.yaml)"]

    # Eval A's gold labels change (every currency now differs): A falls, B does not.
    gold = prompts / "a" / "gold.jsonl"
    gold.write_text(gold.read_text().replace('"currency": "EUR"', '"currency": "X"')
                    .replace('"currency": "GBP"', '"currency": "X"').replace('"currency": "USD"', '"currency": "X"'))
    done = cli("eval", "--baseline", "base.json", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL inv on a/gold.jsonl [default]: currency: f1 regressed: 0.000, baseline 1.000 (-1.000)" in done.stdout
    assert "FAIL inv on b/gold.jsonl (b.test.yaml)" not in done.stdout
    # A table each, not one table with two "default" columns.
    assert len([line for line in done.stdout.splitlines() if line.split()[:2] == ["currency", "3"]]) == 2


def test_a_baseline_that_does_not_cover_an_eval_says_so_in_every_report(tmp_path, cli_env):
    two_datasets(tmp_path)
    env = replay_env(cli_env)
    assert cli("eval", "--record", cwd=tmp_path, env=env).returncode == 0
    assert cli("eval", "prompts/inv.test.yaml", "--save-baseline", "base.json", cwd=tmp_path, env=env).returncode == 0
    done = cli("eval", "--baseline", "base.json", "--json", "r.json", "--markdown", "m.md", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    note = ("not compared with a baseline: base.json has no scores for 'inv on b/gold.jsonl (b.test.yaml)'; "
            "save them with --save-baseline")
    assert f"NOTE inv on b/gold.jsonl (b.test.yaml) [default]: {note}" in done.stdout, done.stdout
    report = {e["eval"]: e for e in json.loads((tmp_path / "r.json").read_text())["evals"]}
    assert report["inv on b/gold.jsonl (b.test.yaml)"]["notes"] == [note]
    assert report["inv on a/gold.jsonl"]["notes"] == []
    assert note in (tmp_path / "m.md").read_text()


def test_a_baseline_saved_with_the_old_names_is_read_where_it_is_unambiguous(tmp_path, cli_env):
    two_datasets(tmp_path)
    env = replay_env(cli_env)
    assert cli("eval", "--record", cwd=tmp_path, env=env).returncode == 0
    assert cli("eval", "--save-baseline", "base.json", cwd=tmp_path, env=env).returncode == 0
    scores = json.loads((tmp_path / "base.json").read_text())["evals"]["inv on a/gold.jsonl"]
    (tmp_path / "old.json").write_text(json.dumps({"dotprompt_eval_baseline": 1, "evals": {"inv on gold.jsonl": scores}}))
    # Both evals had the old name "inv on gold.jsonl": the old baseline cannot say whose scores it holds.
    done = cli("eval", "--baseline", "old.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("NOTE inv on a/gold.jsonl [default]: not compared with a baseline: old.json was saved by an older "
            "version under the name 'inv on gold.jsonl', which 2 evals of this run share; re-save it with "
            "--save-baseline") in done.stdout, done.stdout
    # Alone, the eval is the only one of that name: the old entry is its own, and it is compared.
    done = cli("eval", "prompts/inv.test.yaml", "--baseline", "old.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "±0" in done.stdout and "not compared" not in done.stdout
    assert ("NOTE inv on a/gold.jsonl [default]: old.json was saved by an older version: its scores for "
            "'inv on gold.jsonl' are read as this eval's; re-save it with --save-baseline") in done.stdout


def test_missing_recordings_are_said_once_and_rows_that_never_ran_do_not_regress(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    assert cli("eval", "--record", "--save-baseline", "base.json", cwd=tmp_path, env=env).returncode == 0
    (prompts / "__recordings__" / "inv.jsonl").unlink()
    done = cli("eval", "--baseline", "base.json", cwd=tmp_path, env=env)
    assert done.returncode == 1
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL ")]
    hint = "record the missing rows with `dotprompt eval --auto prompts/inv.test.yaml`"
    assert sum(hint in line for line in fails) == 1, fails
    assert any("no recording for rows a, b, c (prompts/__recordings__/inv.jsonl): " + hint in line
               for line in fails), fails
    assert not any("regressed" in line for line in fails), fails
