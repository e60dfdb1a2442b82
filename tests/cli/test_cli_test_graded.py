"""`dotprompt test` assertions by Python function (`function: module:function`) and by a judging model
(`judge:`), run through the real CLI; the judge is a real HTTP server on loopback speaking the OpenAI
wire format, recorded once and then replayed with the server gone."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.cli_inprocess import cli
from tests.echo_project import project
from tests.providers.mock_server import Loopback

CHECKS = '''
def says_yes(output, case_input):
    return output["answer"] == "yes"


def reasons(output, case_input):
    return [] if output["answer"] == case_input["answer"] else ["answer differs from the input"]


def strict(output, case_input):
    assert output["answer"] == "si", "expected a Spanish yes"
    return True


def forgets(output, case_input):
    output["answer"]
'''


def _verdict(request: httpx.Request) -> dict:
    """An OpenAI chat reply whose verdict passes when the graded output is "yes"."""
    body = json.loads(request.content)
    graded = body["messages"][-1]["content"].split("Output to grade:")[1].strip()
    verdict = {"pass": graded == "yes", "reason": "says yes" if graded == "yes" else "does not say yes"}
    return {"id": "c1", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(verdict)}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}


@pytest.fixture
def judge_server():
    """An OpenAI-compatible server whose verdict passes when the graded output contains "yes"."""
    with Loopback(_verdict) as server:
        yield f"{server.url}/v1", server.requests


def write_project(tmp_path: Path, expect_yes: str, expect_no: str) -> Path:
    prompts = project(tmp_path)
    (tmp_path / "checks.py").write_text(CHECKS)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (prompts / "yesno.test.yaml").write_text(
        f"cases:\n  - name: says yes\n    input: {{answer: \"yes\"}}\n    expect:\n{expect_yes}"
        f"  - name: says no\n    input: {{answer: \"no\"}}\n    expect:\n{expect_no}")
    return prompts


def test_function_assertions_pass_fail_and_explain(tmp_path, cli_env):
    write_project(tmp_path, "      function: [checks:says_yes, checks:reasons]\n",
                  "      function: [checks:says_yes, checks:reasons, checks:strict, checks:forgets]\n")
    done = cli("test", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "says yes: FAILED" not in done.stdout and "says no: FAILED" in done.stdout
    assert 'function checks:says_yes returned False for {"answer": "no"}' in done.stdout
    assert "function checks:reasons" not in done.stdout
    assert "function checks:strict: expected a Spanish yes" in done.stdout
    assert "function checks:forgets returned null; return True, False, or the reasons" in done.stdout


def test_function_assertion_names_are_checked_when_the_file_is_read(tmp_path, cli_env):
    prompts = write_project(tmp_path, "      function: not a function\n", "      function: checks:missing\n")
    done = cli("test", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode == 2 and "yesno.test.yaml:5:" in done.stderr and "is not a `module:function` name" in done.stderr
    (prompts / "yesno.test.yaml").write_text("cases:\n  - name: a\n    input: {answer: x}\n    expect:\n"
                                             "      function: nomodule:f\n")
    done = cli("test", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "cannot import 'nomodule' for 'nomodule:f'" in done.stdout


def test_judge_verdicts_are_recorded_then_replayed_offline(tmp_path, cli_env, judge_server):
    base_url, seen = judge_server
    judge = ("      judge:\n        rubric: The answer is an affirmative yes.\n        model: openai/judge-test\n"
             "        path: $.answer\n")
    prompts = write_project(tmp_path, judge, judge)
    env = {**cli_env, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-judge-key-123456"}
    env.pop("CI", None)
    done = cli("test", "--record", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "judge 1 (openai/judge-test) failed the rubric 'The answer is an affirmative yes.': does not say yes" \
        in done.stdout
    assert "says yes: FAILED" not in done.stdout and len(seen) == 2
    assert "Rubric:\nThe answer is an affirmative yes." in json.loads(seen[0].content)["messages"][-1]["content"]
    recorded = (prompts / "__recordings__" / "yesno.jsonl").read_text()
    cases = sorted(json.loads(line)["case"] for line in recorded.splitlines())
    assert cases == ["says no", "says no [judge 1]", "says yes", "says yes [judge 1]"]
    assert "sk-test-judge-key" not in recorded

    offline = {**cli_env, "CI": "true", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # nothing listens there
    offline.pop("OPENAI_API_KEY", None)
    done = cli("test", cwd=tmp_path, env=offline)
    assert done.returncode == 1 and len(seen) == 2
    assert "says no: FAILED" in done.stdout and "does not say yes" in done.stdout and "1 passed, 1 failed" in done.stdout

    # A changed rubric is a new request for the judge: replay refuses the old verdict and says to re-record.
    text = (prompts / "yesno.test.yaml").read_text()
    (prompts / "yesno.test.yaml").write_text(text.replace("affirmative", "emphatic", 1))
    done = cli("test", cwd=tmp_path, env=offline)
    assert done.returncode == 1 and len(seen) == 2
    assert "the recording of case 'says yes [judge 1]', model call 1, no longer matches its request" in done.stdout
    assert "re-record" in done.stdout
