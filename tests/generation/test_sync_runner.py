"""The sync entry points keep their event loop and connections, and behave as `asyncio.run` did.

Connections are counted on a real loopback server speaking HTTP/1.1 (keep-alive), as a provider does.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading

import httpx
import pytest

from dotprompt import PromptLibrary, generate_sync, tool
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.generation.api import generate, run_sync
from dotprompt.providers.config import ProviderConfig
from dotprompt.providers.openai import OpenAIModel
from tests.providers.mock_server import Loopback

CALLS = 20


def chat_reply(request: httpx.Request) -> dict:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


@pytest.fixture
def loopback():
    with Loopback(chat_reply, keep_alive=True) as server:
        yield server


def model_at(server: Loopback) -> OpenAIModel:
    return OpenAIModel("openai/counted", config=ProviderConfig("openai", f"{server.url}/v1", "k"))


def test_sequential_sync_calls_of_one_prompt_open_one_connection(loopback):
    prompt = PromptLibrary(None).from_source("---\ninput:\n  schema:\n    name: string\n---\nHello {{ name }}")
    model = model_at(loopback)
    for index in range(CALLS):
        assert prompt({"name": f"n{index}"}, model=model).text == "hi"
    assert len(loopback.requests) == CALLS
    assert loopback.connections == 1


def test_sequential_generate_sync_calls_open_one_connection(loopback):
    model = model_at(loopback)
    for _ in range(CALLS):
        assert generate_sync(model=model, prompt="hello").text == "hi"
    assert loopback.connections == 1


def test_awaited_calls_in_one_loop_share_one_connection(loopback):
    model = model_at(loopback)

    async def calls() -> None:
        for _ in range(CALLS):
            assert (await generate(model=model, prompt="hello")).text == "hi"

    asyncio.run(calls())
    assert loopback.connections == 1


def test_concurrent_calls_in_one_loop_all_complete(loopback):
    model = model_at(loopback)

    async def calls() -> list[str]:
        replies = await asyncio.gather(*(generate(model=model, prompt="hello") for _ in range(CALLS)))
        return [reply.text for reply in replies]

    assert asyncio.run(calls()) == ["hi"] * CALLS
    assert 1 <= loopback.connections <= CALLS


# -- what asyncio.run gave, kept -------------------------------------------------------------------

def test_the_callers_context_variables_reach_the_run():
    seen = contextvars.ContextVar("seen", default="unset")
    seen.set("caller")

    async def read() -> str:
        return seen.get()

    assert run_sync(read()) == "caller"


def test_a_run_does_not_leak_its_context_changes_to_the_caller():
    var = contextvars.ContextVar("var", default="before")

    async def change() -> None:
        var.set("inside")

    run_sync(change())
    assert var.get() == "before"


def test_errors_come_back_as_raised():
    async def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_sync(fail())
    assert generate_sync(model=ScriptedModel(["still works"]), prompt="x").text == "still works"


def test_tasks_left_behind_by_a_call_are_cancelled_as_asyncio_run_does():
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def leave_a_task() -> str:
        leave_a_task.task = asyncio.ensure_future(forever())  # type: ignore[attr-defined]
        await asyncio.sleep(0)
        return "done"

    assert run_sync(leave_a_task()) == "done"
    assert cancelled.is_set()


def test_one_loop_serves_every_call_of_a_thread_and_each_thread_has_its_own():
    async def loop_id() -> int:
        return id(asyncio.get_running_loop())

    here = {run_sync(loop_id()) for _ in range(3)}
    there: list[int] = []
    worker = threading.Thread(target=lambda: there.extend(run_sync(loop_id()) for _ in range(2)))
    worker.start()
    worker.join()
    assert len(here) == 1 and len(set(there)) == 1 and here.isdisjoint(there)


def test_inside_a_running_loop_the_call_runs_in_another_thread_and_keeps_its_connection(loopback):
    model = model_at(loopback)

    async def notebook_cell() -> list[str]:  # Jupyter: a loop already runs in this thread
        return [generate_sync(model=model, prompt="hello").text for _ in range(5)]

    assert asyncio.run(notebook_cell()) == ["hi"] * 5
    assert loopback.connections == 1


def test_a_sync_tool_may_itself_make_a_sync_call():
    @tool
    def ask_inner(question: str) -> str:
        """Ask another model, synchronously."""
        return generate_sync(model=ScriptedModel([f"inner: {question}"]), prompt=question).text

    replies = [tool_call("ask_inner", {"question": "q"}), "outer done"]
    response = generate_sync(model=ScriptedModel(replies), prompt="go", tools=[ask_inner])
    assert response.text == "outer done"
    assert "inner: q" in str(response.messages[-2].model_dump())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_child_gets_a_loop_of_its_own(loopback):
    model = model_at(loopback)
    assert generate_sync(model=model, prompt="before fork").text == "hi"
    pid = os.fork()
    if pid == 0:  # the child: the parent's loop (and its connections) must not be used here
        try:
            ok = generate_sync(model=model, prompt="in the child").text == "hi"
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert generate_sync(model=model, prompt="after fork").text == "hi"
