"""A streamed run's final output: the stream's own value when it read exactly the final text and that
was strict JSON (the reply is not parsed a second time), the final text parsed otherwise."""

from __future__ import annotations

import json

from dotprompt import generate_stream
from dotprompt.doubles import ScriptedModel
from dotprompt.types import Message, Part
from tests.generation.generation_support import run

STRICT = '{"items": [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "note": "x\\ny"}], "total": 2.5}'


def streamed(reply: str, use=(), output_format: str = "json"):
    async def collect():
        items = []
        async for item in generate_stream(model=ScriptedModel([reply], chunk_size=5), prompt="x",
                                          output_format=output_format, use=list(use)):
            items.append(item)
        return items

    *chunks, final = run(collect())
    return chunks, final


def test_a_strict_reply_is_the_streams_own_value_with_no_repairs():
    chunks, final = streamed(STRICT)
    assert final.output == json.loads(STRICT) and final.output_repairs == []
    assert final.output is chunks[-1].output  # not parsed again: the last chunk's value is the final one


def test_a_reply_needing_repairs_is_parsed_from_the_final_text():
    chunks, final = streamed('{items: [1, 2,], "total": 2}')
    assert final.output == {"items": [1, 2], "total": 2}
    assert [r.kind for r in final.output_repairs] == ["unquoted_key", "trailing_comma"]
    assert final.output is not chunks[-1].output


def test_a_reply_changed_after_it_streamed_is_parsed_from_the_final_text():
    class Rewrite:
        async def model(self, request, next_):
            reply = await next_(request)
            return reply.model_copy(update={"message": Message(role="model", content=[Part(text='{"total": 3}')])})

    chunks, final = streamed('{"total": 2}', use=[Rewrite()])
    assert chunks[-1].output == {"total": 2}
    assert final.output == {"total": 3} and final.output_repairs == []


def test_a_reply_with_prose_around_it_reports_where_it_was_found():
    _, final = streamed('Here it is: {"total": 2} done')
    assert final.output == {"total": 2}
    assert [r.kind for r in final.output_repairs] == ["extracted_from_prose"]


ARRAY = '[{"id": 1, "tags": ["a", "b"]}, {"id": 2, "note": "x\\ny"}, 3.5, "s", [null, true]]'
JSONL = '{"id": 1, "tags": ["a", "b"]}\n  {"id": 2, "name": "plain"}\n\n{"id": 3, "note": "x\\ny"}  \r\n{"id": 4}'


def items_of(chunks):
    return [item for chunk in chunks for item in chunk.output]


def test_a_strict_array_reply_is_made_of_the_items_the_stream_handed_out():
    chunks, final = streamed(ARRAY, output_format="array")
    assert final.output == json.loads(ARRAY) and final.output_repairs == []
    handed = items_of(chunks)
    assert [id(item) for item in final.output[:4]] == [id(item) for item in handed[:4]]  # not parsed again


def test_a_strict_jsonl_reply_is_made_of_the_objects_the_stream_handed_out():
    chunks, final = streamed(JSONL, output_format="jsonl")
    assert final.output == [json.loads(line) for line in JSONL.split("\n") if line.strip()]
    assert final.output_repairs == []
    assert [id(item) for item in final.output] == [id(item) for item in items_of(chunks)]  # not parsed again


def test_array_and_jsonl_replies_needing_repairs_are_parsed_from_the_final_text():
    _, final = streamed('```json\n[1, 2,]\n```', output_format="array")
    assert final.output == [1, 2] and {r.kind for r in final.output_repairs} == {"extracted_from_fence", "trailing_comma"}
    _, final = streamed('{"a": 1}\nnot a line\n{b: 2}\n{"c": "x', output_format="jsonl")
    assert final.output == [{"a": 1}, {"b": 2}, {"c": "x"}]
    assert [r.kind for r in final.output_repairs] == ["skipped_line", "unquoted_key", "completed_truncated"]
