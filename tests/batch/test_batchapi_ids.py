"""Hostile ids from a provider's batch API: a job id, a file id or a batch name such as `../../x`, `a/b`,
`%2e%2e`, `x?y` or 10,000 characters must never become a file name or a URL path.

A real HTTP server on 127.0.0.1 (tests/providers/mock_server.Loopback) answers as the provider would, with
the hostile id in one field; submit (and resume, for the ids a poll returns) run in a child process
with a time and memory limit. Nothing may be written outside the output's folder, no request may go
to a path other than the provider's own, and the error names the field and what to do."""

from __future__ import annotations

import json
import re

import pytest

from tests.channels.limited_cli import cli
from tests.isolation import assert_finishes
from tests.providers.mock_server import Loopback

pytestmark = pytest.mark.slow  # child processes and a real server

BAD_IDS = ["../../x", "a/b", "%2e%2e", "x?y", "x#y", "\n", "", "x" * 10_000, "..", "a\\b", " x", "x\x00", None, 7]

CHILD = r'''
import asyncio, json, os, tempfile, uuid
from pathlib import Path
from dotprompt import PromptLibrary
from dotprompt.batch.api.jobs import resume, state_path, submit
from dotprompt.batch.runner import InputFile
from dotprompt.errors import BatchJobError
from tests.providers.mock_server import Loopback
from tests.batch.fake_server import openai_reply

PROVIDER = {provider!r}
BAD = json.loads({bad!r})
FIELDS = {{"openai": ["upload", "job", "output_file_id", "error_file_id", "state"], "anthropic": ["job", "state"],
          "googleai": ["job", "bare", "state"]}}[PROVIDER]
BASE = {{"openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1"), "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "/v1"),
        "googleai": ("GEMINI_BASE_URL", "GEMINI_API_KEY", "/v1beta")}}[PROVIDER]
case = {{}}


def reply(request):
    path, method = request.url.raw_path.decode(), request.method
    bad, field = case["bad"], case["field"]
    if PROVIDER == "openai":
        if method == "POST" and path == "/v1/files":
            return {{"id": bad if field == "upload" else "file-in"}}
        if method == "POST" and path == "/v1/batches":
            return {{"id": bad if field == "job" else "batch_good", "status": "validating"}}
        if method == "GET" and path == "/v1/batches/batch_good":
            return {{"id": "batch_good", "status": "completed",
                    "output_file_id": bad if field == "output_file_id" else "file-out",
                    "error_file_id": bad if field == "error_file_id" else None}}
        if method == "GET" and path == "/v1/files/file-out/content":
            line = {{"custom_id": case["ids"][0], "response": {{"status_code": 200, "body": openai_reply('{{"n": 1}}')}}}}
            return httpx_response(json.dumps(line).encode() + b"\n")
    if PROVIDER == "anthropic":
        if method == "POST" and path == "/v1/messages/batches":
            return {{"id": bad if field == "job" else "msgbatch_good", "processing_status": "in_progress"}}
        if method == "GET" and path == "/v1/messages/batches/msgbatch_good":
            return {{"id": "msgbatch_good", "processing_status": "in_progress"}}
    if PROVIDER == "googleai":
        if method == "POST" and path.endswith(":batchGenerateContent"):
            named = f"batches/{{bad}}" if field == "job" and isinstance(bad, str) else bad
            name = "batches/good" if field == "state" else named
            return {{"name": name, "metadata": {{"state": "BATCH_STATE_PENDING"}}}}
        if method == "GET" and path == "/v1beta/batches/good":
            return {{"name": "batches/good", "metadata": {{"state": "BATCH_STATE_RUNNING"}}}}
    case["strays"].append(f"{{method}} {{path}}")
    return httpx_response(b'{{"error": {{"message": "no such route"}}}}', 404)


def httpx_response(content, status=200):
    import httpx
    return httpx.Response(status, content=content)


def files(root):
    return {{str(p.relative_to(root)) for p in root.rglob("*")}}


results = []
with Loopback(reply) as server:
    base_var, key_var, prefix = BASE
    os.environ.update({{base_var: server.url + prefix, key_var: "test-key-123456"}})
    for field in FIELDS:
        for bad in BAD:
            root = Path(tempfile.mkdtemp())
            work = root / "work" / "out"
            (root / "p").mkdir()
            work.mkdir(parents=True)
            model = f"{{PROVIDER}}/fake-{{uuid.uuid4().hex[:6]}}"
            (root / "p" / "n.prompt").write_text(f"---\nmodel: {{model}}\noutput:\n  schema:\n    n: integer\n---\n"
                                                 "Row {{{{ n }}}}")
            (root / "in.jsonl").write_text('{{"n": 1}}\n')
            from dotprompt.batch.api.jobs import custom_id
            case.update(field=field, bad=bad, strays=[], ids=[custom_id(r) for r in InputFile(root / "in.jsonl")])
            prompt = PromptLibrary(root / "p").load("n")
            output = work / "out.jsonl"
            before = files(root)
            error = None
            try:
                asyncio.run(submit(prompt, InputFile(root / "in.jsonl"), output))
                if field == "state":  # an older version (or a hand) wrote the bad id into the state file
                    state = json.loads(state_path(output).read_text())
                    state["jobs"][0]["id"] = bad
                    state_path(output).write_text(json.dumps(state))
                    before = files(root)
                asyncio.run(resume(prompt, InputFile(root / "in.jsonl"), output))
            except BatchJobError as exc:
                error = str(exc)
            outside = sorted(f for f in files(root) - before if not (root / f).resolve().is_relative_to(work))
            results.append({{"field": field, "bad": bad, "error": error, "outside": outside, "strays": case["strays"]}})
print(json.dumps(results))
'''

FIELD_NAMES = {"upload": "`id`", "job": "`id`", "output_file_id": "`output_file_id`", "error_file_id": "`error_file_id`",
               "state": "`jobs[0].id`", "bare": "`name`"}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "googleai"])
def test_a_hostile_id_is_refused_before_any_file_or_request_uses_it(provider):
    code = CHILD.format(provider=provider, bad=json.dumps(BAD_IDS))
    results = assert_finishes(code, timeout=240, memory_mb=1200).json()
    assert results, "no case ran"
    for found in results:
        where = f"{found['field']} = {found['bad']!r:.40}"
        assert found["outside"] == [], f"{where}: wrote outside the output folder: {found['outside']}"
        assert found["strays"] == [], f"{where}: requests to paths built from the id: {found['strays']}"
        error = found["error"]
        if found["field"] in ("output_file_id", "error_file_id") and not found["bad"]:
            continue  # an empty or null file id means "no such file" (as OpenAI sends it): nothing is used
        assert error is not None, f"{where}: accepted"
        field = "`name`" if provider == "googleai" and found["field"] == "job" else FIELD_NAMES[found["field"]]
        assert field in error and "is not a batch id" in error, f"{where}: {error[:300]}"
        assert ("console" in error or "batch list" in error or "restore the file" in error
                or "base URL" in error), f"{where}: the error says what to do: {error[:300]}"
        assert len(error) < 1200, f"{where}: the error repeats the whole id"


def test_the_command_line_names_the_field_in_one_line(tmp_path):
    def reply(request):
        if request.url.path == "/v1/files":
            return {"id": "file-in"}
        return {"id": "../../x", "status": "validating"}

    (tmp_path / "prompts").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "prompts" / "n.prompt").write_text("---\nmodel: openai/fake-ids\n---\nRow {{ n }}")
    (tmp_path / "in.jsonl").write_text('{"n": 1}\n')
    with Loopback(reply) as server:
        done = cli("run", "n", "--dir", "prompts", "--input-file", "in.jsonl", "--output", "out/out.jsonl", "--batch-api",
                   cwd=tmp_path, env={"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "test-key-123456",
                                      "XDG_DATA_HOME": str(tmp_path / "data")})
        paths = [r.url.path for r in server.requests]
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if "not a batch id" in line]
    assert len(lines) == 1 and "`id` is '../../x'" in lines[0] and "POST /batches" in lines[0], done.stderr
    assert paths == ["/v1/files", "/v1/batches"]
    assert not list(tmp_path.glob("x*")) and not re.search(r"\.ids$", " ".join(map(str, tmp_path.rglob("*"))))
