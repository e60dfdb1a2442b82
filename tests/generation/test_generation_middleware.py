"""Middleware: the onion per turn and per call, and the built-in policies (retry, fallback, validate_and_retry)."""

from __future__ import annotations

import asyncio

import pytest

from dotprompt import (
    ModelError,
    OutputValidationError,
    generate,
)
from dotprompt.doubles import ScriptedModel, tool_call
from tests.generation.generation_support import Invoice, add, run


def test_middleware_order_is_an_onion_per_turn_and_per_call():
    events = []

    class Both:
        def __init__(self, name):
            self.name = name

        async def generate(self, envelope, next_):
            events.append(f"{self.name}:turn{envelope.current_turn}:in")
            response = await next_(envelope)
            events.append(f"{self.name}:turn{envelope.current_turn}:out")
            return response

        async def model(self, request, next_):
            events.append(f"{self.name}:model:in")
            response = await next_(request)
            events.append(f"{self.name}:model:out")
            return response

    async def plain(request, next_):
        events.append("plain:model")
        return await next_(request)

    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], "done"])
    run(generate(model=model, prompt="x", tools=[add], use=[Both("outer"), plain, Both("inner")]))
    assert events == [
        "outer:turn0:in", "inner:turn0:in",
        "outer:model:in", "plain:model", "inner:model:in", "inner:model:out", "outer:model:out",
        "outer:turn1:in", "inner:turn1:in",
        "outer:model:in", "plain:model", "inner:model:in", "inner:model:out", "outer:model:out",
        "inner:turn1:out", "outer:turn1:out", "inner:turn0:out", "outer:turn0:out",
    ]


def test_model_middleware_can_rewrite_the_request():
    async def add_config(request, next_):
        return await next_(request.model_copy(update={"config": {**request.config, "temperature": 0}}))

    model = ScriptedModel(["ok"])
    run(generate(model=model, prompt="x", use=[add_config]))
    assert model.requests[0].config == {"temperature": 0}


def test_retry_backs_off_and_honours_retry_after():
    from dotprompt import retry

    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    model = ScriptedModel([ModelError("overloaded", status=503), ModelError("slow down", status=429, retry_after=7.0), "ok"])
    layer = retry(max_retries=3, initial_delay=0.5, jitter=0.0, sleep=sleep)
    assert run(generate(model=model, prompt="x", use=[layer])).text == "ok"
    assert slept == [0.5, 7.0] and model.calls == 3


def test_retry_does_not_retry_a_client_error():
    from dotprompt import retry

    model = ScriptedModel([ModelError("bad request", status=400), "never"])
    with pytest.raises(ModelError, match="400"):
        run(generate(model=model, prompt="x", use=[retry(sleep=lambda s: asyncio.sleep(0))]))
    assert model.calls == 1


def test_fallback_uses_the_next_model():
    from dotprompt import fallback

    primary = ScriptedModel([ModelError("down", status=500)], name="primary")
    backup = ScriptedModel(["from backup"], name="backup")
    layer = fallback(backup)
    assert run(generate(model=primary, prompt="x", use=[layer])).text == "from backup"
    assert layer.used == ["backup"] and backup.calls == 1


def test_validate_and_retry_is_bounded_in_attempts_and_context():
    from dotprompt import Usage, validate_and_retry

    replies = ['{"number": 1}', '{"number": 2}', '{"number": "3", "total": 4}']
    model = ScriptedModel(replies, usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15))
    response = run(generate(model=model, prompt="extract", output_schema=Invoice, use=[validate_and_retry(max_attempts=2)]))
    assert response.output == Invoice(number="3", total=4)
    assert [a.text for a in response.attempts] == replies[:2]
    assert all(a.usage.total_tokens == 15 for a in response.attempts)
    sizes = [len(r.messages) for r in model.requests]
    assert sizes == [1, 3, 3]  # the context holds only the last failed attempt
    retry_request = model.requests[2]
    texts = [p.text for m in retry_request.messages for p in m.content if p.text]
    assert '{"number": 2}' in texts and '{"number": 1}' not in texts
    assert "$.number" in retry_request.messages[-1].content[0].text


def test_validate_and_retry_gives_up_with_the_attempts():
    from dotprompt import validate_and_retry

    model = ScriptedModel(["nope"] * 3)
    with pytest.raises(OutputValidationError) as caught:
        run(generate(model=model, prompt="x", output_schema=Invoice, use=[validate_and_retry(max_attempts=1)]))
    assert model.calls == 2 and len(caught.value.attempts) == 2


# -- streaming ------------------------------------------------------------------------------------
