"""`dotprompt test` with the echo model: record, replay, reports, exit codes. In-process
(tests/cli_inprocess.py); the missing-recording test also as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli_inprocess import cli
from tests.cli_process import dotprompt
from tests.echo_project import PROMPT, TESTS, project


def test_record_replay_report_and_exit_codes(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = {k: v for k, v in cli_env.items() if k != "CI"}
    done = cli("test", "--record", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    recording = prompts / "__recordings__" / "yesno.jsonl"
    assert [json.loads(line)["case"] for line in recording.read_text().splitlines()] == ["says no", "says yes"]
    junit = tmp_path / "report.xml"
    done = cli("test", "--junit", str(junit), "--json", str(tmp_path / "r.json"), cwd=tmp_path,
               env={**env, "CI": "true"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS yesno.test.yaml::says yes" in done.stdout and "2 passed, 0 failed" in done.stdout
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuites" and suite.get("tests") == "2" and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")] == ["says yes", "says no"]
    assert json.loads((tmp_path / "r.json").read_text())[0]["replayed"] is True

    (prompts / "yesno.test.yaml").write_text(TESTS.replace('one_of: ["no", "nope"]', 'one_of: ["nope"]'))
    done = cli("test", "--replay", "--junit", str(junit), cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert 'says no: FAILED' in done.stdout and '$.answer: expected one_of ["nope"], got "no"' in done.stdout
    failure = next(ET.parse(junit).getroot().iter("failure"))
    assert "$.answer" in failure.get("message")

    done = cli("test", "-k", "says yes", "--replay", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "1 passed, 0 failed" in done.stdout


def test_broken_prompt_fails_naming_case_path_and_reason(tmp_path, cli_env):
    prompts = project(tmp_path)
    cli("test", "--record", cwd=tmp_path, env=cli_env)
    (prompts / "yesno.prompt").write_text(PROMPT.replace("    answer: string\n---", "    answer: string\n    score: number\n---"))
    done = cli("test", "--replay", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    assert "says yes: FAILED" in done.stdout
    assert "output does not match the output schema at $: 'score' is a required property" in done.stdout
    assert "no longer matches its request" in done.stdout


@pytest.mark.slow
def test_missing_recording_in_ci_and_bad_test_file(tmp_path, cli_env):
    prompts = project(tmp_path)
    done = dotprompt("test", cwd=tmp_path, env={**cli_env, "CI": "1"})
    assert done.returncode == 1 and "no recording for case 'says yes'" in done.stdout
    (prompts / "other.test.yaml").write_text("prompt: yesno\ncases:\n  - name: x\n    expect: {outptu: 1}\n")
    done = dotprompt("test", cwd=tmp_path, env={**cli_env, "CI": "1"})
    assert done.returncode == 2 and "other.test.yaml:4:" in done.stderr and "did you mean `output`" in done.stderr


def run_with_reports(folder: Path, tmp_path: Path, cli_env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """`dotprompt test --dir FOLDER --replay` with JUnit and JSON reports, which must still be written."""
    junit, report = tmp_path / "report.xml", tmp_path / "report.json"
    done = cli("test", "--dir", str(folder), "--replay", "--junit", str(junit), "--json", str(report), *extra,
               cwd=tmp_path, env=cli_env)
    assert "Traceback" not in done.stderr, done.stderr
    assert ET.parse(junit).getroot().get("tests") == "0"
    assert json.loads(report.read_text()) == []
    return done


def test_test_file_with_a_yaml_error_collects_nothing_and_exits_2(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "yesno.test.yaml").write_text("cases:\n  - name: [unclosed\n")
    done = run_with_reports(prompts, tmp_path, cli_env)
    assert done.returncode == 2
    assert f"{prompts / 'yesno.test.yaml'}:2:11: error: invalid YAML: the `[` opened here is never closed" in done.stderr
    assert "no test cases collected: 1 test file could not be read (see above)" in done.stderr


def test_test_file_without_cases_exits_2_naming_it(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "yesno.test.yaml").write_text("cases: []\n")
    done = run_with_reports(prompts, tmp_path, cli_env)
    assert done.returncode == 2
    assert f"dotprompt: error: no test cases collected: no cases in {prompts / 'yesno.test.yaml'}" in done.stderr
    assert "0 passed, 0 failed" in done.stdout


def test_folder_without_test_files_exits_2_naming_it(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "yesno.test.yaml").unlink()
    done = run_with_reports(prompts, tmp_path, cli_env)
    assert done.returncode == 2
    assert f"no test cases collected: no *.test.yaml files in {prompts}" in done.stderr


def test_keyword_matching_no_case_exits_2(tmp_path, cli_env):
    prompts = project(tmp_path)
    done = run_with_reports(prompts, tmp_path, cli_env, "-k", "nothing like this")
    assert done.returncode == 2
    assert f"no case in {prompts / 'yesno.test.yaml'} matches -k 'nothing like this'" in done.stderr


def test_report_paths_in_missing_folders_are_created(tmp_path, cli_env):
    project(tmp_path)
    env = {k: v for k, v in cli_env.items() if k != "CI"}
    done = cli("test", "--record", "--junit", "reports/ci/junit.xml", "--json", "out/r.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ET.parse(tmp_path / "reports" / "ci" / "junit.xml").getroot().get("tests") == "2"
    assert len(json.loads((tmp_path / "out" / "r.json").read_text())) == 2


def test_a_report_path_that_cannot_be_written_is_one_line_before_the_run(tmp_path, cli_env):
    project(tmp_path)
    (tmp_path / "reports").write_text("a file, not a folder")
    done = cli("test", "--record", "--junit", "reports/junit.xml", cwd=tmp_path, env=cli_env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--junit reports/junit.xml: cannot create the folder reports" in done.stderr, done.stderr
    assert not (tmp_path / "prompts" / "__recordings__").exists()  # nothing ran


def test_outside_ci_a_missing_recording_and_a_failed_live_call_are_both_said(tmp_path, cli_env):
    import socket

    prompts = project(tmp_path)
    (prompts / "yesno.prompt").write_text(PROMPT.replace("model: echo", "model: openai/gpt-test"))
    with socket.socket() as probe:  # a port nothing listens on: the model server is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in cli_env.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="sk-test-0001")
    done = cli("test", "-k", "says yes", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "says yes" in line and "no recording" in line)
    assert "no recording for case 'says yes', model call 1" in line, done.stdout
    assert "tried the model live: ModelError:" in line and "127.0.0.1" in line, line
    assert "re-record with `dotprompt test --record` once the model answers" in line, line


def test_junit_names_test_files_from_the_project_folder(tmp_path, cli_env):
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\n')  # resolved to an absolute path
    (tmp_path / "sub").mkdir()
    env = {k: v for k, v in cli_env.items() if k != "CI"}
    assert cli("test", "--record", cwd=tmp_path, env=env).returncode == 0
    for where in (tmp_path, tmp_path / "sub"):
        done = cli("test", "--replay", "--junit", "j.xml", cwd=where, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        root = ET.parse(where / "j.xml").getroot()
        assert [s.get("name") for s in root.iter("testsuite")] == ["prompts/yesno.test.yaml"]
        assert {c.get("file") for c in root.iter("testcase")} == {"prompts/yesno.test.yaml"}
