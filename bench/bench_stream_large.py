"""Streaming 256 KB and 1 MB replies in 8-character chunks: linear, against Genkit (issue 24, items 22-23).

Five replies, each at 256 KB and 1 MB, split into 8-character chunks:
- `object`: one flat object, ~10 characters a member (about 100k keys at 1 MB);
- `int_array`: a flat array of integers;
- `nested`: bench_stream.py's invoice list (nested objects and arrays, in a ```json fence);
- `long_string`: `{"text": "lorem ipsum ..."}`, one string value;
- `jsonl_repair`: `{a:1}` lines, JSONL with one repair (an unquoted key) on every line.

Ours, in a child process per measurement (so the tree measured is the one on PYTHONPATH, and
`--before DIR` measures another checkout, e.g. main, in the same session, alternating with this
one): the format's stream, one `feed(chunk)` per chunk (for `json` a snapshot copy: every chunk's
output built), then the final `parse_text` of the whole reply. Printed: seconds (best and median
of `--repeats`), the 1 MB / 256 KB ratio (4.0 is linear; the goal is at most 4.6), before/after.
Then, with `--e2e`, the whole streamed run in a child: `generate_stream` over a ScriptedModel
sending the chunks, every chunk's `.output` read and the chunk dropped; its seconds and its peak
memory (the RSS high-water mark, reset after a warm-up run, less the RSS then) over the reply size
(goal at most 20), and beside it tracemalloc's peak of a second, untimed run.

Genkit (run with bench/.peers/bin/python): what its generate loop does per chunk, a
`ModelResponseChunk` with a copy of the chunks before it and its `.output` (the `json` format's
`extract_json` over the accumulated text, json5 then partial-json-parser; for `jsonl` its chunk
parser over the text since the last newline, after joining the accumulated text), then its
final `parse_message`. Its cost per chunk grows with the text so far, so timing all 131k chunks of
1 MB would take hours: it is timed at `--peer-samples` evenly spaced chunks and summed over every
chunk by the trapezoid rule (labelled "est."). The final parse is timed whole.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, Result, arg_parser, report_all

CHUNK = 8
SIZES = {"256KB": 256 * 1024, "1MB": 1024 * 1024}
LINEAR_GOAL = 4.6
SECONDS_GOAL = 2.0
PEAK_GOAL = 20.0


# -- the replies (plain functions of json: the child processes import them from here) -------------

def object_reply(chars: int) -> str:
    keys = chars // 11
    return json.dumps({f"k{i}": i % 10 for i in range(keys)}, separators=(",", ":"))


def int_array_reply(chars: int) -> str:
    return json.dumps(list(range(chars // 7)))


def nested_reply(chars: int) -> str:
    from bench_stream import document  # imports dotprompt: only where the reply is built
    return document(chars)[0]


def long_string_reply(chars: int) -> str:
    return json.dumps({"text": "lorem ipsum " * (chars // 12)})


def jsonl_reply(chars: int) -> str:
    return "{a:1}\n" * (chars // 6)


REPLIES: dict[str, Callable[[int], str]] = {
    "object": object_reply, "int_array": int_array_reply, "nested": nested_reply,
    "long_string": long_string_reply, "jsonl_repair": jsonl_reply,
}


def format_of(shape: str) -> str:
    return "jsonl" if shape.startswith("jsonl") else "json"


def chunked(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


# -- ours, in a child ------------------------------------------------------------------------------

_FORMAT_CHILD = """
import gc, json, sys, time
sys.path.insert(0, {bench!r})
import dotprompt
from bench_stream_large import REPLIES, chunked, format_of
from dotprompt.formats import get_format
text = REPLIES[{shape!r}]({chars})
handler = get_format(format_of({shape!r})).handler(None)
chunks = chunked(text)
gc.collect()
stream, start = handler.new_stream(), time.perf_counter()
for chunk in chunks:
    out = stream.feed(chunk)
streamed = time.perf_counter() - start
start = time.perf_counter()
parsed = handler.parse_text(text)
final = time.perf_counter() - start
if format_of({shape!r}) == "json":
    assert out == parsed.value, "the last chunk's output is not the parsed reply"
print(json.dumps({{"stream": streamed, "parse": final, "chars": len(text), "chunks": len(chunks),
                  "package": dotprompt.__file__}}))
"""

_E2E_CHILD = """
import asyncio, gc, json, sys, time, tracemalloc
sys.path.insert(0, {bench!r})
from bench_stream_large import REPLIES, format_of
from dotprompt import generate_stream
from dotprompt.doubles import ScriptedModel

async def run(reply):
    outputs = 0
    async for chunk in generate_stream(model=ScriptedModel([reply], chunk_size=8), prompt="x",
                                       output_format=format_of({shape!r})).stream:
        outputs += chunk.output is not None  # every chunk's output read; the chunk is dropped
    return outputs

text = REPLIES[{shape!r}]({chars})
asyncio.run(run(text[:2000] if format_of({shape!r}) == "jsonl" else REPLIES[{shape!r}](2000)))  # warm-up
gc.collect()

def status(field):  # kB in /proc/self/status: VmRSS now, VmHWM its high-water mark (this process's own)
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) * 1024 for line in lines if line.startswith(field + ":"))

with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the high-water mark starts again from the RSS now
before = status("VmRSS")
start = time.perf_counter()
asyncio.run(run(text))
seconds = time.perf_counter() - start
peak = status("VmHWM") - before
gc.collect()
tracemalloc.start()  # the same run again, its Python allocations traced (slower; not timed)
asyncio.run(run(text))
traced = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"seconds": seconds, "peak": peak, "traced": traced, "chars": len(text)}}))
"""


def child(code: str, tree: Path, timeout: float) -> dict[str, Any] | None:
    """Run `code` with `tree` first on the path; its JSON line, or None when it ran out of time."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{BENCH_DIR}"}
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=BENCH_DIR)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"the child for {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- Genkit ---------------------------------------------------------------------------------------

def genkit_costs(shape: str, text: str, samples: int) -> tuple[float, float] | None:
    """Genkit's streaming seconds (estimated from `samples` chunks) and its final parse; None without genkit."""
    try:
        from genkit import ModelResponseChunk, Part, Role
        from genkit._ai._formats import JsonFormat, JsonlFormat
        from genkit._ai._model import Message
    except ImportError:
        return None
    formatter = (JsonlFormat() if format_of(shape) == "jsonl" else JsonFormat())(None)
    raws = [ModelResponseChunk(role=Role.MODEL, content=[Part(text=chunk)]) for chunk in chunked(text)]

    def cost(i: int) -> float:
        start = time.perf_counter()
        # as Genkit's generate loop does: a copy of the chunks before this one travels with it
        wrapped = ModelResponseChunk(raws[i], index=0, previous_chunks=raws[:i], chunk_parser=formatter.parse_chunk)
        wrapped.output  # noqa: B018 - the cost being measured
        return time.perf_counter() - start

    points = sorted({0, *(round(k * (len(raws) - 1) / samples) for k in range(1, samples + 1))})
    costs = [cost(i) for i in points]
    streamed = sum((costs[k - 1] + costs[k]) / 2 * (points[k] - points[k - 1]) for k in range(1, len(points)))
    streamed += costs[0]
    message = Message(role=Role.MODEL, content=[Part(text=text)])
    start = time.perf_counter()
    formatter.parse_message(message)
    return streamed, time.perf_counter() - start


# -- the run ---------------------------------------------------------------------------------------

def best_median(values: list[float]) -> str:
    return f"{min(values):7.2f} {statistics.median(values):7.2f}"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(REPLIES), help="comma-separated (default all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of ours per tree and size (default 3)")
    parser.add_argument("--before", type=Path, help="another checkout (e.g. /work/main) measured alternately")
    parser.add_argument("--before-repeats", type=int, default=1, help="runs of the --before tree (default 1)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a child is given up (default 300)")
    parser.add_argument("--peer-samples", type=int, default=4, help="chunks Genkit is timed at, per reply (0: no peer)")
    parser.add_argument("--peer-sizes", default=",".join(SIZES), help="sizes Genkit is timed at (default all: ~15 min)")
    parser.add_argument("--e2e", action="store_true", help="also the whole streamed run, with its peak memory")
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    after = BENCH_DIR.parent
    print(f"{load()}; {CHUNK}-character chunks; ours = {after}" + (f", before = {args.before}" if args.before else ""))

    ours: dict[tuple[str, str, str], list[float | None]] = {}
    for _ in range(max(args.repeats, args.before_repeats if args.before else 0)):
        for shape in shapes:
            for size, chars in SIZES.items():
                trees = [("after", after)] * (len(ours.get((shape, size, "after"), [])) < args.repeats)
                if args.before and len(ours.get((shape, size, "before"), [])) < args.before_repeats:
                    trees.append(("before", args.before))
                for name, tree in trees:
                    got = child(_FORMAT_CHILD.format(bench=str(BENCH_DIR), shape=shape, chars=chars), tree, args.timeout)
                    if got is not None and name == "after":
                        assert Path(got["package"]).is_relative_to(tree), got["package"]
                    total = None if got is None else got["stream"] + got["parse"]
                    ours.setdefault((shape, size, name), []).append(total)
    print(f"measured ({load()})")

    results: list[Result] = []
    print(f"\n{'reply':14} {'size':>6} {'after: best  median':>20} {'1MB/256KB':>9} {'before':>9} {'before/after':>12}"
          f" {'genkit (est.)':>13} {'ours/genkit':>11}")
    for shape in shapes:
        for size, chars in SIZES.items():
            runs = [t for t in ours[(shape, size, "after")] if t is not None]
            best = min(runs)
            ratio = ""
            if size == "1MB":
                ratio = f"{best / min(t for t in ours[(shape, '256KB', 'after')] if t is not None):9.2f}"
            before = ""
            speedup = ""
            if args.before:
                old = [t for t in ours[(shape, size, "before")] if t is not None]
                before = f"{min(old):9.2f}" if old else f">{args.timeout:8.0f}"
                speedup = f"{min(old) / best:11.1f}x" if old else f">{args.timeout / best:10.0f}x"
            timed = args.peer_samples and size in args.peer_sizes.split(",")
            peer = genkit_costs(shape, REPLIES[shape](chars), args.peer_samples) if timed else None
            peer_cell = f"{sum(peer):13.1f}" if peer else f"{'-':>13}"
            ours_peer = f"{best / sum(peer):11.5f}" if peer else f"{'-':>11}"
            print(f"{shape:14} {size:>6} {best_median(runs):>20} {ratio:>9} {before:>9} {speedup:>12} {peer_cell} {ours_peer}",
                  flush=True)
            if size == "1MB":
                linear = float(ratio)
                results.append(Result(f"stream {shape} 1MB", f"{best:.2f} s, x{linear:.2f} for 4x the text",
                                      f"< {SECONDS_GOAL} s, <= {LINEAR_GOAL}x", best < SECONDS_GOAL and linear <= LINEAR_GOAL))

    if args.e2e:
        print(f"\nwhole streamed run, every chunk's output read ({load()})")
        print(f"{'reply':14} {'size':>6} {'seconds':>8} {'peak MB':>8} {'x reply':>8} {'traced x':>9}")
        for shape in shapes:
            for size, chars in SIZES.items():
                got = child(_E2E_CHILD.format(bench=str(BENCH_DIR), shape=shape, chars=chars), after, args.timeout)
                if got is None:
                    print(f"{shape:14} {size:>6} {'timeout':>8}")
                    continue
                times = got["peak"] / got["chars"]
                print(f"{shape:14} {size:>6} {got['seconds']:8.2f} {got['peak'] / 1e6:8.1f} {times:8.1f}"
                      f" {got['traced'] / got['chars']:9.1f}", flush=True)
                if size == "1MB":
                    results.append(Result(f"stream {shape} 1MB peak", f"{times:.1f}x the reply", f"<= {PEAK_GOAL:.0f}x",
                                          times <= PEAK_GOAL))
    print()
    report_all(results, args.json)


if __name__ == "__main__":
    main()
