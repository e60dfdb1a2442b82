"""`dotprompt logs` through the command line (in-process, tests/cli_inprocess.py; real subprocesses where
processes meet), over runs of a scripted model (registered by the project's `[tool.dotprompt] tools` module,
as a user's own model would be) and of the echo model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dotprompt import PromptLibrary
from tests.cli_inprocess import cli
from tests.cli_process import dotprompt
from tests.echo_project import project

SCRIPTED = '''
from dotprompt import Usage, tool
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import define_model
from dotprompt.doubles import tool_call


@tool
def stock(sku: str) -> int:
    """Units in stock."""
    return 12


def reply(request):
    last = request.messages[-1]
    if last.role == "tool":
        return '{"units": 12}'
    if "broken" in last.text:
        return "I have no idea at all"
    return [tool_call("stock", {"sku": "A-1"}, ref="call-1")]


define_model(ScriptedModel(reply, name="scripted/shop", usage=Usage(input_tokens=21, output_tokens=7)))
'''
STOCK = """---
model: scripted/shop
tools: [stock]
input:
  schema:
    question: string
output:
  schema:
    units: integer
---
{% include "polite" %}
{{ question }}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """Three runs (two answered, one failed), shared by the tests that only read the log."""
    tmp_path = tmp_path_factory.mktemp("shop")
    cli_env = {k: v for k, v in os.environ.items() if k != "DOTPROMPT_DIR"}
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "stock.prompt").write_text(STOCK)
    (prompts / "_polite.prompt").write_text("Please answer politely.")
    (tmp_path / "scripted.py").write_text(SCRIPTED)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["scripted.py"]\n')
    env = {**cli_env, "XDG_DATA_HOME": str(tmp_path / "data")}

    def in_shop(*args, extra=None):
        return cli(*args, cwd=tmp_path, env={**env, **(extra or {})})

    for question in ("how many gizmos", "how many widgets", "broken question"):
        in_shop("run", "stock", "--input", json.dumps({"question": question}))
    return in_shop, PromptLibrary(prompts).load("stock").identity


def table_rows(stdout):
    return [line for line in stdout.splitlines()[1:] if line.split() and line.split()[0].isdigit()]


def test_the_list_shows_each_run_newest_first(shop):
    cli, identity = shop
    done = cli("logs")
    assert done.returncode == 0, done.stderr
    header, *_ = done.stdout.splitlines()
    assert header.split() == ["ID", "WHEN", "SOURCE", "PROMPT", "MODEL", "STATUS", "TOKENS", "MS", "COST", "RESULT"]
    rows = table_rows(done.stdout)
    assert [row.split()[0] for row in rows] == ["3", "2", "1"]
    newest, second, _ = rows
    assert f"stock@{identity.hash[:8]}" in newest and "scripted/shop" in newest and "run" in newest
    # the second run made two calls of 21/7: the run log holds their sum
    assert "OutputValidationError" in newest and "42/14" in second and '{"units": 12}' in second
    assert done.stdout.splitlines()[-1].startswith("(3 runs, newest first, from ")


def test_filters_by_status_prompt_model_source_and_date(shop):
    cli, _ = shop
    assert [r.split()[0] for r in table_rows(cli("logs", "--status", "error").stdout)] == ["3"]
    assert len(table_rows(cli("logs", "--status", "ok", "--prompt", "stock", "--model", "scripted/shop").stdout)) == 2
    assert len(table_rows(cli("logs", "--source", "run", "--since", "1h").stdout)) == 3
    ui = cli("logs", "--source", "ui")  # the workbench's runs (dotprompt ui) are a source of their own
    assert ui.returncode == 0 and table_rows(ui.stdout) == [], ui.stderr
    assert len(table_rows(cli("logs", "-n", "1").stdout)) == 1
    assert cli("logs", "--until", "2000-01-01").stdout.startswith("no runs logged (the log is ")
    assert table_rows(cli("logs", "--prompt", "other").stdout) == []
    bad = cli("logs", "--since", "yesterday-ish")
    assert bad.returncode == 2 and "--since 'yesterday-ish': not a date or an age" in bad.stderr


def test_one_run_in_full(shop):
    cli, identity = shop
    done = cli("logs", "2")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("run 2  ") and "source: run" in text
    assert f"prompt   stock@{identity.hash[:8]}  (hash {identity.hash})" in text
    assert f"partial polite@{dict(identity.partials)['polite']}" in text
    assert "model    scripted/shop" in text and "usage    42 in / 14 out" in text
    sent = text.split("--- sent ---\n")[1].split("---")[0]
    assert "Please answer politely." in sent and "how many widgets" in sent
    received = text.split("--- received ---\n")[1]
    assert '"toolRequest": {"name": "stock", "ref": "call-1", "input": {"sku": "A-1"}}' in received
    assert '"toolResponse": {"name": "stock", "ref": "call-1", "output": 12}' in received
    assert text.split("--- output ---\n")[1].startswith('{\n  "units": 12\n}')
    failed = cli("logs", "3").stdout
    assert "status   error: OutputValidationError" in failed and "model: I have no idea at all" in failed
    assert "--- error ---" in failed
    missing = cli("logs", "99")
    assert missing.returncode == 1 and "no run 99 in " in missing.stderr


def test_search_and_json_lines_export(shop):
    cli, identity = shop
    found = cli("logs", "-q", "widgets")
    assert [r.split()[0] for r in table_rows(found.stdout)] == ["2"] and found.stderr == ""
    assert table_rows(cli("logs", "-q", "widgets gizmos").stdout) == []  # every word must be there
    exported = cli("logs", "--json")
    runs = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["id"] for r in runs] == [3, 2, 1]
    assert {r["prompt_hash"] for r in runs} == {identity.hash}
    assert runs[1]["input"] == {"question": "how many widgets"} and runs[1]["output"] == {"units": 12}
    assert runs[1]["request"]["tools"] == ["stock"] and runs[0]["status"] == "error"
    assert [json.loads(line)["id"] for line in cli("logs", "--json", "-q", "gizmos").stdout.splitlines()] == [1]


def test_no_log_and_the_setting_turn_logging_off(shop):
    cli, _ = shop
    cli("run", "stock", "--input", '{"question": "q"}', "--no-log")
    cli("run", "stock", "--input", '{"question": "q"}', extra={"DOTPROMPT_LOG": "0"})
    assert len(table_rows(cli("logs").stdout)) == 3
    cli("run", "stock", "--input", '{"question": "q"}', extra={"DOTPROMPT_LOG_PATH": "elsewhere.db"})
    assert len(table_rows(cli("logs").stdout)) == 3
    assert len(table_rows(cli("logs", "--file", "elsewhere.db").stdout)) == 1


def test_batch_rows_and_recorded_test_cases_are_logged(tmp_path, cli_env):
    project(tmp_path)
    env = {**cli_env, "XDG_DATA_HOME": str(tmp_path / "data")}
    (tmp_path / "rows.jsonl").write_text('{"answer": "a"}\n{"answer": "b"}\n{"answer": "c"}\n')
    done = cli("run", "yesno", "--input-file", "rows.jsonl", "--output", "out.jsonl", "--dir", "prompts",
               cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    identity = PromptLibrary(tmp_path / "prompts").load("yesno").identity
    assert all(r["prompt"] == {"name": "yesno", "hash": identity.hash} for r in records)
    every = cli("run", "yesno", "--input-file", "rows.jsonl", "--output", "all.jsonl", "--dir", "prompts",
                "--log-rows", "all", cwd=tmp_path, env=env)
    assert every.returncode == 0, every.stderr
    assert cli("test", "--record", "--dir", "prompts", cwd=tmp_path, env=env).returncode == 0
    assert cli("test", "--replay", "--dir", "prompts", cwd=tmp_path, env=env).returncode == 0
    # `logs` as a real subprocess: what the in-process runs wrote is on disk for another process to read.
    runs = [json.loads(line) for line in dotprompt("logs", "--json", cwd=tmp_path, env=env).stdout.splitlines()]
    batches = sorted((r["output"]["output"], r["output"]["succeeded"]) for r in runs
                     if r["source"] == "batch" and r["context"] is None)
    assert batches == [(str(tmp_path / "all.jsonl"), 3), (str(tmp_path / "out.jsonl"), 3)]  # each batch, once
    rows = [r for r in runs if r["source"] == "batch" and r["context"] is not None]
    assert sorted(r["context"]["key"] for r in rows) == sorted(r["key"] for r in records)  # the --log-rows all run
    assert all(r["context"]["output"] == str(tmp_path / "all.jsonl") for r in rows)
    tests = [r for r in runs if r["source"] == "test"]
    assert sorted(r["context"]["case"] for r in tests) == ["says no", "says yes"]  # the replay is not logged
    assert all(r["context"]["mode"] == "record" and r["prompt_hash"] == identity.hash for r in tests)
    recordings = (tmp_path / "prompts" / "__recordings__" / "yesno.jsonl").read_text().splitlines()
    assert all(json.loads(line)["prompt"] == {"name": "yesno", "hash": identity.hash} for line in recordings)


@pytest.mark.slow
def test_processes_writing_at_once_log_every_row_exactly_once(tmp_path, cli_env):
    project(tmp_path)
    env = {**cli_env, "DOTPROMPT_LOG_PATH": str(tmp_path / "shared.db")}
    batches = []
    for number in range(3):
        rows = tmp_path / f"rows{number}.jsonl"
        rows.write_text("".join(f'{{"answer": "p{number}-{n}"}}\n' for n in range(60)))
        batches.append(subprocess.Popen(
            [sys.executable, "-m", "dotprompt.cli", "run", "yesno", "--dir", "prompts", "--input-file", rows.name,
             "--output", f"out{number}.jsonl", "--concurrency", "64", "--log-rows", "all"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for batch in batches:
        _, stderr = batch.communicate(timeout=180)
        assert batch.returncode == 0 and "60 succeeded" in stderr and "the run log" not in stderr, stderr
    runs = [json.loads(line) for line in dotprompt("logs", "--json", cwd=tmp_path, env=env).stdout.splitlines()]
    answers = sorted(r["input"]["answer"] for r in runs if r["context"] is not None)
    assert answers == sorted(f"p{number}-{n}" for number in range(3) for n in range(60))
    assert sum(r["context"] is None for r in runs) == 3  # and each batch's own entry


def test_the_project_table_sets_the_file_and_can_turn_logging_off(tmp_path, cli_env):
    project(tmp_path)
    env = {k: v for k, v in cli_env.items() if k not in ("DOTPROMPT_LOG", "DOTPROMPT_LOG_PATH")}
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.dotprompt]\nprompts_dir = "prompts"\nlog_path = "runs/project.db"\n')
    assert cli("run", "yesno", "--input", '{"answer": "yes"}', cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "runs" / "project.db").is_file()
    assert len(table_rows(cli("logs", cwd=tmp_path, env=env).stdout)) == 1
    (tmp_path / "prompts" / "sub").mkdir()  # a relative log_path is the project's, wherever the command runs
    assert len(table_rows(cli("logs", cwd=tmp_path / "prompts" / "sub", env=env).stdout)) == 1
    pyproject.write_text('[tool.dotprompt]\nprompts_dir = "prompts"\nlog_path = "runs/project.db"\nlog = false\n')
    assert cli("run", "yesno", "--input", '{"answer": "no"}', cwd=tmp_path, env=env).returncode == 0
    assert len(table_rows(cli("logs", cwd=tmp_path, env=env).stdout)) == 1
