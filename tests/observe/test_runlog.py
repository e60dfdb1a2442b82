"""The run log through the Python API: what a run stores, search, retention, redaction, concurrency."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from pathlib import Path

import pytest

from dotprompt import OutputValidationError, PromptLibrary, Usage, tool
from dotprompt.batch.runner import read_rows, run_batch
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.errors import UsageError
from dotprompt.observe.cost import price_response
from dotprompt.observe.runlog import RUNLOG_MAX_FIELD_CHARS, LogQuery, RunLog, get_run, list_runs, search_runs
from dotprompt.observe.runrecord import log_source
from dotprompt.settings import RunLogSettings, run_log_settings

TEXT = """---
model: openai/gpt-4o-mini
input:
  schema:
    text: string
output:
  schema:
    total: number
---
{% include "rules" %}
Total of: {{ text }}
"""


@tool
def lookup(code: str) -> str:
    """Look a code up."""
    return f"code {code} is 7"


@pytest.fixture
def logged(folder, tmp_path):
    folder.write("invoice.prompt", TEXT)
    folder.write("_rules.prompt", "Answer in JSON.")
    path = tmp_path / "log" / "runs.db"
    return PromptLibrary(folder.path, log=path), path


def flushed(lib):
    assert lib.run_log.flush()


def test_a_run_is_logged_with_its_prompt_identity_request_response_and_usage(logged):
    lib, path = logged
    prompt = lib.load("invoice")
    model = ScriptedModel([[tool_call("lookup", {"code": "A"}, ref="1")], '{"total": 7}'], name="openai/gpt-4o-mini",
                          usage=Usage(input_tokens=30, output_tokens=5))
    response = asyncio.run(prompt.generate({"text": "A\nTotal: 7"}, model=model, tools=[lookup]))
    flushed(lib)
    (run,) = list_runs(path)
    assert run["status"] == "ok" and run["source"] == "api" and run["model"] == "openai/gpt-4o-mini"
    assert (run["prompt"], run["variant"], run["prompt_hash"]) == ("invoice", None, prompt.identity.hash)
    assert run["partials"] == {"rules": dict(prompt.identity.partials)["rules"]}
    assert run["input"] == {"text": "A\nTotal: 7"} and run["output"] == {"total": 7} == response.output
    assert run["request"]["messages"][0]["content"][0]["text"].startswith("Answer in JSON.")
    roles = [m["role"] for m in run["response"]["messages"]]
    assert roles == ["model", "tool", "model"] and run["finish_reason"] == response.finish_reason
    # The response's usage, as the loop reports it for the run (its spans sum every call: see test_telemetry).
    assert (run["input_tokens"], run["output_tokens"]) == (response.usage.input_tokens, response.usage.output_tokens)
    assert run["usage"] == response.usage.to_dict() and run["input_tokens"] >= 30
    # Priced per call from genai-prices: two calls of 30 in / 5 out at gpt-4o-mini's price.
    assert run["cost"] > 0 and run["cost"] == pytest.approx(float(price_response("openai/gpt-4o-mini", response).usd))
    assert run["latency_ms"] > 0 and run["repairs"] == 0
    assert get_run(path, run["id"]) == run


def test_a_failed_run_keeps_the_error_and_what_the_model_said(logged):
    lib, path = logged
    with pytest.raises(OutputValidationError):
        asyncio.run(lib.load("invoice").generate({"text": "x"}, model=ScriptedModel(["I cannot say"])))
    flushed(lib)
    (run,) = list_runs(path, LogQuery(status="error"))
    assert run["error_type"] == "OutputValidationError" and "output" in run["error"]
    assert run["response"]["text"] == "I cannot say"


def test_a_stream_is_logged_once_when_it_ends(logged):
    lib, path = logged

    async def consume():
        return [item async for item in lib.load("invoice").generate_stream({"text": "x"},
                                                                  model=ScriptedModel(['{"total": 1}'], chunk_size=2))]

    asyncio.run(consume())
    flushed(lib)
    (run,) = list_runs(path)
    assert run["output"] == {"total": 1}


def test_search_finds_words_of_any_message_and_filters_apply(logged):
    lib, path = logged
    prompt = lib.load("invoice")
    for text, reply in (("apples\nKiwi: 3", '{"total": 3}'), ("pears", '{"total": 4}'), ("plums", "nothing")):
        with contextlib.suppress(OutputValidationError):
            asyncio.run(prompt.generate({"text": text}, model=ScriptedModel([reply], name="m1")))
    flushed(lib)
    found, indexed = search_runs(path, "apples")
    assert indexed and [r["input"]["text"] for r in found] == ["apples\nKiwi: 3"]
    assert [r["input"]["text"] for r in search_runs(path, "Kiwi")[0]] == ["apples\nKiwi: 3"]  # after a line break
    assert search_runs(path, 'pears "OR apples')[0] == []  # words, never query syntax
    assert [r["input"]["text"] for r in search_runs(path, "nothing", LogQuery(status="error"))[0]] == ["plums"]
    assert len(list_runs(path, LogQuery(model="m1"))) == 3 and list_runs(path, LogQuery(model="m2")) == []
    assert len(list_runs(path, LogQuery(prompt="invoice", since=time.time() - 60))) == 3
    assert list_runs(path, LogQuery(until=time.time() - 60)) == []


def test_search_falls_back_to_like_on_a_log_without_the_index(logged):
    lib, path = logged
    asyncio.run(lib.load("invoice").generate({"text": "quinces"}, model=ScriptedModel(['{"total": 1}'])))
    flushed(lib)
    with sqlite3.connect(path) as db:  # as a SQLite built without FTS5 leaves the file
        db.execute("DROP TABLE runs_fts")
    found, indexed = search_runs(path, "quinces")
    assert not indexed and len(found) == 1
    assert search_runs(path, "100%")[0] == []  # LIKE wildcards are literal


def test_no_key_and_no_url_credential_is_stored(logged, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    lib, path = logged
    text = "use sk-ant-secret-value-123 at https://user:pa55word@example.com/x"
    with pytest.raises(OutputValidationError):
        asyncio.run(lib.load("invoice").generate({"text": text}, model=ScriptedModel([f"echo {text}"])))
    flushed(lib)
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in path.parent.glob("runs.db-*"))
    assert b"sk-ant-secret-value-123" not in raw and b"pa55word" not in raw
    (run,) = list_runs(path)
    assert run["input"]["text"] == "use *** at https://***@example.com/x"
    assert search_runs(path, "sk-ant-secret-value-123")[0] == []


def test_retention_keeps_the_newest_runs_and_drops_old_ones(tmp_path):
    path = tmp_path / "kept.db"
    log = RunLog(RunLogSettings(path, keep_runs=5, keep_days=1))
    old = {"run_id": "old", "started": time.time() - 3 * 86400, "source": "api", "status": "ok", "input": "ancient"}
    log.add(old)
    for number in range(120):  # past the prune interval
        log.add({"run_id": f"r{number}", "started": time.time(), "source": "api", "status": "ok", "input": f"w{number}"})
    assert log.flush()
    kept = list_runs(path, LogQuery(limit=None))
    assert [r["input"] for r in kept] == [f"w{n}" for n in range(119, 114, -1)]
    assert search_runs(path, "ancient")[0] == [] and search_runs(path, "w3")[0] == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM runs_fts").fetchone()[0] == 5


def test_a_huge_field_is_cut_with_a_note(tmp_path):
    path = tmp_path / "big.db"
    log = RunLog(RunLogSettings(path))
    huge = "x" * (RUNLOG_MAX_FIELD_CHARS + 10)
    log.add({"run_id": "big", "started": time.time(), "source": "api", "status": "ok", "error": huge})
    assert log.flush()
    (run,) = list_runs(path)
    assert run["error"].endswith("... [10 more characters not logged]")


def test_a_batch_at_concurrency_64_logs_every_row_exactly_once(tmp_path, folder):
    folder.write("yes.prompt", "---\nmodel: echo\n---\nsay {{ n }}")
    lib = PromptLibrary(folder.path, log=tmp_path / "batch.db")
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("".join(f'{{"id": {n}, "n": {n}}}\n' for n in range(300)))
    report = asyncio.run(run_batch(lib.load("yes"), read_rows(rows_file), tmp_path / "out.jsonl", concurrency=64,
                                   log_rows="all"))
    assert report.succeeded == 300
    flushed(lib)
    runs = list_runs(tmp_path / "batch.db", LogQuery(limit=None, source="batch"))
    (summary,) = [r for r in runs if r["context"] is None]
    rows = [r for r in runs if r["context"] is not None]
    keys = sorted(r["context"]["key"] for r in rows)
    assert keys == sorted(f"id:{n}" for n in range(300))
    assert all(r["context"]["output"] == str(tmp_path / "out.jsonl") for r in rows)
    assert summary["output"]["succeeded"] == 300 and summary["status"] == "ok"


BATCH_PROMPT = "---\nmodel: echo\ninput:\n  schema:\n    n: integer\noutput:\n  schema:\n    double: integer\n---\n{{ n }}"


def some_rows_fail(request):
    n = int(request.messages[-1].content[0].text.split()[0])
    return "no JSON here" if n % 3 == 0 else json.dumps({"double": 2 * n})


@pytest.mark.parametrize("log_rows", [None, "none"])
def test_a_batch_logs_itself_and_by_default_its_failed_rows(tmp_path, folder, log_rows):
    # A successful row's record is in the output file; a big batch must not push every other run out of the log.
    folder.write("double.prompt", BATCH_PROMPT)
    lib = PromptLibrary(folder.path, log=tmp_path / "batch.db")
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("".join(f'{{"n": {n}}}\n' for n in range(1, 11)))
    options = {"log_rows": log_rows} if log_rows else {}
    report = asyncio.run(run_batch(lib.load("double"), read_rows(rows_file), tmp_path / "out.jsonl", concurrency=4,
                                   model=ScriptedModel(some_rows_fail), **options))
    assert (report.succeeded, report.failed) == (7, 3)
    flushed(lib)
    runs = list_runs(tmp_path / "batch.db", LogQuery(limit=None, source="batch"))
    (summary,) = [r for r in runs if r["context"] is None]
    assert summary["status"] == "error" and summary["error"] == "3 of 10 rows failed"
    assert summary["input"] == {"input_file": str(rows_file), "rows": 10} and summary["prompt"] == "double"
    assert summary["output"] == {"output": str(tmp_path / "out.jsonl"), "succeeded": 7, "failed": 3, "skipped": 0}
    failed = sorted((r["context"]["row"], r["status"], r["response"]["messages"][0]["content"][0]["text"])
                    for r in runs if r["context"] is not None)
    assert failed == ([] if log_rows == "none" else [(n, "error", "no JSON here") for n in (3, 6, 9)])


def test_an_unknown_log_rows_choice_is_refused(tmp_path, folder):
    folder.write("double.prompt", BATCH_PROMPT)
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text('{"n": 1}\n')
    with pytest.raises(UsageError, match="log_rows must be one of failed, all, none"):
        asyncio.run(run_batch(PromptLibrary(folder.path).load("double"), read_rows(rows_file), tmp_path / "o.jsonl",
                              log_rows="some"))


def test_logging_is_off_unless_asked(folder, tmp_path, monkeypatch):
    folder.write("p.prompt", "hi")
    assert PromptLibrary(folder.path).run_log is None
    monkeypatch.setenv("DOTPROMPT_LOG", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    lib = PromptLibrary(folder.path)
    assert lib.run_log is not None and lib.run_log.path == tmp_path / "data" / "dotprompt" / "logs.db"
    assert PromptLibrary(folder.path, log=False).run_log is None
    monkeypatch.setenv("DOTPROMPT_LOG", "0")
    assert run_log_settings(None, default=True).path is None
    monkeypatch.setenv("DOTPROMPT_LOG", "maybe")
    with pytest.raises(Exception, match="DOTPROMPT_LOG must be 1 or 0"):
        run_log_settings()


def test_the_source_of_a_run_comes_from_who_started_it(logged):
    lib, path = logged
    with log_source("test", case="one"):
        asyncio.run(lib.load("invoice").generate({"text": "x"}, model=ScriptedModel(['{"total": 1}'])))
    flushed(lib)
    (run,) = list_runs(path)
    assert run["source"] == "test" and run["context"] == {"case": "one"}


def test_the_log_file_is_private_to_its_owner(logged):
    lib, path = logged
    asyncio.run(lib.load("invoice").generate({"text": "x"}, model=ScriptedModel(['{"total": 1}'])))
    flushed(lib)
    assert path.stat().st_mode & 0o077 == 0 and Path(path.parent).stat().st_mode & 0o077 == 0


class Slow(ScriptedModel):
    async def generate(self, request, on_chunk=None):
        await asyncio.sleep(0.05)
        return await super().generate(request, on_chunk)


def test_a_cancelled_batch_logs_one_interrupted_entry_and_no_cancelled_rows(tmp_path, folder):
    # Ctrl-C cancels the batch's task (asyncio.run does so on SIGINT): the rows in flight were not failures.
    folder.write("double.prompt", BATCH_PROMPT)
    lib = PromptLibrary(folder.path, log=tmp_path / "batch.db")
    rows_file, output = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    rows_file.write_text("".join(f'{{"n": {n}}}\n' for n in range(1, 201)))

    async def cancelled_midway():
        task = asyncio.ensure_future(run_batch(lib.load("double"), read_rows(rows_file), output, concurrency=4,
                                               model=Slow(lambda request: '{"double": 2}'), log_rows="all"))
        while not output.exists() or output.read_text().count("\n") < 8:
            await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_midway())
    flushed(lib)
    written = len(output.read_text().splitlines())
    runs = list_runs(tmp_path / "batch.db", LogQuery(limit=None))
    assert not [r for r in runs if r["error_type"] == "CancelledError" or (r["status"] == "error" and not r["error"])]
    rows = [r for r in runs if r["context"] is not None]
    assert len(rows) == written and all(r["status"] == "ok" for r in rows)  # log_rows=all: each written row, once
    (summary,) = [r for r in runs if r["context"] is None]
    assert summary["status"] == "error" and summary["error_type"] == "BatchInterrupted"
    assert summary["error"] == f"interrupted after {written} of 200 rows (run the same command again to go on)"
    assert summary["output"]["succeeded"] == written


def test_a_cancelled_single_run_says_it_was_interrupted(logged):
    lib, path = logged

    async def cancelled():
        task = asyncio.ensure_future(lib.load("invoice").generate({"text": "x"}, model=Slow(['{"total": 1}'])))
        await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    flushed(lib)
    (run,) = list_runs(path)
    assert run["status"] == "error" and run["error_type"] == "Interrupted"
    assert run["error"] == "interrupted before the run ended (Ctrl-C, or its task was cancelled)"
