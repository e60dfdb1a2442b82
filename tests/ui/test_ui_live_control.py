"""Live runs under control, against the real `dotprompt ui` on loopback and a scripted model server.

At most UI_MAX_ACTIVE_RUNS run at once; a run is cancelled on request, when it is pushed out of the
table of live runs, when no page has followed it for UI_ORPHAN_GRACE_SECONDS, and when the server
stops (Ctrl-C ends quietly with a page open). The scripted server counts the streams it is sending
and the ones the workbench dropped, so "cancelled" means the provider stream really closed.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
import httpx

from dotprompt.ui.limits import UI_MAX_ACTIVE_RUNS
from tests.ui.scripted_openai import FINAL, LEAKED, Script, scripted_server
from tests.ui.workbench_project import KEY, environment, make_project, running_ui, wait_for

pytestmark = pytest.mark.slow  # a real server in a child process

LONG = {"chunks": 200, "delay": 0.05}  # a reply that takes 10 s to stream: only a cancel ends it early


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


class Page:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.token = self.http.get("/api/session").json()["token"]

    def post(self, path: str, body: dict) -> httpx.Response:
        return self.http.post(path, json=body, headers={"x-csrf-token": self.token})

    def start(self, body: dict) -> str:
        answer = self.post("/api/live", body)
        assert answer.status_code == 200, answer.text
        return answer.json()["id"]

    def events(self, run_id: str, *, stop_after: int | None = None) -> list[dict]:
        """The run's events; with `stop_after`, the stream is closed after that many chunk events."""
        out, chunks = [], 0
        with self.http.stream("GET", f"/api/live/{run_id}/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    out.append(json.loads(line[6:]))
                    chunks += out[-1]["type"] == "chunk"
                    if stop_after is not None and chunks >= stop_after:
                        break
        return out


NOTE = {"name": "billing/note", "input": {"text": "hi"}, "model": "openai/gpt-test"}


def test_concurrent_runs_are_bounded_and_the_rest_refused_with_a_reason(project):
    with scripted_server(**LONG) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        answers = [page.post("/api/live", NOTE) for _ in range(UI_MAX_ACTIVE_RUNS + 10)]
        accepted = [a for a in answers if a.status_code == 200]
        refused = [a for a in answers if a.status_code != 200]
        time.sleep(1)
        most = Script.most
        for answer in accepted:  # the accepted ones are cancelled, so the server stops promptly
            assert page.post(f"/api/live/{answer.json()['id']}/cancel", {}).status_code == 200
    assert len(accepted) == UI_MAX_ACTIVE_RUNS and most <= UI_MAX_ACTIVE_RUNS
    assert {a.status_code for a in refused} == {429}
    message = refused[0].json()["error"]["message"]
    assert f"{UI_MAX_ACTIVE_RUNS} runs are running" in message and "cancel" in message


def test_a_run_is_cancelled_on_request_and_its_provider_stream_closed(project):
    with scripted_server(**LONG) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        run = page.start(NOTE)
        seen = page.events(run, stop_after=3)
        assert [e["type"] for e in seen][-1] == "chunk"
        answer = page.post(f"/api/live/{run}/cancel", {})
        assert answer.status_code == 200, answer.text
        events = page.events(run)
        wait_for(lambda: Script.aborted == 1, timeout=5)
        again = page.post(f"/api/live/{run}/cancel", {})  # nothing left to cancel: said, not an error page
        missing = page.post("/api/live/no-such-run/cancel", {})
    assert events[-2]["type"] == "cancelled" and "cancelled from the page" in events[-2]["reason"]
    assert events[-1]["type"] == "end" and not any(e["type"] == "done" for e in events)
    assert again.status_code == 200 and again.json()["cancelled"] is False
    assert missing.status_code == 404


def test_a_run_nobody_follows_is_cancelled_after_the_grace_period(project):
    limits = {"UI_ORPHAN_GRACE_SECONDS": 0.5}
    with scripted_server(**LONG) as base, running_ui(project, environment(base, project), limits=limits) as url:
        page = Page(url)
        followed = page.start(NOTE)
        page.events(followed, stop_after=2)  # the tab is closed: its event stream ends
        never = page.start(NOTE)  # started, never opened
        wait_for(lambda: Script.aborted == 2, timeout=5)
        events = page.events(followed)
        unseen = page.events(never)
    assert events[-2]["type"] == "cancelled" and "no page followed" in events[-2]["reason"]
    assert unseen[-2]["type"] == "cancelled"


def test_a_page_that_comes_back_within_the_grace_period_keeps_its_run(project):
    limits = {"UI_ORPHAN_GRACE_SECONDS": 3.0}
    with scripted_server(chunks=20, delay=0.05) as base, \
            running_ui(project, environment(base, project), limits=limits) as url:
        page = Page(url)
        run = page.start(NOTE)
        page.events(run, stop_after=2)  # a dropped connection; EventSource reconnects
        events = page.events(run)
    assert events[-2]["type"] == "done" and json.loads(events[-2]["text"]) == FINAL and Script.aborted == 0


def test_a_running_run_pushed_out_of_the_table_is_cancelled(project):
    limits = {"UI_KEEP_RUNS": 2, "UI_MAX_ACTIVE_RUNS": 4}
    with scripted_server(**LONG) as base, running_ui(project, environment(base, project), limits=limits) as url:
        page = Page(url)
        runs = [page.start(NOTE) for _ in range(3)]
        wait_for(lambda: Script.aborted == 1, timeout=5)
        gone = page.http.get(f"/api/live/{runs[0]}/events")
        for run in runs[1:]:
            page.post(f"/api/live/{run}/cancel", {})
    assert gone.status_code == 404


def test_ctrl_c_with_the_page_open_stops_quietly(project):
    processes: list = []
    with scripted_server(**LONG) as base, \
            running_ui(project, environment(base, project), process_out=processes) as url:
        page = Page(url)
        run = page.start(NOTE)
        opened = threading.Event()

        def follow(path: str) -> None:
            try:
                with httpx.stream("GET", url + path.lstrip("/"), timeout=30) as stream:
                    for _ in stream.iter_lines():
                        opened.set()
            except httpx.HTTPError:
                pass

        readers = [threading.Thread(target=follow, args=(p,), daemon=True)
                   for p in ("/api/changes", f"/api/live/{run}/events")]
        for reader in readers:
            reader.start()
        assert opened.wait(10)
        time.sleep(0.5)
        process = processes[0]
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        process.wait(20)
        stopped_in = time.monotonic() - started
        errors = process.stderr.read()
    assert process.returncode == 0 and "Traceback" not in errors and "ERROR" not in errors, errors
    assert stopped_in < 10, stopped_in  # not a hang; uvicorn's own grace is 1 s
    assert Script.aborted == 1  # the run's provider stream was closed, not left behind


def test_ctrl_c_after_a_cancelled_run_leaves_no_pending_task_and_the_log_says_why(project):
    """A run cancelled from the page, then Ctrl-C: the process ends without `Task was destroyed but it
    is pending!` (the stream's queue getter is cancelled with its consumer), and the run log says the
    run was cancelled from the page, not by Ctrl-C."""
    processes: list = []
    with scripted_server(**LONG) as base, \
            running_ui(project, environment(base, project), process_out=processes) as url:
        page = Page(url)
        run = page.start(NOTE)
        page.events(run, stop_after=3)
        assert page.post(f"/api/live/{run}/cancel", {}).json()["cancelled"] is True
        page.events(run)  # to its end
        logged = wait_for(lambda: page.http.get("/api/runs", params={"all": 1}).json()["runs"], timeout=10)
        process = processes[0]
        process.send_signal(signal.SIGINT)
        process.wait(20)
        errors = process.stderr.read()
    assert process.returncode == 0 and "Task was destroyed" not in errors and "Traceback" not in errors, errors
    assert logged[0]["error_type"] == "Interrupted", logged[0]
    assert logged[0]["error"] == "interrupted before the run ended: cancelled from the page", logged[0]


def test_a_key_split_across_streamed_chunks_never_reaches_the_page(project):
    # 12 pieces of ~4 characters: the key is cut across several of them.
    with scripted_server(chunks=12, delay=0.01) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        run = page.start({"name": "billing/note", "input": {"text": "LEAK"}, "model": "openai/gpt-test"})
        raw = page.http.get(f"/api/live/{run}/events").text
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    streamed = "".join(e["text"] for e in events if e["type"] == "chunk")
    assert streamed == LEAKED.replace(KEY, "***")
    assert sum(e["type"] == "chunk" and bool(e["text"]) for e in events) > 3  # still streamed, not held to the end
    assert KEY[:10] not in raw and KEY[-10:] not in raw


def test_two_interrupts_in_one_turn_need_an_answer_each(project):
    with scripted_server(chunks=3, delay=0) as base, running_ui(project, environment(base, project)) as url:
        page = Page(url)
        first = page.start({"name": "order", "input": {"order_id": "TWICE"}})
        done = page.events(first)[-2]
        asked = [p["toolRequest"] for p in done["interrupts"]]
        assert [a["ref"] for a in asked] == ["c1", "c2"]
        half = page.post(f"/api/live/{first}/resume", {"respond": [{"name": "approve_refund", "ref": "c1",
                                                                   "output": {"approved": True}}]})
        twice = page.post(f"/api/live/{first}/resume", {"respond": [{"name": "approve_refund", "ref": "c1"}],
                                                        "restart": [{"name": "approve_refund", "ref": "c1"}]})
        both = page.post(f"/api/live/{first}/resume", {
            "respond": [{"name": "approve_refund", "ref": "c1", "output": {"approved": True}}],
            "restart": [{"name": "approve_refund", "ref": "c2"}]})
        assert both.status_code == 200, both.text
        end = page.events(both.json()["id"])[-2]
    assert half.status_code == 400
    message = half.json()["error"]["message"]
    assert "approve_refund" in message and "c2" in message and "answer" in message
    assert twice.status_code == 400 and "both" in twice.json()["error"]["message"]
    assert end["type"] == "done" and end["output"] == FINAL
    outputs = [p["toolResponse"]["output"] for m in end["messages"] for p in m["content"] if "toolResponse" in p]
    assert outputs[-2:] == [{"approved": True}, {"approved": True, "by": "restart"}]
