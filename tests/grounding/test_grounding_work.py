"""How much work grounding does, counted rather than timed: the lines of dotprompt/grounding that run
(a deterministic measure of its Python work; the regex scans it starts are linear by construction).

Linear in the input, bounded per value however often the value's words occur, and a value repeated in
one output looked for once. Wall-clock figures are bench/bench_grounding.py's job."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import dotprompt.grounding
from dotprompt.grounding import Inputs, Limits, ground
from tests.grounding import synthetic

FOLDER = str(Path(dotprompt.grounding.__file__).parent)
WORDS = ("invoice", "total", "amount", "shipping", "widget", "blue", "large", "service", "march", "acme", "gmbh",
         "net", "due", "paid", "order", "customer")


def lines_run(work: Callable[[], object]) -> int:
    """Lines of the grounding package that `work` runs."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        count += event == "line"
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(FOLDER) else None

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(before)
    return count


def document(size: int, seed: int) -> str:
    return synthetic.document(size, random.Random(seed), WORDS)


OUTPUT = {"names": ["ACME GMBH", "Blue Widget", "net total due"], "amounts": [1234.56, 99, "12,50 EUR"],
          "dates": ["2026-03-14", "14 March 2026"], "absent": ["nowhere to be found zzq", "Q-77"]}


def test_the_work_is_linear_in_the_input():
    small = lines_run(lambda: ground(OUTPUT, {"text": document(20_000, 1)}))
    large = lines_run(lambda: ground(OUTPUT, {"text": document(200_000, 1)}))
    assert 5 < large / small < 11, (small, large)


def test_the_work_per_value_is_bounded_however_often_its_words_occur():
    def per_value(repeats: int) -> int:
        inputs = Inputs({"text": "blue widget, " * repeats})
        ground({"v": "x"}, inputs)  # the indexes, built once per input
        return lines_run(lambda: ground({"v": "BLUE WIDGET"}, inputs))  # every place a normalised match

    few, many = per_value(3_000), per_value(30_000)
    assert many <= few * 1.1, (few, many)
    assert few < 40 * Limits().max_tries, few  # a few dozen lines per place tried, at most max_tries places


def test_a_value_repeated_in_the_output_is_looked_for_once():
    inputs = Inputs({"text": document(50_000, 2)})
    ground({"v": "x"}, inputs)
    once = lines_run(lambda: ground({"v": ["Blue Widget", "2026-03-14"]}, inputs))
    often = lines_run(lambda: ground({"v": ["Blue Widget", "2026-03-14"] * 200}, inputs))
    assert often - once < 398 * 20, (once, often)  # each repeat: the walk and a lookup, not a search
