"""`dotprompt run` (one input, streamed, or a batch from a file), with the echo model, in-process
(tests/cli_inprocess.py); the first test also as a real subprocess."""

from __future__ import annotations

import json

import pytest

from tests.cli_inprocess import cli
from tests.cli_process import run
from tests.echo_project import project


@pytest.mark.slow
def test_run_with_the_echo_model_prints_the_output(tmp_path, dotprompt_cmd, cli_env):
    (tmp_path / "greet.prompt").write_text(
        '---\ninput:\n  schema:\n    name: string\n---\n{{ role("system") }}Be kind.\n{{ role("user") }}Hello {{ name }}')
    done = run(dotprompt_cmd, "run", "greet", "--dir", str(tmp_path), "--model", "echo", "--input", '{"name": "Ann"}',
               env=cli_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "system: Be kind.\nuser: Hello Ann\n"
    streamed = run(dotprompt_cmd, "run", "greet", "--dir", str(tmp_path), "--model", "echo", "--stream",
                   "--input", '{"name": "Ann"}', env=cli_env)
    assert streamed.returncode == 0 and streamed.stdout == done.stdout
    assert "user: Hello Ann" in streamed.stderr


def test_run_with_a_schema_the_echo_model_cannot_meet_fails_with_the_reply(cli_env):
    done = cli("run", "extract", "--dir", "prompts", "--model", "echo",
               "--input", '{"text": "INV-1"}', env=cli_env)
    assert done.returncode == 1 and "does not match the output schema" in done.stderr
    assert "--- model reply ---\nsystem: " in done.stderr and "Traceback" not in done.stderr


def test_run_unknown_model_is_one_clear_line(cli_env):
    done = cli("run", "extract", "--dir", "prompts", "--model", "nope/x", "--input", '{"text": "a"}',
               env=cli_env)
    assert done.returncode == 1 and "unknown model 'nope/x'" in done.stderr and "Traceback" not in done.stderr


def test_batch_run_from_the_command_line(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"answer": "a"}\n{"answer": 5}\n{"answer": "c"}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--concurrency", "2",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 1  # one row failed its input schema
    records = {r["row"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert records[1]["output"] == {"answer": "a"} and records[3]["output"] == {"answer": "c"}
    assert records[2]["error"]["type"] == "InputValidationError"
    assert "2 succeeded, 1 failed" in done.stderr
    done = cli("run", "yesno", "--input-file", str(rows), cwd=tmp_path, env=cli_env)
    assert done.returncode == 2 and "needs --output" in done.stderr
