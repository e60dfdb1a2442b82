"""Batch rows keyed by a column (`id` by default, `--key COLUMN`): the key identifies the row and is
not sent as input unless the input schema declares it; a failed row's line on stderr says why."""

from __future__ import annotations

import json

from tests.cli_inprocess import cli
from tests.echo_project import project

DECLARES_ID = """---
model: echo
input:
  schema:
    id: string
    answer: string
output:
  instructions: false
  schema:
    answer: string
---
{"answer": "{{ id }}-{{ answer }}"}
"""


def records(path):
    return {r["row"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_rows_with_an_id_run_against_a_closed_input_schema(tmp_path, cli_env):
    project(tmp_path)  # yesno's input schema holds `answer` only (Picoschema: closed)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "a", "answer": "yes"}\n{"id": 7, "answer": "no"}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    found = records(out)
    assert found[1]["output"] == {"answer": "yes"} and found[2]["output"] == {"answer": "no"}
    assert (found[1]["key"], found[2]["key"]) == ('id:"a"', "id:7")
    assert found[1]["input"] == {"id": "a", "answer": "yes"}  # the record keeps the row as it was


def test_an_id_the_input_schema_declares_is_sent(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "withid.prompt").write_text(DECLARES_ID)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "a", "answer": "yes"}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "withid", "--input-file", str(rows), "--output", str(out), cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert records(out)[1]["output"] == {"answer": "a-yes"}


def test_key_names_another_column_which_is_not_sent(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"invoice": "INV-1", "answer": "yes"}\n{"invoice": "INV-2", "answer": "no"}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--key", "invoice",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    found = records(out)
    assert (found[1]["key"], found[2]["key"]) == ('invoice:"INV-1"', 'invoice:"INV-2"')
    again = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--key", "invoice",
                cwd=tmp_path, env=cli_env)
    assert again.returncode == 0 and "2 skipped" in again.stderr


def test_key_column_missing_or_repeated_names_the_line(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    out = tmp_path / "out.jsonl"
    rows.write_text('{"invoice": "INV-1", "answer": "yes"}\n{"answer": "no"}\n')
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--key", "invoice",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "rows.jsonl:2: no `invoice` (the --key column)" in done.stderr and not out.exists()
    rows.write_text('{"invoice": "INV-1", "answer": "yes"}\n{"invoice": "INV-1", "answer": "no"}\n')
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--key", "invoice",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "rows.jsonl:2: the invoice 'INV-1' was already used on line 1" in done.stderr
    rows.write_text('{"invoice": [1], "answer": "yes"}\n')
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), "--key", "invoice",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "rows.jsonl:1: the invoice [1] is not a string or a whole number" in done.stderr


def test_a_failed_rows_line_says_why(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "a", "answer": "yes"}\n{"id": "b", "answer": 5}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "yesno", "--input-file", str(rows), "--output", str(out), cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("row ")]
    assert line.startswith('row 2 (id "b"): InputValidationError: input for prompt')
    assert "answer" in line and "not of type 'string'" in line.split("schema:", 1)[1], line


def test_key_needs_a_column_name_and_an_input_file(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"answer": "yes"}\n')
    done = cli("run", "yesno", "--input-file", str(rows), "--output", "out.jsonl", "--key", " ", cwd=tmp_path,
               env=cli_env)
    assert done.returncode == 2 and "--key needs a column name" in done.stderr
    done = cli("run", "yesno", "--input", '{"answer": "yes"}', "--key", "id", cwd=tmp_path, env=cli_env)
    assert done.returncode == 2 and "--key needs --input-file" in done.stderr
