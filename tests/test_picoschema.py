"""Picoschema -> JSON Schema, named schemas, pydantic models, and errors with lines."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from dotprompt import PromptFileError, PromptLibrary, SchemaError
from dotprompt.schema.picoschema import PicoschemaError, to_json_schema


def convert(schema, named=None):
    named = named or {}
    return to_json_schema(schema, named.get, lambda: sorted(named))


@pytest.mark.parametrize(
    ("pico", "expected"),
    [
        ("string", {"type": "string"}),
        ("number, the count", {"type": "number", "description": "the count"}),
        ("integer,  a, b, c", {"type": "integer", "description": "a, b, c"}),
        ("any", {}),
        ("any, whatever", {"description": "whatever"}),
        ({"type": "string", "minLength": 2}, {"type": "string", "minLength": 2}),
        ({"properties": {"a": {"type": "string"}}}, {"type": "object", "properties": {"a": {"type": "string"}}}),
    ],
)
def test_scalars_and_json_schema_passthrough(pico, expected):
    assert convert(pico) == expected


def test_object_with_required_optional_array_enum_and_nested_fields():
    schema = convert({
        "name": "string, the name",
        "age?": "integer",
        "tags?(array, the tags)": "string",
        "kind(enum, what it is)": ["a", "b"],
        "mood?(enum)": ["x"],
        "address?(object, where)": {"city": "string", "zip?": "string"},
        "extra?": "any",
    })
    props = schema["properties"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["name", "kind"]
    assert props["name"] == {"type": "string", "description": "the name"}
    assert props["age"] == {"type": ["integer", "null"]}
    assert props["tags"] == {"type": ["array", "null"], "items": {"type": "string"}, "description": "the tags"}
    assert props["kind"] == {"enum": ["a", "b"], "description": "what it is"}
    assert props["mood"] == {"enum": ["x", None]}
    assert props["address"]["type"] == ["object", "null"] and props["address"]["description"] == "where"
    assert props["address"]["required"] == ["city"]
    assert props["extra"] == {}


def test_required_is_omitted_when_every_field_is_optional():
    assert "required" not in convert({"a?": "string"})


def test_wildcard_sets_additional_properties():
    assert convert({"(*)": "number"}) == {"type": "object", "properties": {}, "additionalProperties": {"type": "number"}}


def test_named_schema_and_description_override_and_optional():
    named = {"Money": {"type": "number", "description": "an amount"}}
    schema = convert({"total": "Money", "tip?": "Money, optional tip"}, named)
    assert schema["properties"]["total"] == {"type": "number", "description": "an amount"}
    assert schema["properties"]["tip"] == {"type": ["number", "null"], "description": "optional tip"}


def test_unknown_type_lists_known_and_suggests():
    with pytest.raises(PicoschemaError) as caught:
        convert({"name": "strng"}, {"Invoice": {"type": "object"}})
    assert caught.value.path == ("name",) and "did you mean `string`" in caught.value.hint


@pytest.mark.parametrize("bad", [{"a(list)": "string"}, {"a": 3}, {"a(enum)": "x"}, 7])
def test_malformed_picoschema_is_an_error(bad):
    with pytest.raises(PicoschemaError):
        convert(bad)


def test_unknown_type_in_a_file_names_file_line_and_suggestion():
    source = "---\nmodel: m\noutput:\n  schema:\n    title: string\n    name: strng\n---\nx"
    with pytest.raises(PromptFileError) as caught:
        PromptLibrary(None).from_source(source, path="prompts/extract.prompt")
    error = caught.value
    assert (error.line, error.column) == (6, 5)
    assert str(error) == ('prompts/extract.prompt:6:5: error: unknown type \'strng\' in output.schema.name '
                          '(did you mean `string`?)')


def test_invalid_json_schema_is_an_error():
    with pytest.raises(PromptFileError) as caught:
        PromptLibrary(None).from_source("---\noutput:\n  schema:\n    type: object\n    required: 3\n---\nx")
    assert "not valid JSON Schema" in caught.value.message and caught.value.line == 3


class Vendor(BaseModel):
    name: str
    vat_id: str | None = None


def test_define_schema_accepts_pydantic_models_and_json_schema():
    lib = PromptLibrary(None)
    lib.define_schema("Vendor", Vendor)
    lib.define_schema("Cents", {"type": "integer", "minimum": 0})
    out = lib.from_source("---\noutput:\n  schema:\n    vendor: Vendor\n    total: Cents\n---\nx").render()
    props = out.output.schema["properties"]
    assert props["vendor"]["properties"]["name"] == {"title": "Name", "type": "string"}
    assert props["total"] == {"type": "integer", "minimum": 0}


def test_schemas_given_to_the_library_and_a_resolver():
    lib = PromptLibrary(None, schemas={"A": {"type": "string"}}, schema_resolver={"B": {"type": "boolean"}}.get)
    out = lib.from_source("---\noutput:\n  schema:\n    a: A\n    b: B\n---\nx").render()
    assert out.output.schema["properties"] == {"a": {"type": "string"}, "b": {"type": "boolean"}}


def test_define_schema_rejects_invalid_json_schema():
    with pytest.raises(SchemaError):
        PromptLibrary(None).define_schema("Bad", {"type": 12})


def test_pydantic_model_as_render_option_schema():
    out = PromptLibrary(None).from_source("x").render(options={"output": {"schema": Vendor}})
    assert out.output.schema["required"] == ["name"]
