"""A consumer of `generate_stream` cancelled mid-stream leaves no task behind: the queue getter it was
waiting on is cancelled with it (else the loop's end prints `Task was destroyed but it is pending!`)."""

from __future__ import annotations

import asyncio
import gc

from dotprompt import generate_stream
from dotprompt.providers.base import ModelInfo
from dotprompt.types import Message, ModelChunk, ModelResponse, Part


class Stalling:
    """A model that sends one chunk, then never answers (a slow provider)."""

    name = "stalling"
    info = ModelInfo(label="stalling test model")

    async def generate(self, request, on_chunk=None):
        if on_chunk is not None:
            on_chunk(ModelChunk(content=[Part(text="first")]))
        await asyncio.Event().wait()
        return ModelResponse(message=Message(role="model", content=[Part(text="never")]))


def _queue_getters() -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if "Queue.get" in repr(t.get_coro())]


async def _consume_then_cancel(shape: str) -> list[asyncio.Task]:
    stream = generate_stream(model=Stalling(), prompt="x")
    first = asyncio.Event()

    async def consume() -> None:
        source = stream.stream if shape == "stream" else stream
        async for _ in source:
            first.set()

    consumer = asyncio.ensure_future(consume())
    started = asyncio.ensure_future(first.wait())
    await asyncio.wait([consumer, started], return_when=asyncio.FIRST_COMPLETED)
    assert first.is_set(), consumer.exception()
    await asyncio.sleep(0.01)  # the consumer is now waiting for the next chunk
    consumer.cancel()
    await asyncio.gather(consumer, return_exceptions=True)
    run = stream.response
    if not run.done():
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    await asyncio.sleep(0)
    return _queue_getters()


def test_cancelling_a_consumer_of_stream_leaves_no_pending_getter():
    assert asyncio.run(_consume_then_cancel("stream")) == []


def test_cancelling_a_consumer_of_the_iterator_leaves_no_pending_getter():
    assert asyncio.run(_consume_then_cancel("iterate")) == []


async def _destroyed_while_running() -> list[str]:
    """What the loop reports when the cancelled stream is collected while it still runs (a long-lived
    server: the workbench collects its finished runs' streams long before it stops)."""
    reported: list[str] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context["message"]))
    await _consume_then_cancel("iterate")
    for _ in range(3):
        gc.collect()
        await asyncio.sleep(0)
    return reported


def test_a_cancelled_stream_collected_while_the_loop_runs_destroys_no_pending_task():
    assert [m for m in asyncio.run(_destroyed_while_running()) if "Task was destroyed" in m] == []
