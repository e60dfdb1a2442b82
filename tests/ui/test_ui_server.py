"""`dotprompt ui` as users start it: a real server on a loopback socket, driven over HTTP.

The model is a scripted OpenAI-compatible server on loopback (scripted_openai.py), reached through
OPENAI_BASE_URL: the run goes through the real provider, its streaming and its tool loop.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
import httpx

from dotprompt.ui.serve import is_loopback
from tests.ui.scripted_openai import FINAL, scripted_server
from tests.ui.workbench_project import KEY, environment, make_project, running_ui, wait_for

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


class Page:
    """What the page does over HTTP: the token once, then JSON calls and event streams."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.token = self.http.get("/api/session").json()["token"]

    def post(self, path: str, body: dict) -> dict:
        answer = self.http.post(path, json=body, headers={"x-csrf-token": self.token})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def events(self, run_id: str) -> list[tuple[float, dict]]:
        out = []
        with self.http.stream("GET", f"/api/live/{run_id}/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    out.append((time.monotonic(), json.loads(line[6:])))
        return out


def test_streamed_chunks_reach_the_page_as_the_model_sends_them(project):
    with scripted_server(chunks=8, delay=0.2) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        run = page.post("/api/live", {"name": "billing/note", "input": {"text": "hi"}, "model": "openai/gpt-test"})["id"]
        events = page.events(run)
    chunks = [(at, e) for at, e in events if e["type"] == "chunk" and e["text"]]
    assert len(chunks) == 8
    # The model takes 1.6 s to send its 8 pieces: they arrive spread over that time, not at the end.
    assert chunks[-1][0] - chunks[0][0] > 1.0
    done = next(e for _, e in events if e["type"] == "done")
    assert json.loads(done["text"]) == FINAL


def test_a_run_with_a_tool_call_and_an_interrupt_resumes_with_the_answer(project):
    with scripted_server(chunks=5, delay=0.01) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        first = page.post("/api/live", {"name": "order", "input": {"order_id": "A1"}})["id"]
        events = [e for _, e in page.events(first)]
        kinds = [e["type"] for e in events]
        assert kinds[0] == "start" and kinds[-1] == "end" and "tool" in kinds
        tool = next(e for e in events if e["type"] == "tool")
        assert tool["parts"][0]["toolResponse"]["output"] == {"order_id": "A1", "total": 20, "status": "delivered"}
        done = events[-2]
        assert done["finishReason"] == "interrupted"
        interrupt = done["interrupts"][0]
        assert interrupt["toolRequest"]["name"] == "approve_refund"
        assert interrupt["metadata"]["interrupt"] == {"question": "refund 5.0 on order A1?"}
        second = page.post(f"/api/live/{first}/resume", {"respond": [
            {"name": "approve_refund", "ref": interrupt["toolRequest"]["ref"], "output": {"approved": True}}]})["id"]
        events = [e for _, e in page.events(second)]
        done = events[-2]
        assert done["type"] == "done" and done["output"] == FINAL and done["validated"] is True
        assert done["usage"]["inputTokens"] == 12
        answered = [p for m in done["messages"] for p in m["content"] if "toolResponse" in p]
        assert answered[-1]["toolResponse"]["output"] == {"approved": True}
        runs = wait_for(lambda: [r for r in page.http.get("/api/runs").json()["runs"] if r["status"] == "ok"])
        assert runs[0]["source"] == "ui" and runs[0]["prompt"] == "order"
        logged = page.http.get(f"/api/runs/{runs[0]['id']}").json()
        assert logged["output"] == FINAL and KEY not in json.dumps(logged)


def test_restart_runs_the_interrupted_tool_again(project):
    with scripted_server(chunks=3, delay=0) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        first = page.post("/api/live", {"name": "order", "input": {"order_id": "A1"}})["id"]
        ref = [e for _, e in page.events(first)][-2]["interrupts"][0]["toolRequest"]["ref"]
        second = page.post(f"/api/live/{first}/resume", {"restart": [{"name": "approve_refund", "ref": ref}]})["id"]
        done = [e for _, e in page.events(second)][-2]
    tool_outputs = [p["toolResponse"]["output"] for m in done["messages"] for p in m["content"] if "toolResponse" in p]
    assert tool_outputs[-1] == {"approved": True, "by": "restart"} and done["output"] == FINAL


def test_a_resume_naming_no_interrupt_is_refused(project):
    with scripted_server() as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        first = page.post("/api/live", {"name": "order", "input": {"order_id": "A1"}})["id"]
        page.events(first)
        answer = page.http.post(f"/api/live/{first}/resume", json={"respond": [{"name": "lookup_order", "ref": "x"}]},
                                headers={"x-csrf-token": page.token})
    assert answer.status_code == 400 and "no interrupted tool request" in answer.json()["error"]["message"]


def test_the_server_answers_to_its_loopback_address_only(project):
    with scripted_server() as base, running_ui(project, environment(base, project)) as url:
        port = url.rstrip("/").rsplit(":", 1)[1]
        good = httpx.get(url + "api/session")
        rebound = httpx.get(url + "api/session", headers={"host": f"attacker.example:{port}"})
    assert url.startswith("http://127.0.0.1:") and good.status_code == 200 and rebound.status_code == 403


def test_another_host_is_served_with_a_warning(project):
    process = subprocess.Popen([sys.executable, "-m", "dotprompt.cli", "ui", "--host", "0.0.0.0", "--port", "0"],
                               cwd=project, env=environment("http://127.0.0.1:9/v1", project), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        warning = process.stderr.readline()
        url = process.stdout.readline()
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert "warning: serving on 0.0.0.0, not loopback" in warning and "http://0.0.0.0:" in url


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                                ("127.0.0.2", True), ("0.0.0.0", False), ("192.168.1.4", False),
                                                ("example.com", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_without_the_extra_the_command_says_what_to_install(project):
    code = ("import sys; sys.modules['starlette'] = None\n"
            "from dotprompt.cli import main; sys.exit(main(['ui']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pip install 'dotprompt-toolkit[ui]'" in done.stderr
