"""Azure OpenAI deployments (`azure/`) and Gemini on Vertex AI (`vertexai/`) against mock transports.

Both reuse a provider's wire mapping (Chat Completions, Gemini) and differ in place and credentials:
these tests pin the URLs, the query, the auth headers, where each setting comes from, and that
every missing or broken credential is a clear error, never a request sent without auth.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from dotprompt import ModelError, UsageError, generate
from dotprompt._util.redact import redact
from dotprompt.providers.azure import DEFAULT_API_VERSION, AzureOpenAIModel
from dotprompt.providers.vertex import VertexGeminiModel
from tests.providers.mock_server import Server, add

ENDPOINT = "https://contoso.openai.azure.com"
KEY = "azure-key-0123456789abcdef"
TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOi-entra-token"


def completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def azure(server: Server, env: dict[str, str], **kwargs) -> AzureOpenAIModel:
    return AzureOpenAIModel("azure/gpt-4o-prod", env=env, transport=httpx.MockTransport(server), **kwargs)


# -- Azure OpenAI ------------------------------------------------------------------------------------

def test_azure_calls_the_deployment_url_with_api_version_and_api_key_header():
    server = Server(completion("Paris."))
    model = azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT + "/", "AZURE_OPENAI_API_KEY": KEY})
    response = asyncio.run(generate(model=model, prompt="Capital of France?"))
    request = server.requests[0]
    assert str(request.url) == (f"{ENDPOINT}/openai/deployments/gpt-4o-prod/chat/completions"
                                f"?api-version={DEFAULT_API_VERSION}")
    assert request.headers["api-key"] == KEY and "authorization" not in request.headers
    assert server.body(0)["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert response.text == "Paris."


def test_azure_api_version_from_the_environment_or_the_argument():
    env = {"AZURE_OPENAI_ENDPOINT": ENDPOINT, "AZURE_OPENAI_API_KEY": KEY, "OPENAI_API_VERSION": "2025-01-01-preview"}
    server = Server(completion("a"), completion("b"))
    asyncio.run(generate(model=azure(server, env), prompt="x"))
    asyncio.run(generate(model=azure(server, env, api_version="2024-06-01"), prompt="x"))
    assert [r.url.params["api-version"] for r in server.requests] == ["2025-01-01-preview", "2024-06-01"]


def test_azure_entra_token_from_a_variable_is_read_per_request():
    env = {"AZURE_OPENAI_ENDPOINT": ENDPOINT, "AZURE_OPENAI_AD_TOKEN": TOKEN}
    server = Server(completion("a"), completion("b"))
    model = azure(server, env)
    asyncio.run(generate(model=model, prompt="x"))
    env["AZURE_OPENAI_AD_TOKEN"] = TOKEN + "-refreshed"
    asyncio.run(generate(model=model, prompt="x"))
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {TOKEN}", f"Bearer {TOKEN}-refreshed"]
    assert "api-key" not in server.requests[0].headers


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_azure_entra_token_from_a_callable_is_asked_on_every_call(kind):
    asked: list[int] = []

    def sync_source() -> str:
        asked.append(1)
        return f"{TOKEN}-{len(asked)}"

    async def async_source() -> str:
        return sync_source()

    server = Server(completion("a"), completion("b"))
    # A key is set too: the callable wins and the key is not sent beside the token.
    model = azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT, "AZURE_OPENAI_API_KEY": KEY},
                  token_provider=sync_source if kind == "sync" else async_source)
    asyncio.run(generate(model=model, prompt="x"))
    asyncio.run(generate(model=model, prompt="x", on_chunk=None))
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {TOKEN}-1", f"Bearer {TOKEN}-2"]
    assert all("api-key" not in r.headers for r in server.requests)


def test_azure_streaming_goes_to_the_deployment_too():
    body = (b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    server = Server(httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    response = asyncio.run(generate(model=azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT, "AZURE_OPENAI_API_KEY": KEY}),
                                    prompt="x", on_chunk=lambda c: None))
    assert server.requests[0].url.path == "/openai/deployments/gpt-4o-prod/chat/completions"
    assert server.body(0)["stream"] is True and response.text == "Hi"


def test_a_token_provider_that_raises_is_a_model_error_and_nothing_is_sent():
    def broken() -> str:
        raise RuntimeError("credential expired")

    server = Server()
    with pytest.raises(ModelError, match="token provider for azure raised RuntimeError: credential expired"):
        asyncio.run(generate(model=azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT}, token_provider=broken), prompt="x"))
    assert server.requests == []


@pytest.mark.parametrize("bad", [None, "", 42, "tok\r\nX-Injected: 1"])
def test_a_token_that_is_not_a_usable_string_is_refused_before_sending(bad):
    server = Server()
    with pytest.raises(ModelError, match="not a usable string"):
        asyncio.run(generate(model=azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT}, token_provider=lambda: bad),
                             prompt="x"))
    assert server.requests == []


def test_a_token_with_the_newline_a_command_prints_is_trimmed():
    server = Server(completion("a"))
    asyncio.run(generate(model=azure(server, {"AZURE_OPENAI_ENDPOINT": ENDPOINT}, token_provider=lambda: TOKEN + "\n"),
                         prompt="x"))
    assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_a_token_echoed_in_an_error_is_redacted():
    echo = httpx.Response(401, json={"error": {"message": f"token {TOKEN}-x is invalid"}})
    with pytest.raises(ModelError) as caught:
        asyncio.run(generate(model=azure(Server(echo), {"AZURE_OPENAI_ENDPOINT": ENDPOINT},
                                         token_provider=lambda: f"{TOKEN}-x"), prompt="x"))
    assert caught.value.status == 401 and TOKEN not in redact(str(caught.value))


@pytest.mark.parametrize(("env", "message"), [
    ({"AZURE_OPENAI_API_KEY": KEY}, "no endpoint for azure/gpt-4o-prod: set AZURE_OPENAI_ENDPOINT"),
    ({"AZURE_OPENAI_ENDPOINT": ENDPOINT}, "no credentials for azure: set AZURE_OPENAI_API_KEY"),
])
def test_azure_without_endpoint_or_credentials_says_what_to_set(env, message):
    with pytest.raises(UsageError, match=message):
        azure(Server(), env)


# -- Vertex AI ---------------------------------------------------------------------------------------

GEMINI_REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Paris."}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6}}
VERTEX_ENV = {"GOOGLE_CLOUD_PROJECT": "acme-prod", "GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.vertex-access-token-0000"}


def vertex(server: Server, env: dict[str, str], name: str = "vertexai/gemini-2.5-flash", **kwargs) -> VertexGeminiModel:
    return VertexGeminiModel(name, env=env, transport=httpx.MockTransport(server), **kwargs)


def test_vertex_calls_the_regional_publisher_model_url_with_a_bearer_token():
    server = Server(GEMINI_REPLY)
    response = asyncio.run(generate(model=vertex(server, VERTEX_ENV), system="Be brief.", prompt="Capital?"))
    request = server.requests[0]
    assert str(request.url) == ("https://us-central1-aiplatform.googleapis.com/v1/projects/acme-prod/locations/"
                                "us-central1/publishers/google/models/gemini-2.5-flash:generateContent")
    assert request.headers["authorization"] == "Bearer ya29.vertex-access-token-0000"
    assert "x-goog-api-key" not in request.headers
    body = server.body(0)
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Capital?"}]}]
    assert response.text == "Paris." and response.usage.total_tokens == 6


def test_vertex_location_and_project_from_arguments_and_the_global_endpoint():
    server = Server(GEMINI_REPLY, GEMINI_REPLY)
    asyncio.run(generate(model=vertex(server, {**VERTEX_ENV, "GOOGLE_CLOUD_LOCATION": "europe-west4"}), prompt="x"))
    asyncio.run(generate(model=vertex(server, VERTEX_ENV, project="other", location="global"), prompt="x"))
    assert server.requests[0].url.host == "europe-west4-aiplatform.googleapis.com"
    assert "/locations/europe-west4/" in server.requests[0].url.path
    assert str(server.requests[1].url).startswith(
        "https://aiplatform.googleapis.com/v1/projects/other/locations/global/publishers/google/models/")


def test_vertex_streams_over_sse_and_runs_tools():
    call = (b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"add","args":{"a":1,"b":2}}}]},'
            b'"finishReason":"STOP"}]}\n\n')
    text = b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"3"}]},"finishReason":"STOP"}]}\n\n'
    server = Server(*(httpx.Response(200, content=b, headers={"content-type": "text/event-stream"}) for b in (call, text)))
    chunks: list[str] = []
    response = asyncio.run(generate(model=vertex(server, VERTEX_ENV, token_provider=lambda: "ya29.from-callable-00"),
                                    prompt="1+2?", tools=[add], on_chunk=lambda c: chunks.append(c.text)))
    assert server.requests[1].url.path.endswith("/models/gemini-2.5-flash:streamGenerateContent")
    assert server.requests[1].url.params["alt"] == "sse"
    assert server.body(1)["contents"][-1] == {"role": "user", "parts": [
        {"functionResponse": {"name": "add", "response": {"output": 3}}}]}
    assert all(r.headers["authorization"] == "Bearer ya29.from-callable-00" for r in server.requests)
    assert response.text == "3" and "3" in chunks


@pytest.mark.parametrize(("env", "kwargs", "message"), [
    ({"GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.x-0000000000"}, {}, "no Google Cloud project for vertexai/gemini-2.5-flash"),
    ({"GOOGLE_CLOUD_PROJECT": "p"}, {}, "no credentials for vertexai: set GOOGLE_OAUTH_ACCESS_TOKEN"),
    (VERTEX_ENV, {"location": "evil.example.com/x"}, "is not a Google Cloud location"),
])
def test_vertex_misconfiguration_says_what_to_set(env, kwargs, message):
    with pytest.raises(UsageError, match=message):
        vertex(Server(), env, **kwargs)


def test_the_registry_knows_both_prefixes(monkeypatch):
    from dotprompt.providers.registry import resolve_model

    for name, value in {**VERTEX_ENV, "AZURE_OPENAI_ENDPOINT": ENDPOINT, "AZURE_OPENAI_API_KEY": KEY}.items():
        monkeypatch.setenv(name, value)
    assert isinstance(resolve_model("azure/registry-dep"), AzureOpenAIModel)
    model = resolve_model("vertexai/gemini-registry-test")
    assert isinstance(model, VertexGeminiModel) and "/projects/acme-prod/" in model.config.base_url


def test_both_read_their_settings_from_pyproject(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dotprompt.providers.azure]\nbase_url = "https://fabrikam.openai.azure.com"\napi_version = "2025-04-01-preview"\n'
        'token_env = "MY_ENTRA_TOKEN"\n'
        '[tool.dotprompt.providers.vertexai]\nproject = "from-toml"\nlocation = "asia-northeast1"\ntoken_env = "MY_GCP_TOKEN"\n')
    env = {"MY_ENTRA_TOKEN": TOKEN, "MY_GCP_TOKEN": "ya29.toml-token-000000"}
    server = Server(completion("a"), GEMINI_REPLY)
    asyncio.run(generate(model=azure(server, env), prompt="x"))
    asyncio.run(generate(model=vertex(server, env), prompt="x"))
    first, second = server.requests
    assert str(first.url) == ("https://fabrikam.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions"
                              "?api-version=2025-04-01-preview")
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert str(second.url).startswith("https://asia-northeast1-aiplatform.googleapis.com/v1/projects/from-toml/"
                                      "locations/asia-northeast1/publishers/google/models/gemini-2.5-flash")
    assert second.headers["authorization"] == "Bearer ya29.toml-token-000000"


def test_a_typo_in_their_tables_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.providers.vertexai]\nprojet = "p"\n')
    with pytest.raises(UsageError, match=r"providers.vertexai\] in pyproject.toml: unknown key 'projet' \(did you mean"):
        vertex(Server(), VERTEX_ENV)
