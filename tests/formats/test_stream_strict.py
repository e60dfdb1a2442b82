"""A streamed value that was strict JSON is the final parse: the run does not parse the text again.

`IncrementalJsonParser.strict` says the text read is one strict JSON container; then its value is
what the final parse (`extract_json`, then `finite_output`) gives, with no repairs. Checked here on
generated documents and on near-JSON split anywhere; and a parser whose value closed is freed as
soon as nothing holds it, without waiting for the cycle collector.
"""

from __future__ import annotations

import gc
import json
import os
import random
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotprompt.formats import IncrementalJsonParser, OutputParseError, extract_json, get_format
from dotprompt.formats.finite import finite_output
from tests.formats.jsondocs import ROOTS, SEEDS, VALUES, Writer, split

FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

NEAR_JSON = st.lists(
    st.sampled_from([
        "{", "}", "[", "]", ":", ",", '"', "'", "\\", "\\u", "\\n", "\\q", "\\'", "d83d", "DE00", "true", "null", "nul",
        "NaN", "Infinity", "-", "1", "01", "0.5", "1e999", "e+", "/", "//", "/*", "*/", "`", " ", "\n", "\t", "\x01",
        "\u00a0", "\ufeff", "é", "x", "key", '"k":', '"s"', ",]", ",}",
    ]),
    max_size=60,
).map("".join)


def read(chunks) -> IncrementalJsonParser:
    parser = IncrementalJsonParser()
    for chunk in chunks:
        parser.feed_lazy(chunk)
    return parser


def final_parse(text: str):
    try:
        return finite_output(extract_json(text), text)
    except OutputParseError:
        return None


def assert_strict_means_the_final_parse(text: str, seed: int) -> bool:
    parser = read(split(text, random.Random(seed)))
    if not (parser.strict and parser.done):
        return False
    parsed = final_parse(text)
    assert parsed is not None and parsed.repairs == [], text
    assert repr(parsed.value) == repr(parser.value), text  # repr: key order, int against float
    return True


@FUZZ
@given(root=ROOTS, seed=SEEDS, before=st.sampled_from(["", " ", "\n\t"]), after=st.sampled_from(["", " ", "\r\n"]))
def test_a_generated_document_reads_strict_and_is_the_final_parse(root, seed, before, after):
    text = before + Writer(random.Random(seed)).dump(root) + after
    assert assert_strict_means_the_final_parse(text, seed)  # strict JSON is recognised as strict, not only safe


@FUZZ
@given(text=NEAR_JSON | st.text(max_size=120), seed=SEEDS)
def test_near_json_read_strict_is_the_final_parse(text, seed):
    assert_strict_means_the_final_parse(text, seed)


@pytest.mark.parametrize("text", [
    '{"a": 1,}', "[1,]", "{a: 1}", "{'a': 1}", '{"a": "\x01"}', '{"a": NaN}', '[1e999]', '["\\q"]', "[\"\\'\"]",
    '["\\uZZ"]', "[01]", "[1}", '{"a"}', '{"a": }', "x{}", "{} x", "```json\n{}\n```", "\ufeff{}", "[1 2]",
    '{"a": 1 // c\n}', "[" * 600 + "]" * 600, "[" + "1" * 5000 + "]",
])
def test_what_the_final_parse_repairs_or_rejects_is_not_strict(text):
    for chunks in ([text], list(text)):
        assert not read(chunks).strict, chunks


def test_a_parser_whose_value_closed_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        parser = IncrementalJsonParser()
        outputs = [parser.feed_lazy(chunk) for chunk in ['{"a": [1', ", 2], ", '"b": {"c": "x', 'y"}}']]
        values = [getattr(output, "value", output) for output in outputs]
        freed = weakref.ref(parser)
        del parser, outputs
        assert freed() is None
    finally:
        gc.enable()
    assert values == [{"a": []}, {"a": [1, 2]}, {"a": [1, 2], "b": {"c": "x"}}, {"a": [1, 2], "b": {"c": "xy"}}]


# -- array and jsonl: their streams' final parse (`whole_output`) is the final parse of the same text ----

def streamed_whole(name: str, text: str, seed: int):
    stream = get_format(name).handler(None).new_stream()
    for chunk in split(text, random.Random(seed)):
        stream.feed(chunk)
    return stream.whole_output()


def format_final_parse(name: str, text: str):
    try:
        return finite_output(get_format(name).handler(None).parse_text(text), text)
    except OutputParseError:
        return None


def assert_whole_is_the_final_parse(name: str, text: str, seed: int) -> bool:
    whole = streamed_whole(name, text, seed)
    if whole is None:
        return False
    parsed = format_final_parse(name, text)
    assert parsed is not None, text
    assert (repr(whole.value), whole.repairs) == (repr(parsed.value), parsed.repairs), text
    return True


def jsonl_line(value: dict, rng: random.Random) -> str:
    line = json.dumps(value, ensure_ascii=rng.random() < 0.5, separators=rng.choice([(",", ":"), (", ", ": ")]))
    return rng.choice(["", " ", "\t"]) + line + rng.choice(["", " ", "\r", " \t"])


@FUZZ
@given(root=st.lists(VALUES, max_size=6), seed=SEEDS, before=st.sampled_from(["", " ", "\n\t"]),
       after=st.sampled_from(["", " ", "\r\n"]))
def test_a_generated_array_streams_to_its_final_parse(root, seed, before, after):
    text = before + Writer(random.Random(seed)).dump(root) + after
    assert assert_whole_is_the_final_parse("array", text, seed)


@FUZZ
@given(lines=st.lists(st.dictionaries(st.text(max_size=8), VALUES, max_size=5) | st.just(None), max_size=8), seed=SEEDS)
def test_generated_jsonl_streams_to_its_final_parse(lines, seed):
    rng = random.Random(seed)
    text = "\n".join(rng.choice(["", "  "]) if line is None else jsonl_line(line, rng) for line in lines)
    assert assert_whole_is_the_final_parse("jsonl", text, seed)


@FUZZ
@given(lines=st.lists(NEAR_JSON | st.text(max_size=40), max_size=6), seed=SEEDS)
def test_near_json_streamed_whole_is_the_final_parse(lines, seed):
    text = "\n".join(lines)
    assert_whole_is_the_final_parse("array", text, seed)
    assert_whole_is_the_final_parse("jsonl", text, seed)


@pytest.mark.parametrize(("name", "text"), [
    ("array", "[1,]"), ("array", "```json\n[1]\n```"), ("array", "[1] x"), ("array", '{"a": 1}'), ("array", "[1e999]"),
    ("array", "[1"), ("jsonl", "{a: 1}"), ("jsonl", '{"a": 1} x'), ("jsonl", '```\n{"a": 1}\n```'),
    ("jsonl", '{"a": 1\n{"b": 2}'), ("jsonl", '{"a": 1'), ("jsonl", "x\n{}"), ("jsonl", '{"a": NaN}'),
    ("jsonl", "\u00a0{}"), ("jsonl", '{"a": [1,]}'), ("jsonl", '{"a": [' + "1, " * 300 + "2], b: 1}"),
])
def test_what_the_final_parse_repairs_or_rejects_has_no_streamed_whole(name, text):
    for seed in range(4):
        assert streamed_whole(name, text, seed) is None, text
