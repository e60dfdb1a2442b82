"""dotprompt.batch.ray on this machine: rows/s with 1 and 2 workers against a 50 ms loopback model, and what
Ray adds per row.

A child process (`_server.py`) answers OpenAI Chat Completions on loopback, holding every reply
50 ms (a second one answers at once). A local Ray (`ray.init(num_cpus=2)`, timed) runs
`map_prompt(read_json(rows), "review", workers=W, in_flight=16, batch_size=100)` over `--rows`
rows, materialized; the workers reach the server through OPENAI_BASE_URL. Throughput = rows / (the
server's last reply - its first request), as bench_batch.py counts it; the ideal is
W x 16 / 0.05 s. Ray's added cost per row: the same rows against the instant server, through Ray
with one worker, minus the in-process runner (`run_batch`, concurrency 16) on the same rows, divided
by the rows (the wall time of the Dataset's execution, actor start-up included; ray.init excluded).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import Result, arg_parser, report_all
from _server import spawn
from bench_batch import REPLY, write_prompt, write_rows

DELAY = 0.05
IN_FLIGHT = 16


def stats(port: int, reset: bool = False) -> dict:
    with httpx.Client(trust_env=False) as client:
        return client.get(f"http://127.0.0.1:{port}/{'reset' if reset else 'stats'}").json()


def ray_run(ray, dray, prompts: Path, rows_file: Path, workers: int, port: int) -> tuple[float, float, int]:
    """(wall seconds of the execution, server window, rows with an output)."""
    stats(port, reset=True)
    started = time.perf_counter()
    ds = dray.map_prompt(ray.data.read_json(str(rows_file)), "review", prompts_dir=str(prompts), workers=workers,
                         in_flight=IN_FLIGHT, batch_size=100)
    rows = ds.materialize()
    wall = time.perf_counter() - started
    good = rows.filter(lambda row: row["error"] is None).count()
    found = stats(port)
    return wall, found["last_reply"] - found["first_request"], good


def local_run(prompts: Path, rows_file: Path) -> float:
    from dotprompt.batch import InputFile, run_batch
    from dotprompt.prompts.library import PromptLibrary

    prompt = PromptLibrary(prompts).load("review")
    out = rows_file.with_suffix(".local.jsonl")
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    report = asyncio.run(run_batch(prompt, InputFile(rows_file), out, concurrency=IN_FLIGHT))
    if report.failed:
        sys.exit(f"the in-process run failed {report.failed} rows")
    return time.perf_counter() - started


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    import ray
    import ray.data

    import dotprompt.batch.ray as dray

    results = []
    with tempfile.TemporaryDirectory() as tmp, spawn(REPLY, DELAY) as slow, spawn(REPLY, 0.0) as fast:
        root = Path(tmp)
        prompts, rows_file = write_prompt(root), write_rows(root, args.rows)
        os.environ.update(OPENAI_BASE_URL=f"http://127.0.0.1:{slow}/v1", OPENAI_API_KEY="test",
                          NO_PROXY="127.0.0.1", PYTHONPATH=str(Path(dray.__file__).resolve().parent.parent))
        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print(f"ray.init (a local cluster, 2 CPUs): {time.perf_counter() - started:.1f} s")
        try:
            ray_run(ray, dray, prompts, write_rows(root, 50), 1, slow)  # warm: workers, imports
            for workers in (1, 2):
                wall, window, good = ray_run(ray, dray, prompts, rows_file, workers, slow)
                ideal = workers * IN_FLIGHT / DELAY
                rate = args.rows / window
                print(f"{workers} worker(s), {IN_FLIGHT} in flight each, 50 ms model: {rate:.0f} rows/s = "
                      f"{rate / ideal:.0%} of {ideal:.0f} (server window {window:.2f} s; execution wall {wall:.2f} s, "
                      f"{args.rows / wall:.0f} rows/s), {good} of {args.rows} with an output")
                results.append(Result(f"ray, {workers} worker(s) x {IN_FLIGHT} in flight, 50 ms model",
                                      f"{rate:.0f} rows/s = {rate / ideal:.0%} of {ideal:.0f}", "none (informational)",
                                      good == args.rows, informational=True))
            os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{fast}/v1"
        finally:
            ray.shutdown()
        # Ray again on the instant server (new workers read the new address), then the in-process runner.
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            ray_run(ray, dray, prompts, write_rows(root, 50), 1, fast)
            wall_ray, _, good = ray_run(ray, dray, prompts, rows_file, 1, fast)
        finally:
            ray.shutdown()
        wall_local = local_run(prompts, rows_file)
        added = (wall_ray - wall_local) / args.rows * 1e6
        print(f"instant model, {args.rows} rows: Ray (1 worker) {wall_ray:.2f} s, in-process runner {wall_local:.2f} s:"
              f" Ray adds {added:.0f} µs per row")
        results.append(Result("ray: added cost per row (instant model, 1 worker vs in-process)", f"{added:.0f} µs",
                              "none (informational)", good == args.rows, informational=True))
    report_all(results, args.json)


if __name__ == "__main__":
    main()
