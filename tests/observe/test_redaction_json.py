"""Secrets are masked before JSON encoding: a key holding `"` or `\\` is escaped by json.dumps and
would never match afterwards. The run log, the batch output and the Ray engine's columns all mask."""

from __future__ import annotations

import json

import pytest

SECRET = 'sk-te"st\\key-0123456789'


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("HARDEN_TEST_API_KEY", SECRET)
    return SECRET


def test_run_log_json_columns(secret):
    from dotprompt._util.redact import known_secrets
    from dotprompt.observe.runlog import _stored

    stored = _stored({"output": {"said": f"the key is {secret}"}, "input": {"k": secret}, "status": "ok"}, known_secrets())
    assert json.loads(stored["output"]) == {"said": "the key is ***"} and json.loads(stored["input"]) == {"k": "***"}
    assert "0123456789" not in stored["output"] + stored["input"]


def test_batch_output_rows(secret):
    from dotprompt.batch.runner import _encode

    line = _encode({"key": "k", "row": 1, "digest": "d", "input": {}, "output": {"x": secret}})
    assert json.loads(line) ["output"] == {"x": "***"} and b"0123456789" not in line


def test_ray_columns(secret):
    from dotprompt.batch.ray import _column

    for name in ("output", "error", "usage", "repairs", "prompt"):
        text = _column(name, {"message": f"failed with {secret}"})
        assert json.loads(text) == {"message": "failed with ***"}, name
    assert _column("input_text", f"key {secret}") == "key ***"


def test_recording_lines(secret):
    """Recordings are committed: a key in a request or reply is masked, not written JSON-escaped."""
    from dotprompt.testing.recording import Entry

    entry = Entry(key="k", case="c", call=0, model="m", info={}, request={"messages": [{"text": f"key {secret}"}]},
                  response={"message": {"role": "model", "content": [{"text": secret}]}}, latency_ms=1.0,
                  chunks=[{"text": secret}])
    line = entry.line()
    data = json.loads(line)
    assert data["request"] == {"messages": [{"text": "key ***"}]} and data["chunks"] == [{"text": "***"}]
    assert data["response"]["message"]["content"] == [{"text": "***"}]
    assert "0123456789" not in line


def test_span_content_attributes(secret):
    from dotprompt._util.redact import known_secrets
    from dotprompt.observe.spans import _json

    text = _json({"args": [f"with {secret}"]}, known_secrets())
    assert json.loads(text) == {"args": ["with ***"]} and "0123456789" not in text
