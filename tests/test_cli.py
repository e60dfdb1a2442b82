"""The `dotprompt` command, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import ROOT


def run(cmd: list[str], *args: str, cwd: Path | None = None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=60)


def test_render_readable_with_input_file(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "extract", "--dir", "prompts", "--input", "@examples/inputs/invoice.json",
               env=cli_env)
    assert done.returncode == 0, done.stderr
    assert "--- system ---" in done.stdout and "--- user ---" in done.stdout
    assert "INV-2026-0042" in done.stdout and '"invoice_number"' in done.stdout


def test_render_json_is_the_dotprompt_shape(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "classify", "--dir", "prompts", "--json",
               "--input", '{"subject": "Refund", "body": "I was charged twice"}', env=cli_env)
    assert done.returncode == 0, done.stderr
    shape = json.loads(done.stdout)
    assert shape["messages"][0]["role"] == "system"
    assert "billing, bug, feature_request, account, other" in shape["messages"][0]["content"][0]["text"]
    assert shape["output"]["format"] == "enum"


def test_render_variant_and_context(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "assistant", "--dir", "prompts", "--json",
               "--input", '{"question": "Where is my parcel?", "customer_id": "c-1"}',
               "--context", '{"auth": {"company": "Umbrella"}}', env=cli_env)
    assert done.returncode == 0, done.stderr
    assert "Umbrella" in json.loads(done.stdout)["messages"][0]["content"][0]["text"]
    done = run(dotprompt_cmd, "render", "extract", "--variant", "fast", "--dir", "prompts", "--json",
               "--input", '{"text": "x"}', env=cli_env)
    assert json.loads(done.stdout)["model"] == "openai/gpt-4o-mini"


def test_render_bad_input_exits_nonzero_with_the_paths(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "extract", "--dir", "prompts", "--input", '{"text": 5}', env=cli_env)
    assert done.returncode == 1
    assert "$.text: 5 is not of type 'string'" in done.stderr and "Traceback" not in done.stderr


def test_render_invalid_json_is_a_usage_error(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "extract", "--dir", "prompts", "--input", "{text", env=cli_env)
    assert done.returncode == 2 and "invalid JSON" in done.stderr


def test_render_unknown_prompt_suggests(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "extrac", "--dir", "prompts", env=cli_env)
    assert done.returncode == 1 and "did you mean 'extract'" in done.stderr


def test_render_refuses_dotdot(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "../README", "--dir", "prompts", env=cli_env)
    assert done.returncode == 1 and "invalid prompt name" in done.stderr


def test_check_passes_on_the_examples(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "check", "prompts", "--strict", env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 error(s), 0 warning(s)" in done.stderr


def test_check_reports_every_problem_with_locations(tmp_path, dotprompt_cmd, cli_env):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "typo.prompt").write_text("---\nmodel: m\nmax_turns: 3\noutput:\n  format: jsn\n---\nx")
    (prompts / "pico.prompt").write_text("---\noutput:\n  schema:\n    name: strng\n---\nx")
    (prompts / "vars.prompt").write_text("---\ninput:\n  schema:\n    name: string\n---\nHi {{ name }}\nand {{ nmae }}")
    (prompts / "hbs.prompt").write_text('{{role "system"}}hi')
    (prompts / "_broken.prompt").write_text("{% if %}")
    (prompts / "cycle.prompt").write_text("{% include 'loop' %}")
    (prompts / "_loop.prompt").write_text("{% include 'loop' %}")
    (prompts / "shadow.prompt").write_text("---\ninput:\n  schema:\n    role: string\n---\n{{ role('user') }}")
    (prompts / "default.prompt").write_text("---\ninput:\n  schema:\n    n: integer\n  default:\n    n: x\n---\n{{ n }}")
    done = run(dotprompt_cmd, "check", str(prompts), env=cli_env)
    out = done.stdout
    assert done.returncode == 1
    assert f"{prompts}/typo.prompt:3:1: warning: unknown key `max_turns` (did you mean `maxTurns`?)" in out
    assert f"{prompts}/typo.prompt:5:3: warning: unknown output format 'jsn'" in out
    assert f"{prompts}/pico.prompt:4:5: error: unknown type 'strng' in output.schema.name" in out
    assert f"{prompts}/vars.prompt:7: warning: template variable `nmae` is not declared" in out
    assert "did you mean `name`" in out
    assert f"{prompts}/hbs.prompt:1:" in out and "Handlebars" in out
    assert f"{prompts}/_broken.prompt:1: error: template syntax error" in out
    assert "partial cycle: loop -> loop" in out
    assert f"{prompts}/default.prompt:5:3: error: input.default $.n: 'x' is not of type 'integer'" in out
    assert f"{prompts}/shadow.prompt:4:5: warning: input field `role` is hidden by the template helper" in out
    assert "Traceback" not in out + done.stderr


def test_check_github_format(tmp_path, dotprompt_cmd, cli_env):
    (tmp_path / "p.prompt").write_text("---\nmaxTurns: 0\n---\nx")
    done = run(dotprompt_cmd, "check", str(tmp_path), "--format", "github", env=cli_env)
    assert done.returncode == 1
    assert done.stdout.strip() == f"::error file={tmp_path}/p.prompt,line=2,col=1::`maxTurns` must be at least 1"


def test_check_missing_folder_is_a_usage_error(tmp_path, dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "check", str(tmp_path / "nope"), env=cli_env)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_schema_command(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "schema", "classify", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["enum"] == ["billing", "bug", "feature_request", "account", "other"]
    done = run(dotprompt_cmd, "schema", "extract", "--input", "--dir", "prompts", env=cli_env)
    assert json.loads(done.stdout)["required"] == ["text"]
    done = run(dotprompt_cmd, "schema", "summarize", "--dir", "prompts", env=cli_env)
    assert done.returncode == 2 and "declares no output schema" in done.stderr


def test_prompt_dir_from_environment(tmp_path, dotprompt_cmd, cli_env):
    (tmp_path / "x.prompt").write_text("from env")
    done = run(dotprompt_cmd, "render", "x", "--json", env={**cli_env, "DOTPROMPT_DIR": str(tmp_path)})
    assert json.loads(done.stdout)["messages"][0]["content"][0]["text"] == "from env"


def test_list_command(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "list", "prompts", env=cli_env)
    labels = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert labels == ["assistant", "billing/refund_reason", "classify", "extract", "extract.fast", "summarize"]


def test_console_script_is_installed(cli_env):
    import shutil
    import sys

    script = shutil.which("dotprompt", path=str(Path(sys.executable).parent))
    assert script is not None
    done = run([script], "--help", env=cli_env)
    assert done.returncode == 0 and "render" in done.stdout


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


def test_run_with_a_schema_the_echo_model_cannot_meet_fails_with_the_reply(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "run", "extract", "--dir", "prompts", "--model", "echo",
               "--input", '{"text": "INV-1"}', env=cli_env)
    assert done.returncode == 1 and "does not match the output schema" in done.stderr
    assert "--- model reply ---\nsystem: " in done.stderr and "Traceback" not in done.stderr


def test_run_unknown_model_is_one_clear_line(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "run", "extract", "--dir", "prompts", "--model", "nope/x", "--input", '{"text": "a"}',
               env=cli_env)
    assert done.returncode == 1 and "unknown model 'nope/x'" in done.stderr and "Traceback" not in done.stderr
