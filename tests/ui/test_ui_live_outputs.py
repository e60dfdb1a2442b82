"""A live run keeps the parsed output on the newest chunk event of each message only: every event
stream still sends the outputs it sent before (`sse` sends only a message's newest output in a
batch, and a batch runs to the newest event), and a long reply's outputs no longer pile up."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("starlette")

from dotprompt.doubles import ScriptedModel
from dotprompt.prompts.library import PromptLibrary
from dotprompt.providers import define_model
from dotprompt.ui.live import LiveRun, sse


def sent_outputs(text: str) -> list[tuple[int, object]]:
    """(event number, output) of every chunk event that carries an output in an SSE text."""
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("event") == "chunk":
            event = json.loads(fields["data"])
            if "output" in event:
                out.append((int(fields["id"]), event["output"]))
    return out


def events_of_a_run(reply: str, chunk_size: int) -> list[dict]:
    name = f"scripted-live-{chunk_size}-{len(reply)}"
    define_model(ScriptedModel([reply], name=name, chunk_size=chunk_size))
    prompt = PromptLibrary(None).from_source(f"---\nmodel: {name}\noutput:\n  format: json\n---\ngo\n", name="live")
    live = LiveRun(prompt, {}, None, None)
    asyncio.run(live.run())
    return live.events


REPLY = json.dumps({"items": list(range(200))})


def test_only_the_newest_chunk_event_of_a_message_keeps_its_output():
    events = events_of_a_run(REPLY, 4)
    chunk_events = [e for e in events if e["type"] == "chunk"]
    assert len(chunk_events) > 100
    assert [e for e in chunk_events if "output" in e] == [chunk_events[-1]]
    assert chunk_events[-1]["output"] == json.loads(REPLY)


@pytest.mark.parametrize("start", [0, 1, 37, 120])
def test_every_stream_sends_the_newest_output_whatever_event_it_starts_from(start):
    events = events_of_a_run(REPLY, 4)
    newest = max(n for n, e in enumerate(events) if e["type"] == "chunk")
    assert sent_outputs(sse(list(enumerate(events[start:], start)))) == [(newest, json.loads(REPLY))]
