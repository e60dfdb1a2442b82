"""JSONL's flat-line reader gives what the general readers give, or leaves the line to them.

`read_flat_object` reads a JSONL line in one step when it is a flat object of plain members; the
final parse then reports the lenient reader's repairs without running it, and the stream hands the
object out without a streaming parser. Lines are generated from members near the edge of what it
takes (bare keys the lenient reader would quote differently, numbers that overflow, escapes,
trailing commas, truncation); whenever it reads one, the lenient reader (`parse_json_at`) and the
streaming parser must give the same value, the same repairs and the same end.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotprompt.formats import IncrementalJsonParser, get_format
from dotprompt.formats.reading.extract import parse_json_at
from dotprompt.formats.reading.flatline import read_flat_object
from dotprompt.formats.reading.lenient import one_kind_repairs
from dotprompt.formats.reading.limits import MAX_REPORTED_REPAIRS
from dotprompt.formats.reading.textpos import LineCursor

FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

KEYS = st.sampled_from(['a', 'name', '"a"', '"x y"', '"é"', 'é', '$id', '_', '1', '"a:b"', 'a.b', 'a-b', '"c\\n"',
                        '"\x01"', "'q'", 'true', '""', '"}"', '"a,"'])
VALUES = st.sampled_from(['1', '0', '-0', '-1.5', '0.25', '123456789012345678', '1' * 16, '1' * 17, '1.0000000000000001',
                          '1e3', '1E400', '01', '-', '.5', 'true', 'false', 'null', 'True', 'None', 'NaN', 'truex',
                          '"x"', '""', '"a b"', '"}"', '"\\n"', '"\t"', '"\x1f"', '"é"', "'s'", '[1]', '{}', '{"a": 1}'])
BLANKS = st.sampled_from(["", " ", "  ", "\t", "\r", "\u00a0"])
SEPARATORS = st.sampled_from([",", ", ", " ,", ",,", ";", " "])
ENDINGS = st.sampled_from(["}", " }", ",}", "", "} tail", "}}", "}\r", "} {a:2}"])


@st.composite
def lines(draw) -> str:
    members = draw(st.lists(st.tuples(KEYS, BLANKS, BLANKS, VALUES), max_size=5))
    seps = draw(st.lists(SEPARATORS, min_size=len(members), max_size=len(members)))
    body = ""
    for index, (key, before, after, value) in enumerate(members):
        if index:
            body += seps[index]
        body += f"{key}{before}:{after}{value}"
    return "{" + draw(BLANKS) + body + draw(BLANKS) + draw(ENDINGS)


@FUZZ
@given(line=lines())
def test_a_flat_line_reads_as_the_lenient_reader_reads_it(line):
    text = "{}\n" + line  # not at offset 0: positions are the text's
    flat = read_flat_object(text, 3, len(text))
    if flat is None:
        return
    value, bare_keys, end = flat
    general = parse_json_at(text, 3, len(text), format_name="jsonl", strict_first=False)
    repairs = one_kind_repairs("unquoted_key", bare_keys, text, LineCursor(text))
    assert repr((value, repairs, end)) == repr(general)
    assert repr(parse_json_at(text, 3, len(text), format_name="jsonl")) == repr(general)  # strict first, the same


@FUZZ
@given(line=lines(), cut=st.integers(min_value=1, max_value=7))
def test_a_flat_line_closes_where_the_streaming_parser_closes_it_with_the_same_value(line, cut):
    flat = read_flat_object(line)
    if flat is None:
        return
    value, _, end = flat
    parser = IncrementalJsonParser()
    for start in range(0, end - 1, cut):  # in pieces, the last one ending just before the closing brace
        parser.advance(line[start : min(start + cut, end - 1)])
    assert not parser.done
    parser.advance(line[end - 1 :])
    assert parser.done and repr(parser.value) == repr(value)


def test_past_the_reported_repairs_the_flat_reader_counts_as_the_lenient_reader_does():
    keys = MAX_REPORTED_REPAIRS + 5
    line = "{" + ", ".join(f"k{i}: {i}" for i in range(keys)) + "}"
    value, bare_keys, end = read_flat_object(line)
    general = parse_json_at(line, 0, len(line), strict_first=False)
    assert repr((value, one_kind_repairs("unquoted_key", bare_keys, line, LineCursor(line)), end)) == repr(general)
    assert general[1][-1].count == 5


def test_jsonl_streams_flat_and_other_lines_split_anywhere_as_it_parses_them():
    text = ('{a: 1, "b": "x"}\n{a: {"n": [1, 2]}, b: 2}\n  {"c": "}"} tail\n{d: 1e3}\n{e: "long ' + "y" * 600
            + '"}\n{f: 1,}\n{g: 2')
    handler = get_format("jsonl").handler(None)
    expected = handler.parse_text(text).value[:-1]  # the last line never closes: the stream hands out nothing for it
    for size in (1, 2, 3, 5, 8, 13, len(text)):
        stream = handler.new_stream()
        items = [item for start in range(0, len(text), size) for item in stream.feed(text[start : start + size])]
        assert items == expected, size
