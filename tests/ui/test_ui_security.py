"""The workbench's security rules, each tried against hostile requests, files and replies.

The app is driven through Starlette's TestClient with the Host header a browser on loopback sends;
`test_ui_server.py` drives the real server on a socket.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from dotprompt import PromptLibrary, define_model
from dotprompt.doubles import ScriptedModel
from dotprompt.errors import ModelError
from dotprompt.observe.runlog import RunLog
from dotprompt.settings import RunLogSettings
from dotprompt.ui.app import create_app
from dotprompt.ui.guard import allowed_hosts

BASE = "http://127.0.0.1:8765"
KEY = "sk-ui-test-secret-0123456789abcdef"
MARKUP = "<script>alert(1)</script>"
BREAK = '" onmouseover="alert(2)" x="'
JS_URL = "javascript:alert(3)"
HOSTILE_NAME = "<img src=x onerror=alert(4)>"  # a file name may hold markup too
STATIC = Path(__file__).resolve().parents[2] / "dotprompt" / "ui" / "static"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "plain.prompt").write_text("---\ninput:\n  schema:\n    text: string\n---\nSay {{ text }}\n")
    (prompts / "hostile.prompt").write_text(
        f"---\ndescription: '{MARKUP}'\nmodel: echo\ninput:\n  schema:\n    text: string\n  default:\n"
        f"    text: '{BREAK}'\n---\n{MARKUP} {JS_URL} {{{{ text }}}}\n")
    (prompts / f"{HOSTILE_NAME}.prompt").write_text("Hello\n")
    (prompts / "reports").mkdir()
    (prompts / "reports" / "ok.json").write_text(json.dumps({"evals": []}))
    (tmp_path / "secret.prompt").write_text("TOPSECRET\n")
    (tmp_path / "outside.json").write_text(json.dumps({"evals": [{"eval": "TOPSECRET"}]}))
    (prompts / "leak.prompt").symlink_to(tmp_path / "secret.prompt")
    (prompts / "reports" / "leak.json").symlink_to(tmp_path / "outside.json")
    return tmp_path


@pytest.fixture
def client(project: Path):
    library = PromptLibrary(project / "prompts", log=project / "runs.db")
    app = create_app(library, log_path=project / "runs.db", hosts=allowed_hosts("127.0.0.1", 8765))
    with TestClient(app, base_url=BASE) as client:
        client.token = client.get("/api/session").json()["token"]
        client.library = library
        yield client


def post(client, path: str, body: dict, **headers):
    return client.post(path, content=json.dumps(body),
                       headers={"content-type": "application/json", "x-csrf-token": client.token, **headers})


# -- the front door -----------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1:9999", "127.0.0.1.nip.io:8765",
                                  "localhost.evil.example:8765", "0.0.0.0:8765", ""])
def test_a_host_header_naming_another_server_is_refused(client, host):
    # DNS rebinding: the attacker's name resolves to 127.0.0.1, but the browser still sends that name.
    answer = client.get("/api/session", headers={"host": host})
    assert answer.status_code == 403 and "token" not in answer.text


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"])
def test_the_loopback_names_of_this_server_are_served(client, host):
    assert client.get("/api/session", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1:8765"])
def test_a_cross_origin_request_is_refused_even_a_read(client, origin):
    assert client.get("/api/session", headers={"origin": origin}).status_code == 403
    assert post(client, "/api/render", {"name": "plain"}, origin=origin).status_code == 403


def test_a_same_origin_request_passes(client):
    assert client.get("/api/session", headers={"origin": BASE}).status_code == 200
    assert post(client, "/api/render", {"name": "plain", "input": {"text": "x"}}, origin=BASE).status_code == 200


@pytest.mark.parametrize("path", ["/api/render", "/api/live", "/api/live/whatever/resume"])
def test_every_state_changing_request_needs_the_csrf_token(client, path):
    body = json.dumps({"name": "plain", "input": {"text": "x"}})
    no_token = client.post(path, content=body, headers={"content-type": "application/json"})
    wrong = client.post(path, content=body, headers={"content-type": "application/json", "x-csrf-token": "guess"})
    # A cross-site form can POST text/plain or a form encoding: the token alone is not enough then.
    as_form = client.post(path, content=body, headers={"content-type": "text/plain", "x-csrf-token": client.token})
    assert [a.status_code for a in (no_token, wrong, as_form)] == [403, 403, 403]
    assert "CSRF" in no_token.json()["error"] and "JSON" in as_form.json()["error"]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_other_methods_are_refused(client, method):
    assert client.request(method, "/api/render", headers={"x-csrf-token": client.token}).status_code == 403


def test_every_answer_carries_the_headers_that_keep_markup_inert(client):
    for path in ("/", "/static/app.js", "/api/prompts", "/api/nothing-here"):
        answer = client.get(path)
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp, path
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
        assert "access-control-allow-origin" not in answer.headers
    page = client.get("/").text
    assert re.findall(r"<script[^>]*>", page) == ['<script type="module" src="/static/app.js">']


def test_the_page_scripts_never_parse_data_as_markup():
    # The page's promise: data is written with textContent / text nodes, links only to '#/' routes.
    forbidden = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
                           r"DOMParser|createContextualFragment|srcdoc|\.href\s*=|location\s*=\s*[^\"'`]")
    for script in STATIC.glob("*.js"):
        found = [line for line in script.read_text().splitlines() if forbidden.search(line)]
        assert not found, f"{script.name}: {found}"


# -- hostile files and replies -------------------------------------------------------------------------

def test_hostile_prompt_files_come_back_as_inert_json_with_their_text_intact(client):
    answers = [client.get("/api/prompts"), client.get("/api/prompt", params={"name": "hostile"}),
               client.get("/api/check"), post(client, "/api/render", {"name": "hostile"}),
               client.get("/api/prompt", params={"name": HOSTILE_NAME})]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert not set("<>&") & set(answer.text), answer.text[:300]  # written \u003c, \u003e, \u0026
    assert HOSTILE_NAME in [p["name"] for p in answers[0].json()["prompts"]]
    shown = answers[1].json()
    assert shown["frontmatter"]["description"] == MARKUP and f"{MARKUP} {JS_URL}" in shown["template"]
    assert shown["default"] == {"text": BREAK}
    text = answers[3].json()["rendered"]["messages"][0]["content"][0]["text"]
    assert text == f"{MARKUP} {JS_URL} {BREAK}"


def hostile_model(name: str, reply: str, *, error: Exception | None = None) -> str:
    define_model(ScriptedModel(lambda request: error or reply, name=name, chunk_size=7))
    return name


def events_of(client, run_id: str) -> list[dict]:
    answer = client.get(f"/api/live/{run_id}/events")
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert not set("<>") & set(answer.text)
    return [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]


def test_a_hostile_streamed_reply_reaches_the_page_escaped(client):
    reply = json.dumps({"html": MARKUP, "attr": BREAK, "url": JS_URL})
    model = hostile_model("ui-hostile-reply", reply)
    run = post(client, "/api/live", {"name": "plain", "input": {"text": "x"}, "model": model}).json()["id"]
    events = events_of(client, run)
    assert "".join(e["text"] for e in events if e["type"] == "chunk") == reply
    assert events[-2]["type"] == "done" and events[-2]["text"] == reply


# -- files outside the folder --------------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "/api/prompt?name=../secret", "/api/prompt?name=/etc/passwd", "/api/prompt?name=..%2Fsecret",
    "/api/prompt?name=leak", "/api/prompt?name=plain&variant=../../secret", "/api/partial?name=../secret",
    "/api/partial?name=../../etc/passwd", "/api/evals/report?path=../outside.json",
    "/api/evals/report?path=reports/../../outside.json", "/api/evals/report?path=reports/leak.json",
    f"/api/evals/report?path={Path('/etc/passwd')}", "/api/evals/report?path=reports%5C..%5C..%5Coutside.json",
    "/static/../secret.prompt", "/static/%2e%2e%2fsecret.prompt", "/static/..%2F..%2Fpyproject.toml",
    "/api/runs/../../secret.prompt"])
def test_nothing_outside_the_prompt_folder_and_the_run_log_is_read(client, path):
    answer = client.get(path)
    assert answer.status_code in (400, 404), (path, answer.status_code)
    assert "TOPSECRET" not in answer.text and "root:" not in answer.text


def test_the_report_list_holds_only_files_of_the_folder(client):
    assert {r["path"] for r in client.get("/api/evals").json()["reports"]} <= {"reports/ok.json", "reports/leak.json"}
    assert client.get("/api/evals/report", params={"path": "reports/ok.json"}).json() == {"evals": []}


# -- keys ----------------------------------------------------------------------------------------------

def test_no_key_reaches_a_page_an_answer_or_an_error(client, project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rendered = post(client, "/api/render", {"name": "plain", "input": {"text": f"my key is {KEY}"}})
    assert rendered.status_code == 200 and KEY not in rendered.text and "***" in rendered.text
    failing = hostile_model("ui-key-error", "", error=ModelError(f"401: key {KEY} rejected by https://u:{KEY}@h"))
    run = post(client, "/api/live", {"name": "plain", "input": {"text": "x"}, "model": failing}).json()["id"]
    events = events_of(client, run)
    assert events[-2]["type"] == "error" and "rejected" in events[-2]["error"]["message"]
    assert KEY not in json.dumps(events)
    # An entry logged before the key was known to the redactor is still hidden on the way out.
    assert client.library.run_log.flush()
    with sqlite3.connect(project / "runs.db") as db:
        db.execute("UPDATE runs SET output = ?", (json.dumps({"leak": KEY}),))
    listed = client.get("/api/runs")
    one = client.get(f"/api/runs/{listed.json()['runs'][0]['id']}")
    for answer in (listed, one, client.get("/api/session"), client.get("/"), client.get("/api/runs", params={"q": KEY})):
        assert KEY not in answer.text


def test_an_unexpected_failure_names_its_type_only(client, monkeypatch):
    import dotprompt.ui.folder as folder

    def broken(self):
        raise RuntimeError(f"internal detail {KEY} /home/user/secret")

    monkeypatch.setattr(folder.Folder, "tree", broken)
    answer = client.get("/api/prompts")
    assert answer.status_code == 500 and answer.json()["error"]["type"] == "RuntimeError"
    assert KEY not in answer.text and "secret" not in answer.text


# -- huge and deep values ------------------------------------------------------------------------------

def log_entry(project: Path, **fields) -> None:
    log = RunLog(RunLogSettings(project / "runs.db", 1000, 30))
    log.add({"run_id": os.urandom(8).hex(), "started": time.time(), "source": "api", "status": "ok", **fields})
    assert log.flush()
    log.close()


def test_huge_and_deeply_nested_values_are_cut_with_a_note(client, project):
    deep: object = "bottom"
    for _ in range(300):
        deep = {"d": deep}
    log_entry(project, prompt="plain")
    with sqlite3.connect(project / "runs.db") as db:  # as a log written by another tool might hold it
        db.execute("UPDATE runs SET output = ?",
                   (json.dumps({"deep": deep, "huge": "x" * 3_000_000, "many": list(range(50_000))}),))
    run_id = client.get("/api/runs?all=1").json()["runs"][0]["id"]  # written here, with no project
    started = time.perf_counter()
    answer = client.get(f"/api/runs/{run_id}")
    assert answer.status_code == 200 and time.perf_counter() - started < 10
    output = answer.json()["output"]
    assert "cut by the workbench" in output["huge"] and len(output["huge"]) < 250_000
    assert len(output["many"]) == 5_001 and "45,000 more items" in output["many"][-1]
    node = output["deep"]
    while isinstance(node, dict):
        node = node["d"]
    assert node.startswith("[deeper than")
    nested = "[" * 100_000 + "]" * 100_000
    refused = client.post("/api/render", content=nested, headers={"content-type": "application/json",
                                                                  "x-csrf-token": client.token})
    assert refused.status_code == 400 and "nested" in refused.json()["error"]["message"]
    big = post(client, "/api/render", {"name": "plain", "input": {"text": "y" * 1_000_000}})
    assert big.status_code == 200 and "cut by the workbench" in big.text


def test_a_request_body_over_the_limit_is_refused(client):
    answer = client.post("/api/render", content=b" " * 10_000_001,
                         headers={"content-type": "application/json", "x-csrf-token": client.token})
    assert answer.status_code == 413 and "10,000,000 bytes" in answer.json()["error"]["message"]
