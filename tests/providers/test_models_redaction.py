"""Secrets (issue class 8): a provider that echoes the key, or a base URL carrying credentials, must
leak neither through any sink: ModelError (str, repr, attributes), batch out.jsonl, `dotprompt test`
JUnit/JSON reports, CLI stdout/stderr, recordings.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dotprompt import ModelError, generate
from dotprompt.providers.anthropic import AnthropicModel
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.gemini import GeminiModel
from dotprompt.providers.openai import OpenAIModel
from tests import cli_inprocess
from tests.providers.mock_server import Loopback

KEY = "sk-proj-REDACTME-4f9a1c2e7b"
URL_SECRET = "urlpass-REDACTME-77c1"
ENV_KEY = "AIza-env-REDACTME-1234567"
MODELS = {"openai": OpenAIModel, "anthropic": AnthropicModel, "googleai": GeminiModel}


def leaks(text: str) -> list[str]:
    """The secrets (or their Basic-auth encodings) that appear in `text`."""
    basic = base64.b64encode(f"user:{URL_SECRET}".encode()).decode()
    return [s for s in (KEY, URL_SECRET, ENV_KEY, basic) if s in text]


def echoing(request: httpx.Request) -> httpx.Response:
    """A provider that quotes every credential it was sent back in its error."""
    sent = " ".join(f"{k}={v}" for k, v in request.headers.items())
    return httpx.Response(401, json={"error": {"message": f"Incorrect API key provided: {sent} url={request.url}"}},
                          headers={"x-request-id": f"req-{KEY}"})


def model_for(provider: str, handler, base: str = "https://api.example.test/v1", **config) -> object:
    settings = ProviderConfig(provider, base, KEY, **config)
    return MODELS[provider](f"{provider}/m", config=settings, transport=httpx.MockTransport(handler))


def failure(model, stream: bool = False) -> ModelError:
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=model, prompt="x", on_chunk=(lambda c: None) if stream else None))
    return caught.value


def all_text(error: ModelError) -> str:
    return " ".join([str(error), repr(error), *map(str, error.args), str(error.request_id),
                     json.dumps(error.partial, default=str)])


# -- ModelError, in process -----------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["openai", "anthropic", "googleai"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_key_echoed_in_an_error_body_is_redacted_everywhere_on_the_error(provider, stream):
    error = failure(model_for(provider, echoing), stream)
    assert "Incorrect API key provided" in str(error) and "***" in str(error)
    assert leaks(all_text(error)) == []


def test_url_credentials_are_redacted_from_connection_errors():
    model = OpenAIModel("openai/m", config=ProviderConfig("openai", f"http://user:{URL_SECRET}@127.0.0.1:9/v1", KEY))
    error = failure(model)
    assert "127.0.0.1:9/v1/chat/completions" in str(error) and leaks(all_text(error)) == []


def test_url_credentials_echoed_by_the_server_are_redacted_even_basic_auth_encoded():
    error = failure(model_for("openai", echoing, base=f"http://user:{URL_SECRET}@api.example.test/v1"))
    assert leaks(all_text(error)) == []


def test_a_key_from_a_custom_authorization_header_is_redacted():
    # E.g. a gateway in front of Anthropic wanting its own bearer token next to x-api-key.
    custom = "custom-gateway-token-REDACTME"
    error = failure(model_for("anthropic", echoing, headers={"Authorization": f"Bearer {custom}"}))
    assert "Incorrect API key provided" in str(error) and custom not in all_text(error)


def test_well_known_key_variables_in_the_environment_are_redacted_even_if_unused(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", ENV_KEY)
    error = failure(model_for("openai", lambda r: httpx.Response(500, text=f"upstream said {ENV_KEY}")))
    assert "upstream said ***" in str(error) and leaks(all_text(error)) == []


@pytest.mark.parametrize(("reply", "stream"), [
    (httpx.Response(200, text=f"<html>bad gateway {KEY}</html>"), False),  # not JSON
    (httpx.Response(200, content=f"data: {{not json {KEY}\n\n".encode(), headers={"content-type": "text/event-stream"}),
     True),
    (httpx.Response(200, content=('data: {"choices":[{"delta":{"content":"' + KEY + '"}}]}\n\n'
                                  'data: {"error":{"message":"bad key ' + KEY + '"}}\n\n').encode(),
                    headers={"content-type": "text/event-stream"}), True),
])
def test_keys_in_malformed_replies_error_events_and_the_partial_are_redacted(reply, stream):
    error = failure(model_for("openai", lambda r: reply), stream=stream)
    assert leaks(all_text(error)) == []


def test_redact_leaves_ordinary_text_and_short_values_alone(monkeypatch):
    from dotprompt._util.redact import redact

    monkeypatch.setenv("SOME_TOKEN", "abc")  # too short to be a key: never blanks out ordinary words
    assert redact("abc https://example.com/a@b user@example.com") == "abc https://example.com/a@b user@example.com"
    assert redact("see https://u:p4ss@host/x") == "see https://***@host/x"


# -- recordings -----------------------------------------------------------------------------------

def test_recordings_never_hold_a_key(tmp_path, monkeypatch):
    from dotprompt.testing.recording import RecordingModel, RecordingStore
    from dotprompt.types import GenerateRequest, Message, ModelResponse, Part

    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    class Leaky:
        name = "leaky"
        from dotprompt.providers.base import ModelInfo
        info = ModelInfo()

        async def generate(self, request, on_chunk=None):
            return ModelResponse(message=Message(role="model", content=[Part(text=f"your key is {KEY}")]))

    store = RecordingStore(tmp_path / "r.jsonl")
    recorder = RecordingModel("leaky", store, "record", "case", lambda: Leaky())
    asyncio.run(recorder.generate(GenerateRequest(messages=[Message(role="user", content=[Part(text="k?")])])))
    store.save()
    text = store.path.read_text()
    assert "your key is ***" in text and leaks(text) == []


# -- CLI sinks: a real loopback provider that echoes the key --------------------------------------

def _echo_the_key(request: httpx.Request) -> httpx.Response:
    """A 401 whose message repeats every header sent, the key included, as some providers' errors do."""
    sent = " ".join(f"{k}={v}" for k, v in request.headers.items())
    return httpx.Response(401, json={"error": {"message": f"Incorrect API key provided: {sent}"}})


@pytest.fixture
def echo_server() -> Iterator[int]:
    with Loopback(_echo_the_key) as server:
        yield server.port


PROMPT = """---
model: openai/gpt-test
input:
  schema:
    q: string
---
{{ q }}
"""


def cli_project(tmp_path: Path, port: int, cli_env: dict[str, str]) -> dict[str, str]:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "ask.prompt").write_text(PROMPT)
    (prompts / "ask.test.yaml").write_text("cases:\n  - name: asks\n    input: {q: hi}\n    expect:\n      text_contains: x\n")
    env = {k: v for k, v in cli_env.items() if k != "CI"}
    return {**env, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"http://user:{URL_SECRET}@127.0.0.1:{port}/v1"}


def dotprompt(*args: str, cwd: Path, env: dict[str, str]) -> cli_inprocess.CliResult:
    return cli_inprocess.cli(*args, cwd=cwd, env=env)


def test_cli_run_batch_output_and_stderr_hold_no_key(tmp_path, echo_server, cli_env):
    env = cli_project(tmp_path, echo_server, cli_env)
    single = dotprompt("run", "ask", "--input", '{"q": "hi"}', cwd=tmp_path, env=env)
    assert single.returncode != 0 and "Incorrect API key provided" in single.stderr
    assert leaks(single.stdout + single.stderr) == []
    rows, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    rows.write_text('{"q": "a"}\n{"q": "b"}\n')
    batch = dotprompt("run", "ask", "--input-file", str(rows), "--output", str(out), cwd=tmp_path, env=env)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["error"]["type"] for r in records] == ["ModelError", "ModelError"]
    assert "Incorrect API key provided" in records[0]["error"]["message"]
    assert leaks(out.read_text() + batch.stdout + batch.stderr) == []


def test_cli_test_reports_hold_no_key(tmp_path, echo_server, cli_env):
    env = cli_project(tmp_path, echo_server, cli_env)
    junit, report = tmp_path / "report.xml", tmp_path / "report.json"
    done = dotprompt("test", "--live", "--junit", str(junit), "--json", str(report), cwd=tmp_path, env=env)
    assert done.returncode != 0
    assert "Incorrect API key provided" in junit.read_text() and "Incorrect API key provided" in report.read_text()
    assert leaks(junit.read_text() + report.read_text() + done.stdout + done.stderr) == []
