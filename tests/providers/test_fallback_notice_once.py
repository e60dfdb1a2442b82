"""The "enforced by 'native', not strictly" notice is said once per model and schema, not once per
call: a batch of rows (or a loop of calls) on one model gives one line."""

from __future__ import annotations

import asyncio
import logging

from dotprompt import generate
from tests.providers.test_models_openai_responses import Server, model_for, reply, text_item

FREE_FORM = {"type": "object", "properties": {"extra": {"type": "object"}}}


def test_the_notice_is_said_once_per_model_and_reason(caplog):
    server = Server(*(reply(text_item('{"extra": {"a": 1}}')) for _ in range(5)))
    model = model_for(server)
    with caplog.at_level(logging.WARNING, logger="dotprompt"):
        for _ in range(5):
            asyncio.run(generate(model=model, prompt="x", output_schema=FREE_FORM))
    assert caplog.text.count("not strictly") == 1
    other = {"type": "object", "properties": {"extra": {"type": "object"}, "more": {"type": "object"}}}
    server2 = Server(reply(text_item('{"extra": {}, "more": {}}')))
    with caplog.at_level(logging.WARNING, logger="dotprompt"):
        asyncio.run(generate(model=model_for(server2), prompt="x", output_schema=other))
    assert caplog.text.count("not strictly") == 2  # another model object: said again
