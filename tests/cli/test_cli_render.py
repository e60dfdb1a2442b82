"""`dotprompt render`, in-process (tests/cli_inprocess.py); the first test also as a real subprocess."""

from __future__ import annotations

import json

from tests.cli_inprocess import cli
from tests.cli_process import run


def test_render_readable_with_input_file(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "render", "extract", "--dir", "prompts", "--input", "@examples/inputs/invoice.json",
               env=cli_env)
    assert done.returncode == 0, done.stderr
    assert "--- system ---" in done.stdout and "--- user ---" in done.stdout
    assert "INV-2026-0042" in done.stdout and '"invoice_number"' in done.stdout


def test_render_json_is_the_dotprompt_shape(cli_env):
    done = cli("render", "classify", "--dir", "prompts", "--json",
               "--input", '{"subject": "Refund", "body": "I was charged twice"}', env=cli_env)
    assert done.returncode == 0, done.stderr
    shape = json.loads(done.stdout)
    assert shape["messages"][0]["role"] == "system"
    assert "billing, bug, feature_request, account, other" in shape["messages"][0]["content"][0]["text"]
    assert shape["output"]["format"] == "enum"


def test_render_variant_and_context(cli_env):
    done = cli("render", "assistant", "--dir", "prompts", "--json",
               "--input", '{"question": "Where is my parcel?", "customer_id": "c-1"}',
               "--context", '{"auth": {"company": "Umbrella"}}', env=cli_env)
    assert done.returncode == 0, done.stderr
    assert "Umbrella" in json.loads(done.stdout)["messages"][0]["content"][0]["text"]
    done = cli("render", "extract", "--variant", "fast", "--dir", "prompts", "--json",
               "--input", '{"text": "x"}', env=cli_env)
    assert json.loads(done.stdout)["model"] == "openai/gpt-4o-mini"


def test_render_bad_input_exits_nonzero_with_the_paths(cli_env):
    done = cli("render", "extract", "--dir", "prompts", "--input", '{"text": 5}', env=cli_env)
    assert done.returncode == 1
    assert "$.text: 5 is not of type 'string'" in done.stderr and "Traceback" not in done.stderr


def test_render_invalid_json_is_a_usage_error(cli_env):
    done = cli("render", "extract", "--dir", "prompts", "--input", "{text", env=cli_env)
    assert done.returncode == 2 and "invalid JSON" in done.stderr


def test_render_unknown_prompt_suggests(cli_env):
    done = cli("render", "extrac", "--dir", "prompts", env=cli_env)
    assert done.returncode == 1 and "did you mean 'extract'" in done.stderr


def test_render_refuses_dotdot(cli_env):
    done = cli("render", "../README", "--dir", "prompts", env=cli_env)
    assert done.returncode == 1 and "invalid prompt name" in done.stderr


def test_prompt_dir_from_environment(tmp_path, cli_env):
    (tmp_path / "x.prompt").write_text("from env")
    done = cli("render", "x", "--json", env={**cli_env, "DOTPROMPT_DIR": str(tmp_path)})
    assert json.loads(done.stdout)["messages"][0]["content"][0]["text"] == "from env"
