"""A configured OpenAI-compatible server, for real: `[tool.dotprompt.providers.NAME]` pointing at the
local llama-server (what a team's vLLM or LM Studio would be), with its key read from the variable
the table names."""

from __future__ import annotations

import uuid

import jsonschema
import pytest

from dotprompt import generate_sync
from dotprompt.local.model import LocalModel
from dotprompt.providers.registry import resolve_model

pytestmark = pytest.mark.live

ORDER = {"type": "object", "properties": {"customer": {"type": "string"}, "items": {"type": "array", "items": {
    "type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"]}}}, "required": ["customer", "items"]}


@pytest.fixture
def configured(local_model: LocalModel, tmp_path, monkeypatch):
    """A fresh provider name whose table points at the running local server; returns a model name on it."""
    server, _ = local_model.connect()
    name = f"llama{uuid.uuid4().hex[:6]}"
    (tmp_path / "pyproject.toml").write_text(f'[tool.dotprompt.providers.{name}]\nbase_url = "{server.base_url}"\n'
                                             f'api_key_env = "LIVE_SERVER_KEY"\ntimeout = 120\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LIVE_SERVER_KEY", server.api_key)
    return f"{name}/smollm2"


def test_a_configured_server_answers(configured):
    response = generate_sync(model=configured, prompt="What is the capital of France?",
                             config={"temperature": 0, "maxOutputTokens": 24})
    assert "Paris" in response.text and response.usage.output_tokens > 0
    assert resolve_model(configured).config.base_url.startswith("http://127.0.0.1:")


def test_a_configured_server_enforces_the_json_schema(configured):
    response = generate_sync(model=configured, system="Extract the order as JSON.",
                             prompt="Ana ordered two small coffees and one large tea.", output_schema=ORDER,
                             config={"temperature": 0, "maxOutputTokens": 200})
    jsonschema.validate(response.output, ORDER)
    assert response.request.output.constrained  # sent as response_format json_schema: the server's grammar did it
