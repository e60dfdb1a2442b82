"""Batch throughput of the real CLI, `dotprompt run NAME --input-file --output --concurrency 32`, on a 50 ms model.

A child process (`_server.py`) serves OpenAI Chat Completions on loopback and holds every reply
50 ms, answering `{"label": "positive", "score": 0.92}`, which matches the prompt's output schema.
The prompt (written to a temporary folder) says `model: openai/bench`; the CLI runs as a
subprocess with OPENAI_BASE_URL pointing at the server and OPENAI_API_KEY=test.

With 32 rows in flight and 50 ms per reply, the ideal is 32 / 0.05 s = 640 rows/s. Achieved
throughput is rows / (the server's last reply - its first request): process start-up, reading the
rows and the last write are outside that window. Beside it: the wall time of the run minus the
start-up of a 1-row run (less its one 50 ms call). Every output line must hold an output, no error.

Two reference figures come first. The server alone: a raw asyncio client (pre-built request bytes,
one keep-alive connection per slot) at 32 and at 128 requests in flight, to show the server is
not what limits the batch. Then bare httpx: one `httpx.AsyncClient` (set up as our providers set
up theirs) posting a body of the same size from 32 tasks, reply decoded, no dotprompt at all:
the ceiling of any client built on httpx's default pool in this process, shown as an `info` row.

The batch runs once per transport (`--transports aiohttp,httpx`: the CLI's default for batches,
aiohttp through httpx-aiohttp, then httpx's own via DOTPROMPT_HTTP_TRANSPORT=httpx), each the best
of `--repeat` runs; the target applies to the first. Bare httpx is measured on both transports too.

`--before DIR` (a folder holding another tree's `dotprompt` package, e.g. `git archive <commit>
dotprompt | tar -x -C DIR`) runs that tree's CLI (`python -c "from dotprompt.cli import main; ..."`
with DIR first on PYTHONPATH) alternately with this one, run for run, on the same server and rows,
and prints both sides' rates and their ratio: before/after figures from one session.

`--profile` then runs the same batch in-process under cProfile and prints where the time goes,
by package and by function. (`py-spy record -o out.svg -- dotprompt run ...` also works: pip
install py-spy; it is not used here.)
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from _common import Result, arg_parser, report_all
from _server import spawn

DELAY = 0.05
TARGET_FRACTION = 0.90
REPLY = json.dumps({"label": "positive", "score": 0.92})
PROMPT = """---
description: Sentiment of one product review (batch benchmark).
model: openai/bench
config:
  temperature: 0
input:
  schema:
    id: integer
    review: string
output:
  format: json
  schema:
    label(enum): [positive, negative, neutral]
    score: number, confidence from 0 to 1
---
{{ role("system") }}
You label the sentiment of product reviews.
{{ role("user") }}
Review #{{ id }}:
{{ review }}
"""
REVIEWS = ("Arrived quickly and works as described.", "The strap broke after two days; very disappointed.",
           "It is fine. Nothing special, nothing wrong.", "Best purchase this year, I bought a second one for my sister.")
# A body of the size the CLI sends (system + user message, the output instructions, response_format).
REFERENCE_BODY: dict[str, Any] = {
    "model": "bench", "temperature": 0,
    "messages": [{"role": "system", "content": "You label the sentiment of product reviews. " * 6},
                 {"role": "user", "content": "Review #7:\n" + REVIEWS[1]}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "output", "schema": {
        "type": "object", "properties": {"label": {"type": "string", "enum": ["positive", "negative", "neutral"]},
                                         "score": {"type": "number"}}, "required": ["label", "score"]}}}}


def write_prompt(root: Path) -> Path:
    prompts = root / "prompts"
    prompts.mkdir()
    (prompts / "review.prompt").write_text(PROMPT, encoding="utf-8")
    return prompts


def write_rows(root: Path, rows: int) -> Path:
    rows_file = root / f"rows-{rows}.jsonl"
    rows_file.write_text("".join(json.dumps({"id": i, "review": REVIEWS[i % len(REVIEWS)]}) + "\n" for i in range(rows)),
                         encoding="utf-8")
    return rows_file


def cli_env(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOTPROMPT_")}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="test",
               NO_PROXY=",".join(filter(None, (env.get("NO_PROXY"), "127.0.0.1"))))  # loopback, never a proxy
    return env


def before_command(tree: Path) -> list[str]:
    """The CLI of another tree's package (`--before`, put first on PYTHONPATH), run by this interpreter."""
    del tree  # found through PYTHONPATH
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'dotprompt'; from dotprompt.cli import main; sys.exit(main())"]


def run_cli(dotprompt: str | list[str], prompts: Path, rows_file: Path, rows: int, concurrency: int,
            env: dict[str, str]) -> float:
    """Wall seconds of one batch run; exits unless every row came back with an output."""
    out = rows_file.with_suffix(".out.jsonl")
    out.unlink(missing_ok=True)  # a leftover output would make the run skip rows (resume)
    command = [dotprompt] if isinstance(dotprompt, str) else dotprompt
    argv = [*command, "run", "review", "--dir", str(prompts), "--input-file", str(rows_file), "--output", str(out),
            "--concurrency", str(concurrency)]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=prompts.parent, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    good = sum("output" in r and "error" not in r for r in records)
    if done.returncode != 0 or good != rows:
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}, {good} of {rows} rows with an output\n{done.stderr[-2000:]}")
    return wall


def server_stats(port: int, reset: bool = False) -> dict[str, Any]:
    with httpx.Client(trust_env=False) as client:
        return client.get(f"http://127.0.0.1:{port}/{'reset' if reset else 'stats'}").json()


# -- reference figures: the server alone, and bare httpx ------------------------------------------------

async def raw_rate(port: int, in_flight: int, requests: int) -> float:
    """Replies per second the server gives `in_flight` keep-alive connections asking back to back."""
    body = json.dumps(REFERENCE_BODY).encode()
    message = (f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
               f"authorization: Bearer test\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body
    left = [requests]

    async def slot() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while left[0] > 0:
            left[0] -= 1
            writer.write(message)
            head = await reader.readuntil(b"\r\n\r\n")
            found = re.search(rb"(?i)content-length:\s*(\d+)", head)
            await reader.readexactly(int(found[1]) if found else 0)
        writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(slot() for _ in range(in_flight)))
    return requests / (time.perf_counter() - start)


async def httpx_rate(port: int, in_flight: int, requests: int, transport: str = "httpx") -> tuple[float, float]:
    """Requests per second and CPU µs per request of one httpx.AsyncClient posting from `in_flight` tasks."""
    left = [requests]
    chosen = None
    if transport == "aiohttp":
        from httpx_aiohttp import AiohttpTransport

        chosen = AiohttpTransport()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/v1", timeout=120.0, transport=chosen) as client:

        async def task() -> None:
            while left[0] > 0:
                left[0] -= 1
                response = await client.post("/chat/completions", json=REFERENCE_BODY, headers={"Authorization": "Bearer test"})
                response.json()

        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(task() for _ in range(in_flight)))
        return requests / (time.perf_counter() - start), (time.process_time() - cpu) / requests * 1e6


def reference_figures(port: int, concurrency: int, rows: int, transport: str = "httpx") -> tuple[float, float]:
    """Prints the server's own capacity; returns bare httpx's rate and CPU per request at `concurrency`."""
    for in_flight in ((concurrency, concurrency * 4) if transport == "httpx" else ()):
        rate = asyncio.run(raw_rate(port, in_flight, max(rows, in_flight * 20)))
        ideal = in_flight / DELAY
        print(f"server alone (raw asyncio client), {in_flight} in flight: {rate:.0f} replies/s"
              f" = {rate / ideal:.1%} of {ideal:.0f}")
    server_stats(port, reset=True)
    rate, cpu_us = asyncio.run(httpx_rate(port, concurrency, rows, transport))
    connections = server_stats(port)["connections"]
    print(f"bare httpx (one AsyncClient, {transport} transport), {concurrency} in flight: {rate:.0f} requests/s"
          f" = {rate / (concurrency / DELAY):.1%} of {concurrency / DELAY:.0f}, {cpu_us:.0f} µs CPU per request,"
          f" {connections} connections for {rows} requests")
    return rate, cpu_us


# -- the CLI runs -----------------------------------------------------------------------------------------

def timed_batches(args: Any, prompts: Path, rows_file: Path, env: dict[str, str], port: int) -> tuple[float, float]:
    """(wall, server window) of the best of `--repeat` runs, by window; every run's rate is printed too.
    With `--before`, each run of this tree is followed (or, every other time, preceded) by one of the other."""
    best: tuple[float, float] | None = None
    rates: list[float] = []
    before_rates: list[float] = []
    sides: list[tuple[str, Any, dict[str, str]]] = [("after", args.dotprompt, env)]
    if args.before is not None:
        before_env = {**env, "PYTHONPATH": str(args.before)}
        sides.append(("before", before_command(args.before), before_env))
    for number in range(max(1, args.repeat)):
        for side, command, side_env in (sides if number % 2 == 0 else sides[::-1]):
            window = _one_run(args, command, prompts, rows_file, side_env, port, side if len(sides) > 1 else "")
            (rates if side == "after" else before_rates).append(args.rows / window[1] / (args.concurrency / DELAY))
            if side == "after" and (best is None or window[1] < best[1]):
                best = window
    assert best is not None
    print(f"every run, % of ideal: {', '.join(f'{r:.1%}' for r in rates)}; median {statistics.median(rates):.1%}")
    if before_rates:
        print(f"  before ({args.before}), alternating: {', '.join(f'{r:.1%}' for r in before_rates)};"
              f" median {statistics.median(before_rates):.1%}; after/before by median"
              f" {statistics.median(rates) / statistics.median(before_rates):.3f},"
              f" by best {max(rates) / max(before_rates):.3f}")
    return best


def _one_run(args: Any, command: Any, prompts: Path, rows_file: Path, env: dict[str, str], port: int,
             side: str) -> tuple[float, float]:
    """(wall, server window) of one batch run, printed."""
    server_stats(port, reset=True)
    cpu = os.times()
    wall = run_cli(command, prompts, rows_file, args.rows, args.concurrency, env)
    child_cpu = (os.times().children_user + os.times().children_system) - (cpu.children_user + cpu.children_system)
    stats = server_stats(port)
    window = stats["last_reply"] - stats["first_request"]
    print(f"run{' (' + side + ')' if side else ''}: wall {wall:.2f} s, server window {window:.2f} s,"
          f" {args.rows / window / (args.concurrency / DELAY):.1%} of ideal, {stats['requests']} requests on"
          f" {stats['connections']} connections, peak {stats['peak_in_flight']} in flight, CLI process CPU"
          f" {child_cpu:.2f} s ({child_cpu / args.rows * 1e6:.0f} µs per row), load {_load()}")
    return wall, window


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


# -- the in-process profile --------------------------------------------------------------------------------

def package_of(filename: str, function: str) -> str:
    """Which package a profiled function belongs to: a site-packages or stdlib top-level name, dotprompt, or a builtin."""
    if filename == "~":
        return "builtins: " + re.sub(r"^<(built-in )?(method|function) ", "", function).rstrip(">").split(" of ")[0].strip("'")
    if "<frozen importlib" in filename:
        return "importlib (imports during the run)"
    path = Path(filename)
    if "site-packages" in path.parts:
        return path.parts[path.parts.index("site-packages") + 1].split(".")[0]
    if "dotprompt" in path.parts:
        return "dotprompt"
    return "stdlib " + (path.parent.name if path.parent.name not in ("python3.11", "lib") else path.stem)


def profile_batch(prompts: Path, rows_file: Path, concurrency: int, env: dict[str, str], top: int) -> None:
    """The same batch in this process under cProfile: own time by package, then the top functions."""
    os.environ.update({k: env[k] for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "NO_PROXY")})
    from dotprompt.batch import read_rows, run_batch
    from dotprompt.prompts.library import PromptLibrary

    prompt = PromptLibrary(prompts).load("review")
    rows = read_rows(rows_file)
    out = rows_file.with_suffix(".profile.jsonl")
    profiler = cProfile.Profile()
    profiler.enable()
    batch = asyncio.run(run_batch(prompt, rows, out, concurrency=concurrency))
    profiler.disable()
    print(f"in-process under cProfile: {batch.succeeded} rows in {batch.seconds:.2f} s (the profiler slows it ~2-3x)")
    stats = pstats.Stats(profiler)
    own: Counter[str] = Counter()
    for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        own[package_of(filename, function)] += tottime
    total = sum(own.values())
    print(f"own time by package, µs per row (profiled), of {total / len(rows) * 1e6:.0f}:")
    for name, seconds in own.most_common(15):
        print(f"  {name:<45} {seconds / len(rows) * 1e6:>7.0f}  {seconds / total:>6.1%}")
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000, help="rows in the batch (default 2000)")
    parser.add_argument("--concurrency", type=int, default=32, help="--concurrency of the run (default 32)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many batch runs (default 3)")
    parser.add_argument("--transports", default="aiohttp,httpx",
                        help="DOTPROMPT_HTTP_TRANSPORT values to run the batch with, in order (default aiohttp,httpx)")
    parser.add_argument("--dotprompt", default=str(Path(sys.executable).parent / "dotprompt"),
                        help="the dotprompt command (default: the one beside this interpreter)")
    parser.add_argument("--before", type=Path, help="a folder holding another tree's dotprompt package: its CLI "
                                                     "runs alternately with this one (before/after in one session)")
    parser.add_argument("--profile", action="store_true", help="then profile the same batch in-process (cProfile)")
    parser.add_argument("--top", type=int, default=25, help="functions to list in the profile (default 25)")
    args = parser.parse_args()
    ideal = args.concurrency / DELAY
    results: list[Result] = []

    with tempfile.TemporaryDirectory() as tmp, spawn(REPLY, DELAY) as port:
        root = Path(tmp)
        prompts, rows_file, one_row = write_prompt(root), write_rows(root, args.rows), write_rows(root, 1)
        for number, transport in enumerate(args.transports.split(",")):
            env = {**cli_env(port), "DOTPROMPT_HTTP_TRANSPORT": transport}
            print(f"\n== transport: {transport} ==")
            httpx_rps, httpx_cpu = reference_figures(port, args.concurrency, args.rows, transport)
            startup = min(run_cli(args.dotprompt, prompts, one_row, 1, 1, env) for _ in range(3))
            print(f"start-up: a 1-row run takes {startup:.3f} s (best of 3), {startup - DELAY:.3f} s of it outside the call")
            wall, window = timed_batches(args, prompts, rows_file, env, port)
            rate, by_wall = args.rows / window, args.rows / (wall - (startup - DELAY))
            print(f"{args.rows} rows at --concurrency {args.concurrency}, {DELAY * 1000:.0f} ms per reply:"
                  f" ideal {ideal:.0f} rows/s")
            print(f"  achieved (server window, first request to last reply): {rate:.0f} rows/s = {rate / ideal:.1%} of ideal")
            print(f"  achieved (wall {wall:.2f} s - start-up {startup - DELAY:.2f} s): {by_wall:.0f} rows/s"
                  f" = {by_wall / ideal:.1%}")
            print(f"  bare httpx ({transport}) at the same concurrency: {httpx_rps:.0f} requests/s = {httpx_rps / ideal:.1%}")
            results.append(Result(f"batch {args.rows} rows, concurrency {args.concurrency}, 50 ms model, {transport}",
                                  f"{rate:.0f} rows/s = {rate / ideal:.0%} of {ideal:.0f}", f"≥ {TARGET_FRACTION:.0%} of ideal",
                                  rate / ideal >= TARGET_FRACTION, informational=number > 0))
            results.append(Result(f"batch ceiling: bare httpx ({transport}), {args.concurrency} in flight",
                                  f"{httpx_rps:.0f} req/s = {httpx_rps / ideal:.0%}, {httpx_cpu / 1000:.1f} ms CPU/request",
                                  "none (informational)", True, informational=True))
        if args.profile:
            print()
            profile_batch(prompts, rows_file, args.concurrency, cli_env(port), args.top)

    report_all(results, args.json)


if __name__ == "__main__":
    main()
