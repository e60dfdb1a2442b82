"""One rule for non-finite numbers everywhere a reply is parsed: the public `extract_json`,
`parse_jsonl` and every built-in format's `parse_text` read `NaN`, `Infinity` and `1e999` as null and
report a `non_finite_number` repair, as the streaming parsers and the generate loop do, so the
streamed value and the final parse of the same text agree."""

from __future__ import annotations

import pytest

from dotprompt._util.finite import non_finite_path
from dotprompt.formats import IncrementalJsonParser, extract_json, get_format
from dotprompt.formats.jsonl import JsonlStream, parse_jsonl

TOKENS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 400 + ".5"]


def non_finite_repairs(parsed) -> list[str]:
    return [r.detail for r in parsed.repairs if r.kind == "non_finite_number"]


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("text", [
    '{{"a": {token}, "b": [1, {token}]}}',            # strict JSON for Python's reader
    'Here it is: {{"a": {token}, b: [1, {token}]}}',  # prose and a repair
    '```json\n{{"a": {token}, "b": [1, {token}]',     # fenced and cut short
])
def test_extract_json_reads_a_non_finite_number_as_null_and_says_so(token, text):
    parsed = extract_json(text.format(token=token))
    assert parsed.value == {"a": None, "b": [1, None]}
    assert non_finite_repairs(parsed) == [
        "replaced the non-finite number at $.a with null (JSON has no NaN or Infinity)",
        "replaced the non-finite number at $.b[1] with null (JSON has no NaN or Infinity)",
    ]


@pytest.mark.parametrize("token", TOKENS)
def test_the_streamed_value_and_the_final_parse_agree(token):
    text = f'{{"a": {token}, "b": [1, {token}], "c": 2.5}}'
    parser = IncrementalJsonParser()
    streamed = parser.feed(text)
    assert extract_json(text).value == streamed == {"a": None, "b": [1, None], "c": 2.5}


@pytest.mark.parametrize("token", TOKENS)
def test_parse_jsonl_reads_a_non_finite_number_as_null_and_says_so(token):
    text = f'{{"a": {token}}}\n{{"a": 1}}\n{{a: {token}, "b": "x"}}\n{{"a": [{token}]'
    parsed = parse_jsonl(text)
    assert parsed.value == [{"a": None}, {"a": 1}, {"a": None, "b": "x"}, {"a": [None]}]
    assert [d.split(" with ")[0] for d in non_finite_repairs(parsed)] == [
        f"replaced the non-finite number at {path}" for path in ("$[0].a", "$[2].a", "$[3].a[0]")]
    streamed = [item for chunk in (JsonlStream().feed(text),) for item in chunk]
    assert streamed == parsed.value[:3]  # the stream hands out closed objects only


@pytest.mark.parametrize(("name", "text", "value"), [
    ("json", '{"total": NaN}', {"total": None}),
    ("array", "[1, Infinity, {\"x\": -1e999}]", [1, None, {"x": None}]),
    ("jsonl", '{"x": NaN}\n{"x": 2}', [{"x": None}, {"x": 2}]),
])
def test_every_builtin_format_parses_by_the_same_rule(name, text, value):
    parsed = get_format(name).handler(None).parse_text(text)
    assert parsed.value == value and non_finite_path(parsed.value) is None
    assert non_finite_repairs(parsed), parsed.repairs


def test_finite_replies_take_no_repair():
    for text in ('{"a": 1e300, "b": -2.5e-300, "c": "NaN Infinity 1e999"}', '{"a": 12345678901234567890}'):
        parsed = extract_json(text)
        assert parsed.repairs == [] and non_finite_path(parsed.value) is None
