"""Every writer, fed the same hostile strings (tests/hostile_strings.py): GitHub annotations, the eval
summary and JUnit, `dotprompt test`'s JUnit and report, `logs`, `run`'s errors and `render`'s view.

Each command runs in a child process with a time and memory limit (limited_cli.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.channels.limited_cli import cli
from tests.hostile_strings import (
    HOSTILE,
    assert_github_safe,
    assert_lines_kept,
    assert_markdown_safe,
    assert_terminal_safe,
    assert_xml_safe,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "evals"))
from eval_project import ROWS, WORSE
from eval_project import project as eval_project

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop

SCRIPTED = '''
import json
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.providers import define_model

HOSTILE = json.loads(%r)


def reply(request):
    last = request.messages[-1]
    if last.role == "tool":
        return "done"
    text = last.text
    if "call tools" in text:
        return [tool_call(h, {}, ref=str(i)) for i, h in enumerate(HOSTILE)]
    return "not json: " + " ".join(HOSTILE)


define_model(ScriptedModel(reply, name="scripted/hostile"))
'''.replace("%r", repr(json.dumps(HOSTILE)))


@pytest.fixture
def hostile_project(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (tmp_path / "scripted.py").write_text(SCRIPTED)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["scripted.py"]\n')
    (prompts / "say.prompt").write_text("---\nmodel: scripted/hostile\ninput:\n  schema:\n    q: string\n---\n{{ q }}\n")
    (prompts / "js.prompt").write_text("---\nmodel: scripted/hostile\ninput:\n  schema:\n    q: string\noutput:\n"
                                       "  format: json\n  schema:\n    a: string\n---\n{{ q }}\n")
    (prompts / "echo.prompt").write_text("---\nmodel: echo\ninput:\n  schema:\n    q: string\n---\n{{ q }}\n")
    return tmp_path


def env_for(root: Path) -> dict[str, str]:
    return {"XDG_DATA_HOME": str(root / "data"), "DOTPROMPT_DIR": ""}


def test_check_github_annotations_cannot_be_forged(tmp_path):
    keys = "".join(f"{json.dumps(h)}: 1\n" for h in HOSTILE)
    (tmp_path / "p.prompt").write_text(f"---\n{keys}---\nx")
    done = cli("check", str(tmp_path), "--format", "github", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dotted = sum("." in h for h in HOSTILE)  # a dotted key is an extension's: no warning
    assert_github_safe(done.stdout, expected_commands=len(HOSTILE) - dotted)
    assert "y%0D%0A::stop-commands::pause" in done.stdout  # shown, escaped, inside our own annotation


def test_check_text_is_one_line_per_diagnostic(tmp_path):
    keys = "".join(f"{json.dumps(h)}: 1\n" for h in HOSTILE)
    (tmp_path / "p.prompt").write_text(f"---\n{keys}---\nx")
    done = cli("check", str(tmp_path), cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert len(lines) == len(HOSTILE) - sum("." in h for h in HOSTILE)
    assert all(line.startswith(str(tmp_path / "p.prompt")) for line in lines)
    assert_terminal_safe(done.stdout)
    assert_lines_kept(done.stdout)


def test_eval_summary_junit_and_report_with_hostile_row_ids(tmp_path):
    prompts = eval_project(tmp_path)
    rows = [{**row, "id": HOSTILE[i] + f" #{i}"} for i, row in enumerate(ROWS)]
    rows += [{**ROWS[0], "id": h + f" #{i}"} for i, h in enumerate(HOSTILE[len(ROWS):], start=len(ROWS))]
    (prompts / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "USD" in WORSE  # the worse variant changes the currency: rows a and b fail it
    env = {"CI": "true", "GITHUB_STEP_SUMMARY": ""}
    cli("eval", "--record", "--variant", "worse", cwd=tmp_path, env=env)
    done = cli("eval", "--variant", "worse", "--markdown", "m.md", "--junit", "j.xml", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    assert_lines_kept(done.stdout + done.stderr)
    summary = (tmp_path / "m.md").read_text()
    assert_markdown_safe(summary, "")
    assert "failed" in summary and "osc52 \\x1b\\]52;c;ZXZpbA==\\x07 clipboard #3" in summary  # escaped, shown
    root = assert_xml_safe(tmp_path / "j.xml")
    assert root.get("failures") != "0"


KEYED = """---
model: echo
input:
  schema:
    keys(array): string
output:
  instructions: false
  format: json
  schema:
    type: object
    additionalProperties: {type: string}
---
{ {% for k in keys %}{{ k | json }}: {{ ("zzq " ~ loop.index) | json }}{% if not loop.last %}, {% endif %}{% endfor %} }
"""


def test_eval_grounding_junit_with_hostile_field_names_and_row_ids(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "keyed.prompt").write_text(KEYED)
    (prompts / "keyed.test.yaml").write_text("eval:\n  dataset: gold.jsonl\n  min: {grounded: 0.5}\n")
    values = {h: f"zzq {i}" for i, h in enumerate(HOSTILE, start=1)}  # right, and not in the input: flagged
    rows = [{"id": h + f" #{i}", "input": {"keys": HOSTILE}, "expected": values} for i, h in enumerate(HOSTILE)]
    (prompts / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {"CI": "true", "GITHUB_STEP_SUMMARY": ""}
    cli("eval", "--record", cwd=tmp_path, env=env)
    done = cli("eval", "--junit", "j.xml", "--markdown", "m.md", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    assert_lines_kept(done.stdout + done.stderr)
    assert_markdown_safe((tmp_path / "m.md").read_text(), "")
    cases = {c.get("name"): c for c in assert_xml_safe(tmp_path / "j.xml").iter("testcase")}
    grounding = [name for name in cases if name.endswith(" (grounding)")]
    assert len(grounding) == len(HOSTILE) + 1  # each hostile field, and the whole eval
    assert "['osc52 \\x1b]52;c;ZXZpbA==\\x07 clipboard'] (grounding)" in cases  # escaped, shown
    failure = cases["(overall) (grounding)"].find("failure")
    assert "grounded below threshold: 0.000 < 0.500; rows with an ungrounded value: x" in failure.get("message")
    assert "bidi \\u202eevil\\u202c #6" in failure.get("message")


def test_prompt_test_junit_names_each_ungrounded_hostile_path(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "keyed.prompt").write_text(KEYED)
    (prompts / "keyed.test.yaml").write_text(f"cases:\n  - name: hostile\n    input: {{keys: {json.dumps(HOSTILE)}}}\n"
                                             "    expect:\n      grounded: all\n")
    cli("test", "--record", cwd=tmp_path, env={"CI": ""})
    done = cli("test", "--junit", "j.xml", cwd=tmp_path, env={"CI": ""})
    assert done.returncode == 1, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    failure = assert_xml_safe(tmp_path / "j.xml").find("testsuite/testcase/failure")
    lines = failure.text.splitlines()
    assert len(lines) == len(HOSTILE) and all(line.startswith("grounded: $[") for line in lines), lines
    assert "grounded: $['bidi \\u202eevil\\u202c'] = 'zzq 7' is not in the input" in lines
    assert failure.get("message") == lines[0]


def test_prompt_test_junit_and_report_with_hostile_case_names(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "echo.prompt").write_text("---\nmodel: echo\ninput:\n  schema:\n    q: string\n---\n{{ q }}\n")
    cases = "".join(f"  - name: {json.dumps(h)}\n    input: {{q: {json.dumps(h)}}}\n"
                    f"    expect:\n      text_contains: {json.dumps('missing ' + h)}\n" for h in HOSTILE)
    (prompts / "echo.test.yaml").write_text("prompt: echo\ncases:\n" + cases)
    env = {"CI": ""}
    done = cli("test", "--record", "--junit", str(tmp_path / "j.xml"), cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert_terminal_safe(done.stdout + done.stderr)
    assert_lines_kept(done.stdout + done.stderr)
    root = assert_xml_safe(tmp_path / "j.xml")
    assert root.get("failures") == str(len(HOSTILE))


def test_logs_list_and_one_run_show_no_raw_controls(hostile_project):
    env = env_for(hostile_project)
    done = cli("run", "say", "--input", json.dumps({"q": "hello"}), cwd=hostile_project, env=env)
    assert done.returncode == 0, done.stderr  # piped, the output is the model's text exactly
    listed = cli("logs", cwd=hostile_project, env=env)
    assert listed.returncode == 0, listed.stderr
    assert_terminal_safe(listed.stdout)
    assert_lines_kept(listed.stdout)
    shown = cli("logs", "1", cwd=hostile_project, env=env)
    assert shown.returncode == 0, shown.stderr
    assert_terminal_safe(shown.stdout)
    assert "\\x1b]52" in shown.stdout  # visible, not dropped


def test_run_failed_json_message_and_unknown_tool_names(hostile_project):
    env = env_for(hostile_project)
    failed = cli("run", "js", "--input", json.dumps({"q": "hi"}), cwd=hostile_project, env=env)
    assert failed.returncode == 1
    assert_terminal_safe(failed.stderr)
    assert "\\x1b]52" in failed.stderr
    tools = cli("run", "say", "--input", json.dumps({"q": "call tools"}), cwd=hostile_project, env=env)
    assert tools.returncode == 0, tools.stderr
    assert_terminal_safe(tools.stderr)
    assert "tool error" in tools.stderr


def test_render_readable_view_cannot_forge_a_message(hostile_project):
    for text in HOSTILE:
        done = cli("render", "echo", "--input", json.dumps({"q": text}), cwd=hostile_project)
        assert done.returncode == 0, done.stderr
        headers = [line for line in done.stdout.splitlines() if line.startswith("--- ")]
        assert headers == ["--- user ---"], done.stdout
        assert_terminal_safe(done.stdout)
        exact = cli("render", "echo", "--json", "--input", json.dumps({"q": text}), cwd=hostile_project)
        assert json.loads(exact.stdout)["messages"][0]["content"][0]["text"] == text  # --json stays exact
