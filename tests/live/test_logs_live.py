"""A run on the real local model lands in the run log, and `dotprompt logs` shows it (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.live

PROMPT = "---\nmodel: local/smollm2\nconfig: {temperature: 0, maxOutputTokens: 12}\n---\nSay hello to {{ name }}."


def test_a_local_model_run_is_logged(local_model, tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hello.prompt").write_text(PROMPT)
    env = {k: v for k, v in os.environ.items() if k not in ("DOTPROMPT_DIR", "DOTPROMPT_MODEL", "DOTPROMPT_LOG")}
    env.update(PYTHONIOENCODING="utf-8", DOTPROMPT_LOG_PATH=str(tmp_path / "logs.db"))

    def dotprompt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dotprompt.cli", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)

    done = dotprompt("run", "hello", "--input", '{"name": "Ada"}')
    assert done.returncode == 0, done.stderr
    (run,) = [json.loads(line) for line in dotprompt("logs", "--json").stdout.splitlines()]
    assert run["model"] == "local/smollm2" and run["source"] == "run" and run["prompt"] == "hello"
    assert run["status"] == "ok" and run["input"] == {"name": "Ada"} and run["output"] == done.stdout.rstrip("\n")
    assert run["request"]["messages"][0]["content"][0]["text"] == "Say hello to Ada."
    assert run["response"]["messages"][-1]["role"] == "model" and run["latency_ms"] > 0
    assert run["output_tokens"] > 0
    listed = dotprompt("logs")
    assert listed.returncode == 0 and "local/smollm2" in listed.stdout and "hello@" in listed.stdout
