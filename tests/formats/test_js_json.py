"""`js_json` writes what JavaScript's JSON.stringify writes; its fast path (Python's encoder, for values
without floats) must give exactly the text of its own iterative writer."""

from __future__ import annotations

import json
import random

import pytest

import dotprompt.formats.schema as schema
from dotprompt.formats.schema import js_json


def written_slowly(value, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(schema, "_holds_float", lambda _: True)
        return js_json(value)


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([None, True, False, 0, -5, 10**20, 'a"b\\\u00e9\u2028\n\x00', "", "xyz"])
    if roll < 0.65:
        return {rng.choice(["k", "é", '"q', "1", "\n"]) + str(i): random_value(rng, depth + 1)
                for i in range(rng.randint(0, 4))}
    return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_the_fast_path_writes_exactly_what_the_iterative_writer_does(monkeypatch):
    rng = random.Random(7)
    for _ in range(2000):
        value = random_value(rng)
        assert js_json(value) == written_slowly(value, monkeypatch)


@pytest.mark.parametrize("value, text", [
    ({"a": [1, 2.0, True]}, '{"a":[1,2,true]}'),
    ({"min": 1e-7, "max": 1e21}, '{"min":1e-7,"max":1e+21}'),
    ({"big": 1e16}, '{"big":10000000000000000}'),
    ({"é": "ü"}, '{"é":"ü"}'),
])
def test_floats_are_written_as_javascript_writes_them(value, text):
    assert js_json(value) == text and json.loads(text) == value


def test_a_schema_nested_thousands_deep_is_written():
    deep = cursor = {}
    for _ in range(5000):
        cursor["a"] = {}
        cursor = cursor["a"]
    assert js_json(deep) == '{"a":' * 5000 + "{}" + "}" * 5000
