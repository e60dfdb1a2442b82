"""The quick meta-schema check: it vouches only for schemas jsonschema accepts, and for the common ones."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest

from dotprompt.schema.compiled import check_schema
from dotprompt.schema.metacheck import surely_valid


def jsonschema_accepts(schema: Any) -> bool:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


COMMON = [
    True, False, {}, {"type": "string", "enum": ["a", "b"]}, {"type": ["string", "null"]},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"],
     "additionalProperties": False},
    {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3}, "minItems": 1},
    {"type": "string", "format": "date", "description": "ISO 8601", "title": "Day", "default": "x"},
]

# Each is invalid, or outside the subset: jsonschema decides (and writes the message).
NOT_SURE = [
    {"type": "strng"}, {"type": []}, {"type": ["string", "string"]}, {"enum": 3}, {"required": ["a", "a"]},
    {"required": "a"}, {"minimum": "x"}, {"minimum": True}, {"minLength": -1}, {"maxItems": 1.0},
    {"pattern": "[a-"}, {"pattern": 3}, {"properties": {"a": 5}}, {"additionalProperties": 5}, {"items": []},
    {"$ref": "#/$defs/a"}, {"$schema": "http://json-schema.org/draft-07/schema#"}, {"oneOf": [{}]},
    {"x-unknown": 1}, {"title": 3}, {"examples": "a"}, [], "string", None, 3,
]


@pytest.mark.parametrize("schema", COMMON)
def test_the_common_schemas_are_vouched_for(schema):
    assert surely_valid(schema) and jsonschema_accepts(schema)


@pytest.mark.parametrize("schema", NOT_SURE)
def test_anything_else_is_left_to_jsonschema(schema):
    assert not surely_valid(schema)


def _random_schema(rng: random.Random, depth: int = 0) -> Any:
    values: list[Any] = [None, True, False, -1, 0, 2, 1.5, "x", "string", "[a-", "^a+$", [], ["a"], ["a", "a"],
                         ["string", "null"], ["string", "string"], {}, {"a": 1}]
    if depth < 3 and rng.random() < 0.3:
        return {"type": "object", "properties": {"p": _random_schema(rng, depth + 1)}}
    keys = ["type", "enum", "const", "required", "minimum", "maxLength", "pattern", "items", "properties",
            "additionalProperties", "title", "examples", "format", "minItems"]
    schema = {}
    for key in rng.sample(keys, rng.randint(0, 3)):
        nested = depth < 3 and key in ("items", "additionalProperties") and rng.random() < 0.5
        schema[key] = _random_schema(rng, depth + 1) if nested else rng.choice(values)
    return schema


def test_it_never_vouches_for_a_schema_jsonschema_refuses():
    rng = random.Random(35)
    vouched = 0
    for _ in range(3000):
        schema = _random_schema(rng)
        if surely_valid(schema):
            vouched += 1
            assert jsonschema_accepts(schema), schema
    assert vouched > 100  # the comparison covered schemas it vouched for, not only refusals


@pytest.mark.parametrize("schema", NOT_SURE[:15])
def test_check_schema_still_gives_jsonschemas_verdict(schema):
    assert (check_schema(schema) is None) == jsonschema_accepts(schema)
