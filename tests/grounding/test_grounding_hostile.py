"""Hostile inputs and outputs: grounding finishes in bounded time and memory, or says what it skipped.

Each case runs in a child process with a time and memory limit (tests/isolation.py)."""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes

pytestmark = pytest.mark.slow  # child processes, a browser or a real server: the full run, not the fast loop

PRELUDE = """
import json, time
from dotprompt.grounding import ground
def report(grounding, started):
    statuses = sorted({f.status for f in grounding.values()})
    print(json.dumps({"n": len(grounding), "statuses": statuses, "skipped": grounding.skipped,
                      "seconds": time.process_time() - started}))
started = time.process_time()
"""

CASES = {
    "10 MB input: a bounded result that says so": (
        "g = ground({'v': 'x'}, {'text': 'word ' * 2_000_000})", lambda r: r["skipped"] and r["n"] == 0),
    "4 MB input, a value of each kind": (
        "text = ('Invoice 1.234,50 EUR on 2 Nov 2026 for blue widgets large. ' * 70_000)[:4_000_000]\n"
        "g = ground({'a': 'EUR', 'b': 1234.5, 'c': '2026-11-02', 'd': 'large blue widget', 'e': 'absent words here'},"
        " {'text': text})", lambda r: r["statuses"] == ["exact", "fuzzy", "normalised", "ungrounded"]),
    "100k values: the first 10k grounded, the rest named skipped": (
        "g = ground({f'k{i}': f'v{i}' for i in range(100_000)}, {'text': 'v1 v2 v3 ' * 1000})",
        lambda r: r["n"] == 10_000 and "10000" in r["skipped"]),
    "output nested 100k deep": (
        "out = 'x'\nfor _ in range(100_000): out = {'a': [out]}\ng = ground(out, {'text': 'x'})",
        lambda r: r["n"] == 0 and "deeper" in r["skipped"]),
    "one word repeated a million times": (
        "g = ground({'v': 'a', 'w': 'a a a b'}, {'text': 'a ' * 1_000_000})", lambda r: r["n"] == 2),
    "a value inside one giant word": (
        "g = ground({'v': 'aa', 'w': '---'}, {'text': 'a' * 2_000_000 + '-' * 1_000_000})", lambda r: r["n"] == 2),
    "a page of digits and separators": (
        "g = ground({'v': 1234.5, 'w': '2026-01-01'}, {'text': '1 1,1.1 01/01/26 ' * 100_000})", lambda r: r["n"] == 2),
    "fuzzy on common words everywhere": (
        "words = ['w%d' % (i % 50) for i in range(200_000)]\n"
        "g = ground({f'k{i}': ' '.join(words[i:i + 60][::-1]) + ' zz' for i in range(3000)}, {'text': ' '.join(words)})",
        lambda r: r["n"] == 3000),
    "a CJK name cut short, in a page of the name": (
        "g = ground({'v': '鈴木一', 'w': '鈴木一郎'}, {'text': '鈴木一郎様' * 800_000})",
        lambda r: r["statuses"] == ["exact", "ungrounded"]),
    "a value without its spaces, against a page of one-letter words": (
        "g = ground({'v': 'a' * 60, 'w': 'ab' * 30}, {'text': 'a ' * 2_000_000})", lambda r: r["n"] == 2),
    "an amount written as a string, in a page of grouped numbers": (
        "g = ground({'v': '234', 'w': '1 234', 'x': '-234'}, {'text': '1 234 ' * 600_000})", lambda r: r["n"] == 3),
    "a month of a year, among month names everywhere": (
        "g = ground({'v': '2019-03', 'w': '2020-04'}, {'text': '12 mar 2019 mar 2019 03/2019 ' * 150_000})",
        lambda r: r["statuses"] == ["normalised", "ungrounded"]),
    "generated text: a huge lower-case reply": (
        "g = ground({'v': 'the reply goes on ' * 1000}, {'text': 'the reply ' * 100_000})",
        lambda r: r["statuses"] == ["not_applicable"]),
    "many variables": (
        "g = ground({'v': 'needle'}, {f'var{i}': 'hay ' * 10 for i in range(50_000)} | {'last': 'needle'})",
        lambda r: r["statuses"] == ["exact"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_grounding_is_bounded(name):
    code, check = CASES[name]
    result = assert_finishes(PRELUDE + code + "\nreport(g, started)", timeout=60, memory_mb=1500).json()
    assert check(result), result
    assert result["seconds"] < 30, result
