"""Streaming JSON output: cost of the parsed output of every chunk, ours against Genkit's re-parse.

A ~54 KB invoice list inside a ```json fence (with a line of prose before it) is split into
8-character chunks, ~6,750 of them, and each library produces the output of every chunk:
- ours: the `json` format's stream parser (`get_format("json").handler(schema).new_stream()`),
  one `feed(chunk)` per chunk, each returning a snapshot copy: the work behind `chunk.output`.
  Also the bare `IncrementalJsonParser.feed` (live snapshot), and the same for the 108 KB
  document, to show that doubling the text about doubles the time (linear, not quadratic);
- Genkit (if importable): a `ModelResponseChunk` per chunk with the chunks before it, built the
  way its generate loop does, and its `.output` (json format `parse_chunk` -> `extract_json`
  over the accumulated text);
- partial-json-parser re-parsing the accumulated JSON each chunk, as a reference.
Genkit's total takes about a minute; `--quick N` times only its first N chunks and extrapolates
the rest from a straight-line fit of cost against accumulated length (its cost per chunk is
linear in the text so far). Extrapolated figures are labelled as such, and are a lower bound: the
fit misses the garbage collector's growing share (a full run measured ~98 s where `--quick 1500`
extrapolated ~59 s, on a busy 2-core machine).
Run with bench/.peers/bin/python to include Genkit; any interpreter with our package runs the rest.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from _common import Result, arg_parser, report
from partial_json_parser import loads as partial_loads

from dotprompt.formats import IncrementalJsonParser, get_format

TARGET_RATIO = 300.0
TARGET_SECONDS = 0.2
CHUNK = 8
DOC_CHARS = 54_000
PROSE = "Here are the invoices you asked for, as JSON:\n\n```json\n"
FENCE_END = "\n```\n\nLet me know if you need anything else."

INVOICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"invoices": {"type": "array", "items": {"type": "object"}}, "count": {"type": "integer"}},
    "required": ["invoices"],
}


# -- the document ------------------------------------------------------------------------------

def invoice(rng: random.Random, number: int) -> dict[str, Any]:
    lines: list[dict[str, Any]] = [
        {
            "sku": f"SKU-{rng.randrange(10_000):04d}",
            "description": rng.choice(["Widget \"deluxe\", size M", "Café crème – 1 kg", "Cable 2 m\tgrey", "Service hour"]),
            "quantity": rng.randrange(1, 20),
            "unit_price": round(rng.uniform(1, 500), 2),
            "tax_rate": rng.choice([0.0, 0.07, 0.19]),
        }
        for _ in range(rng.randrange(1, 5))
    ]
    return {
        "id": f"INV-2024-{number:05d}",
        "issued": f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "customer": {"name": f"Customer {number} GmbH", "email": f"billing{number}@example.com", "vip": number % 7 == 0},
        "currency": "EUR",
        "lines": lines,
        "total": round(sum(line["quantity"] * line["unit_price"] for line in lines), 2),
        "paid": rng.random() < 0.5,
        "notes": None if rng.random() < 0.7 else "Paid by transfer; ref \u2116 " + str(rng.randrange(10**6)),
    }


def document(chars: int, seed: int = 7) -> tuple[str, Any]:
    """A model reply holding an invoice list of about `chars` characters, and the value it holds."""
    rng = random.Random(seed)
    invoices: list[dict[str, Any]] = []
    while True:
        body = json.dumps({"invoices": invoices, "count": len(invoices)}, indent=2, ensure_ascii=False)
        if len(body) >= chars:
            return PROSE + body + FENCE_END, json.loads(body)
        invoices.append(invoice(rng, len(invoices) + 1))


def chunked(text: str, size: int = CHUNK) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- ours --------------------------------------------------------------------------------------

def time_ours(documents: Sequence[tuple[list[str], Any]], repeats: int) -> list[tuple[float, float]]:
    """Best seconds over all chunks of each document: the json format stream (snapshot copies) and
    the bare parser. Documents alternate within each repeat so machine noise hits them alike."""
    handler = get_format("json").handler(INVOICE_SCHEMA)
    best = [[float("inf"), float("inf")] for _ in documents]
    for _ in range(repeats):
        for (chunks, expected), slot in zip(documents, best, strict=True):
            gc.collect()
            stream, start = handler.new_stream(), time.perf_counter()
            for chunk in chunks:
                output = stream.feed(chunk)
            slot[0] = min(slot[0], time.perf_counter() - start)
            if output != expected:
                raise SystemExit("ours: the last chunk's output differs from json.loads of the document")
            gc.collect()
            parser, start = IncrementalJsonParser(), time.perf_counter()
            for chunk in chunks:
                parser.feed(chunk)
            slot[1] = min(slot[1], time.perf_counter() - start)
    return [(stream_s, parser_s) for stream_s, parser_s in best]


# -- re-parsing peers ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    seconds: float
    chunks_timed: int
    extrapolated: bool
    last_output: Any


def time_per_chunk(make_output: Callable[[int], Any], chunks: Sequence[str], limit: int | None) -> Measured:
    """Time `make_output(i)` for chunk i; with `limit`, time the first `limit` and extrapolate."""
    count = len(chunks) if limit is None else min(limit, len(chunks))
    costs: list[float] = []
    output: Any = None
    for i in range(count):
        start = time.perf_counter()
        output = make_output(i)
        costs.append(time.perf_counter() - start)
    if count == len(chunks):
        return Measured(sum(costs), count, False, output)
    return Measured(extrapolate(costs, len(chunks)), count, True, output)


def extrapolate(costs: Sequence[float], total_chunks: int) -> float:
    """Least-squares line through cost against chunk index, summed over every chunk.
    Chunks are equal in size, so the index stands for the accumulated length."""
    n = len(costs)
    mean_x, mean_y = (n - 1) / 2, sum(costs) / n
    var = sum((i - mean_x) ** 2 for i in range(n)) or 1.0
    slope = sum((i - mean_x) * (c - mean_y) for i, c in enumerate(costs)) / var
    intercept = mean_y - slope * mean_x
    return sum(costs) + sum(intercept + slope * i for i in range(n, total_chunks))


def genkit_output_maker(chunks: Sequence[str]) -> Callable[[int], Any] | None:
    """Genkit's path to `chunk.output`, or None when genkit is not importable."""
    try:
        from genkit import ModelResponseChunk, Part, Role
        from genkit._ai._formats import JsonFormat
    except ImportError:
        return None
    formatter = JsonFormat()(INVOICE_SCHEMA)
    previous: list[Any] = []

    def output(i: int) -> Any:
        raw = ModelResponseChunk(role=Role.MODEL, content=[Part(text=chunks[i])])
        # As Genkit's generate loop does: a copy of the chunks before this one travels with it.
        wrapped = ModelResponseChunk(raw, index=0, previous_chunks=copy.copy(previous), chunk_parser=formatter.parse_chunk)
        previous.append(raw)
        return wrapped.output

    return output


def partial_json_output_maker(chunks: Sequence[str]) -> Callable[[int], Any]:
    """partial-json-parser over the accumulated JSON text (from the first `{`) on every chunk."""
    buffer: list[str] = []
    last: list[Any] = [None]

    def output(i: int) -> Any:
        buffer.append(chunks[i])
        text = "".join(buffer)
        start = text.find("{")
        if start >= 0:
            with contextlib.suppress(Exception):  # the closing fence after the value: keep the last output
                last[0] = partial_loads(text[start:])
        return last[0]

    return output


# -- report --------------------------------------------------------------------------------------

def label(measured: Measured, total_chunks: int) -> str:
    if measured.extrapolated:
        return f"EXTRAPOLATED from the first {measured.chunks_timed} of {total_chunks} chunks"
    return f"measured over all {total_chunks} chunks"


def run_ours(documents: Sequence[tuple[str, Any]], repeats: int) -> float:
    """Time ours on the document and its double; print both; return the 54 KB stream time."""
    (chunks, expected), (double_chunks, double_expected) = [(chunked(text), value) for text, value in documents]
    (stream, bare), (double_stream, double_bare) = time_ours([(chunks, expected), (double_chunks, double_expected)], repeats)
    print(f"ours, json format stream (snapshot copies): {stream * 1e3:8.1f} ms  ({stream / len(chunks) * 1e6:.1f} µs/chunk)")
    print(f"ours, IncrementalJsonParser.feed (live):    {bare * 1e3:8.1f} ms  ({bare / len(chunks) * 1e6:.1f} µs/chunk)")
    print(f"ours at {len(documents[1][0]):,} characters: "
          f"stream {double_stream * 1e3:.1f} ms, parser {double_bare * 1e3:.1f} ms")
    print(f"doubling ratio (108 KB / 54 KB): stream {double_stream / stream:.2f}, "
          f"parser {double_bare / bare:.2f}  (2.0 is linear)")
    return stream


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--quick", type=int, nargs="?", const=1500, metavar="N",
                        help="time Genkit and partial-json-parser on the first N chunks only (default N 1500) and extrapolate")
    parser.add_argument("--repeats", type=int, default=7, help="runs of ours, best kept (default 7)")
    args = parser.parse_args()

    (text, expected), doubled = document(DOC_CHARS), document(2 * DOC_CHARS)
    chunks = chunked(text)
    print(f"document: {len(text):,} characters, {len(chunks):,} chunks of {CHUNK}; doubled: {len(doubled[0]):,} characters")
    stream = run_ours([(text, expected), doubled], args.repeats)

    reference = time_per_chunk(partial_json_output_maker(chunks), chunks, args.quick)
    print(f"partial-json-parser re-parse per chunk:     {reference.seconds * 1e3:8.1f} ms  ({label(reference, len(chunks))})")

    make_genkit = genkit_output_maker(chunks)
    if make_genkit is None:
        print("genkit: not importable in this interpreter; skipped (run with bench/.peers/bin/python)")
        figure = f"ours {stream * 1e3:.1f} ms for {len(chunks):,} chunks"
        report(Result("stream json ours (no genkit)", figure, f"< {TARGET_SECONDS} s", stream < TARGET_SECONDS), args.json)
        return
    genkit = time_per_chunk(make_genkit, chunks, args.quick)
    if not genkit.extrapolated and genkit.last_output != expected:
        print("WARNING: Genkit's last chunk output differs from json.loads of the document")
    ratio = genkit.seconds / stream
    kind = "extrapolated" if genkit.extrapolated else "measured"
    print(f"genkit chunk.output (json parse_chunk):     {genkit.seconds * 1e3:8.1f} ms  ({label(genkit, len(chunks))})")
    print(f"ratio genkit/ours: {ratio:,.0f}x" + ("  (Genkit side extrapolated)" if genkit.extrapolated else ""))
    figure = f"genkit {genkit.seconds:.1f} s ({kind}) vs ours {stream * 1e3:.1f} ms = {ratio:,.0f}x"
    report(Result("stream json genkit/ours", figure, f">= {TARGET_RATIO:.0f}x", ratio >= TARGET_RATIO), args.json)


if __name__ == "__main__":
    main()
