"""Hostile model output: fences inside JSON strings (class 2), parser DoS and crashes (class 3) and
streaming memory (class 11) of the output-parsing hardening issue.

Every hostile input runs in a child process with a time and memory limit (`tests/isolation.py`),
so a hang or a blow-up fails its test instead of stalling the run. The limits are generous on
purpose (a noisy shared machine); the precise timings live in `bench/bench_hostile_parse.py`.
"""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotprompt import OutputValidationError, generate
from dotprompt.doubles import ScriptedModel
from dotprompt.formats import IncrementalJsonParser, OutputParseError, extract_json, get_format
from dotprompt.formats.reading.limits import MAX_NESTING_DEPTH
from tests.conftest import ROOT
from tests.formats.jsondocs import PROSE, ROOTS, SEEDS, Writer
from tests.isolation import assert_finishes

MB = 1 << 20


# -- class 2: a fence inside a JSON string is not the real fence -----------------------------------

FENCE_IN_STRING = 'Sure:\n{\n "fence": "```",\n "items": [1]\n}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FENCE_IN_STRING, {"fence": "```", "items": [1]}),
        ('{"fence": "```", "items": [1]}\nDone.', {"fence": "```", "items": [1]}),
        ('Here is the code:\n{"code": "```python\\nprint(1)\\n```", "lang": "py"}',
         {"code": "```python\nprint(1)\n```", "lang": "py"}),
        ('Sure:\n```json\n{"fence": "```", "items": [1]}\n```\nDone.', {"fence": "```", "items": [1]}),
        ('Sure: ```json\n{"a": 1}\n```', {"a": 1}),  # an inline opening fence before any bracket still counts
    ],
)
def test_a_fence_inside_a_json_string_is_not_the_fence(text, expected):
    assert extract_json(text).value == expected
    assert get_format("json").handler(None).parse_text(text).value == expected


def test_generate_reads_the_value_around_a_fence_in_a_string():
    response = asyncio.run(generate(model=ScriptedModel([FENCE_IN_STRING]), prompt="x", output_format="json"))
    assert response.output == {"fence": "```", "items": [1]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "hello   ', {"a": "hello   "}),
        ('["x \n', ["x \n"]),
        ("{'a': 'tab\t", {"a": "tab\t"}),
        ('Result:\n```json\n{"s": "end with space ', {"s": "end with space "}),
        ('{"a": "esc\\', {"a": "esc"}),  # a cut escape is dropped, the text before it kept
    ],
)
def test_a_truncated_string_keeps_its_trailing_whitespace(text, expected):
    assert extract_json(text).value == expected


_FENCE_VALUES = st.sampled_from(["```", "```json", "``` ", "```python\nx = 1\n```", "a ``` b", "\n```\n"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=ROOTS, seed=SEEDS, prose=PROSE, fence_value=_FENCE_VALUES, first=st.booleans())
def test_fuzz_prose_wrapped_documents_with_a_fence_in_a_string(root, seed, prose, fence_value, first):
    document = {"fence": fence_value, "root": root} if first else {"root": root, "fence": fence_value}
    body = Writer(random.Random(seed)).dump(document)
    text = prose + "\n" + body + "\nHope this helps."
    assert extract_json(text).value == json.loads(body)


# -- class 3: nesting beyond the documented limit is a typed error carrying the text -----------------

def test_the_nesting_limit_is_documented():
    readme = (ROOT / "README.md").read_text()
    assert "MAX_NESTING_DEPTH" in readme and str(MAX_NESTING_DEPTH) in readme


def test_nesting_at_the_limit_still_parses():
    text = "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH
    value = extract_json(text).value
    depth = 0
    while value:
        value, depth = value[0], depth + 1
    assert depth == MAX_NESTING_DEPTH - 1
    parser = IncrementalJsonParser()
    parser.feed(text)
    assert parser.done


@pytest.mark.parametrize("text", ["[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1),
                                  "[" * (MAX_NESTING_DEPTH + 1), 'ok {"a": ' * (MAX_NESTING_DEPTH + 1)])
def test_nesting_past_the_limit_is_an_output_parse_error(text):
    with pytest.raises(OutputParseError) as caught:
        extract_json(text)
    assert caught.value.text == text and "nest" in str(caught.value)


def test_generate_reports_deep_nesting_as_output_validation_error():
    text = "[" * 10_000 + "]" * 10_000
    with pytest.raises(OutputValidationError) as caught:
        asyncio.run(generate(model=ScriptedModel([text]), prompt="x", output_format="json"))
    assert caught.value.text == text


def test_the_stream_parser_stops_at_the_limit():
    parser = IncrementalJsonParser()
    parser.feed("[" * (MAX_NESTING_DEPTH + 50))
    assert parser.too_deep and not parser.done


# Each hostile input is built in the child (a 1 MB literal would bloat the command line).
HOSTILE = {
    "balanced_brackets": "'[' * 10_000 + ']' * 10_000",
    "open_brackets": "'[' * MB",
    "open_braces": "'{' * MB",
    "open_members": "'{\"a\": ' * (MB // 6)",
    "backticks": "'`' * MB",
    "backtick_lines": "'```\\n' * (MB // 4)",
    "unquoted_keys": "'{' + ', '.join(f'k{i}: {i}' for i in range(MB // 12)) + '}'",
    "single_quotes": "'[' + ', '.join(\"'s%d'\" % i for i in range(MB // 10)) + ']'",
    "comments": "'[' + ''.join(f'{i}, // c\\n/* b */ ' for i in range(MB // 20)) + '0]'",
    "trailing_commas": "'[' + ''.join('[1,], ' for _ in range(MB // 6)) + '0,]'",
    "python_literals": "'[' + 'True, None, ' * (MB // 12) + 'False]'",
    "control_chars": "'[' + ', '.join('\"a\\tb\"' for _ in range(MB // 8)) + ']'",
    "keys_100k": "json.dumps({f'key{i}': i for i in range(100_000)})",
    "int_array": "json.dumps(list(range(MB // 7)))",
    "long_string": "json.dumps({'s': 'x' * MB})",
    "truncated_long_string": "'{\"s\": \"' + 'x ' * (MB // 2)",
    "prose_brackets": "'see [1] and {2} ' * (MB // 16)",
}

_CHILD = """
import asyncio, json, random
from dotprompt import OutputValidationError, generate, generate_stream
from dotprompt.formats import OutputParseError, get_format
from dotprompt.formats.finite import finite_output
from dotprompt.doubles import ScriptedModel
MB = 1 << 20
text = {expr}
results = {{}}

def pieces(rng):
    pos = 0
    while pos < len(text):
        size = rng.randint(1, 16)
        yield text[pos:pos + size]
        pos += size

def outcome(run):
    try:
        run()
        return "value"
    except OutputParseError as exc:
        assert exc.text == text, "the error lost the text"
        return "OutputParseError"
    except OutputValidationError as exc:
        assert exc.text == text, "the error lost the text"
        return "OutputValidationError"

def whole():
    asyncio.run(generate(model=ScriptedModel([text]), prompt="x", output_format="json"))

def streamed():
    async def go():
        async for item in generate_stream(model=ScriptedModel([text], chunk_size=64), prompt="x", output_format="json"):
            pass  # the caller keeps no chunks
    asyncio.run(go())

def format_stream(name):
    def run():
        stream = get_format(name).handler(None).new_stream()
        feed = getattr(stream, "feed_lazy", stream.feed)  # what a streamed run calls
        for piece in pieces(random.Random(1)):
            feed(piece)
        streams[name] = stream
    return run

def same_as_the_final_parse(name):
    # The stream's own final parse (`whole_output`), when it has one, is what parsing the text gives.
    whole = streams[name].whole_output() if hasattr(streams[name], "whole_output") else None
    if whole is None:
        return "none"
    parsed = finite_output(get_format(name).handler(None).parse_text(text), text)
    return "same" if (repr(parsed.value), parsed.repairs) == (repr(whole.value), whole.repairs) else "differs"

streams = {{}}
results["generate"] = outcome(whole)
results["generate_stream"] = outcome(streamed)
for name in ("json", "array", "jsonl"):
    results[name + "_parse"] = outcome(lambda: get_format(name).handler(None).parse_text(text))
    results[name + "_stream"] = outcome(format_stream(name))
    results[name + "_whole"] = same_as_the_final_parse(name)
print(json.dumps(results))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_finishes_whole_and_streamed_with_a_value_or_a_typed_error(name):
    outcome = assert_finishes(_CHILD.format(expr=HOSTILE[name]), timeout=60, memory_mb=1024)
    results = outcome.json()
    assert results["generate"] in ("value", "OutputValidationError")
    assert results["generate_stream"] == results["generate"]
    assert results["json_stream"] == results["array_stream"] == results["jsonl_stream"] == "value"  # streams never raise
    assert "differs" not in (results["json_whole"], results["array_whole"], results["jsonl_whole"]), results
    strict = {"keys_100k": ("json", "jsonl"), "int_array": ("json", "array"), "long_string": ("json", "jsonl")}
    assert all(results[f"{fmt}_whole"] == "same" for fmt in strict.get(name, ())), results


@pytest.mark.slow
@pytest.mark.parametrize("name", ["balanced_brackets", "open_brackets", "open_braces", "open_members"])
def test_deep_hostile_input_is_output_validation_error_whole_and_streamed(name):
    outcome = assert_finishes(_CHILD.format(expr=HOSTILE[name]), timeout=60, memory_mb=1024)
    results = outcome.json()
    assert results["generate"] == results["generate_stream"] == "OutputValidationError"
    assert results["json_parse"] == "OutputParseError"


# -- class 11: streaming memory -----------------------------------------------------------------------

_MEMORY_CHILD = """
import json, random, tracemalloc
from dotprompt.formats import get_format
reply = json.dumps({"items": [{"id": i, "name": "item %d" % i, "tags": ["a", "b"], "score": i / 7} for i in range(ITEMS)]})
stream = get_format("json").handler(None).new_stream()
rng = random.Random(3)
kept = []  # what the run keeps for every chunk (its ChunkHistory holds each chunk and its output)
tracemalloc.start()
pos = 0
while pos < len(reply):
    size = rng.randint(1, 16)
    kept.append(stream.feed_lazy(reply[pos:pos + size]))
    pos += size
peak = tracemalloc.get_traced_memory()[1]
assert kept[-1] == json.loads(reply) and kept[-2].value == json.loads(reply[:-1] + "}")
print(json.dumps({"size": len(reply), "peak": peak}))
"""


@pytest.mark.slow
def test_the_outputs_of_every_chunk_take_memory_proportional_to_the_reply():
    result = assert_finishes(_MEMORY_CHILD.replace("ITEMS", "2500"), timeout=60, memory_mb=1024).json()
    assert result["peak"] <= 20 * result["size"], result


@pytest.mark.slow
def test_generate_stream_parsing_adds_memory_proportional_to_the_reply():
    code = """
    import asyncio, json, tracemalloc
    from dotprompt import generate_stream
    from dotprompt.doubles import ScriptedModel
    reply = json.dumps({"items": [{"id": i, "name": "item %d" % i, "tags": ["a", "b"]} for i in range(4000)]})
    async def go(output_format):
        last = None
        async for item in generate_stream(model=ScriptedModel([reply], chunk_size=8), prompt="x", output_format=output_format):
            last = item  # the caller keeps no chunks
        return last
    peaks = {}
    for output_format in (None, "json", "text"):
        tracemalloc.start()
        response = asyncio.run(go(output_format))
        peaks[str(output_format)] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert response.output == reply
    print(json.dumps({"size": len(reply), **peaks}))
    """
    result = assert_finishes(code, timeout=90, memory_mb=1024).json()
    # The run itself keeps every chunk for `previous_chunks` (about 1 KB of objects per chunk, with
    # no output format at all: ~120 times the reply here). Parsing adds the streamed value and the
    # final parse (about 7 times the reply each) and a small record per chunk; a copy of the open
    # containers per chunk (the old way) adds hundreds of times the reply.
    assert result["json"] - result["None"] <= 30 * result["size"], result
    assert result["text"] - result["None"] <= 20 * result["size"], result


def test_chunk_outputs_never_change_after_they_are_handed_out():
    from dotprompt import generate_stream

    reply = '{"a": [1, {"b": "xyz"}, 2], "a": "dup", "c": {"d": [3'

    async def go():
        seen = []
        async for item in generate_stream(model=ScriptedModel([reply], chunk_size=3), prompt="x", output_format="json"):
            seen.append(item)
        return seen

    items = asyncio.run(go())
    chunks = items[:-1]
    early = [json.dumps(c.output) for c in chunks[::2]]  # read some now, the rest only at the end
    assert [json.dumps(c.output) for c in chunks[::2]] == early
    expected = [IncrementalJsonParser() for _ in chunks]
    for count, (chunk, parser) in enumerate(zip(chunks, expected, strict=True)):
        parser.feed(reply[: 3 * (count + 1)])
        assert chunk.output == parser.value, count
    assert chunks[-1].output is chunks[-1].output  # computed once, then the same value


def test_format_stream_snapshots_are_independent_values():
    stream = get_format("json").handler(None).new_stream()
    first = stream.feed('{"a": [1, 2')
    second = stream.feed(', 3], "b": "te')
    third = stream.feed('xt", "a": 0}')
    assert first == {"a": [1]}
    assert second == {"a": [1, 2, 3], "b": "te"}
    assert third == {"a": 0, "b": "text"}


@pytest.mark.slow
def test_a_whole_streamed_run_takes_memory_proportional_to_the_reply_when_no_chunk_is_kept():
    code = """
    import asyncio, json, tracemalloc
    from dotprompt import generate_stream
    from dotprompt.doubles import ScriptedModel
    reply = json.dumps({"items": [{"id": i, "name": "item %d" % i, "tags": ["a", "b"], "score": i / 7} for i in range(2500)]})
    async def go():
        async for item in generate_stream(model=ScriptedModel([reply], chunk_size=8), prompt="x", output_format="json"):
            last = item  # the caller keeps no chunks
        return last
    asyncio.run(go())  # the process warms up (imports, caches): not memory the run holds
    tracemalloc.start()
    response = asyncio.run(go())
    peak = tracemalloc.get_traced_memory()[1]
    assert response.output == json.loads(reply)
    print(json.dumps({"size": len(reply), "peak": peak}))
    """
    result = assert_finishes(code, timeout=120, memory_mb=1024).json()
    # About 15 times the reply once the process is warm (the goal is 20; bench/bench_hostile_parse.py);
    # keeping every chunk object for `previous_chunks`, as the run once did, took about 120 times.
    assert result["peak"] <= 20 * result["size"], result


def test_previous_chunks_are_rebuilt_equal_to_the_chunks_handed_out():
    from dotprompt import generate_stream
    from dotprompt.types import Part, ToolRequest

    replies = [[Part(tool_request=ToolRequest(name="t", input={"a": 1}))], '{"a": [1, {"b": "xyz"}], "c": "dup"}']

    async def go():
        seen = []
        async for item in generate_stream(model=ScriptedModel(replies, chunk_size=5), prompt="x", output_format="json",
                                          tools=[_echo_tool()]):
            seen.append(item)
        return seen

    *chunks, final = asyncio.run(go())
    rebuilt = chunks[-1].previous_chunks
    assert len(rebuilt) == len(chunks) - 1
    for old, new in zip(chunks, rebuilt, strict=False):
        assert (new.index, new.role, new.content, new.text) == (old.index, old.role, old.content, old.text)
        assert new.accumulated_text == old.accumulated_text
        assert json.dumps(new.output, default=str) == json.dumps(old.output, default=str)
    assert final.output == {"a": [1, {"b": "xyz"}], "c": "dup"}


def _echo_tool():
    from dotprompt import tool

    @tool
    def t(a: int) -> int:
        """Echo."""
        return a

    return t


_MANY_REPAIRS = """
import json
from dotprompt.formats import extract_json
from dotprompt.formats.reading.limits import MAX_REPORTED_REPAIRS
count = 250_000
parsed = extract_json("[" + "[1,], " * count + "0]")
assert len(parsed.value) == count + 1
listed, summary = parsed.repairs[:-1], parsed.repairs[-1]
assert len(listed) == MAX_REPORTED_REPAIRS and all(r.kind == "trailing_comma" and r.count == 1 for r in listed)
assert listed[0].detail == "removed a trailing comma before ']' at line 1, column 5 (offset 4)"
assert summary.kind == "trailing_comma" and summary.count == count - MAX_REPORTED_REPAIRS
assert f"{count - MAX_REPORTED_REPAIRS:,} more trailing commas" in summary.detail and "line 1" in summary.detail
print(json.dumps({"detail": summary.detail}))
"""


@pytest.mark.slow
def test_past_the_reporting_limit_repairs_are_counted_in_one_summary_per_kind():
    detail = assert_finishes(_MANY_REPAIRS, timeout=60, memory_mb=1024).json()["detail"]
    assert detail.startswith("removed 249,900 more trailing commas, the first of them at line 1")


def test_below_the_reporting_limit_every_repair_is_listed():
    text = "{" + ", ".join(f"k{i}: True" for i in range(40)) + "}"
    parsed = extract_json(text)
    assert [r.kind for r in parsed.repairs] == ["unquoted_key", "python_literal"] * 40
    assert all(r.count == 1 for r in parsed.repairs)
    assert parsed.repairs[1].detail == "replaced Python True with true at line 1, column 6 (offset 5)"
