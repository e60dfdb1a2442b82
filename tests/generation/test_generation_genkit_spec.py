"""Genkit's cross-SDK generate spec (`../shared/conformance/genkit/generate.yaml`), every case, run
against `generate()` and against `generate_stream()`.

As Genkit's own harness does, the model registered under the spec's name ("programmableModel")
answers call N with the case's `modelResponses[N]`, streaming `streamChunks[N]` first when the call
streams, and the tool `testTool` answers "tool called" (its schemas are the ones Genkit gives a tool
declared without any: `{"$schema": draft-07}`). The whole response (`to_dict()`, the wire shape) and
every chunk (`chunk.to_dict()`) are compared with the case as written.

Normalisation: none. The spec's responses carry no `latencyMs`, and ours has none to drop. The
one thing the spec leaves open: it gives chunks only for the case it streams; run streamed, the
other cases stream exactly their tool turns (each turn's tool message as one `tool` chunk, as
Genkit streams it), which is what is asserted for them.
"""

from __future__ import annotations

import pytest
import yaml

from dotprompt import GenerateActionOptions, generate, generate_stream, tool
from dotprompt.providers import ModelInfo, define_model
from dotprompt.types import GenerateRequest, ModelChunk, ModelResponse
from tests.conftest import ROOT
from tests.generation.generation_support import run

SPEC = ROOT.parent / "shared" / "conformance" / "genkit" / "generate.yaml"
CASES = yaml.safe_load(SPEC.read_text(encoding="utf-8"))["tests"] if SPEC.exists() else []
DRAFT_07 = {"$schema": "http://json-schema.org/draft-07/schema#"}

pytestmark = pytest.mark.skipif(not SPEC.exists(), reason=f"Genkit's generate spec is not beside this checkout ({SPEC})")


class ProgrammableModel:
    """Answers with the case's responses in order, streaming the case's chunks for a streamed call."""

    name = "programmableModel"
    info = ModelInfo(label="Genkit spec model")

    def __init__(self, case: dict) -> None:
        self.responses = case["modelResponses"]
        self.chunks = case.get("streamChunks") or []
        self.calls = 0

    async def generate(self, request: GenerateRequest, on_chunk=None) -> ModelResponse:
        call, self.calls = self.calls, self.calls + 1
        if on_chunk is not None:
            for chunk in self.chunks[call] if call < len(self.chunks) else []:
                on_chunk(ModelChunk(role=chunk.get("role", "model"), content=chunk["content"]))
        return ModelResponse.model_validate(self.responses[call])


def _tools(options: GenerateActionOptions) -> list:
    """`testTool`, which Genkit's harness registers: a run uses it only when its input names it."""
    test_tool = tool(lambda _: "tool called", name="testTool", description="description", input_schema=DRAFT_07,
                     output_schema=DRAFT_07)
    return [test_tool] if test_tool.name in options.tools else []


def _tool_turns_as_chunks(expected: dict) -> list[dict]:
    messages = expected["request"]["messages"]
    return [{"index": 0, "role": "tool", "content": m["content"]} for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_generate(case):
    define_model(ProgrammableModel(case))
    options = GenerateActionOptions.model_validate(case["input"])
    response = run(generate(options, tools=_tools(options)))
    assert response.to_dict() == case["expectResponse"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_generate_stream(case):
    define_model(ProgrammableModel(case))

    async def streamed():
        options = GenerateActionOptions.model_validate(case["input"])
        result = generate_stream(options, tools=_tools(options))
        chunks = [chunk.to_dict() async for chunk in result.stream]
        return chunks, await result.response

    chunks, response = run(streamed())
    assert response.to_dict() == case["expectResponse"]
    assert chunks == case.get("expectChunks", _tool_turns_as_chunks(case["expectResponse"]))


def test_the_spec_is_here_and_whole():
    assert [c["name"] for c in CASES] == ["simple generate call", "stream responses", "calls tools"]
