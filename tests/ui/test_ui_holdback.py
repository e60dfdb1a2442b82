"""No secret reaches a live run's event stream in pieces: whatever chunks a key is cut into, the events
carry it masked, and no event ends with a piece of it (the text, the partial output, a call's arguments)."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

pytest.importorskip("starlette")

from dotprompt import tool
from dotprompt._util.redact import unsafe_tail
from dotprompt.doubles import ScriptedModel, tool_call
from dotprompt.prompts.library import PromptLibrary
from dotprompt.providers import define_model
from dotprompt.ui.holdback import HeldText
from dotprompt.ui.live import LiveRun, sse

KEY = "sk-holdback-test-secret-4242"
TEXT = f"before {KEY} after, and https://user:pa55word@example.com/x then {KEY}"
MASKED = "before *** after, and https://***@example.com/x then ***"


def pieces_of(text: str, cuts: tuple[int, ...]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def streamed(pieces: list[str]) -> list[dict]:
    held, out = HeldText(), []
    for piece in pieces:
        out += held.chunk({"type": "chunk", "index": 1, "role": "model", "text": piece}, [KEY])
    return out + held.flush()


@pytest.mark.parametrize("first", range(1, len(TEXT), 3))
def test_every_cut_into_pieces_gives_the_masked_text_and_no_piece_of_the_key(first):
    for second in range(first + 1, len(TEXT), 5):
        events = streamed(pieces_of(TEXT, (first, second)))
        assert "".join(e["text"] for e in events) == MASKED
        for event in events:
            assert not any(KEY[:n] in event["text"] for n in range(4, len(KEY) + 1)), event
            assert "pa55" not in event["text"]


def test_text_that_only_looks_like_the_start_of_a_key_is_sent_when_the_next_piece_shows_it_is_not():
    events = streamed(["an sk-ho", "use of words"])
    assert [e["text"] for e in events] == ["an ", "sk-house of word", "s"]  # a word ending in s: held, as it might begin sk-


def test_the_end_held_at_the_end_of_the_message_is_sent_before_what_follows():
    held = HeldText()
    first = held.chunk({"type": "chunk", "index": 1, "role": "model", "text": "ends with sk"}, [KEY])
    second = held.chunk({"type": "chunk", "index": 2, "role": "model", "text": "next"}, [KEY]) + held.flush()
    assert [(e["index"], e["text"]) for e in first + second] == [(1, "ends with "), (1, "sk"), (2, "nex"), (2, "t")]


def test_a_streamed_call_s_arguments_never_end_in_a_piece_of_the_key():
    held = HeldText()
    request = {"name": "t", "ref": "c1", "partial": True, "input": '{"k": "' + KEY[:12]}
    [event] = held.chunk({"type": "chunk", "index": 1, "role": "model", "text": "", "toolRequests": [request]}, [KEY])
    assert event["toolRequests"][0]["input"] == '{"k": "'


@pytest.mark.parametrize(("text", "held"), [
    ("x sk-holdb", 8), ("x ***", 0), ("x s", 1), ("1 + 2 = 3", 0), ("ok.", 2),  # a scheme's letter might come
    ("see https://us", 10), ("see https://u@h", 1), ("at https:/", 3), ("at https:", 2), ("https://h/p", 1)])
def test_unsafe_tail(text, held):
    assert unsafe_tail(text, [KEY]) == held


@tool
def echo_secret(secret: str) -> str:
    """Take a secret."""
    return "ok"


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 7, 11])
def test_a_live_run_sends_a_key_in_its_reply_masked_whatever_the_chunks(chunk_size, monkeypatch):
    monkeypatch.setenv("HOLDBACK_TEST_API_KEY", KEY)
    reply = json.dumps({"note": f"the key {KEY} is here", "n": 1})
    name = f"scripted-holdback-{chunk_size}"
    define_model(ScriptedModel([[tool_call("echo_secret", {"secret": KEY}, ref="c1")], reply], name=name, chunk_size=chunk_size))
    library = PromptLibrary(None)
    library.define_tool(echo_secret)
    prompt = library.from_source(f"---\nmodel: {name}\ntools: [echo_secret]\noutput:\n  format: json\n---\ngo\n", name="held")
    live = LiveRun(prompt, {}, None, None)
    asyncio.run(live.run())
    text = sse(list(enumerate(live.events)), [KEY])
    assert not any(KEY[:n] in text for n in range(6, len(KEY) + 1))
    chunks = [e for e in live.events if e["type"] == "chunk"]
    assert "".join(e["text"] for e in chunks if e["index"] == max(c["index"] for c in chunks)) == \
        reply.replace(KEY, "***")
    assert live.events[-1]["type"] == "done" and live.events[-1]["output"]["note"] == f"the key {KEY} is here"
