"""Format instructions: injected once per turn where Dotprompt puts them, or native constrained output."""

from __future__ import annotations

from dotprompt import (
    PromptLibrary,
    generate,
)
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.providers import ModelInfo
from tests.generation.generation_support import INVOICE_SCHEMA, Invoice, add, instruction_parts, run


def test_instructions_injected_every_turn_exactly_once_into_the_system_message():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], '{"number": "1", "total": 2}'])
    run(generate(model=model, system="You extract.", prompt="x", tools=[add], output_schema=Invoice))
    for request in model.requests:
        parts = instruction_parts(request)
        assert len(parts) == 1 and parts[0][0] == "system" and '"number"' in parts[0][1].text


def test_instructions_fill_a_pending_output_section():
    lib = PromptLibrary(None)
    prompt = lib.from_source('---\noutput:\n  schema: {answer: string}\n---\nQ: {{ q }}\n{{ section("output") }}\nThanks')
    model = ScriptedModel(['{"answer": "42"}'])
    response = run(prompt.generate({"q": "meaning"}, model=model))
    content = model.requests[0].messages[0].content
    assert [p.metadata.get("purpose") if p.metadata else None for p in content] == [None, "output", None]
    assert content[1].metadata == {"purpose": "output"} and response.output == {"answer": "42"}


def test_instructions_go_to_the_last_user_message_without_a_system_message():
    model = ScriptedModel(['{"number": "1", "total": 2}'])
    run(generate(model=model, prompt="extract", output_schema=Invoice))
    assert instruction_parts(model.requests[0])[0][0] == "user"


def test_native_constrained_output_sends_the_schema_instead_of_instructions():
    model = ScriptedModel(['{"number": "1", "total": 2}'], info=ModelInfo(constrained="all"))
    run(generate(model=model, prompt="x", output_schema=Invoice))
    request = model.requests[0]
    assert instruction_parts(request) == [] and request.output.constrained is True
    assert request.output.json_schema == INVOICE_SCHEMA


def test_no_tools_constrained_model_uses_instructions_when_tools_are_present():
    model = ScriptedModel(['{"number": "1", "total": 2}'], info=ModelInfo(constrained="no-tools"))
    run(generate(model=model, prompt="x", tools=[add], output_schema=Invoice))
    assert len(instruction_parts(model.requests[0])) == 1 and not model.requests[0].output.constrained


def test_custom_and_disabled_instructions():
    model = ScriptedModel(['{"number": "1", "total": 2}'] * 2)
    run(generate(model=model, prompt="x", output_schema=Invoice, output_instructions="JSON please"))
    assert instruction_parts(model.requests[0])[0][1].text == "JSON please"
    run(generate(model=model, prompt="x", output_schema=Invoice, output_instructions=False))
    assert instruction_parts(model.requests[1]) == []


# -- middleware ------------------------------------------------------------------------------------


def test_plans_are_reused_only_for_the_same_schema_and_built_in_formats():
    # Output plans are cached by what they depend on: a changed schema (even one description) is a new plan,
    # and a format an application defines is planned afresh every run (its handler may not be pure).
    from dotprompt.formats import Format, ParsedOutput, define_format

    def instructions(schema: dict) -> str:
        model = ScriptedModel(['{"a": "x"}'])
        run(generate(model=model, prompt="x", output_schema=schema))
        return instruction_parts(model.requests[0])[0][1].text

    first = {"type": "object", "properties": {"a": {"type": "string", "description": "first"}}}
    second = {"type": "object", "properties": {"a": {"type": "string", "description": "second"}}}
    assert '"first"' in instructions(first) and '"second"' in instructions(second) and '"first"' in instructions(first)

    class Counting:
        made = 0

        def __init__(self, schema):
            Counting.made += 1
            self.instructions = f"Answer, take {Counting.made}."

        def parse_text(self, text):
            return ParsedOutput(text)

        def new_stream(self):
            raise NotImplementedError

    define_format(Format(name="test-counting", content_type="text/plain", constrained=False,
                         default_instructions=True, handler=Counting))
    seen = []
    for _ in range(2):
        model = ScriptedModel(["ok"])
        run(generate(model=model, prompt="x", output_format="test-counting"))
        seen.append(instruction_parts(model.requests[0])[0][1].text)
    assert seen == ["Answer, take 1.", "Answer, take 2."]
