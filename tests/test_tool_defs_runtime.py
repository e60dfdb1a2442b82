"""A tool written only in `toolDefs` passes `check`, so the run honours it: a declared-only tool,
which interrupts (as Genkit does for a definition without an implementation) instead of failing
every run with "unknown tool"."""

from __future__ import annotations

from dotprompt import tool
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.lint.check import check_library

PROMPT = """---
tools: [approve]
toolDefs:
  - name: approve
    description: A human approves the refund.
    inputSchema: {type: object, properties: {amount: {type: number}}}
---
refund 10"""


def test_a_tool_def_only_tool_interrupts(folder):
    folder.write("p.prompt", PROMPT)
    lib = folder.library()
    assert [d for d in check_library(lib) if "approve" in d.message] == []
    model = ScriptedModel([[tool_call("approve", {"amount": 10}, ref="1")], "done"])
    response = lib.load("p").generate_sync({}, model=model)
    assert response.finish_reason == "interrupted"
    assert [p.tool_request.name for p in response.interrupts] == ["approve"]
    assert model.requests[0].tools[0].description == "A human approves the refund."


def test_a_defined_tool_of_the_same_name_wins(folder):
    folder.write("p.prompt", PROMPT)
    lib = folder.library()
    lib.define_tool(tool(lambda x: "approved", name="approve", description="approves", input_schema={"type": "object"}))
    model = ScriptedModel([[tool_call("approve", {"amount": 10}, ref="1")], "done"])
    response = lib.load("p").generate_sync({}, model=model)
    assert response.text == "done" and model.requests[1].messages[-1].content[0].tool_response.output == "approved"
