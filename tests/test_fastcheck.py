"""The fast schema check must answer exactly as jsonschema does (differential, property-based)."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotprompt.schema.compiled import compile_validator
from dotprompt.schema.validator import compile_check

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False),
                    st.sampled_from([1.0, 2.0, 0.0]), st.text(max_size=4))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4)),
    max_leaves=12)
type_names = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def schemas(depth: int = 2):
    leaf = st.one_of(
        st.builds(lambda t: {"type": t}, type_names),
        st.builds(lambda ts: {"type": ts}, st.lists(type_names, min_size=1, max_size=3, unique=True)),
        st.builds(lambda vs: {"enum": vs}, st.lists(scalars, min_size=1, max_size=3)),
        st.builds(lambda v: {"const": v}, scalars),
        st.builds(lambda n: {"minimum": n}, st.integers(-3, 3)),
        st.builds(lambda n: {"maxLength": n}, st.integers(0, 3)),
        st.builds(lambda n: {"minItems": n}, st.integers(0, 3)),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b$", "[0-9]"])),
        st.just({}),
        st.just({"description": "annotation only"}),
    )
    if depth == 0:
        return leaf
    inner = schemas(depth - 1)
    return st.one_of(
        leaf,
        st.builds(lambda items, t: {"type": t, "items": items}, inner, st.sampled_from(["array", ["array", "null"]])),
        st.builds(
            lambda props, req, extra: {"type": "object", "properties": props,
                                       "required": [k for k in req if k in props], "additionalProperties": extra},
            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3),
            st.one_of(st.booleans(), inner),
        ),
        st.builds(lambda extra: {"additionalProperties": extra}, inner),
        st.builds(lambda req: {"required": req}, st.lists(st.sampled_from(["a", "b"]), unique=True, max_size=2)),
    )


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(schema=schemas(), instance=json_values)
def test_fast_check_agrees_with_jsonschema(schema, instance):
    fast = compile_check(schema)
    assert fast is not None, schema
    assert fast(instance) == jsonschema.Draft202012Validator(schema).is_valid(instance)


def test_unsupported_keywords_fall_back_to_jsonschema():
    assert compile_check({"type": "string", "format": "email"}) is None
    assert compile_check({"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}}) is None
    compiled = compile_validator({"type": "object", "properties": {"d": {"$ref": "#/$defs/x"}},
                                  "$defs": {"x": {"type": "integer"}}})
    assert compiled.is_valid({"d": 1}) and not compiled.is_valid({"d": "1"})
    assert [p.path for p in compiled.problems({"d": "1"})] == ["$.d"]
