"""The built-in formats: configuration, instructions, final parsing and streaming."""

from __future__ import annotations

import json
import random

import pytest

from dotprompt.errors import SchemaError
from dotprompt.formats import FormatHandler, OutputParseError, ParsedOutput, StreamParser, get_format
from tests.formats.jsondocs import split

PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}
PEOPLE = {"type": "array", "items": PERSON}


def handler(name, schema=None):
    return get_format(name).handler(schema)


def stream_all(parser, chunks):
    return [parser.feed(chunk) for chunk in chunks]


@pytest.mark.parametrize(
    ("name", "content_type", "constrained", "default_instructions"),
    [
        ("json", "application/json", True, True),
        ("jsonl", "application/jsonl", False, True),
        ("array", "application/json", True, True),
        ("enum", "text/enum", True, True),
        ("text", "text/plain", False, False),
    ],
)
def test_builtin_configuration_and_protocols(name, content_type, constrained, default_instructions):
    fmt = get_format(name)
    assert (fmt.name, fmt.content_type, fmt.constrained, fmt.default_instructions) == (
        name, content_type, constrained, default_instructions,
    )
    built = fmt.handler(None)
    assert isinstance(built, FormatHandler)
    assert isinstance(built.new_stream(), StreamParser)
    assert built.instructions is None  # no schema: nothing to tell the model


# -- json ------------------------------------------------------------------------------------------

# Genkit's instruction texts (js/ai/src/formats/*.ts): the schema as JSON.stringify writes it, compact.
PERSON_JS = '{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}'


def test_json_instructions_are_genkits_text():
    assert handler("json", PERSON).instructions == (
        f"Output should be in JSON format and conform to the following schema:\n\n```\n{PERSON_JS}\n```\n")


def test_instruction_schemas_are_written_as_javascript_writes_json():
    schema = {"type": "number", "minimum": 2.0, "maximum": 1e21, "multipleOf": 1e-7, "description": "prix en €", "default": 0.5}
    assert handler("json", schema).instructions.splitlines()[3] == (
        '{"type":"number","minimum":2,"maximum":1e+21,"multipleOf":1e-7,"description":"prix en €","default":0.5}')


def test_json_parse_text_reports_repairs():
    parsed = handler("json", PERSON).parse_text('```json\n{"name": "Ada",}\n```')
    assert parsed == ParsedOutput({"name": "Ada"}, parsed.repairs)
    assert [r.kind for r in parsed.repairs] == ["extracted_from_fence", "trailing_comma"]


def test_json_stream_gives_frozen_snapshots():
    stream = handler("json", PERSON).new_stream()
    outputs = stream_all(stream, ["Sure:\n```json\n", '{"name": "A', 'da", "ag', 'e": 36', "}\n```"])
    assert outputs == [None, {"name": "A"}, {"name": "Ada"}, {"name": "Ada"}, {"name": "Ada", "age": 36}]


def test_json_stream_snapshot_of_nested_lists_does_not_change_later():
    stream = handler("json").new_stream()
    first = stream.feed('{"items": [{"id": 1}, {"id": ')
    stream.feed('2}, {"id": 3}]}')
    assert first == {"items": [{"id": 1}, {}]}


# -- jsonl -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("schema", [PERSON, {"type": "array", "items": {"type": "string"}}, {"type": "array"}])
def test_jsonl_needs_an_array_of_objects(schema):
    with pytest.raises(SchemaError, match="array-of-objects"):
        handler("jsonl", schema)


def test_jsonl_instructions_are_genkits_text_and_resolve_refs():
    assert handler("jsonl", PEOPLE).instructions == (
        "Output should be JSONL format, a sequence of JSON objects (one per line) separated by a newline `\\n` "
        "character. Each line should be a JSON object conforming to the following schema:\n\n"
        f"```\n{PERSON_JS}\n```\n    ")
    # Ours: an item given as a $ref is shown resolved, with the definitions (Genkit shows the bare $ref).
    pydantic_style = {"type": "array", "items": {"$ref": "#/$defs/Person"}, "$defs": {"Person": PERSON}}
    text = handler("jsonl", pydantic_style).instructions
    assert '"$defs"' in text and '"name"' in text and '"$ref"' not in text


def test_jsonl_parse_text_clean_lines_have_no_repairs():
    parsed = handler("jsonl", PEOPLE).parse_text('{"name": "Ada"}\n\n  {"name": "Grace", "age": 85}\n')
    assert parsed.value == [{"name": "Ada"}, {"name": "Grace", "age": 85}]
    assert parsed.repairs == []


def test_jsonl_parse_text_skips_fences_and_prose_and_repairs_lines():
    text = "Here they are:\n```jsonl\n{'name': 'Ada'}\n{\"name\": broken here}\n{\"name\": \"Grace\",}\n```\n{\"name\": \"Li"
    parsed = handler("jsonl", PEOPLE).parse_text(text)
    assert parsed.value == [{"name": "Ada"}, {"name": "Grace"}, {"name": "Li"}]
    assert [r.kind for r in parsed.repairs] == [
        "skipped_line", "extracted_from_fence", "single_quotes", "single_quotes", "skipped_line", "trailing_comma",
        "completed_truncated",
    ]
    assert "line 1" in parsed.repairs[0].detail and "line 4" in parsed.repairs[4].detail


def test_jsonl_parse_text_blank_is_empty_and_prose_only_is_an_error():
    assert handler("jsonl").parse_text(" \n") == ParsedOutput([], [])
    with pytest.raises(OutputParseError, match="no line holds a JSON object") as caught:
        handler("jsonl").parse_text("Sorry, nothing found.")
    assert caught.value.format_name == "jsonl"


def test_jsonl_stream_returns_each_object_once_when_it_completes():
    stream = handler("jsonl", PEOPLE).new_stream()
    outputs = stream_all(stream, ['```jsonl\n{"name": "A', 'da"}\n{"na', 'me": "B"}', "\nok {not json}\n", '{"name": "C"}'])
    assert outputs == [[], [{"name": "Ada"}], [{"name": "B"}], [], [{"name": "C"}]]


def test_jsonl_stream_split_anywhere_matches_parse_text():
    text = "".join(json.dumps({"i": i, "s": "x\n\u00e9" * i}) + "\n" for i in range(20))
    expected = handler("jsonl").parse_text(text).value
    rng = random.Random(5)
    for _ in range(30):
        stream = handler("jsonl").new_stream()
        assert [item for out in stream_all(stream, split(text, rng)) for item in out] == expected


# -- array -----------------------------------------------------------------------------------------

def test_array_needs_an_array_schema():
    with pytest.raises(SchemaError, match="'array'"):
        handler("array", PERSON)
    assert handler("array", {"type": ["array", "null"], "items": PERSON}).instructions is not None


def test_array_instructions_are_genkits_text():
    assert handler("array", PEOPLE).instructions == (
        "Output should be a JSON array conforming to the following schema:\n    \n"
        f'```\n{{"type":"array","items":{PERSON_JS}}}\n```\n    ')


def test_array_parse_text():
    assert handler("array", PEOPLE).parse_text('[{"name": "Ada"}]') == ParsedOutput([{"name": "Ada"}], [])
    with pytest.raises(OutputParseError, match="expected a JSON array, found dict"):
        handler("array", PEOPLE).parse_text('{"name": "Ada"}')


def test_array_stream_returns_each_item_once_when_it_completes():
    stream = handler("array").new_stream()
    outputs = stream_all(stream, ['Sure:\n```json\n[{"a": 1}, {"a"', ": 2}, 3", "4, ", '"x', 'y"]\n```'])
    assert outputs == [[{"a": 1}], [{"a": 2}], [34], [], ["xy"]]


def test_array_stream_split_anywhere_matches_parse_text():
    text = "```json\n" + json.dumps([{"id": i, "tags": ["a"] * i} for i in range(15)] + ["s", 1.5, None, []]) + "\n```"
    expected = handler("array").parse_text(text).value
    rng = random.Random(9)
    for _ in range(30):
        stream = handler("array").new_stream()
        assert [item for out in stream_all(stream, split(text, rng)) for item in out] == expected


def test_array_stream_ignores_an_object_root():
    assert stream_all(handler("array").new_stream(), ['{"a": [1, ', "2]}"]) == [[], []]


# -- enum ------------------------------------------------------------------------------------------

MOOD = {"type": "string", "enum": ["positive", "negative", "neutral"]}


@pytest.mark.parametrize("schema", [{"type": "string"}, {"enum": []}, {"type": "string", "enum": []}])
def test_enum_schema_without_values_is_accepted_without_instructions(schema):
    # As Genkit: nothing to list, so nothing is injected; the reply is taken as the value.
    enum = handler("enum", schema)
    assert enum.instructions is None
    assert enum.parse_text(' "anything"\n').value == "anything"


@pytest.mark.parametrize("schema", [{"type": "number"}, {"type": "array"}, {"type": "string", "enum": "positive"}])
def test_enum_needs_a_string_schema_or_an_enum_list(schema):
    with pytest.raises(SchemaError, match="enum"):
        handler("enum", schema)


def test_enum_instructions_are_genkits_text():
    assert handler("enum", MOOD).instructions == (
        "Output should be ONLY one of the following enum values. Do not output any additional information or add "
        "quotes.\n\npositive\nnegative\nneutral")
    assert handler("enum", {"enum": [1, 2.0, True]}).instructions.endswith("\n\n1\n2\ntrue")  # as String(v) writes them


def test_enum_nullable_instructions_and_parse():
    nullable = handler("enum", {"enum": ["a", "b", None]})
    assert nullable.instructions.endswith("\n\na\nb\n\nIf none of them applies, output null.")  # ours: Genkit cannot list null
    assert nullable.parse_text("null") == ParsedOutput(None, [])
    typed = handler("enum", {"type": ["string", "null"], "enum": ["a"]})
    assert typed.parse_text("null").value is None


@pytest.mark.parametrize(
    ("text", "value", "repaired"),
    [
        ("positive", "positive", False),
        ("  negative\n", "negative", False),
        ('"neutral"', "neutral", True),
        ("'positive'", "positive", True),
        ("`negative`", "negative", True),
        ('```\n"positive"\n```', "positive", True),
        ("don't know", "don't know", False),  # no match: returned as is for schema validation to report
    ],
)
def test_enum_parse_text_strips_whitespace_and_quotes(text, value, repaired):
    parsed = handler("enum", MOOD).parse_text(text)
    assert parsed.value == value
    assert [r.kind for r in parsed.repairs] == (["stripped_quotes"] if repaired else [])


def test_enum_parse_text_returns_the_schema_member():
    assert handler("enum", {"enum": [1, 2, 3]}).parse_text("2").value == 2
    with pytest.raises(OutputParseError, match="no value"):
        handler("enum", MOOD).parse_text(' "" ')


def test_enum_stream_is_the_stripped_text_so_far():
    assert stream_all(handler("enum", MOOD).new_stream(), [' "pos', "itive", '"\n']) == ["pos", "positive", "positive"]


# -- text ------------------------------------------------------------------------------------------

def test_text_is_the_text():
    text_handler = handler("text", PERSON)
    assert text_handler.instructions is None
    assert text_handler.parse_text("  hi {x}  ") == ParsedOutput("  hi {x}  ", [])
    # As Genkit's text format: each chunk's output is that chunk's own text (accumulated_text has the rest).
    assert stream_all(text_handler.new_stream(), ["Hello", " world", ""]) == ["Hello", " world", ""]
