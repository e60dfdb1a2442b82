"""The strict-schema transformation: the rules OpenAI's strict mode (and Anthropic's structured outputs) enforce,
the fallback reasons, and `restore` giving back values the author's schema accepts."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotprompt.providers.dialects.strict import ANTHROPIC_STRICT, OPENAI_STRICT, strict_schema
from tests.isolation import assert_finishes


def test_optional_properties_become_required_and_nullable_and_objects_closed():
    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}, "kind": {"enum": ["a", "b"]},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}}}, "required": ["name"]}
    result = strict_schema(schema)
    assert result.strict and result.reason is None
    assert result.schema["required"] == ["name", "age", "kind", "address"]
    assert result.schema["additionalProperties"] is False
    assert result.schema["properties"]["age"] == {"type": ["integer", "null"]}
    assert result.schema["properties"]["kind"] == {"enum": ["a", "b", None]}
    address = result.schema["properties"]["address"]
    assert address["type"] == ["object", "null"] and address["required"] == ["city"]
    assert address["additionalProperties"] is False and address["properties"]["city"] == {"type": ["string", "null"]}
    assert schema["required"] == ["name"]  # the author's schema is left as it was


def test_unsupported_keywords_move_into_the_description():
    schema = {"type": "object", "properties": {
        "code": {"type": "string", "description": "The code.", "minLength": 2, "maxLength": 5, "pattern": "^[A-Z]+$"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 3},
        "when": {"type": "string", "format": "date"}, "site": {"type": "string", "format": "uri"}},
        "required": ["code", "tags", "when", "site"], "$schema": "https://json-schema.org/draft/2020-12/schema"}
    result = strict_schema(schema).schema
    assert "$schema" not in result
    code = result["properties"]["code"]
    assert code["pattern"] == "^[A-Z]+$" and "minLength" not in code and "maxLength" not in code
    assert code["description"] == "The code.\nminLength: 2\nmaxLength: 5"
    tags = result["properties"]["tags"]
    assert tags["maxItems"] == 3 and tags["description"] == "uniqueItems: true"
    assert result["properties"]["when"]["format"] == "date"
    assert result["properties"]["site"] == {"type": "string", "description": 'format: "uri"'}  # not a strict-mode format


def test_refs_and_recursion_keep_working_and_one_of_becomes_any_of():
    schema = {"type": "object", "$defs": {"Node": {"type": "object", "properties": {
        "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        "required": ["value"]}},
        "properties": {"root": {"$ref": "#/$defs/Node"}, "shape": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["root", "shape"]}
    result = strict_schema(schema)
    assert result.strict
    node = result.schema["$defs"]["Node"]
    assert node["required"] == ["value", "children"] and node["additionalProperties"] is False
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert result.schema["properties"]["shape"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    # The transformed schema is itself valid JSON Schema and accepts a strict-shaped value.
    jsonschema.validate({"root": {"value": 1, "children": [{"value": 2, "children": None}]}, "shape": 3}, result.schema)


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "array", "items": {"type": "string"}}, "the root is not an object"),
    ({"type": "object", "properties": {"meta": {"type": "object"}}}, "$.meta is an object without listed properties"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
     "$ allows additional properties"),
    ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 1}]}}},
     "$.a uses allOf with several schemas"),
    ({"type": "object", "properties": {"a": {}}}, "$.a accepts any value"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}, "does not name a local definition"),
    ({"type": "object", "properties": {"a": {"type": "array"}}}, "$.a is an array without `items`"),
])
def test_schemas_that_cannot_be_strict_say_why(schema, reason):
    result = strict_schema(schema)
    assert not result.strict and result.schema is None
    assert reason in result.reason and result.reason.startswith("OpenAI strict cannot enforce this schema")


def test_nesting_deeper_than_the_provider_allows_falls_back():
    schema: dict = {"type": "string"}
    for _ in range(12):
        schema = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    assert "nested deeper than 10 levels" in strict_schema(schema).reason


def test_anthropic_profile_keeps_optional_properties_optional_and_refuses_recursion():
    schema = {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}, "b": {"type": "number", "minimum": 0}},
              "required": ["a"]}
    result = strict_schema(schema, ANTHROPIC_STRICT).schema
    assert result["required"] == ["a"] and result["additionalProperties"] is False
    assert result["properties"]["b"] == {"type": "number", "description": "minimum: 0"}
    recursive = {"type": "object", "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}},
                 "properties": {"n": {"$ref": "#/$defs/N"}}}
    assert "is recursive (N)" in strict_schema(recursive, ANTHROPIC_STRICT).reason
    assert strict_schema(recursive, OPENAI_STRICT).strict


def test_restore_drops_only_the_nulls_strict_mode_added():
    schema = {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": ["string", "null"]}, "c": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
        "required": ["a", "c"]}
    result = strict_schema(schema)
    value = {"a": "1", "b": None, "c": None, "items": [{"x": None}, {"x": 2}]}
    # b may be null in the author's schema; c is required (a null there is the model's error, kept for the loop to report).
    assert result.restore(value) == {"a": "1", "b": None, "c": None, "items": [{}, {"x": 2}]}
    assert json.loads(result.restore_text(json.dumps(value))) == result.restore(value)
    assert result.restore_text("not json {") == "not json {"
    untouched = strict_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert untouched.restore_text('{"a": null}') == '{"a": null}'


# -- property: a value of the author's schema survives the strict round trip ------------------------

LEAVES = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"enum": ["x", "y"]},
                          {"type": "string", "maxLength": 3}, {"type": ["number", "null"]}])


def objects(children):
    return st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, min_size=1, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)), unique=True).map(
            lambda required: {"type": "object", "properties": props, "required": required}))


SCHEMAS = st.recursive(LEAVES, lambda children: st.one_of(objects(children), children.map(
    lambda item: {"type": "array", "items": item})), max_leaves=8).filter(lambda s: s.get("type") == "object")


def values(schema):
    """Values the (generated) schema accepts: only the keywords SCHEMAS uses."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == ["number", "null"]:
        return st.one_of(st.none(), st.integers(-5, 5))
    if kind == "array":
        return st.lists(values(schema["items"]), max_size=3)
    if kind == "object":
        props = schema["properties"]
        return st.fixed_dictionaries({k: values(props[k]) for k in schema["required"]},
                                     optional={k: values(v) for k, v in props.items() if k not in schema["required"]})
    return {"string": st.text(max_size=3), "integer": st.integers(), "boolean": st.booleans()}[kind]


def strict_shaped(value, schema):
    """What a strict-mode model sends for `value`: every absent optional property present as null."""
    if isinstance(value, dict) and "properties" in schema:
        return {k: strict_shaped(value[k], s) if k in value else None for k, s in schema["properties"].items()}
    if isinstance(value, list) and "items" in schema:
        return [strict_shaped(v, schema["items"]) for v in value]
    return value


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(data=st.data(), schema=SCHEMAS)
def test_a_valid_value_sent_strictly_restores_to_a_valid_value(data, schema):
    value = data.draw(values(schema))
    jsonschema.validate(value, schema)
    result = strict_schema(schema)
    assert result.strict, result.reason
    sent = strict_shaped(value, schema)
    jsonschema.validate(sent, result.schema)  # what the model sends is what the strict schema allows
    restored = result.restore(sent)
    jsonschema.validate(restored, schema)  # and restore gives back a value the author's schema accepts


@pytest.mark.slow
def test_hostile_schemas_finish_with_a_reason():
    outcome = assert_finishes("""
import json
from dotprompt.providers.dialects.strict import strict_schema
deep = {"type": "string"}
for _ in range(50000):
    deep = {"type": "object", "properties": {"x": deep}}
wide = {"type": "object", "properties": {f"p{i}": {"type": "string", "minLength": i} for i in range(100000)}}
chain = {"type": "string"}
for _ in range(50000):
    chain = {"allOf": [chain]}
cyclic = {"type": "object", "properties": {}}
cyclic["properties"]["self"] = cyclic
deep_not = {"type": "string"}
for _ in range(5000):
    deep_not = {"not": deep_not}
results = [strict_schema(s) for s in (deep, wide, {"type": "object", "properties": {"c": chain}}, cyclic,
                                      {"type": "object", "properties": {"n": {"type": "string", "not": deep_not}}})]
print(json.dumps([r.reason for r in results] + [strict_schema(chain_root).strict]))
""".replace("chain_root", '{"type": "object", "properties": {"c": chain}, "required": ["c"]}'), timeout=60, memory_mb=1024)
    deep, wide, chain, cyclic, deep_not, chain_ok = outcome.json()
    assert "nested deeper than 10 levels" in deep and "nested deeper than 10 levels" in cyclic
    assert "more than 5000 properties" in wide
    assert chain is None and chain_ok is True  # a long allOf chain is flattened, not refused
    assert "nested too deeply" in deep_not


@pytest.mark.slow
def test_a_hostile_reply_is_returned_unchanged_by_restore():
    outcome = assert_finishes("""
import json
from dotprompt.providers.dialects.strict import strict_schema
s = strict_schema({"type": "object", "properties": {"a": {"type": "string"}}})
deep = "[" * 200000 + "]" * 200000
print(json.dumps([s.restore_text(deep) == deep, s.restore_text('{"a": null}')]))
""", timeout=30, memory_mb=1024)
    assert outcome.json() == [True, "{}"]


def test_openapi_nullable_and_odd_descriptions():
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True},
                                               "b": {"enum": ["x"], "nullable": True, "description": {"not": "a string"}},
                                               "c": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}},
              "required": ["a", "b", "c"]}
    result = strict_schema(schema).schema
    assert result["properties"]["a"] == {"type": ["string", "null"]}
    assert result["properties"]["b"] == {"enum": ["x", None]}  # a description that is not text is dropped
    assert result["properties"]["c"] == {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
