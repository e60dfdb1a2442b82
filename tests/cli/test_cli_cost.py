"""Cost on the command line: `dotprompt run`, the `dotprompt test` table and JSON, `max_cost`, batch rows.

The model is a scripted one the project's tools module registers under a hosted model's name
(`openai/gpt-4o-mini`), reporting a fixed usage per call: so the price is real (genai-prices, by
that provider's endpoint) and nothing touches the network. Expected amounts come from genai-prices.
"""

from __future__ import annotations

import json

import pytest

from dotprompt.observe.cost import format_usd
from tests.cli_inprocess import cli

genai_prices = pytest.importorskip("genai_prices")

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel
from dotprompt.types import Usage

USAGE = Usage(input_tokens=12000, output_tokens=3000, total_tokens=15000)
define_model(ScriptedModel(['{"answer": "yes"}'] * 50, usage=USAGE), name="openai/gpt-4o-mini")
define_model(ScriptedModel(['{"answer": "yes"}'] * 50, usage=USAGE), name="scripted")
'''
PROMPT = "---\nmodel: {model}\noutput:\n  schema:\n    answer: string\n---\nSay yes.\n"
TESTS = """cases:
  - name: within-budget
    expect:
      max_cost: 1
  - name: over-budget
    expect:
      max_cost: 0.000001
"""


def call_price():
    usage = genai_prices.Usage(input_tokens=12000, output_tokens=3000)
    return genai_prices.calc_price(usage, "gpt-4o-mini", provider_id="openai").total_price


def project(tmp_path, model: str = "openai/gpt-4o-mini"):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "yes.prompt").write_text(PROMPT.format(model=model))
    return tmp_path / "prompts"


def plain(env):
    return {k: v for k, v in env.items() if k not in ("CI", "OPENAI_BASE_URL")}


def test_run_shows_the_cost_of_a_priced_model(tmp_path, cli_env):
    project(tmp_path)
    done = cli("run", "yes", cwd=tmp_path, env=plain(cli_env))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answer": "yes"}
    assert done.stderr.splitlines() == [f"cost: {format_usd(call_price())} (15,000 tokens)"]


def test_an_unknown_cost_is_silent_unless_asked_for(tmp_path, cli_env):
    project(tmp_path, model="scripted")
    quiet = cli("run", "yes", cwd=tmp_path, env=plain(cli_env))
    assert quiet.returncode == 0 and "cost" not in quiet.stderr
    asked = cli("run", "yes", "--cost", cwd=tmp_path, env=plain(cli_env))
    assert asked.returncode == 0
    assert asked.stderr.splitlines() == ["cost: unknown (no price for scripted: not a hosted provider's model)"]


def test_the_test_table_and_json_show_cost_and_max_cost_fails_over_budget(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "yes.test.yaml").write_text(TESTS)
    report = tmp_path / "r.json"
    done = cli("test", "--live", "--json", str(report), cwd=tmp_path, env=plain(cli_env))
    assert done.returncode == 1, done.stdout + done.stderr
    price = format_usd(call_price())
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("yes.test.yaml::")]
    assert [(row[0], row[1], row[-1]) for row in rows] == [
        ("yes.test.yaml::within-budget", "pass", price), ("yes.test.yaml::over-budget", "FAIL", price)]
    assert f"cost {price} is over the max_cost budget of $1e-06" in done.stdout
    results = {r["case"]: r for r in json.loads(report.read_text())}
    assert results["within-budget"]["cost_usd"] == float(call_price()) and results["over-budget"]["passed"] is False


def test_max_cost_on_a_model_without_a_price_fails_saying_why(tmp_path, cli_env):
    prompts = project(tmp_path, model="scripted")
    (prompts / "yes.test.yaml").write_text("cases:\n  - name: a\n    expect:\n      max_cost: 1\n")
    done = cli("test", "--live", cwd=tmp_path, env=plain(cli_env))
    assert done.returncode == 1
    assert "max_cost 1 USD cannot be checked: no price for scripted: not a hosted provider's model" in done.stdout


def test_a_bad_max_cost_is_a_test_file_error_at_its_line(tmp_path, cli_env):
    prompts = project(tmp_path)
    (prompts / "yes.test.yaml").write_text("cases:\n  - name: a\n    expect:\n      max_cost: cheap\n")
    done = cli("test", "--live", cwd=tmp_path, env=plain(cli_env))
    assert done.returncode == 2
    assert "yes.test.yaml:4" in done.stderr and "`max_cost` must be a number of US dollars (0 or more)" in done.stderr


def test_batch_rows_carry_their_cost_and_the_summary_the_total(tmp_path, cli_env):
    project(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": 1}\n{"id": 2}\n')
    out = tmp_path / "out.jsonl"
    done = cli("run", "yes", "--input-file", str(rows), "--output", str(out), cwd=tmp_path, env=plain(cli_env))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["cost_usd"] for r in records] == [float(call_price())] * 2
    assert f"cost {format_usd(2 * call_price())} -> {out}" in done.stderr
