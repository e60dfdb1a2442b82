"""Streamed outputs cost work linear in the reply, and stay exact.

Reading every chunk's output of a big object or array used to copy the whole open container per
chunk (quadratic: a 1 MB object of 100k keys took over 25 s), and JSONL's final parse counted
lines from the start of the text for every repaired line (1 MB of `{a:1}` lines: 67 s). The
parser now extends an output nobody holds any more into the next one, so the work is counted
here (`IncrementalJsonParser.copied`, the characters a line cursor walks), not timed: a reply
four times as long must cost at most 4.6 times the work. The 1 MB runs themselves are in
child processes with a time and memory limit (slow).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dotprompt.formats.reading.snapshots as snapshots
from dotprompt.formats import IncrementalJsonParser, get_format
from dotprompt.formats.reading.limits import STREAM_STRING_COPIES
from tests.formats.jsondocs import SCALARS, SEEDS, Writer, split
from tests.isolation import assert_finishes

FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
LINEAR = 4.6  # the work of a reply 4 times as long, at most (16 when quadratic)


# -- replies of each shape, about `chars` long ------------------------------------------------------

def keys_object(chars: int) -> str:
    return json.dumps({f"k{i}": i for i in range(chars // 12)})


def int_array(chars: int) -> str:
    return json.dumps(list(range(chars // 7)))


def nested(chars: int) -> str:
    rows = [{"id": i, "tags": ["a", "b"], "sub": {"x": [1, 2, {"y": "z"}]}} for i in range(chars // 60)]
    return json.dumps({"meta": {"rows": rows}})


def long_string(chars: int) -> str:
    return json.dumps({"text": "lorem ipsum " * (chars // 12)})


def deep_spine(chars: int) -> str:
    return json.dumps({"a": {"b": [{"c": {"d": list(range(chars // 7))}}]}})


SHAPES = {"keys_object": keys_object, "int_array": int_array, "nested": nested, "long_string": long_string,
          "deep_spine": deep_spine}


def chunks_of(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def work_of_feed(text: str) -> int:
    """The json format's stream (`feed` per chunk), the caller keeping the last output, as
    `out = stream.feed(chunk)` does."""
    parser = IncrementalJsonParser()
    out = None
    for chunk in chunks_of(text):
        parser.advance(chunk)
        out = parser.snapshot_copy()
    assert out == json.loads(text)
    return parser.copied


def work_of_lazy_reads(text: str) -> int:
    """What a streamed run does: `feed_lazy` per chunk, its output read, the chunk dropped."""
    parser = IncrementalJsonParser()
    for chunk in chunks_of(text):
        snapshot = parser.feed_lazy(chunk)
        getattr(snapshot, "value", snapshot)
    return parser.copied


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("work_of", [work_of_feed, work_of_lazy_reads])
def test_reading_every_chunks_output_costs_work_linear_in_the_reply(shape, work_of):
    small, large = SHAPES[shape](64_000), SHAPES[shape](256_000)  # a long string: past its exact start
    ratio = work_of(large) / work_of(small)
    assert ratio <= LINEAR * len(large) / (4 * len(small)), (shape, ratio)


def test_the_work_measure_sees_the_quadratic_way(monkeypatch):
    """Without extending outputs (no reference counts: every output a fresh copy) the same measure
    grows 16-fold: the test above would catch a return to it."""
    monkeypatch.setattr(snapshots, "_COUNTS_REFS", False)
    ratio = work_of_feed(keys_object(64_000)) / work_of_feed(keys_object(16_000))
    assert ratio > 12, ratio


def test_an_output_the_caller_still_holds_is_never_extended():
    parser = IncrementalJsonParser()
    held = []
    for chunk in chunks_of(keys_object(4_000)):
        parser.advance(chunk)
        output = parser.snapshot_copy()
        held.append((output, copy.deepcopy(output)))
    assert all(output == at_the_time for output, at_the_time in held)
    changes = sum(1 for (_, before), (_, after) in itertools.pairwise(held) if before != after)
    # every one held: each change a copy of its own (a chunk that changed nothing may share the last one)
    assert len({id(output) for output, _ in held}) == changes + 1


def test_outputs_nobody_holds_are_reused_so_a_run_holds_at_most_two():
    parser = IncrementalJsonParser()
    seen = set()
    for chunk in chunks_of(int_array(8_000)):
        snapshot = parser.feed_lazy(chunk)
        seen.add(id(getattr(snapshot, "value", snapshot)))  # read, then dropped
    assert len(seen) <= 3  # the pool of two, and the finished value


def test_a_long_open_string_is_copied_within_the_budget_and_lags_by_at_most_its_share():
    text = long_string(400_000)
    start = len('{"text": "')
    parser = IncrementalJsonParser()
    lags, end = [], 0
    for chunk in chunks_of(text):
        end += len(chunk)
        out = parser.feed_lazy(chunk)
        value = getattr(out, "value", out)
        if not parser.done and "text" in value:
            so_far = text[start:end]
            assert so_far.startswith(value["text"])
            lags.append((len(so_far) - len(value["text"]), len(so_far)))
    assert parser.copied <= STREAM_STRING_COPIES * len(text) + len(text)
    assert max(lag - length / STREAM_STRING_COPIES for lag, length in lags) <= 8
    assert all(lag == 0 for lag, length in lags if length <= 16_000)  # shorter strings: exact
    assert max(lag for lag, _ in lags) > 0  # the budget did apply
    assert parser.value == json.loads(text)


def test_the_enum_stream_copies_within_the_same_budget_and_is_exact_for_short_replies():
    handler = get_format("enum").handler({"enum": ["positive", "negative"]})
    short, stream = ' "positive" \n', handler.new_stream()
    assert [stream.feed(c) for c in short] == [short[: i + 1].strip().strip("\"'`").strip() for i in range(len(short))]
    text, stream, end, lags = "ab " * 100_000, handler.new_stream(), 0, []
    for chunk in chunks_of(text):
        end += len(chunk)
        out = stream.feed(chunk)
        exact = text[:end].strip()
        assert exact.startswith(out)
        lags.append((len(exact) - len(out), end))
    assert stream._copied <= STREAM_STRING_COPIES * len(text)  # the copies: the work, bounded by the budget
    assert max(lag - at / STREAM_STRING_COPIES for lag, at in lags) <= 8
    assert all(lag == 0 for lag, at in lags if at <= 16_000)
    assert max(lag for lag, _ in lags) > 0


# -- exact: every output equals the prefix parsed afresh, whatever is held, dropped or read late -----

DICTS = st.dictionaries(st.text(max_size=4), SCALARS, min_size=14, max_size=40)  # objects read from their end
BIG = st.recursive(SCALARS | DICTS, lambda inner: st.lists(inner, max_size=20) | st.dictionaries(
    st.text(max_size=6), inner, max_size=24), max_leaves=60)


def duplicate_keys(rng: random.Random) -> str:
    members = [f'"k{rng.randrange(6)}": {rng.choice(["1", "[1, 2]", "{}", chr(34) + "ab" + chr(34), "[{}]"])}'
               for _ in range(rng.randrange(1, 30))]
    return "{" + ", ".join(members) + "}"


def expected_at(text: str) -> str:
    parser = IncrementalJsonParser()
    return repr(copy.deepcopy(parser.feed(text)))  # `feed` publishes the open string; repr: NaN


def assert_every_output_exact(text: str, rng: random.Random) -> None:
    """Feed `text` in random chunks, holding, dropping, reading late or copying each chunk's output at
    random: each must equal its prefix parsed afresh, and a held one must never change afterwards."""
    parser = IncrementalJsonParser()
    held, late, end = [], [], 0
    for chunk in split(text, rng):
        end += len(chunk)
        snapshot = parser.feed_lazy(chunk)
        action = rng.random()
        if action < 0.3:
            value = getattr(snapshot, "value", snapshot)
            held.append((value, repr(copy.deepcopy(value)), end))
        elif action < 0.6:
            assert repr(getattr(snapshot, "value", snapshot)) == expected_at(text[:end])  # read, dropped
        elif action < 0.8:
            late.append((snapshot, end))
        else:
            assert repr(parser.snapshot_copy()) == expected_at(text[:end])
    rng.shuffle(late)
    for snapshot, at in late:
        assert repr(getattr(snapshot, "value", snapshot)) == expected_at(text[:at])
    for value, at_the_time, at in held:
        assert repr(value) == at_the_time == expected_at(text[:at])  # unchanged since it was handed out


def fixed_root(rng: random.Random, depth: int = 0) -> object:
    """A document of the fuzz strategy's shapes (wide objects read from their end, lists, every scalar)."""
    roll = rng.random()
    if depth >= 2 or (depth and roll < 0.5):
        return rng.choice([None, True, False, 0, -7, 2.5, 1e300, "", "é\u2028\"x\\", "k" * 12])
    if roll < 0.4:
        return [fixed_root(rng, depth + 1) for _ in range(rng.randrange(8))]
    return {f"k{i}{'é' * (i % 3)}": fixed_root(rng, depth + 1) for i in range(rng.randrange(8, 18))}


FIXED_DOCUMENTS = range(12)  # the developer loop's share of the fuzz tests below (slow: 200 examples each)


@pytest.mark.parametrize("seed", FIXED_DOCUMENTS)
def test_every_output_is_exact_on_fixed_documents(seed):
    rng = random.Random(seed)
    text = duplicate_keys(rng) if seed % 4 == 3 else Writer(rng).dump(fixed_root(rng))
    assert_every_output_exact(text, rng)


@pytest.mark.slow
@FUZZ
@given(root=BIG, seed=SEEDS, duplicates=st.booleans())
def test_every_output_is_exact_whatever_the_caller_holds_drops_or_reads_late(root, seed, duplicates):
    rng = random.Random(seed)
    assert_every_output_exact(duplicate_keys(rng) if duplicates else Writer(rng).dump(root), rng)


# -- jsonl: one repair per line, positions counted from the line before -------------------------------

def cursor_walk(monkeypatch) -> list[int]:
    """Patch every line cursor and `where` the formats use to add up how far they walk the text."""
    import dotprompt.formats.reading.extract as extract
    import dotprompt.formats.reading.jsonl_lines as jsonl
    import dotprompt.formats.reading.lenient as lenient
    from dotprompt.formats.reading.textpos import LineCursor, where

    walked = [0]

    class Counting(LineCursor):
        def where(self, offset: int) -> str:
            walked[0] += abs(offset - self._offset)
            return super().where(offset)

    def counting_where(text: str, offset: int) -> str:
        walked[0] += offset
        return where(text, offset)

    for module in (extract, jsonl, lenient):
        monkeypatch.setattr(module, "LineCursor", Counting)
    monkeypatch.setattr(extract, "where", counting_where)
    return walked


def test_jsonl_with_a_repair_per_line_walks_the_text_once(monkeypatch):
    walked = cursor_walk(monkeypatch)
    handler = get_format("jsonl").handler(None)
    work = []
    for lines in (2_000, 8_000):
        walked[0] = 0
        parsed = handler.parse_text("{a:1}\n" * lines + '{"b": [1,\n')
        assert len(parsed.value) == lines + 1
        assert [r.kind for r in parsed.repairs] == ["unquoted_key"] * lines + ["completed_truncated"]
        assert parsed.repairs[-2].detail == f"quoted the key 'a' at line {lines}, column 2 (offset {6 * lines - 5})"
        work.append(walked[0])
    assert work[1] / work[0] <= LINEAR, work


def assert_lenient_first_gives_strict(text: str) -> None:
    """JSONL sends a line straight to the lenient reader when the line before needed repairs."""
    from dotprompt.formats.reading.extract import parse_json_at

    stop = text.rindex("\n")
    strict = parse_json_at(text, 0, stop)
    lenient = parse_json_at(text, 0, stop, strict_first=False)
    assert repr(lenient) == repr(strict)  # value (repr: NaN), repairs, end


@pytest.mark.parametrize("seed", FIXED_DOCUMENTS)
def test_strict_json_read_by_the_lenient_reader_first_on_fixed_documents(seed):
    rng = random.Random(seed)
    root = {f"m{i}": fixed_root(rng) for i in range(rng.randrange(1, 6))}
    assert_lenient_first_gives_strict(Writer(rng).dump(root) + ["", " ", "x", "}"][seed % 4] + "\n{}")


@pytest.mark.slow
@FUZZ
@given(root=st.dictionaries(st.text(max_size=6), BIG, max_size=6), seed=SEEDS, tail=st.sampled_from(["", " ", "x", "}"]))
def test_strict_json_read_by_the_lenient_reader_first_gives_what_the_strict_reader_gives(root, seed, tail):
    assert_lenient_first_gives_strict(Writer(random.Random(seed)).dump(root) + tail + "\n{}")


def test_the_line_cursor_steps_back_without_starting_over():
    from dotprompt.formats.reading.textpos import LineCursor, where

    text = "ab\ncd\n\nefg\nh"
    cursor = LineCursor(text)
    for offset in [9, 2, 4, 12, 0, 7, 7, 3]:
        assert cursor.where(offset) == where(text, offset)


# -- 1 MB in 8-character chunks, in a child with limits -------------------------------------------------

_CHILD = """
import json, time
from dotprompt.formats import get_format
from tests.formats.test_stream_linear import SHAPES, chunks_of
text = SHAPES[{shape!r}](1_000_000)
stream = get_format("json").handler(None).new_stream()
for chunk in chunks_of(text):
    out = stream.feed(chunk)
assert out == json.loads(text)
print(json.dumps({{"chars": len(text)}}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_megabyte_streamed_in_8_character_chunks_finishes_in_a_child(shape):
    assert_finishes(_CHILD.format(shape=shape), timeout=30, memory_mb=1024).json()


@pytest.mark.slow
def test_four_megabytes_of_enum_reply_in_8_character_chunks_finishes_in_a_child():
    code = """
    import json
    from dotprompt.formats import get_format
    text = "x" * 4_000_000
    stream = get_format("enum").handler(None).new_stream()
    for i in range(0, len(text), 8):
        out = stream.feed(text[i:i + 8])
    assert text.startswith(out) and len(text) - len(out) <= len(text) / 2000 + 8  # past the budget: a little behind
    print(json.dumps({"chars": len(text)}))
    """
    assert_finishes(code, timeout=30, memory_mb=1024).json()  # every output a full copy: 16 minutes


@pytest.mark.slow
def test_a_megabyte_of_jsonl_with_a_repair_per_line_finishes_in_a_child():
    code = """
    import json
    from dotprompt.formats import get_format
    text = "{a:1}\\n" * 170_000
    handler = get_format("jsonl").handler(None)
    stream = handler.new_stream()
    items = [item for i in range(0, len(text), 8) for item in stream.feed(text[i:i + 8])]
    parsed = handler.parse_text(text)
    assert items == parsed.value == [{"a": 1}] * 170_000 and len(parsed.repairs) == 170_000
    print(json.dumps({"chars": len(text)}))
    """
    assert_finishes(code, timeout=30, memory_mb=1024).json()


@pytest.mark.slow
def test_a_streamed_run_reading_every_chunks_output_of_a_megabyte_object_finishes_in_a_child():
    code = """
    import asyncio, json
    from dotprompt import generate_stream
    from dotprompt.doubles import ScriptedModel
    from tests.formats.test_stream_linear import keys_object
    reply = keys_object(1_000_000)
    async def go():
        last = None
        async for item in generate_stream(model=ScriptedModel([reply], chunk_size=8), prompt="x", output_format="json"):
            last = item.output if hasattr(item, "index") else item
        return last
    response = asyncio.run(go())
    assert response.output == json.loads(reply)
    print(json.dumps({"chars": len(reply)}))
    """
    assert_finishes(code, timeout=60, memory_mb=1024).json()


def test_a_streamed_run_reads_every_chunk_output_with_linear_work(monkeypatch):
    import dotprompt.formats.reading.incremental as incremental  # where the json stream takes its parser from
    from dotprompt import generate_stream
    from dotprompt.doubles import ScriptedModel

    parsers: list[IncrementalJsonParser] = []

    class Recorded(IncrementalJsonParser):
        def __init__(self) -> None:
            super().__init__()
            parsers.append(self)

    monkeypatch.setattr(incremental, "IncrementalJsonParser", Recorded)

    async def work(reply: str) -> int:
        parsers.clear()
        outputs = 0
        async for chunk in generate_stream(model=ScriptedModel([reply], chunk_size=8), prompt="x", output_format="json").stream:
            outputs += chunk.output is not None
        assert outputs > len(reply) // 8 - 2
        return sum(parser.copied for parser in parsers)

    small, large = asyncio.run(work(keys_object(8_000))), asyncio.run(work(keys_object(32_000)))
    assert large / small <= LINEAR, (small, large)


# -- the call path of one chunk's output ------------------------------------------------------------

def _python_calls(action) -> list[str]:
    """The Python functions `action()` enters, in order (sys.setprofile: calls, not time)."""
    import sys
    calls: list[str] = []

    def profile(frame: object, event: str, arg: object) -> None:
        if event == "call":
            calls.append(frame.f_code.co_qualname)  # type: ignore[attr-defined]

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls[:-1]  # the last entry is sys.setprofile itself leaving: not ours


def test_a_chunk_output_goes_straight_to_the_copies_builder() -> None:
    """Reading one chunk's output (a snapshot, or `.value` of the lazy one) enters the copies
    builder directly: no forwarding frame in between (the +1.3 % per stream measured after the
    builder moved to snapshots.py)."""
    parser = IncrementalJsonParser()
    parser.feed('{"a": [1, 2, {"b": "te')
    calls = _python_calls(parser.snapshot_copy)
    assert calls[:2] == ["IncrementalJsonParser.snapshot_copy", "SpineCopies.build"], calls
    parser.feed("xt")
    lazy = parser.feed_lazy('", "c": 3')
    calls = _python_calls(lambda: lazy.value)[1:]  # after the lambda's own frame
    assert calls[:2] == ["LazySnapshot.value", "SpineCopies.build"], calls
