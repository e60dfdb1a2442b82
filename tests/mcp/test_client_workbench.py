"""The workbench (`dotprompt ui`, a real server process driven over HTTP) runs a prompt whose tool is an
MCP server's: one server process serves every run of the page, and stopping the workbench stops it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
import httpx

from tests.mcp.reference import processes_in
from tests.mcp.test_client_lifecycle import MODEL
from tests.ui.workbench_project import environment, running_ui, wait_for

pytestmark = pytest.mark.slow  # a workbench process and a server process

SCRIPT = Path(__file__).parent / "hostile_server.py"


def make_project(root: Path) -> Path:
    (root / "prompts").mkdir()
    (root / "servers").mkdir()
    (root / "prompts" / "p.prompt").write_text(
        "---\nmodel: scripted/mcp\ntools: [h/echo]\ninput:\n  schema:\n    n: integer\n"
        "output:\n  schema:\n    ok: boolean\n---\n{{ n }}")
    (root / "model.py").write_text(MODEL)
    (root / "pyproject.toml").write_text(
        '[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["model.py"]\n\n'
        "[tool.dotprompt.mcp.servers.h]\n"
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SCRIPT))}, \"well\", \"--sticky\"]\n"
        f"cwd = {json.dumps(str(root / 'servers'))}\n")
    return root


def run_once(http: httpx.Client, token: str, n: int) -> dict:
    answer = http.post("/api/live", json={"name": "p", "input": {"n": n}}, headers={"x-csrf-token": token})
    assert answer.status_code == 200, answer.text
    events = []
    with http.stream("GET", f"/api/live/{answer.json()['id']}/events") as stream:
        events = [json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: ")]
    return next(e for e in events if e["type"] in ("done", "error"))


def test_every_workbench_run_uses_one_mcp_server_and_stopping_the_workbench_stops_it(tmp_path):
    root = make_project(tmp_path)
    servers = root / "servers"
    with running_ui(root, environment("http://127.0.0.1:9", root)) as url:  # the model is scripted: no HTTP model
        http = httpx.Client(base_url=url, timeout=60)
        token = http.get("/api/session").json()["token"]
        assert processes_in(servers) == []  # the page is up; no run has needed the server yet
        seen = []
        for n in (1, 2, 3):
            end = run_once(http, token, n)
            assert end["type"] == "done" and json.loads(end["text"]) == {"ok": True}, end
            seen.append(processes_in(servers))
        http.close()
    assert len(seen[0]) == 1 and seen == [seen[0]] * 3, f"one server for every run, found {seen}"
    # `running_ui` stops the workbench with SIGTERM: its MCP server goes with it
    assert wait_for(lambda: processes_in(servers) == [], timeout=10)
