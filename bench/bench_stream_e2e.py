"""The end-to-end stream of issue 35: a ~34 KB structured reply in 1-16-character chunks, every chunk's output read.

`async for item in generate_stream(model=..., prompt="order", output_schema=ORDER_SCHEMA)` over a model
that sends bench_loop.py's order document (pretty-printed JSON, ~34 KB) in chunks of random length
1-16 (seeded, the same chunks every run), giving the event loop a turn between chunks as a network
model does; every chunk's `.output` is read, and the last chunk's and the final output must equal the
document. Figure: ms per whole stream (best of `--repeats` in one process) and µs per chunk.

Each measurement runs in a child interpreter, so `--before DIR` (a folder holding another tree's
`dotprompt` package, e.g. `git archive <commit> dotprompt | tar -x -C DIR`) is measured in the same
session, the children alternating: compare the before/after ratio of one run, not figures across runs.
`--child` is that child (it prints one JSON line). Ours only: Genkit's side of the same stream is
bench_loop.py's and bench_stream.py's (its re-parse per chunk is hundreds of times slower).
Runs with the dev venv: `.venv/bin/python bench/bench_stream_e2e.py --before /tmp/before`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

DOC_CHARS = 34_000
SEED = 35


def pieces(text: str, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        size = rng.randint(1, 16)
        out.append(text[at:at + size])
        at += size
    return out


def child(repeats: int) -> None:
    import asyncio
    import gc
    import time

    from bench_loop import ORDER_SCHEMA, order_document

    from dotprompt import Chunk, generate_stream
    from dotprompt.doubles import ScriptedModel
    from dotprompt.types import ModelChunk, Part

    text, expected = order_document(DOC_CHARS)
    chunks = pieces(text)

    class PieceModel(ScriptedModel):
        """ScriptedModel's reply sent in the given pieces, a loop turn after each."""

        async def generate(self, request, on_chunk=None):  # type: ignore[no-untyped-def]
            self.requests.append(request)
            if on_chunk is not None:
                for piece in chunks:
                    on_chunk(ModelChunk(role="model", content=[Part(text=piece)]))
                    await asyncio.sleep(0)
            from dotprompt.doubles import as_response
            return as_response(text)

    async def one() -> float:
        seen, last, final = 0, None, None
        start = time.perf_counter()
        async for item in generate_stream(model=PieceModel([text]), prompt="order", output_schema=ORDER_SCHEMA):
            if isinstance(item, Chunk):
                seen += 1
                last = item.output
            else:
                final = item.output
        seconds = time.perf_counter() - start
        if final != expected or last != expected or seen != len(chunks):
            raise SystemExit(f"stream: {seen} chunks of {len(chunks)}; last or final output differs from the document")
        return seconds

    async def main() -> list[float]:
        first.append(await one())  # warm-up: imports, first compiles
        times = []
        for _ in range(repeats):
            gc.collect()
            times.append(await one())
        return times

    first: list[float] = []
    times = asyncio.run(main())
    print(json.dumps({"chars": len(text), "chunks": len(chunks), "times": times, "first": first[0]}))


def run_child(tree: Path | None, repeats: int) -> dict[str, Any]:
    here = Path(__file__).resolve().parent
    paths = ([str(tree)] if tree else []) + [str(here)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    done = subprocess.run([sys.executable, __file__, "--child", "--repeats", str(repeats)], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child ({tree or 'this tree'}) failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="streams timed per child, best kept (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="children per tree, alternating (default 3)")
    parser.add_argument("--before", type=Path, help="a folder holding another tree's dotprompt package")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.repeats)
        return
    trees: list[tuple[str, Path | None]] = [("after", None)] + ([("before", args.before)] if args.before else [])
    best: dict[str, list[float]] = {name: [] for name, _ in trees}
    shape = None
    for round_ in range(args.rounds):
        for name, tree in (trees if round_ % 2 == 0 else trees[::-1]):
            result = run_child(tree, args.repeats)
            shape = (result["chars"], result["chunks"])
            best[name].append(min(result["times"]))
    assert shape is not None
    print(f"load {Path('/proc/loadavg').read_text().split()[0]}; {shape[0]:,}-character reply in {shape[1]:,} chunks of 1-16;"
          f" best of {args.repeats} per child, {args.rounds} children per tree, alternating")
    for name, values in best.items():
        print(f"  {name:6}: best {min(values) * 1e3:7.1f} ms ({min(values) / shape[1] * 1e6:5.2f} µs/chunk),"
              f" median of children {statistics.median(values) * 1e3:7.1f} ms;"
              f" children {', '.join(f'{v * 1e3:.1f}' for v in values)}")
    if args.before:
        ratios = [b / a for a, b in zip(best["after"], best["before"], strict=True)]
        print(f"  before/after per round: {', '.join(f'{r:.3f}' for r in ratios)};"
              f" best/best {min(best['before']) / min(best['after']):.3f}")


if __name__ == "__main__":
    main()
