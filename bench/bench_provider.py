"""Provider overhead per request: our request/response conversion and SSE parsing, over bare httpx, on loopback.

A child process (`_server.py`) answers at once with canned OpenAI Chat Completions, Anthropic
Messages and Gemini generateContent replies, JSON or server-sent events. Our providers are used
directly: `await OpenAIModel("openai/bench", config=ProviderConfig(...)).generate(request, on_chunk)`
(likewise AnthropicModel, GeminiModel), the request a system and a user message, config, one tool
and a constrained JSON output schema.

1. Non-streamed: µs per `generate` against µs per bare round trip, a plain `httpx.AsyncClient`
   POST of the very body, path and headers our provider sends, reply body read but not decoded.
   The difference is our overhead: building the wire body, decoding the reply JSON and mapping it
   to a ModelResponse, plus our HTTP wrapper. Alternating rounds on one event loop (one pooled
   connection each), best round kept. "conversion alone" times the same mapping without HTTP
   (to_body + json.loads of the reply + from_*), as a cross-check of the difference.
2. Streamed: ms per `generate(..., on_chunk=...)` over streams of 100, 1,000 and 10,000 text
   chunks (one SSE event, one HTTP chunk, one ModelChunk each; the callback counts them, and the
   count and the final text are checked), against the bare transfer (`client.stream` +
   `aiter_bytes`). The cost per chunk must stay flat as the stream grows: µs per chunk at 10,000
   against 1,000 is the linearity check. (A callback that keeps every chunk makes the garbage
   collector's passes over them grow with the stream: that is the caller's list, not the provider.)
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from _common import Result, arg_parser, report_all
from _server import CHUNK_TEXT, DEFAULT_REPLY, spawn

from dotprompt.providers import ProviderConfig, anthropic, gemini, openai
from dotprompt.types import GenerateRequest, Message, OutputConfig, Part, ToolDefinition

TARGET_OVERHEAD_US = 1000.0
LINEAR_LIMIT = 1.25  # µs per chunk at the longest stream may exceed that at 1,000 chunks by at most this factor
STREAM_SIZES = (100, 1_000, 10_000)
KEY = "test-key"

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "order_id": {"type": "string"},
                   "actions": {"type": "array", "items": {"type": "string"}}},
    "required": ["answer", "actions"],
}
LOOKUP_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def bench_request() -> GenerateRequest:
    question = ("Hello, I ordered a pair of walking boots two weeks ago (order A-1042) and the tracking page still says "
                "'label created'. Can you tell me where it is and whether I can get a refund if it does not arrive "
                "before Friday? I need them for a trip. Thanks, Maria")
    return GenerateRequest(
        messages=[Message(role="system", content=[Part(text="You are a support assistant for Acme Outdoor. "
                                                             "Use lookup_order before answering questions about an order.")]),
                  Message(role="user", content=[Part(text=question)])],
        config={"temperature": 0.2, "maxOutputTokens": 512},
        tools=[ToolDefinition(name="lookup_order", description="Find an order by id.", input_schema=LOOKUP_SCHEMA)],
        tool_choice="auto",
        output=OutputConfig(format="json", json_schema=ORDER_SCHEMA, constrained=True))


# -- the providers, and what each puts on the wire -----------------------------------------------------

@dataclass(frozen=True)
class Provider:
    """One of our providers, and its own request/response mappers (the functions its model calls)."""

    label: str
    config_name: str
    cls: Any
    to_body: Callable[[GenerateRequest, str, bool], dict[str, Any]]
    from_reply: Callable[[Any, str], Any]
    path: Callable[[Any, bool], str]

    def model(self, port: int, model_id: str) -> Any:
        config = ProviderConfig(self.config_name, f"http://127.0.0.1:{port}/v1", KEY)
        return self.cls(f"{self.config_name}/{model_id}", config=config)

    def wire(self, model: Any, request: GenerateRequest, stream: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The path, JSON body and headers our provider sends for this request."""
        return self.path(model, stream), self.to_body(request, model.model_id, stream), model.headers()

    def convert(self, request: GenerateRequest, model_id: str, reply: bytes) -> Any:
        """Both conversions without HTTP: the wire body of the request, and the reply mapped back."""
        self.to_body(request, model_id, False)
        return self.from_reply(json.loads(reply), self.config_name)


PROVIDERS = {
    "openai": Provider("openai", "openai", openai.OpenAIModel, lambda r, m, s: openai.to_body(r, m, stream=s),
                       openai.from_completion, lambda model, stream: "/chat/completions"),
    "anthropic": Provider("anthropic", "anthropic", anthropic.AnthropicModel, lambda r, m, s: anthropic.to_body(r, m, stream=s),
                          anthropic.from_message, lambda model, stream: "/messages"),
    "gemini": Provider("gemini", "googleai", gemini.GeminiModel, lambda r, m, s: gemini.to_body(r),
                       gemini.from_response, lambda model, stream: model.path(stream)),
}


def bare_client(model: Any) -> httpx.AsyncClient:
    """An httpx client set up as our HttpClient sets up its own (base URL, timeout, default headers)."""
    return httpx.AsyncClient(base_url=model.config.base_url, timeout=model.config.timeout, headers=dict(model.config.headers))


# -- 1. non-streamed -----------------------------------------------------------------------------------

@dataclass
class RequestFigures:
    provider: str
    bare_us: float  # mean of the best round
    ours_us: float
    overhead_us: float  # median of the paired per-request differences, every round
    conversion_us: float


async def paired_round(bare: Callable[[], Awaitable[Any]], ours: Callable[[], Awaitable[Any]], n: int,
                       differences: list[float]) -> tuple[float, float]:
    """n pairs of requests, which side goes first alternating; mean µs of each side, differences appended."""
    gc.collect()
    clock = time.perf_counter
    totals = [0.0, 0.0]
    for index in range(n):
        first, second = (bare, ours) if index % 2 == 0 else (ours, bare)
        t0 = clock()
        await first()
        t1 = clock()
        await second()
        t2 = clock()
        bare_s, ours_s = (t1 - t0, t2 - t1) if index % 2 == 0 else (t2 - t1, t1 - t0)
        totals[0] += bare_s
        totals[1] += ours_s
        differences.append((ours_s - bare_s) * 1e6)
    return totals[0] / n * 1e6, totals[1] / n * 1e6


async def request_overhead(provider: Provider, port: int, rounds: int, n: int) -> RequestFigures:
    request = bench_request()
    model = provider.model(port, "bench")
    path, body, headers = provider.wire(model, request, stream=False)
    async with bare_client(model) as client:

        async def bare() -> bytes:
            response = await client.post(path, json=body, headers=headers)
            response.raise_for_status()
            return response.content

        async def ours() -> Any:
            return await model.generate(request)

        reply = await bare()
        if (await ours()).message.text != DEFAULT_REPLY:
            raise SystemExit(f"{provider.label}: the reply did not come back as the server sent it")
        for _ in range(20):  # warm up both connections and every code path
            await bare()
            await ours()
        means, differences = [], []
        for _ in range(rounds):
            means.append(await paired_round(bare, ours, n, differences))
    conversion = conversion_us(provider, request, model.model_id, reply, rounds, n)
    return RequestFigures(provider.label, min(m[0] for m in means), min(m[1] for m in means),
                          statistics.median(differences), conversion)


def conversion_us(provider: Provider, request: GenerateRequest, model_id: str, reply: bytes, rounds: int, n: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            provider.convert(request, model_id, reply)
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    return best


# -- 2. streamed ---------------------------------------------------------------------------------------

@dataclass
class StreamFigures:
    provider: str
    chunks: int
    bare_s: float
    ours_s: float

    def per_chunk_us(self, seconds: float) -> float:
        return seconds / self.chunks * 1e6


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    gc.collect()
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def stream_costs(provider: Provider, port: int, chunks: int, runs: int) -> StreamFigures:
    request = bench_request()
    model = provider.model(port, f"bench-{chunks}")
    path, body, headers = provider.wire(model, request, stream=True)
    seen = [0]

    def on_chunk(chunk: Any) -> None:  # counts, and keeps no chunk: holding them all would time the GC instead
        seen[0] += chunk.content[0].text == CHUNK_TEXT

    async def ours() -> None:
        seen[0] = 0
        response = await model.generate(request, on_chunk=on_chunk)
        if seen[0] != chunks or response.message.text != CHUNK_TEXT * chunks:
            raise SystemExit(f"{provider.label}: {seen[0]} chunks and {len(response.message.text)} characters "
                             f"for a stream of {chunks} chunks")

    async with bare_client(model) as client:

        async def bare() -> None:
            async with client.stream("POST", path, json=body, headers=headers) as response:
                response.raise_for_status()
                async for _ in response.aiter_bytes():
                    pass

        await bare()
        await ours()
        bare_times, our_times = [], []
        for _ in range(runs):
            bare_times.append(await timed(bare))
            our_times.append(await timed(ours))
    return StreamFigures(provider.label, chunks, min(bare_times), min(our_times))


# -- report --------------------------------------------------------------------------------------------

def print_requests(figures: list[RequestFigures], rounds: int, n: int) -> None:
    print(f"1. non-streamed: µs per request, {rounds} rounds of {n} pairs (bare, ours) of requests, the order alternating")
    print("   bare/ours: mean of the best round; overhead: median of the per-pair differences (ours - bare)")
    print(f"   {'provider':<10} {'bare httpx':>10} {'ours':>8} {'overhead':>9} {'conversion alone':>17} {'ours/bare':>10}")
    for f in figures:
        print(f"   {f.provider:<10} {f.bare_us:>10.0f} {f.ours_us:>8.0f} {f.overhead_us:>9.0f} {f.conversion_us:>17.0f}"
              f" {f.ours_us / f.bare_us:>9.2f}x")


def print_streams(figures: list[StreamFigures], runs: int) -> None:
    print(f"2. streamed: one request per stream, best of {runs} runs each; per chunk = stream time / chunks")
    print(f"   {'provider':<10} {'chunks':>7} {'bare ms':>9} {'ours ms':>9} {'bare µs/chunk':>14} {'ours µs/chunk':>14}"
          f" {'overhead µs/chunk':>18}")
    for f in figures:
        print(f"   {f.provider:<10} {f.chunks:>7,} {f.bare_s * 1e3:>9.2f} {f.ours_s * 1e3:>9.2f}"
              f" {f.per_chunk_us(f.bare_s):>14.2f} {f.per_chunk_us(f.ours_s):>14.2f}"
              f" {f.per_chunk_us(f.ours_s - f.bare_s):>18.2f}")
    for provider in dict.fromkeys(f.provider for f in figures):
        mine = sorted((f for f in figures if f.provider == provider), key=lambda f: f.chunks)
        if len(mine) < 2:
            continue
        steps = ", ".join(f"{a.chunks:,}->{b.chunks:,}: {(b.ours_s - a.ours_s) / (b.chunks - a.chunks) * 1e6:.2f}"
                          for a, b in itertools.pairwise(mine))
        print(f"   {provider}: marginal µs per added chunk {steps}; per chunk {mine[-1].chunks:,} vs {mine[-2].chunks:,}:"
              f" {linearity(mine):.2f}x")


def linearity(mine: list[StreamFigures]) -> float:
    """µs per chunk of the longest stream over that of the next shorter one (1.0 = perfectly linear)."""
    longest, shorter = mine[-1], mine[-2]
    return longest.per_chunk_us(longest.ours_s) / shorter.per_chunk_us(shorter.ours_s)


def results(requests: list[RequestFigures], streams: list[StreamFigures]) -> list[Result]:
    out = []
    for f in requests:
        out.append(Result(f"provider overhead/request ({f.provider})",
                          f"{f.overhead_us:.0f} µs over bare httpx ({f.bare_us:.0f} µs/request)",
                          f"< {TARGET_OVERHEAD_US / 1000:g} ms", f.overhead_us < TARGET_OVERHEAD_US))
    for provider in dict.fromkeys(f.provider for f in streams):
        mine = sorted((f for f in streams if f.provider == provider), key=lambda f: f.chunks)
        if len(mine) < 2:
            continue
        per_chunk = " / ".join(f"{f.per_chunk_us(f.ours_s):.1f}" for f in mine)
        sizes = "/".join(f"{f.chunks // 1000}k" if f.chunks >= 1000 else str(f.chunks) for f in mine)
        ratio = linearity(mine)
        out.append(Result(f"provider stream µs/chunk ({provider})", f"{per_chunk} at {sizes} ({ratio:.2f}x)",
                          f"last ≤ {LINEAR_LIMIT:g}x the one before", ratio <= LINEAR_LIMIT))
    return out


async def run(args: Any, port: int) -> tuple[list[RequestFigures], list[StreamFigures]]:
    chosen = [PROVIDERS[name] for name in args.providers.split(",")]
    requests = [await request_overhead(p, port, args.rounds, args.requests) for p in chosen]
    streams = [await stream_costs(p, port, n, args.stream_runs) for p in chosen for n in args.sizes]
    return requests, streams


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--providers", default="openai,anthropic,gemini", help="comma-separated (default: all three)")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds of non-streamed requests (default 10)")
    parser.add_argument("--requests", type=int, default=200, help="requests per round and side (default 200)")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=list(STREAM_SIZES),
                        help="stream lengths in chunks (default 100,1000,10000)")
    parser.add_argument("--stream-runs", type=int, default=7,
                        help="runs per stream length and side, the same for every length so their best compare (default 7)")
    args = parser.parse_args()
    unknown = set(args.providers.split(",")) - set(PROVIDERS)
    if unknown:
        parser.error(f"unknown provider(s) {', '.join(sorted(unknown))}; choose from {', '.join(PROVIDERS)}")
    os.environ["NO_PROXY"] = ",".join(filter(None, (os.environ.get("NO_PROXY"), "127.0.0.1")))  # loopback, never a proxy
    with spawn() as port:
        requests, streams = asyncio.run(run(args, port))
    print_requests(requests, args.rounds, args.requests)
    print()
    print_streams(streams, args.stream_runs)
    print()
    report_all(results(requests, streams), args.json)


if __name__ == "__main__":
    main()
