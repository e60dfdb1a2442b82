"""Strict json_schema structured output against the real llama-server (OpenAI-compatible path).

llama-server turns `response_format: {type: json_schema, json_schema: {schema, strict}}` into a
grammar; these tests check it takes the strict-transformed schema (every property required, optional
ones nullable, objects closed) and that the reply, with strict mode's nulls removed, passes the
author's own schema. A 135M model: structure is checked, not the quality of the answer.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from dotprompt import generate_sync
from dotprompt.local.model import LocalModel

pytestmark = pytest.mark.live

PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 40},
    "age": {"type": "integer"},
    "city": {"type": "string"},
    "role": {"type": "string", "enum": ["engineer", "doctor", "teacher"]}}, "required": ["name"]}


def test_strict_json_schema_is_accepted_and_the_output_fits_the_authors_schema(local_model: LocalModel):
    _, client = local_model.connect()
    response = generate_sync(model=client, prompt="Ana is a 31 year old engineer from Lisbon. Give her as JSON.",
                             output_schema=PERSON, config={"temperature": 0, "maxOutputTokens": 96})
    sent = client.wire_request(response.request)["response_format"]["json_schema"]
    assert sent["strict"] is True and sent["schema"]["required"] == ["name", "age", "city", "role"]
    assert sent["schema"]["properties"]["role"]["enum"] == ["engineer", "doctor", "teacher", None]
    # llama-server's grammar enforces string lengths, so the local model keeps `maxLength` a keyword
    # (OpenAI's strict rules would move it into the description).
    assert sent["schema"]["properties"]["name"]["maxLength"] == 40
    assert response.custom == {"structuredOutput": "native-strict"}
    jsonschema.validate(response.output, PERSON)
    # The grammar made every property appear (null where unknown); restore dropped only those nulls.
    # Every key is in the raw reply: the server's grammar was built from the strict schema, not the author's.
    raw = json.loads(response.raw["choices"][0]["message"]["content"])
    assert set(raw) == set(PERSON["properties"])
    assert response.output == {k: v for k, v in raw.items() if v is not None}


def test_a_schema_that_cannot_be_strict_is_sent_non_strict_and_still_works(local_model: LocalModel):
    _, client = local_model.connect()
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "details": {"type": "object"}},
              "required": ["name"]}
    response = generate_sync(model=client, prompt="Ana from Lisbon, as JSON.", output_schema=schema,
                             config={"temperature": 0, "maxOutputTokens": 64})
    assert client.wire_request(response.request)["response_format"]["json_schema"]["strict"] is False
    assert response.custom["structuredOutput"] == "native" and "free-form" in response.custom["structuredOutputFallback"]
    jsonschema.validate(response.output, schema)
