"""extract_json: finding JSON in prose and fences, every repair reported, errors that keep the text."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings

from dotprompt.errors import DotpromptError
from dotprompt.formats import IncrementalJsonParser, OutputParseError, Repair, extract_json
from tests.formats.jsondocs import FENCES, PROSE, ROOTS, SEEDS, Writer


def kinds(parsed):
    return [r.kind for r in parsed.repairs]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1, "b": [true, null]}', {"a": 1, "b": [True, None]}),
        ('  \n[1, 2.5, "x"]\n ', [1, 2.5, "x"]),
        ('"just a string"', "just a string"),
        ("42", 42),
        ('{"s": "has ``` and // and /* inside"}', {"s": "has ``` and // and /* inside"}),
    ],
)
def test_clean_json_reports_no_repairs(text, value):
    parsed = extract_json(text)
    assert parsed.value == value
    assert parsed.repairs == []


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ('```json\n{"a": 1}\n```', {"a": 1}, "extracted_from_fence"),
        ('Sure:\n```\n[1, 2]\n```\nDone.', [1, 2], "extracted_from_fence"),
        ('```\n"positive"\n```', "positive", "extracted_from_fence"),
        ('The result is {"a": 1}.', {"a": 1}, "extracted_from_prose"),
        ('{"a": 1}\nHope this helps!', {"a": 1}, "extracted_from_prose"),
        ('{"a": [1, 2,], }', {"a": [1, 2]}, "trailing_comma"),
        ('{"a": 1 // the answer\n}', {"a": 1}, "comment"),
        ('{"a": /* inline */ 1}', {"a": 1}, "comment"),
        ("{'a': 'it\\'s \"q\"'}", {"a": 'it\'s "q"'}, "single_quotes"),
        ('{a: 1, _b$: 2}', {"a": 1, "_b$": 2}, "unquoted_key"),
        ('{"a": True, "b": None}', {"a": True, "b": None}, "python_literal"),
        ('{"a": "two\nlines"}', {"a": "two\nlines"}, "control_character"),
        ('{"a": [1, {"b": "hal', {"a": [1, {"b": "hal"}]}, "completed_truncated"),
    ],
)
def test_each_repair_is_reported_with_where_it_happened(text, value, kind):
    parsed = extract_json(text)
    assert parsed.value == value
    assert kind in kinds(parsed)
    assert all(isinstance(r, Repair) and "line" in r.detail for r in parsed.repairs)


def test_every_repair_is_reported_once_per_place():
    text = "Here you go:\n```json\n{name: 'Ada', // who\n \"tags\": ['x',],}\n```"
    parsed = extract_json(text)
    assert parsed.value == {"name": "Ada", "tags": ["x"]}
    assert kinds(parsed) == [
        "extracted_from_fence", "unquoted_key", "single_quotes", "comment", "single_quotes", "trailing_comma", "trailing_comma",
    ]
    assert "line 3, column 2" in parsed.repairs[1].detail


def test_a_fence_wins_over_brackets_in_the_prose_before_it():
    parsed = extract_json('As noted in [1], the answer:\n```json\n{"a": 1}\n```')
    assert parsed.value == {"a": 1}
    assert kinds(parsed) == ["extracted_from_fence"]


def test_a_fence_tagged_with_another_language_is_not_json():
    parsed = extract_json('```python\nx = [1]\n```\nand {"a": 2}')
    assert parsed.value == [1]  # no JSON fence: the first bracket of the text
    assert kinds(parsed) == ["extracted_from_prose"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 12', {}),  # the number may have had more digits: dropped, not guessed
        ('{"a": 12 ', {"a": 12}),  # something followed it: it is whole
        ('{"a": tr', {}),
        ('{"a": true', {"a": True}),
        ('```json\n{"a": 1, "b": [1, 2\n```\nmore', {"a": 1, "b": [1, 2]}),
        ('{"a": "x', {"a": "x"}),
        ("[{'a': 'x", [{"a": "x"}]),
        ('{"a', {}),
    ],
)
def test_truncated_values_are_completed_as_far_as_they_go(text, value):
    parsed = extract_json(text)
    assert parsed.value == value
    assert kinds(parsed)[-1] == "completed_truncated"


def test_a_truncated_value_agrees_with_the_stream_snapshot():
    text = 'Result:\n```json\n{"items": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Gra'
    assert extract_json(text).value == IncrementalJsonParser().feed(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("I cannot help with that.", "no JSON value found"),
        ('{"a": 1, "b": ...}', "could not be repaired"),
    ],
)
def test_no_value_raises_output_parse_error_keeping_the_whole_text(text, message):
    with pytest.raises(OutputParseError, match=message) as caught:
        extract_json(text)
    assert caught.value.text == text
    assert caught.value.format_name == "json"
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, DotpromptError)


def test_the_error_keeps_a_long_text_whole_and_shows_a_preview():
    text = "no json here. " * 100
    with pytest.raises(OutputParseError) as caught:
        extract_json(text, format_name="array")
    assert caught.value.text == text
    assert caught.value.format_name == "array"
    assert str(caught.value).startswith("array output: ")
    assert len(str(caught.value)) < 300


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=ROOTS, seed=SEEDS, prose=PROSE, fence=FENCES)
def test_generated_documents_in_prose_or_fences(root, seed, prose, fence):
    body = Writer(random.Random(seed)).dump(root)
    text = prose + fence + body + ("\n```\nThanks!" if fence else "")
    parsed = extract_json(text)
    assert parsed.value == json.loads(body)
    assert set(kinds(parsed)) <= {"extracted_from_fence", "extracted_from_prose"}
    if not prose.strip() and not fence:
        assert parsed.repairs == []
