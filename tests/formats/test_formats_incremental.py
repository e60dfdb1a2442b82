"""IncrementalJsonParser: exact final values, snapshots that only grow, chunking that never
matters, and no exception on any input."""

from __future__ import annotations

import copy
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotprompt.formats import IncrementalJsonParser, ParsedOutput
from dotprompt.formats.finite import finite_output
from tests.formats.jsondocs import FENCES, PROSE, ROOTS, SEEDS, TAILS, Writer, assert_grows, split

# FUZZ_EXAMPLES=5000 for a longer hunt; the default keeps the suite quick.
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def feed_all(chunks, parser=None):
    parser = parser or IncrementalJsonParser()
    for chunk in chunks:
        parser.feed(chunk)
    return parser


def every_split(text):
    """The text cut into two chunks at every position, and into three around every pair."""
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]
    for i in range(len(text)):
        for j in range(i, min(len(text), i + 14) + 1):
            yield [text[:i], text[i:j], text[j:]]


# -- property tests ----------------------------------------------------------------------------

@pytest.mark.slow
@FUZZ
@given(root=ROOTS, seed=SEEDS, prose=PROSE, fence=FENCES, tail=TAILS)
def test_streamed_document_ends_equal_to_json_loads_and_snapshots_only_grow(root, seed, prose, fence, tail):
    rng = random.Random(seed)
    body = Writer(rng).dump(root)
    expected = json.loads(body)
    text = prose + fence + body + ("\n```\n" if fence else "") + tail
    parser = IncrementalJsonParser()
    previous = None
    kept = []
    for chunk in split(text, rng):
        snapshot = copy.deepcopy(parser.feed(chunk))
        assert_grows(previous, snapshot)
        kept.append((parser.snapshot_copy(), snapshot))
        previous = snapshot
    assert parser.value == expected
    assert parser.done
    for frozen, at_the_time in kept:
        assert frozen == at_the_time  # snapshot_copy() did not change under later feeds


@pytest.mark.slow
@FUZZ
@given(root=ROOTS, seed=SEEDS)
def test_every_prefix_is_a_snapshot_of_the_whole(root, seed):
    rng = random.Random(seed)
    body = Writer(rng).dump(root)
    expected = json.loads(body)
    for end in sorted({rng.randrange(len(body) + 1) for _ in range(8)}):
        parser = IncrementalJsonParser()
        assert_grows(copy.deepcopy(parser.feed(body[:end])), expected)
        assert parser.done == (end == len(body))


JSONISH = st.lists(
    st.sampled_from([
        "{", "}", "[", "]", ":", ",", '"', "'", "\\", "\\u", "d83d", "DE00", "00e9", "true", "nul", "NaN", "-", "1", "0.5",
        "e+", "/", "*", "//", "/*", "*/", "`", "```json\n", " ", "\n", "\t", "é", "😀", "x", "key", "\x00",
    ]),
    max_size=80,
).map("".join)


@FUZZ
@given(text=JSONISH | st.text(max_size=200), seed=SEEDS)
def test_any_text_never_raises_and_chunking_never_matters(text, seed):
    rng = random.Random(seed)
    whole = feed_all([text])
    parts = feed_all(split(text, rng))
    assert repr(parts.value) == repr(whole.value)  # repr: NaN is not equal to itself
    assert (parts.done, parts.settled) == (whole.done, whole.settled)
    repr(parts.snapshot_copy())


# -- escapes, numbers and words split anywhere ----------------------------------------------------

@pytest.mark.parametrize(
    "doc",
    [
        r'{"a": "x\ud83d\ude00y\u00e9\n\"\\\/"}',
        r'["\ud83dx", "\ud83d\u0041", "\ude00", "\ud83d"]',
        '[12345, -0.5e-10, 1E+2, 0, -0, 3.25, 1e400, 10000000000000000000001]',
        '{"t": true, "f": false, "n": null, "e": {}, "l": [], "nest": [[], {}, [[{}]]]}',
        '{"naïve": "日本語 😀", "": ""}',
        "[NaN, Infinity, -Infinity]",
    ],
)
def test_split_at_every_point_gives_json_loads(doc):
    # Non-finite numbers are null, as the final parse makes them (formats/finite.py)
    expected = repr(finite_output(ParsedOutput(json.loads(doc), []), doc).value)
    for chunks in every_split(doc):
        assert repr(feed_all(chunks).value) == expected, chunks


def test_a_number_shows_only_once_a_delimiter_ends_it():
    parser = IncrementalJsonParser()
    assert parser.feed('{"a": 12') == {}
    assert parser.feed("3") == {}
    assert parser.feed(" ") == {"a": 123}


def test_a_word_shows_only_once_complete():
    parser = IncrementalJsonParser()
    assert parser.feed("[tru") == []
    assert parser.feed("e") == []
    assert parser.feed("]") == [True]


def test_an_open_string_shows_its_prefix_but_an_open_key_shows_nothing():
    parser = IncrementalJsonParser()
    assert parser.feed('{"ke') == {}
    assert parser.feed('y": ') == {}  # key complete, value not started
    assert parser.feed('"hel') == {"key": "hel"}
    assert parser.feed('lo\\') == {"key": "hello"}  # the escape waits for its second half
    assert parser.feed('n"') == {"key": "hello\n"}


def test_a_high_surrogate_waits_for_its_low_half():
    parser = IncrementalJsonParser()
    assert parser.feed('["a\\ud83d') == ["a"]
    assert parser.feed("\\ude") == ["a"]
    assert parser.feed('00"]') == ["a😀"]


# -- prose, fences and the end of the value --------------------------------------------------------

def test_prose_and_fence_before_the_value_are_skipped():
    parser = feed_all(["Sure! Here it is:\n``", "`json\n{\"a\"", ": 1}\n```\nAnything {\"b\": 2} after is ignored"])
    assert parser.value == {"a": 1}
    assert parser.done


def test_nothing_before_the_first_bracket_gives_none():
    parser = IncrementalJsonParser()
    assert parser.feed("Thinking about it...") is None
    assert parser.value is None
    assert parser.settled == 0
    assert parser.snapshot_copy() is None


def test_a_closing_fence_inside_the_value_ends_parsing():
    parser = feed_all(['```json\n{"a": [1, 2\n', "```\nmore text, {\"b\": 3}"])
    assert parser.value == {"a": [1, 2]}
    assert not parser.done


def test_backticks_inside_strings_are_text():
    assert feed_all(['{"code": "```py\\nx = 1\\n```"}']).value == {"code": "```py\nx = 1\n```"}


# -- tolerated JSON5-isms and invalid input --------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2,]", [1, 2]),
        ('{"a": 1,}', {"a": 1}),
        ('{"a": 1, // one\n "b": /* two */ 2}', {"a": 1, "b": 2}),
        ("{'a': 'it\\'s \"x\"'}", {"a": 'it\'s "x"'}),
        ("{a: 1, $b_2: [true]}", {"a": 1, "$b_2": [True]}),
        ('{"a": tru, "b": 1}', {"b": 1}),
        ('{"a": None, "b": 1.2.3, "c": 3}', {"c": 3}),
        ('[{"a": 1]', [{"a": 1}]),
        ('{"a": }', {}),
        ('{"a" }', {}),
        ('["\\q"]', ["q"]),
        ('["\\uZZ"]', ["ZZ"]),
        ('["raw\ttab\nnewline"]', ["raw\ttab\nnewline"]),
        ("[" + "1" * 5000 + "]", []),  # past Python's int digit limit: dropped like an invalid word
        ('{"a": 1} }', {"a": 1}),
    ],
)
def test_lenient_and_invalid_input(text, expected):
    for chunks in ([text], list(text)):
        assert feed_all(chunks).value == expected


def test_a_comment_marker_split_across_chunks():
    assert feed_all(["[1, /", "* c *", "/ 2, /", "/ x\n 3]"]).value == [1, 2, 3]


# -- snapshots ---------------------------------------------------------------------------------------

def test_snapshot_copy_is_frozen_and_shares_complete_values():
    parser = IncrementalJsonParser()
    live = parser.feed('{"done": {"x": [1]}, "open": [1, {"y": "ab')
    frozen = parser.snapshot_copy()
    assert frozen == {"done": {"x": [1]}, "open": [1, {"y": "ab"}]}
    assert frozen["done"] is live["done"]  # complete: shared, never copied
    assert frozen["open"] is not live["open"]
    parser.feed('c"}, 2]}')
    assert frozen == {"done": {"x": [1]}, "open": [1, {"y": "ab"}]}
    assert parser.snapshot_copy() is parser.value  # nothing open: the live value is final


def test_feed_returns_the_live_root():
    parser = IncrementalJsonParser()
    first = parser.feed("[1, ")
    assert parser.feed("2]") is first == [1, 2]


@pytest.mark.parametrize(
    ("text", "settled"),
    [("[", 0), ("[1", 0), ("[1,", 1), ('[1, "a', 1), ('[1, "a"', 2), ("[1, {", 1), ("[1, {}", 2), ("[1, [2]]", 2)],
)
def test_settled_counts_final_root_entries(text, settled):
    assert feed_all([text]).settled == settled


def test_random_documents_with_a_fixed_seed_round_trip():
    rng = random.Random(3)
    for _ in range(50):
        doc = json.dumps([{"id": rng.random(), "s": "é" * rng.randrange(5)} for _ in range(rng.randrange(5))])
        assert feed_all(split(doc, rng)).value == json.loads(doc)
