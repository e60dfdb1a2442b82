"""MCP prompt arguments are strings: which are taken as they are, which JSON-decoded, and how media and
roles become MCP content."""

from __future__ import annotations

import base64

import pytest

from dotprompt.mcpserve.arguments import ArgumentError, admits_string, decode_arguments, prompt_arguments
from dotprompt.mcpserve.messages import ROLE_META, prompt_messages
from dotprompt.mcpserve.tools import output_schema, tool_input, tool_input_schema
from dotprompt.types import Media, Message, Part

META = {"input": {"schema": {"type": "object", "properties": {
    "name": {"type": "string"}, "count": {"type": "integer", "description": "how many"},
    "mode": {"enum": ["a", "b"]}, "level": {"enum": [1, 2]}, "either": {"type": ["string", "integer"]},
    "free": {}, "flags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "count"]}, "default": {"count": 1}}}


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "string"}, True), ({"type": "integer"}, False), ({"type": ["string", "null"]}, True),
    ({"enum": ["a"]}, True), ({"enum": [1, 2]}, False), ({"const": 3}, False), ({}, True),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, True), ({"anyOf": [{"type": "number"}]}, False),
])
def test_which_schemas_take_a_string_as_it_is(schema, expected):
    assert admits_string(schema) is expected


def test_arguments_follow_the_schema_and_its_defaults():
    arguments = {name: (description, required) for name, description, required in prompt_arguments(META)}
    assert arguments["name"] == (None, True)
    assert arguments["count"] == ("how many (JSON integer)", False)  # the default gives it
    assert arguments["flags"][0] == "(JSON array)" and arguments["mode"] == (None, False)


def test_strings_stay_strings_and_the_rest_is_json_decoded():
    data = decode_arguments(META, {"name": "007", "count": "3", "mode": "a", "level": "2", "either": "5",
                                   "free": "[1]", "flags": '["x", "y"]'}, "p")
    assert data == {"name": "007", "count": 3, "mode": "a", "level": 2, "either": "5", "free": "[1]",
                    "flags": ["x", "y"]}
    with pytest.raises(ArgumentError, match=r"prompt 'p': argument 'flags' is 'x, y', not JSON; its schema wants array"):
        decode_arguments(META, {"flags": "x, y"}, "p")


def test_an_input_that_is_no_object_is_one_argument_and_one_field():
    meta = {"input": {"schema": {"type": "integer"}}}
    assert prompt_arguments(meta) == [("input", "(JSON integer)", True)]
    assert decode_arguments(meta, {"input": "4"}, "p") == 4
    assert tool_input_schema(meta) == {"type": "object", "properties": {"input": {"type": "integer"}},
                                       "required": ["input"]}
    assert tool_input(meta, {"input": 4}) == 4
    assert tool_input_schema({}) == {"type": "object"} and prompt_arguments({}) == []


def test_an_output_that_is_no_object_is_wrapped_with_its_definitions_at_the_top():
    schema = {"type": "array", "items": {"$ref": "#/$defs/Item"}, "$defs": {"Item": {"type": "string"}}}
    assert output_schema({"output": {"schema": schema}}) == {
        "type": "object", "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["result"], "$defs": {"Item": {"type": "string"}}}
    assert output_schema({"output": {"format": "text"}}) is None


def test_media_and_roles_become_mcp_content():
    pdf = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4").decode()
    messages = [Message(role="system", content=[Part(text="be brief")]),
                Message(role="user", content=[Part(text="see"), Part(media=Media(url="https://example.com/a.png",
                                                                                    content_type="image/png")),
                                              Part(media=Media(url=pdf)), Part(media=Media(url="data:audio/wav,RIFF"))]),
                Message(role="model", content=[Part(text="ok")])]
    out = prompt_messages(messages, "p")
    assert [(m.role, m.content.type) for m in out] == [
        ("user", "text"), ("user", "text"), ("user", "resource_link"), ("user", "resource"), ("user", "audio"),
        ("assistant", "text")]
    assert out[0].content.meta == {ROLE_META: "system"} and out[1].content.meta is None
    assert out[2].content.uri == "https://example.com/a.png" and out[2].content.mime_type == "image/png"
    assert out[3].content.resource.mime_type == "application/pdf"
    assert base64.b64decode(out[3].content.resource.blob) == b"%PDF-1.4"
    assert base64.b64decode(out[4].content.data) == b"RIFF"


NULLABLE = {"type": "object", "properties": {
    "note": {"type": ["string", "null"], "description": "free text", "maxLength": 5},
    "default": {"type": ["integer", "null"], "default": {"type": ["kept", "as data"]}},  # a field named `default`
    "tags": {"type": ["array", "null"], "items": {"type": ["string", "null"]}},
    "kind": {"type": ["string", "null"], "enum": ["a", None]},
    "one": {"type": ["number"]}, "mixed": {"type": ["string", "null"], "anyOf": [{"minLength": 1}, {"type": "null"}]}},
    "$defs": {"pair": {"type": ["object", "null"], "additionalProperties": {"type": ["boolean", "null"]}}},
    "required": ["note"]}


def _type_lists(schema, where="") -> list[str]:
    """Where a schema of `schema` still has a type list (walking schemas only, as single_types does)."""
    found = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(where or "/")
        for key, value in schema.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    found += _type_lists(sub, f"{where}/{key}/{name}")
            elif key in ("items", "additionalProperties", "anyOf"):
                for i, sub in enumerate(value if isinstance(value, list) else [value]):
                    found += _type_lists(sub, f"{where}/{key}/{i}")
    return found


def test_listed_schemas_write_type_lists_as_single_type_branches_that_accept_the_same_values():
    import jsonschema

    from dotprompt.mcpserve.tools import single_types

    listed = single_types(NULLABLE)
    assert _type_lists(listed) == ["/properties/mixed"]  # a schema with its own anyOf keeps its list
    assert listed["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "free text",
                                            "maxLength": 5}
    assert listed["properties"]["default"]["default"] == {"type": ["kept", "as data"]}  # data, not a schema
    assert listed["properties"]["one"] == {"type": "number"}
    assert NULLABLE["properties"]["note"]["type"] == ["string", "null"]  # the prompt's own schema is not changed
    samples = [{"note": None}, {"note": "abc"}, {"note": "toolong"}, {"note": 3}, {"note": "a", "default": None},
               {"note": "a", "default": 1.5}, {"note": "a", "tags": None}, {"note": "a", "tags": ["x", None, 2]},
               {"note": "a", "kind": None}, {"note": "a", "kind": "b"}, {"note": "a", "one": "1"}, {}, {"note": "a", "mixed": ""}]
    for sample in samples:
        assert jsonschema.Draft202012Validator(listed).is_valid(sample) == \
            jsonschema.Draft202012Validator(NULLABLE).is_valid(sample), sample


def test_a_schema_as_deep_as_a_frontmatter_may_be_is_listed():
    from dotprompt.mcpserve.tools import single_types

    schema: dict = {"type": ["string", "null"]}
    for _ in range(480):  # the frontmatter's own depth bound (document/parse.py) stops a deeper one at load
        schema = {"type": ["object", "null"], "properties": {"x": schema}}
    listed = single_types(schema)
    for _ in range(480):
        assert listed["anyOf"] == [{"type": "object"}, {"type": "null"}]
        listed = listed["properties"]["x"]
    assert listed == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_a_nullable_object_input_is_listed_as_the_object_mcp_asks_for():
    from dotprompt.mcpserve.tools import single_types

    meta = {"input": {"schema": {"type": ["object", "null"], "properties": {"a": {"type": ["string", "null"]}},
                                 "required": ["a"]}}}
    listed = single_types(tool_input_schema(meta))
    assert listed == {"type": "object", "required": ["a"],
                      "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    assert tool_input(meta, {"a": "x"}) == {"a": "x"}
