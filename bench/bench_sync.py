"""The sync API's cost per call against raw httpx, and the connections it opens, on a loopback server.

Every side makes the same non-streamed OpenAI Chat Completions call to `_server.py` (a child process
that answers at once) from plain sync code, one call after another:

- `httpx.Client`: one sync client kept for every call, posting the very path, body and headers our
  provider sends (reply read, not decoded): the reference;
- `run_sync(model.generate(request))`: our provider through the sync runner (this thread's kept loop);
- `generate_sync(...)`: the whole entry point (options, the loop, the output plan) on the same model;
- `asyncio.run(model.generate(request))`: what the sync API did before, a new event loop per call, so
  new pooled clients and a new connection each time (informational);
- `httpx.Client` per call: a new client and connection each time (informational).

Sides alternate round by round (best mean of `--rounds` rounds of `--calls` calls each); the server
counts the connections each side opened over one round. Prints µs per call, the ratio to raw httpx
and the overhead. Target: our sync call costs at most 1 ms over raw httpx (as bench_provider.py asks of
the async call), and sequential sync calls open one connection.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable
from typing import Any

import httpx
from _common import Result, arg_parser, report_all
from _server import DEFAULT_REPLY, spawn
from bench_provider import KEY, bench_request

from dotprompt import generate_sync
from dotprompt.generation.api import run_sync
from dotprompt.providers import ProviderConfig
from dotprompt.providers.openai import OpenAIModel, to_body

TARGET_OVERHEAD_US = 1000.0


def sides(port: int) -> dict[str, Callable[[], Any]]:
    """The calls, each side with a model (or client) of its own, so each opens its own connections."""
    config = ProviderConfig("openai", f"http://127.0.0.1:{port}/v1", KEY)
    request = bench_request()
    models = [OpenAIModel("openai/bench", config=config) for _ in range(3)]
    body, headers = to_body(request, models[0].model_id, stream=False), models[0].headers()
    kept = httpx.Client(base_url=config.base_url, timeout=config.timeout, headers=dict(config.headers))

    def raw() -> bytes:
        return kept.post("/chat/completions", json=body, headers=headers).raise_for_status().content

    def raw_new_connection() -> bytes:
        with httpx.Client(base_url=config.base_url, timeout=config.timeout, headers=dict(config.headers)) as client:
            return client.post("/chat/completions", json=body, headers=headers).raise_for_status().content

    def ours() -> str:
        return run_sync(models[0].generate(request)).message.text

    def entry_point() -> str:
        return generate_sync(model=models[1], messages=request.messages, config=request.config).text

    def new_loop() -> str:
        return asyncio.run(models[2].generate(request)).message.text

    return {"httpx.Client, kept": raw, "run_sync(model.generate)": ours, "generate_sync(...)": entry_point,
            "asyncio.run per call (before)": new_loop, "httpx.Client per call": raw_new_connection}


def server_stats(client: httpx.Client, reset: bool = False) -> dict[str, Any]:
    return client.get("/reset" if reset else "/stats").json()


def best_us(calls: dict[str, Callable[[], Any]], rounds: int, number: int) -> dict[str, float]:
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                call()
            best[name] = min(best[name], (time.perf_counter() - start) / number * 1e6)
    return best


def connections_opened(calls: dict[str, Callable[[], Any]], port: int, number: int) -> dict[str, int]:
    """The connections each side opens over `number` calls from its start (the stats client's is open already)."""
    opened = {}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False) as stats:
        server_stats(stats)
        for name, call in calls.items():
            server_stats(stats, reset=True)
            for _ in range(number):
                call()
            opened[name] = server_stats(stats)["connections"]
    return opened


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds (default 10)")
    parser.add_argument("--calls", type=int, default=100, help="calls per side per round (default 100)")
    args = parser.parse_args()
    with spawn() as port:
        calls = sides(port)
        opened = connections_opened(calls, port, 20)
        checked = calls["run_sync(model.generate)"]()
        if checked != DEFAULT_REPLY:
            raise SystemExit(f"the reply did not come back as the server sent it: {checked!r}")
        best = best_us(calls, args.rounds, args.calls)
    raw = best["httpx.Client, kept"]
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.rounds} rounds of {args.calls} calls, "
          "best mean per call")
    for name, micros in best.items():
        print(f"  {name:32} {micros:8.0f} µs   x{micros / raw:5.2f} raw httpx   {opened[name]:3d} connection(s) "
              "for 20 calls")
    overhead = best["run_sync(model.generate)"] - raw
    results = [
        Result("sync call overhead vs raw httpx", f"{overhead:.0f} µs (x{best['run_sync(model.generate)'] / raw:.2f})",
               f"< {TARGET_OVERHEAD_US:.0f} µs", overhead < TARGET_OVERHEAD_US),
        Result("connections for 20 sync calls", str(opened["generate_sync(...)"]), "1",
               opened["generate_sync(...)"] == 1 and opened["run_sync(model.generate)"] == 1),
        Result("generate_sync vs raw httpx", f"{best['generate_sync(...)'] - raw:.0f} µs "
               f"(x{best['generate_sync(...)'] / raw:.2f})", "-", True, informational=True),
    ]
    report_all(results, args.json)


if __name__ == "__main__":
    main()
