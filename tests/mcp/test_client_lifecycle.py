"""A real `dotprompt run` over a batch whose every row calls an MCP tool: one server process serves
every row, and Ctrl-C leaves no server behind (the processes are counted)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.reference import processes_in

pytestmark = pytest.mark.slow  # a real command, a server process

SCRIPT = Path(__file__).parent / "hostile_server.py"
MODEL = '''
import asyncio
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.providers import define_model


def reply(request):
    if request.messages[-1].role == "tool":
        return '{"ok": true}'
    return tool_call("h/echo", {"text": "row"})


class Slow(ScriptedModel):
    async def generate(self, request, on_chunk=None):
        await asyncio.sleep(0.2)
        return await super().generate(request, on_chunk)


define_model(Slow(reply, name="scripted/mcp"))
'''


def make_project(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "servers").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text(
        "---\nmodel: scripted/mcp\ntools: [h/echo]\ninput:\n  schema:\n    n: integer\n"
        "output:\n  schema:\n    ok: boolean\n---\n{{ n }}")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["model.py"]\n\n'
        "[tool.dotprompt.mcp.servers.h]\n"
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SCRIPT))}, \"well\", \"--sticky\"]\n"
        f"cwd = {json.dumps(str(tmp_path / 'servers'))}\n")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"n": i}) + "\n" for i in range(200)))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONIOENCODING": "utf-8"}
    env.pop("DOTPROMPT_DIR", None)
    return env


def test_ctrl_c_during_a_batch_leaves_no_mcp_server_running(tmp_path):
    env = make_project(tmp_path)
    command = [sys.executable, "-m", "dotprompt.cli", "run", "p", "--input-file", "in.jsonl", "--output", "out.jsonl",
               "--concurrency", "4", "--no-log"]
    child = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 8):
        time.sleep(0.1)
    during = processes_in(tmp_path / "servers")
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) >= 8 and all(row["output"] == {"ok": True} for row in rows)
    assert len(during) == 1, f"one server for every row, found {during}"  # started once, reused by each row
    deadline = time.monotonic() + 10
    while processes_in(tmp_path / "servers") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(tmp_path / "servers") == [], "an MCP server outlived `dotprompt run` after Ctrl-C"
    assert "Traceback" not in stderr
