"""What one request may ask of the real `dotprompt ui` on loopback: a body is refused past its limit
before it is read, a run-log listing is clamped, and a cross-site read is refused like a cross-site write.
"""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

pytest.importorskip("uvicorn")
import httpx

from dotprompt.observe.runlog import RunLog
from dotprompt.settings import RunLogSettings
from dotprompt.ui.limits import UI_MAX_BODY, UI_MAX_LIMIT
from tests.ui.workbench_project import environment, make_project, running_ui

pytestmark = pytest.mark.slow  # a real server in a child process


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[str, str]:
    root = make_project(tmp_path_factory.mktemp("requests"))
    log = RunLog(RunLogSettings(root / "runs.db", 10_000, 30))
    for number in range(UI_MAX_LIMIT + 5):
        log.add({"run_id": os.urandom(8).hex(), "started": time.time() + number, "source": "api", "status": "ok",
                 "prompt": "order"})
    assert log.flush()
    log.close()
    with running_ui(root, environment("http://127.0.0.1:9/v1", root)) as url:
        token = httpx.get(url + "api/session").json()["token"]
        yield url, token


def raw_request(url: str, head: str, body: bytes, *, timeout: float = 10) -> bytes:
    """Send `head` and `body` on a socket and read the answer's first bytes; never sends more than given."""
    host, port = url.split("//")[1].rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(head.encode() + body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
        return answer


def headers(url: str, token: str, extra: str) -> str:
    host = url.split("//")[1].rstrip("/")
    return (f"POST /api/render HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-CSRF-Token: {token}\r\n{extra}\r\n")


def test_a_body_declared_over_the_limit_is_refused_before_it_is_read(served):
    url, token = served
    # 400 MB announced, 1 KB sent: an answer now means the server did not wait for (or keep) the rest.
    answer = raw_request(url, headers(url, token, "Content-Length: 400000000\r\n"), b" " * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_chunked_body_is_cut_off_at_the_limit(served):
    url, token = served
    piece = b" " * 1_000_000
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    pieces = UI_MAX_BODY // len(piece) + 1  # past the limit, and the body never ends (no last chunk)
    answer = raw_request(url, headers(url, token, "Transfer-Encoding: chunked\r\n"), chunk * pieces)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_an_honest_body_under_the_limit_is_still_served(served):
    url, token = served
    answer = httpx.post(url + "api/render", json={"name": "billing/note", "input": {"text": "x" * 100_000}},
                        headers={"x-csrf-token": token})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(("limit", "count"), [("-1", 1), ("0", 1), ("3", 3), (str(UI_MAX_LIMIT * 10), UI_MAX_LIMIT),
                                              ("99999999999999999999999", UI_MAX_LIMIT)])
def test_the_run_list_limit_is_clamped_to_one_through_the_cap(served, limit, count):
    url, _ = served
    answer = httpx.get(url + "api/runs", params={"limit": limit, "all": 1})
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["runs"]) == count


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
@pytest.mark.parametrize("path", ["api/runs?limit=-1", "api/session", "api/prompts", "api/live/x/events",
                                  "api/changes"])
def test_a_cross_site_read_is_refused(served, site, path):
    # <img src> / <script src> on another site sends no Origin, but the browser says where it comes from.
    url, _ = served
    with httpx.stream("GET", url + path, headers={"sec-fetch-site": site, "sec-fetch-mode": "no-cors"}) as answer:
        status = answer.status_code  # an event stream served would never end: only its status is read
        assert status == 403, status
        assert "cross-site" in json.loads(answer.read())["error"]


@pytest.mark.parametrize("site", ["same-origin", "none"])
def test_the_page_s_own_reads_and_typed_addresses_pass(served, site):
    url, _ = served
    assert httpx.get(url + "api/session", headers={"sec-fetch-site": site}).status_code == 200


def test_a_link_from_another_site_opens_the_page_but_not_the_api(served):
    url, _ = served
    navigate = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}
    assert httpx.get(url, headers=navigate).status_code == 200
    assert httpx.get(url + "api/session", headers=navigate).status_code == 403
