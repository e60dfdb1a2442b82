"""A schema whose mapping keys are not strings (YAML reads `properties: {1: ...}` as the integer 1) is
refused at load: JSON has only string keys, and such a property would never be validated."""

from __future__ import annotations

import pytest

from dotprompt import PromptFileError
from dotprompt.schema.compiled import check_schema


@pytest.mark.parametrize("schema", [
    "{type: object, properties: {1: {type: string}}}",
    "{type: object, properties: {a: {type: object, properties: {2: {type: integer}}}}}",
    "{type: object, properties: {true: {type: string}}}",
])
def test_integer_property_keys_are_refused_at_load(folder, schema):
    path = folder.write("p.prompt", f"---\noutput:\n  schema: {schema}\n---\nhi")
    with pytest.raises(PromptFileError) as failed:
        folder.library().load("p")
    assert failed.value.path == str(path) and "not a string" in str(failed.value)


def test_picoschema_field_names_are_text_and_validate(folder):
    # Picoschema keys are field names: `1: string` is the property "1", and it is validated.
    folder.write("p.prompt", "---\ninput:\n  schema: {1: string}\n---\nhi")
    prompt = folder.library().load("p")
    assert prompt.render({"1": "x"}).input.schema["properties"]["1"] == {"type": "string"}


def test_check_schema_names_the_key():
    problem = check_schema({"type": "object", "properties": {"a": {"properties": {3: {}}}}})
    assert problem is not None and "3" in problem and "properties/a/properties" in problem
    assert check_schema({"type": "object", "properties": {"3": {}}}) is None
