"""Streamed partial outputs follow the final output's rule: a NaN, an infinity or an overflowing number
(`1e999`) is null in every chunk's output, never a float that is not a JSON value, whatever the
format (json, array, jsonl) and however the reply is split."""

from __future__ import annotations

import asyncio
import math

import pytest

from dotprompt import generate_stream
from dotprompt._util.finite import non_finite_path
from dotprompt.doubles import ScriptedModel
from dotprompt.formats import IncrementalJsonParser

REPLIES = {
    "json": ('{"total": NaN, "items": [1, Infinity, -Infinity], "big": 1e999, "neg": -1e999, "ok": 2.5}',
             {"total": None, "items": [1, None, None], "big": None, "neg": None, "ok": 2.5}),
    "array": ('[{"a": NaN}, {"a": 1e999}, {"a": 3}]', [{"a": None}, {"a": None}, {"a": 3}]),
    "jsonl": ('{"a": Infinity}\n{"a": -1e400}\n{"a": 3}\n', [{"a": None}, {"a": None}, {"a": 3}]),
}


def streamed(format_name: str, text: str, chunk_size: int) -> tuple[list, object]:
    async def go():
        stream = generate_stream(model=ScriptedModel([text], chunk_size=chunk_size), prompt="x", output_format=format_name)
        outputs = [chunk.output async for chunk in stream.stream]
        return outputs, (await stream.response).output

    return asyncio.run(go())


@pytest.mark.parametrize("format_name", list(REPLIES))
@pytest.mark.parametrize("chunk_size", [1, 3, 1000])
def test_no_chunk_shows_a_non_finite_number(format_name, chunk_size):
    text, final = REPLIES[format_name]
    outputs, output = streamed(format_name, text, chunk_size)
    assert output == final
    for number, value in enumerate(outputs):
        assert non_finite_path(value) is None, f"chunk {number}: {value!r}"
    if format_name == "json":  # each chunk: the value so far
        assert outputs[-1] == final
    else:  # each chunk: the items it completed
        assert [item for items in outputs if items for item in items] == final


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 400 + ".5"])
def test_the_parser_reads_a_non_finite_number_as_null(token):
    parser = IncrementalJsonParser()
    assert parser.feed(f'{{"a": {token}, "b": 1.5}}') == {"a": None, "b": 1.5}
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in parser.value.values())
