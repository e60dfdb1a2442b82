"""Tool calls per reply are bounded: `maxTurns` bounds rounds, `maxToolCalls` the calls one reply
may ask for (default DEFAULT_MAX_TOOL_CALLS), TOOL_CONCURRENCY of them run at once, and a run of
unknown names gets one list of the available tools, not one per name."""

from __future__ import annotations

import asyncio

import pytest

from dotprompt import GenerationResponseError, PromptLibrary, generate, tool
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.generation.loop import TOOL_CONCURRENCY
from dotprompt.settings import DEFAULT_MAX_TOOL_CALLS
from tests.generation.generation_support import run
from tests.isolation import assert_finishes


@pytest.mark.slow  # the command line as a child process
def test_ten_thousand_refunds_in_one_reply_run_none():
    outcome = assert_finishes("""
        import asyncio, json
        from dotprompt import GenerationResponseError, generate, tool
        from dotprompt.doubles import ScriptedModel, tool_call
        ran = []
        refund = tool(lambda x: ran.append(x) or "ok", name="issue_refund", description="refunds",
                      input_schema={"type": "object"})
        calls = [tool_call("issue_refund", {"order_id": "1042", "amount": 1}, ref=str(i)) for i in range(10_000)]
        try:
            asyncio.run(generate(model=ScriptedModel([calls, "done"]), prompt="refund", tools=[refund]))
            print(json.dumps({"ran": len(ran), "error": None}))
        except GenerationResponseError as exc:
            print(json.dumps({"ran": len(ran), "error": str(exc), "status": exc.status}))
    """, timeout=60, memory_mb=1024)
    found = outcome.json()
    assert found["ran"] == 0 and found["status"] == "ABORTED"
    assert f"10000 tool calls in one reply; the limit is {DEFAULT_MAX_TOOL_CALLS} (maxToolCalls)" in found["error"]


def test_the_limit_comes_from_the_caller_and_from_the_frontmatter(folder):
    ran = []
    tick = tool(lambda x: ran.append(1) or len(ran), name="tick", description="ticks", input_schema={"type": "object"})
    three = [tool_call("tick", {}, ref=str(i)) for i in range(3)]
    with pytest.raises(GenerationResponseError, match="3 tool calls in one reply; the limit is 2"):
        run(generate(model=ScriptedModel([three, "done"]), prompt="go", tools=[tick], max_tool_calls=2))
    assert ran == []
    response = run(generate(model=ScriptedModel([three, "done"]), prompt="go", tools=[tick], max_tool_calls=3))
    assert response.text == "done" and len(ran) == 3
    folder.write("p.prompt", "---\nmaxToolCalls: 2\ntools: [tick]\n---\ngo")
    lib: PromptLibrary = folder.library()
    lib.define_tool(tick)
    prompt = lib.load("p")
    assert prompt.render({}).max_tool_calls == 2
    with pytest.raises(GenerationResponseError, match="the limit is 2"):
        prompt.generate_sync({}, model=ScriptedModel([three, "done"]))


def test_a_bad_limit_is_refused_at_load(folder):
    folder.write("p.prompt", "---\nmaxToolCalls: 0\n---\ngo")
    from dotprompt.lint.check import check_library

    found = [d for d in check_library(folder.library()) if "maxToolCalls" in d.message]
    assert found and found[0].level == "error" and "at least 1" in found[0].message


def test_tool_runs_are_bounded_in_concurrency():
    running = {"now": 0, "most": 0}

    async def slow(_: object) -> str:
        running["now"] += 1
        running["most"] = max(running["most"], running["now"])
        await asyncio.sleep(0.01)
        running["now"] -= 1
        return "ok"

    slow_tool = tool(slow, name="slow", description="sleeps", input_schema={"type": "object"})
    calls = [tool_call("slow", {}, ref=str(i)) for i in range(DEFAULT_MAX_TOOL_CALLS)]
    run(generate(model=ScriptedModel([calls, "done"]), prompt="go", tools=[slow_tool]))
    assert running["most"] == TOOL_CONCURRENCY


def test_repeated_unknown_names_list_the_tools_once():
    tick = tool(lambda x: 1, name="tick", description="ticks", input_schema={"type": "object"})
    calls = [tool_call(f"nope{i}" + "x" * 500, {}, ref=str(i)) for i in range(20)]
    model = ScriptedModel([calls, "done"])
    run(generate(model=model, prompt="go", tools=[tick]))
    errors = [p.tool_response.output["error"] for p in model.requests[1].messages[-1].content]
    assert len(errors) == 20 and sum("available: tick" in e for e in errors) == 1
    assert all(len(e) < 250 for e in errors)
