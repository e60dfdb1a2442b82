"""Hostile model output: the time of every 1 MB parse, whole and streamed, and streaming memory.

Prints a table of seconds per hostile input (the same inputs as tests/formats/test_formats_hostile.py)
for the whole-text parse (`json` format `parse_text`) and the streamed parse (the `json` format's
stream fed 1-16-character chunks through `feed_lazy`, as a streamed run does), then the peak
memory of streaming structured replies (every chunk's output kept, as the run keeps every chunk)
against the reply size, and the time of a reply twice as long against the single one.
Run: .venv/bin/python bench/bench_hostile_parse.py
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from dotprompt import generate_stream
from dotprompt.doubles import ScriptedModel
from dotprompt.formats import OutputParseError, get_format

MB = 1 << 20

HOSTILE: dict[str, Callable[[], str]] = {
    "balanced_brackets (10k deep)": lambda: "[" * 10_000 + "]" * 10_000,
    "open_brackets": lambda: "[" * MB,
    "open_braces": lambda: "{" * MB,
    "open_members": lambda: '{"a": ' * (MB // 6),
    "backticks": lambda: "`" * MB,
    "backtick_lines": lambda: "```\n" * (MB // 4),
    "unquoted_keys": lambda: "{" + ", ".join(f"k{i}: {i}" for i in range(MB // 12)) + "}",
    "single_quotes": lambda: "[" + ", ".join(f"'s{i}'" for i in range(MB // 10)) + "]",
    "comments": lambda: "[" + "".join(f"{i}, // c\n/* b */ " for i in range(MB // 20)) + "0]",
    "trailing_commas": lambda: "[" + "[1,], " * (MB // 6) + "0,]",
    "python_literals": lambda: "[" + "True, None, " * (MB // 12) + "False]",
    "control_chars": lambda: "[" + ", ".join('"a\tb"' for _ in range(MB // 8)) + "]",
    "keys_100k": lambda: json.dumps({f"key{i}": i for i in range(100_000)}),
    "int_array": lambda: json.dumps(list(range(MB // 7))),
    "long_string": lambda: json.dumps({"s": "x" * MB}),
    "truncated_long_string": lambda: '{"s": "' + "x " * (MB // 2),
    "prose_brackets": lambda: "see [1] and {2} " * (MB // 16),
}


def chunks(text: str, seed: int = 1) -> list[str]:
    rng, pos, out = random.Random(seed), 0, []
    while pos < len(text):
        size = rng.randint(1, 16)
        out.append(text[pos : pos + size])
        pos += size
    return out


def whole_seconds(text: str) -> tuple[float, str]:
    handler = get_format("json").handler(None)
    start = time.perf_counter()
    try:
        handler.parse_text(text)
        result = "value"
    except OutputParseError:
        result = "OutputParseError"
    return time.perf_counter() - start, result


def streamed_seconds(pieces: list[str], keep: list[Any] | None = None) -> float:
    stream = get_format("json").handler(None).new_stream()
    start = time.perf_counter()
    for piece in pieces:
        output = stream.feed_lazy(piece)
        if keep is not None:
            keep.append(output)
    return time.perf_counter() - start


def reply(items: int) -> str:
    return json.dumps({"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "score": i / 7} for i in range(items)]})


def memory_row(items: int) -> tuple[int, int]:
    text, kept = reply(items), []
    pieces = chunks(text, 3)
    tracemalloc.start()
    streamed_seconds(pieces, kept)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return len(text), peak


def run_seconds_and_peak(text: str, trace: bool) -> tuple[float, int]:
    """A whole generate_stream run (json output) of `text` in 8-character chunks; the caller keeps no chunks."""

    async def go() -> None:
        async for _ in generate_stream(model=ScriptedModel([text], chunk_size=8), prompt="x", output_format="json"):
            pass

    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    asyncio.run(go())
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    return seconds, peak


def main() -> None:
    print(f"{'1 MB hostile input':32} {'chars':>9} {'whole s':>8} {'streamed s':>10}  whole result")
    worst_whole = worst_streamed = 0.0
    for name, build in HOSTILE.items():
        text = build()
        pieces = chunks(text)
        whole, result = whole_seconds(text)
        streamed = streamed_seconds(pieces)
        worst_whole, worst_streamed = max(worst_whole, whole), max(worst_streamed, streamed)
        print(f"{name:32} {len(text):>9} {whole:>8.3f} {streamed:>10.3f}  {result}")
    print(f"worst whole parse {worst_whole:.3f} s, worst streamed parse {worst_streamed:.3f} s (goal < 1 s)\n")
    print(f"{'streamed reply (1-16 char chunks, outputs kept)':50} {'chars':>8} {'peak MB':>8} {'x reply':>8}")
    for items in (600, 2500):
        size, peak = memory_row(items)
        print(f"{'':50} {size:>8} {peak / 1e6:>8.2f} {peak / size:>8.1f}")
    one, two = chunks(reply(5000)), chunks(reply(10_000))
    t1 = min(streamed_seconds(one) for _ in range(3))
    t2 = min(streamed_seconds(two) for _ in range(3))
    print(f"\nlinearity: 1x text {t1:.3f} s, 2x text {t2:.3f} s, ratio {t2 / t1:.2f} (goal <= 2.3)")
    text = reply(2500)
    # A small run first: what the first run of a process loads (the loop, the formats, jsonschema) is
    # the process warming up, not memory the streamed run holds.
    run_seconds_and_peak(reply(10), trace=False)
    _, peak = run_seconds_and_peak(text, trace=True)
    print(f"\nwhole generate_stream run (json, 8-char chunks, caller keeps no chunks): {len(text)} chars, "
          f"peak {peak / 1e6:.2f} MB = {peak / len(text):.1f}x reply (goal <= 20)")
    r1 = min(run_seconds_and_peak(reply(2500), trace=False)[0] for _ in range(3))
    r2 = min(run_seconds_and_peak(reply(5000), trace=False)[0] for _ in range(3))
    print(f"whole run linearity: 1x text {r1:.3f} s, 2x text {r2:.3f} s, ratio {r2 / r1:.2f} (goal <= 2.3)")


if __name__ == "__main__":
    main()
