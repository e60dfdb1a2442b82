"""OpenAI-compatible servers by configuration only: a `[tool.dotprompt.providers.NAME]` table makes `NAME/model` work.

The server is a real HTTP server on loopback (what vLLM, LM Studio or Ollama would be); the table is
read from a real pyproject.toml. Each test uses its own provider name: the registry keeps a made model
for the life of the process, as it does for users.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dotprompt import UsageError, generate
from dotprompt.providers.openai import OpenAIModel
from dotprompt.providers.openai_responses import OpenAIResponsesModel
from dotprompt.providers.registry import list_models, resolve_model
from tests.providers.mock_server import Loopback

KEY = "sk-compatible-test-key-0000"


def compatible_reply(request: httpx.Request) -> dict:
    """What an OpenAI-compatible server answers, on either API."""
    if request.url.path.endswith("/responses"):
        return {"status": "completed", "output": [{"type": "message", "role": "assistant",
                                                   "content": [{"type": "output_text", "text": "from responses"}]}],
                "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "from chat"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


@pytest.fixture(scope="module")
def loopback() -> Iterator[Loopback]:
    with Loopback(compatible_reply) as server:
        yield server


@pytest.fixture
def server(loopback: Loopback) -> str:
    return f"{loopback.url}/v1"


def seen(loopback: Loopback, index: int) -> tuple[str, dict[str, str], dict]:
    """A request as (path, headers by lower-case name, JSON body)."""
    request = loopback.requests[index]
    return request.url.path, {k.lower(): v for k, v in request.headers.items()}, json.loads(request.content)


@pytest.fixture
def project(tmp_path: Path, monkeypatch, loopback):
    """Writes `[tool.dotprompt.providers.<a fresh name>]` with the given lines; returns the name."""
    monkeypatch.chdir(tmp_path)
    loopback.requests.clear()

    def write(body: str, table: str | None = None) -> str:
        name = table or f"srv{uuid.uuid4().hex[:8]}"
        (tmp_path / "pyproject.toml").write_text(f"[tool.dotprompt.providers.{name}]\n{body}\n")
        return name

    return write


def test_a_table_with_a_base_url_makes_its_names_work(server, loopback, project, monkeypatch):
    monkeypatch.setenv("MY_SERVER_KEY", KEY)
    name = project(f'base_url = "{server}"\napi_key_env = "MY_SERVER_KEY"\nheaders = {{"X-Title" = "invoices"}}')
    model = resolve_model(f"{name}/meta-llama/Llama-3.1-8B-Instruct")
    assert isinstance(model, OpenAIModel) and model.info.constrained == "all"
    response = asyncio.run(generate(model=model, prompt="hi"))
    path, headers, body = seen(loopback, 0)
    assert path == "/v1/chat/completions" and body["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert headers["authorization"] == f"Bearer {KEY}" and headers["x-title"] == "invoices"
    assert response.text == "from chat" and f"{name}/..." in list_models()


def test_a_server_without_a_key_needs_none_and_can_speak_the_responses_api(server, loopback, project):
    name = project(f'base_url = "{server}"\napi = "responses"\nconstrained = "none"')
    model = resolve_model(f"{name}/qwen3")
    assert isinstance(model, OpenAIResponsesModel) and model.info.constrained == "none"
    response = asyncio.run(generate(model=model, prompt="hi"))
    path, headers, _ = seen(loopback, 0)
    assert path == "/v1/responses" and "authorization" not in headers and response.text == "from responses"


@pytest.mark.parametrize(("body", "message"), [
    ('api_key_env = "X"', r"\[tool.dotprompt.providers.{name}\] in pyproject.toml has no base_url"),
    ('base_url = 8000', r"\[tool.dotprompt.providers.{name}\] in pyproject.toml: `base_url` must be an http:// or https:// URL"),
    ('base_url = "localhost:8000/v1"', r"`base_url` must be an http:// or https:// URL, got 'localhost:8000/v1'"),
    ('base_url = "http://h/v1"\ntimeout = "fast"', r"`timeout` must be a number of seconds above 0, got 'fast'"),
    ('base_url = "http://h/v1"\ntimeout = nan', r"`timeout` must be a number of seconds above 0"),
    ('base_url = "http://h/v1"\nheaders = ["X-A"]', r"`headers` must be a table of header names to text values"),
    ('base_url = "http://h/v1"\nheaders = {"X-A" = 1}', r"`headers` must be a table of header names to text values"),
    ('base_url = "http://h/v1"\nmax_response_bytes = true', r"`max_response_bytes` must be a whole number of bytes"),
    ('base_url = "http://h/v1"\napi_key_env = 5', r"`api_key_env` must be a non-empty string, got 5"),
    ('base_url = "http://h/v1"\napi = "completions"', r"`api` must be one of chat, responses, got 'completions'"),
    ('base_url = "http://h/v1"\nconstrained = "yes"', r"`constrained` must be one of all, no-tools, none"),
    ('base-url = "http://h/v1"', r"unknown key 'base-url' \(did you mean `base_url`\?\)"),
])
def test_a_hostile_table_is_an_error_naming_the_table_and_the_key(project, body, message):
    name = project(body)
    with pytest.raises(UsageError, match=message.replace("{name}", name)):
        resolve_model(f"{name}/m")


def test_a_missing_key_variable_is_named(project, monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE_KEY", raising=False)
    name = project('base_url = "http://127.0.0.1:9/v1"\napi_key_env = "NOT_SET_ANYWHERE_KEY"')
    with pytest.raises(UsageError, match=f"no API key for {name}: set NOT_SET_ANYWHERE_KEY"):
        resolve_model(f"{name}/m")


def test_providers_that_are_not_tables_are_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nproviders = "vllm"\n')
    with pytest.raises(UsageError, match=r"\[tool.dotprompt.providers\] in pyproject.toml must be a table"):
        resolve_model("notatable/m")
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.providers]\nvllm = "http://h/v1"\n')
    with pytest.raises(UsageError, match=r"\[tool.dotprompt.providers.vllm\] in pyproject.toml must be a table"):
        resolve_model("vllm/m")


def test_the_built_in_tables_are_checked_too(tmp_path, monkeypatch):
    from dotprompt.providers.openai import OpenAIModel as Built

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.providers.openai]\nbaseurl = "http://127.0.0.1:9/v1"\n')
    with pytest.raises(UsageError, match=r"providers.openai\] in pyproject.toml: unknown key 'baseurl' \(did you mean"):
        Built("openai/gpt-4o-mini")


def test_an_unknown_prefix_says_how_to_describe_a_server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"describe an OpenAI-compatible server in \[tool.dotprompt.providers.lmstudio\]"):
        resolve_model("lmstudio/qwen")
