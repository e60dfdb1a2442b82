"""The hand-built request path (`dotprompt/_http/request.py`) against httpx's own, per non-streamed call.

The same `OpenAIModel.generate` on loopback (`_server.py`, a child process), once with
`HttpClient.BUILD_REQUESTS` (the request built from parts worked out once; on the aiohttp transport,
sent past `client.send`), once without (httpx's `client.stream`, building and sending as httpx does),
in rounds whose order alternates, on httpx's transport (single calls) and aiohttp's (batches). Best
round's µs per call of each. `tests/_http/test_request.py` checks the two send the same requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import time

from _server import spawn
from bench_provider import PROVIDERS, bench_request

from dotprompt._http.client import HttpClient, batch_transport


async def best_rounds(port: int, rounds: int, n: int) -> dict[bool, float]:
    model = PROVIDERS["openai"].model(port, "bench")
    request = bench_request()
    best = {True: float("inf"), False: float("inf")}
    async with batch_transport() if os.environ["DOTPROMPT_HTTP_TRANSPORT"] == "aiohttp" else contextlib.nullcontext():
        for _ in range(3):
            await model.generate(request)
        for index in range(rounds):
            for built in (True, False) if index % 2 == 0 else (False, True):
                HttpClient.BUILD_REQUESTS = built
                gc.collect()
                started = time.perf_counter()
                for _ in range(n):
                    await model.generate(request)
                best[built] = min(best[built], (time.perf_counter() - started) / n * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds per side (default 8)")
    parser.add_argument("--requests", type=int, default=300, help="calls per round (default 300)")
    args = parser.parse_args()
    with spawn() as port:
        for kind in ("httpx", "aiohttp"):
            os.environ["DOTPROMPT_HTTP_TRANSPORT"] = kind
            best = asyncio.run(best_rounds(port, args.rounds, args.requests))
            print(f"{kind} transport: hand-built {best[True]:.0f} µs per call, httpx's own {best[False]:.0f} µs "
                  f"({100 * (best[False] / best[True] - 1):+.0f} %)")


if __name__ == "__main__":
    main()
