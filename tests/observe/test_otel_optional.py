"""OpenTelemetry is optional: without it everything works, and with it installed but unused it is never imported."""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes

RUN = """
    import asyncio, json, sys
    from dotprompt import PromptLibrary, tool
    from dotprompt.doubles import ScriptedModel
    from dotprompt.doubles import tool_call

    @tool
    def add(a: int, b: int) -> int:
        '''Add two integers.'''
        return a + b

    lib = PromptLibrary(None, log=sys.argv[1] if len(sys.argv) > 1 else None)
    adder = lib.from_source("---\\nmodel: echo\\n---\\nAdd {{ x }}.", name="adder")
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "3"])
    response = asyncio.run(adder.generate({"x": 1}, model=model, tools=[add]))

    async def consume():
        return [item async for item in adder.generate_stream({"x": 1}, model=ScriptedModel(["ok"]))]

    streamed = asyncio.run(consume())
    provider = sys.modules.get("opentelemetry.trace")
    provider = type(provider.get_tracer_provider()).__name__ if provider else None
    print(json.dumps({"text": response.text, "provider": provider, "streamed": streamed[-1].text, "hash": response.identity.hash,
                      "otel": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""

BLOCK = """
    import importlib.abc, sys

    class NoOpenTelemetry(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, NoOpenTelemetry())
"""


@pytest.mark.slow
def test_runs_work_without_opentelemetry():
    outcome = assert_finishes(BLOCK + RUN)
    result = outcome.json()
    assert result["text"] == "3" and result["streamed"] == "ok" and result["otel"] == []


@pytest.mark.slow
def test_installed_but_unused_opentelemetry_is_never_imported():
    # The application never imported it, so it cannot have installed an SDK: no import, no spans, no cost.
    result = assert_finishes(RUN).json()
    assert result["text"] == "3" and result["otel"] == []


@pytest.mark.slow
def test_the_api_alone_without_an_sdk_is_left_alone():
    result = assert_finishes("\n    import opentelemetry.trace\n" + RUN).json()
    assert result["provider"] == "ProxyTracerProvider" and result["text"] == "3"
    assert "opentelemetry.sdk" not in " ".join(result["otel"])
