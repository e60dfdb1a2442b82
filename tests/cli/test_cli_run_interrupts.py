"""A run that stops on interrupts (a tool asking a human) is not a success: `dotprompt run` shows the
pending requests and how to resume, exits 3, and the run log says `interrupted`; a batch row that stops
so keeps its pending requests, is counted apart and runs again on the next run.

The model is a scripted one defined by the project's tools module ([tool.dotprompt] tools), as a user would.
"""

from __future__ import annotations

import json

from tests.cli_inprocess import cli

TOOLS = '''
from dotprompt import define_model, tool
from dotprompt.doubles import ScriptedModel, tool_call

approve = tool(name="approve", description="Ask a manager.", input_schema={"type": "object"}, interrupt=True)


def reply(request):
    if request.messages[-1].role == "tool":
        return "Approved."
    return [tool_call("approve", {"level": 1}, ref="a1"), tool_call("approve", {"level": 2}, ref="a2")]


define_model(ScriptedModel(reply), name="scripted")
'''
PROMPT = "---\nmodel: scripted\ntools: [approve]\n---\n{{ question }}"


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "support.prompt").write_text(PROMPT)
    return {"XDG_DATA_HOME": str(tmp_path / "data")}


def test_run_stopped_on_interrupts_names_them_and_exits_3(tmp_path, cli_env):
    env = {**cli_env, **project(tmp_path)}
    done = cli("run", "support", "--input", '{"question": "I need two approvals"}', cwd=tmp_path, env=env)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stdout == ""  # no `null` passing for an output
    lines = done.stderr.splitlines()
    assert lines[0] == "interrupted: the run stopped on 2 tool request(s) waiting for an answer:"
    assert '  approve (ref a1) {"level": 1}' in lines
    assert '  approve (ref a2) {"level": 2}' in lines
    assert any("resume=" in line for line in lines) and any("dotprompt ui" in line for line in lines)

    logs = cli("logs", cwd=tmp_path, env=env)
    row = next(line for line in logs.stdout.splitlines() if line.split() and line.split()[0] == "1")
    assert " interrupted " in row and "waiting for" in row, logs.stdout
    assert len(cli("logs", "--status", "interrupted", cwd=tmp_path, env=env).stdout.splitlines()) == 3
    assert "status   interrupted  finish: interrupted" in cli("logs", "1", cwd=tmp_path, env=env).stdout


def test_streamed_run_stopped_on_interrupts_exits_3_too(tmp_path, cli_env):
    env = {**cli_env, **project(tmp_path)}
    done = cli("run", "support", "--stream", "--input", '{"question": "q"}', cwd=tmp_path, env=env)
    assert done.returncode == 3 and "approve (ref a2)" in done.stderr, done.stderr


def test_batch_row_stopped_on_interrupts_is_kept_pending_and_runs_again(tmp_path, cli_env):
    env = {**cli_env, **project(tmp_path)}
    (tmp_path / "rows.jsonl").write_text('{"id": "r1", "question": "two approvals"}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "support", "--input-file", "rows.jsonl", "--output", "out.jsonl", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stderr
    assert "0 succeeded, 0 failed, 1 interrupted (tool requests pending), 0 skipped" in done.stderr
    assert 'row 1 (id "r1"): interrupted: approve (ref a1), approve (ref a2)' in done.stderr
    record = json.loads(out.read_text())
    assert "output" not in record and "error" not in record
    assert [(p["name"], p["ref"], p["input"]) for p in record["interrupted"]] == [
        ("approve", "a1", {"level": 1}), ("approve", "a2", {"level": 2})]
    assert record["messages"][-1]["role"] == "model"  # the conversation to resume from
    again = cli("run", "support", "--input-file", "rows.jsonl", "--output", "out.jsonl", cwd=tmp_path, env=env)
    assert "1 interrupted (tool requests pending), 0 skipped" in again.stderr  # not skipped as done
    assert len(out.read_text().splitlines()) == 1  # one record per row, still
