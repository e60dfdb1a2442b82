"""The workbench (`dotprompt ui`, a real server process driven over HTTP) runs a prompt whose tool is an
MCP server's: one server process serves every run of the page, and stopping the workbench stops it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("uvicorn")
import httpx

from tests.mcp.reference import processes_in
from tests.mcp.test_client_lifecycle import make_project
from tests.ui.workbench_project import environment, running_ui, wait_for

pytestmark = pytest.mark.slow  # a workbench process and a server process


def run_once(http: httpx.Client, token: str, n: int) -> dict:
    answer = http.post("/api/live", json={"name": "p", "input": {"n": n}}, headers={"x-csrf-token": token})
    assert answer.status_code == 200, answer.text
    with http.stream("GET", f"/api/live/{answer.json()['id']}/events") as stream:
        events = [json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: ")]
    return next(e for e in events if e["type"] in ("done", "error"))


def test_every_workbench_run_uses_one_mcp_server_and_stopping_the_workbench_stops_it(tmp_path):
    make_project(tmp_path)  # the batch test's project: a prompt whose tool is `h/echo`, a scripted model, one server
    servers = tmp_path / "servers"
    with running_ui(tmp_path, environment("http://127.0.0.1:9", tmp_path)) as url:  # the model is scripted: no HTTP model
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
