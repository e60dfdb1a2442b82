"""Ctrl-C during `dotprompt run --input-file`: how many rows were written, the command that goes on,
exit 130, no traceback, and an output file of whole lines that the same command then completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop

SLOW = '''
import asyncio
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import define_model


class Slow(ScriptedModel):
    async def generate(self, request, on_chunk=None):
        await asyncio.sleep(0.3)
        return await super().generate(request, on_chunk)


define_model(Slow(lambda request: '{"ok": true}', name="scripted/slow"))
'''


def make_project(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text("---\nmodel: scripted/slow\ninput:\n  schema:\n    n: integer\n"
                                                   "output:\n  schema:\n    ok: boolean\n---\n{{ n }}")
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["slow.py"]\n')
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"n": i}) + "\n" for i in range(200)))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONIOENCODING": "utf-8"}
    env.pop("DOTPROMPT_DIR", None)
    return env


def interrupt(command, tmp_path, env):
    """Run `command`, Ctrl-C it once 8 rows are written; its stderr."""
    child = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 8):
        time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    return stderr


COMMAND = [sys.executable, "-m", "dotprompt.cli", "run", "p", "--input-file", "in.jsonl", "--output", "out.jsonl",
           "--concurrency", "4"]


def test_ctrl_c_reports_rows_and_resumes(tmp_path):
    env = make_project(tmp_path)
    command = [*COMMAND, "--no-log"]
    stderr = interrupt(command, tmp_path, env)
    out = tmp_path / "out.jsonl"
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    lines = out.read_text().splitlines()
    assert out.read_text().endswith("\n") and all(json.loads(line)["output"] == {"ok": True} for line in lines)
    assert f"interrupted: {len(lines)} row(s) written to out.jsonl" in stderr
    assert "dotprompt run p --input-file in.jsonl --output out.jsonl" in stderr
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"{len(lines)} skipped" in again.stderr and len(out.read_text().splitlines()) == 200


def test_ctrl_c_logs_the_interrupted_batch_once_and_no_cancelled_rows(tmp_path):
    env = make_project(tmp_path)
    interrupt([*COMMAND, "--log-rows", "all"], tmp_path, env)
    written = len((tmp_path / "out.jsonl").read_text().splitlines())
    logs = subprocess.run([sys.executable, "-m", "dotprompt.cli", "logs", "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    runs = [json.loads(line) for line in logs.stdout.splitlines()]
    assert not [r for r in runs if r["error_type"] in ("CancelledError", "KeyboardInterrupt", "Interrupted")]
    assert len([r for r in runs if r["context"] is not None]) == written  # each written row, once; none in flight
    (summary,) = [r for r in runs if r["context"] is None]
    assert summary["error_type"] == "BatchInterrupted" and summary["error"].startswith(f"interrupted after {written} of 200")
