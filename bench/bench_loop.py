"""Tool-loop overhead of generate() with an instant model, ours against Genkit; and streaming cost per chunk.

1. Loop: a scripted model that answers at once asks for the tool `add` four times (one request per
   reply), then replies "done": 5 model calls and 4 tool runs per generate. Ours: a fresh
   `ScriptedModel(replies)` per call, `await generate(model=..., prompt="go", tools=[add])` with a
   sync tool `add(a: int, b: int) -> int`. Genkit: the same replies from a model registered with
   `ai.define_model`, and `await ai.generate(model=..., prompt="go", tools=["add"])` with the tool
   registered by `@ai.tool()` (Genkit tools must be async and take one input: a pydantic model
   `{a, b}`). Both sides are checked to have made 5 model calls and 4 tool runs and to end on "done".
   Timed on one event loop in alternating rounds, best round kept: µs per generate.
2. Stream: one model reply holding a ~5 KB JSON document, streamed in 8-character chunks, with
   `output_schema` a JSON Schema of it. Ours: `async for item in generate_stream(...)` over a fresh
   `ScriptedModel([text], chunk_size=8)`, reading every chunk's `.output` (the parsed partial value).
   Genkit (informational): `ai.generate_stream(...)` over a model that sends the same chunks with
   `ctx.send_chunk`, once without reading `chunk.output` and once reading it on every chunk as ours
   does (Genkit parses it on access, re-reading all the text so far: 20-30 s for one run, so it is
   run once; `--genkit-output-runs 0` skips it). Whole-run time / chunk count: µs per chunk end to end.
Run with bench/.peers/bin/python (it imports genkit). `--no-genkit` times ours alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from _common import Result, arg_parser, report_all
from _timing import Block, async_block, interleaved_best
from pydantic import BaseModel

from dotprompt import Chunk, generate, generate_stream, tool
from dotprompt.doubles import ScriptedModel, tool_call

TARGET_RATIO = 0.20
TOOL_ROUNDS = 4
MODEL_CALLS = TOOL_ROUNDS + 1
FINAL_TEXT = "done"
STREAM_CHUNK = 8
STREAM_DOC_CHARS = 5_000
CALIBRATION_CALLS = 5

# -- the stream document ---------------------------------------------------------------------------

ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string"},
        "name": {"type": "string"},
        "quantity": {"type": "integer"},
        "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "in_stock": {"type": "boolean"},
    },
    "required": ["sku", "name", "quantity", "price", "tags", "in_stock"],
}
ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "customer": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
            "required": ["name", "email"],
        },
        "items": {"type": "array", "items": ITEM_SCHEMA},
        "note": {"type": ["string", "null"]},
        "total": {"type": "number"},
    },
    "required": ["order_id", "customer", "items", "total"],
}


def order_document(chars: int, seed: int = 11) -> tuple[str, Any]:
    """Pretty-printed JSON of an order with items added until it is about `chars` long, and its value."""
    rng = random.Random(seed)
    order: dict[str, Any] = {
        "order_id": "ORD-2024-00042",
        "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
        "items": [],
        "note": "Leave at the door \u2013 \"back\" entrance, please.",
        "total": 0.0,
    }
    while True:
        order["total"] = round(sum(i["quantity"] * i["price"] for i in order["items"]), 2)
        text = json.dumps(order, indent=2, ensure_ascii=False)
        if len(text) >= chars:
            return text, json.loads(text)
        number = len(order["items"]) + 1
        order["items"].append({
            "sku": f"SKU-{rng.randrange(10_000):04d}",
            "name": rng.choice(["Widget, size M", "Café crème 1 kg", "Cable 2 m grey", "Lamp \"Nova\""]) + f" #{number}",
            "quantity": rng.randrange(1, 12),
            "price": round(rng.uniform(1, 300), 2),
            "tags": rng.sample(["new", "sale", "eco", "bulk", "gift"], rng.randrange(0, 3)),
            "in_stock": rng.random() < 0.8,
        })


# -- ours ------------------------------------------------------------------------------------------

class Counter:
    tool_runs = 0


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    Counter.tool_runs += 1
    return a + b


LOOP_REPLIES = [[tool_call("add", {"a": i, "b": 1}, ref=str(i))] for i in range(TOOL_ROUNDS)] + [FINAL_TEXT]


async def ours_loop() -> None:
    Counter.tool_runs = 0
    model = ScriptedModel(LOOP_REPLIES)
    response = await generate(model=model, prompt="go", tools=[add])
    if response.text != FINAL_TEXT or model.calls != MODEL_CALLS or Counter.tool_runs != TOOL_ROUNDS:
        raise SystemExit(f"ours: expected {MODEL_CALLS} model calls, {TOOL_ROUNDS} tool runs and {FINAL_TEXT!r}; "
                         f"got {model.calls}, {Counter.tool_runs} and {response.text!r}")


def ours_stream(text: str, expected: Any) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        chunks, last, final = 0, None, None
        async for item in generate_stream(model=ScriptedModel([text], chunk_size=STREAM_CHUNK), prompt="order",
                                          output_schema=ORDER_SCHEMA):
            if isinstance(item, Chunk):  # the last item is the GenerateResponse
                chunks += 1
                last = item.output
            else:
                final = item.output
        if final != expected or last != expected:
            raise SystemExit("ours: the stream's last chunk output or final output differs from the document")
        return chunks
    return run


# -- Genkit ----------------------------------------------------------------------------------------

class AddInput(BaseModel):
    """Genkit's tool input: one argument, a model (at module level, where Genkit resolves annotations)."""

    a: int
    b: int


@dataclass
class GenkitSide:
    loop: Callable[[], Awaitable[None]]
    stream: Callable[[bool], Awaitable[int]]  # read_output -> chunks seen
    version: str


def genkit_side(text: str, expected: Any) -> GenkitSide | None:
    """Genkit's instant model, tool and stream model, or None when genkit is not importable."""
    try:
        import importlib.metadata

        from genkit import Genkit, Message, ModelResponse, ModelResponseChunk, Part, Role, ToolRequest
    except ImportError:
        return None
    # An empty prompt folder: otherwise Genkit loads ./prompts (this repository's) when run from the root.
    # Genkit's default logging is kept; it prints one "Loaded prompts from directory" line.
    ai = Genkit(prompt_dir=tempfile.mkdtemp(prefix="bench_loop_"))
    state = {"calls": 0, "tools": 0}

    def reply(call: int) -> Any:
        """A fresh response per call (Genkit updates the response it gets), as our ScriptedModel builds one."""
        if call < TOOL_ROUNDS:
            part = Part(tool_request=ToolRequest(name="add", input={"a": call, "b": 1}, ref=str(call)))
        else:
            part = Part(text=FINAL_TEXT)
        return ModelResponse(message=Message(role=Role.MODEL, content=[part]))

    # Genkit checks the request annotation against its ModelRequest class; unannotated is allowed.
    async def instant(request, ctx) -> Any:  # type: ignore[no-untyped-def]
        state["calls"] += 1
        return reply(state["calls"] - 1)

    ai.define_model(name="instant", fn=instant)

    @ai.tool()
    async def add(input: AddInput) -> int:
        """Add two integers."""
        state["tools"] += 1
        return input.a + input.b

    async def loop() -> None:
        state["calls"] = state["tools"] = 0
        response = await ai.generate(model="instant", prompt="go", tools=["add"])
        if response.text != FINAL_TEXT or state["calls"] != MODEL_CALLS or state["tools"] != TOOL_ROUNDS:
            raise SystemExit(f"genkit: expected {MODEL_CALLS} model calls, {TOOL_ROUNDS} tool runs and {FINAL_TEXT!r}; "
                             f"got {state['calls']}, {state['tools']} and {response.text!r} ({response.finish_message})")

    pieces = [text[i : i + STREAM_CHUNK] for i in range(0, len(text), STREAM_CHUNK)]

    async def streamer(request, ctx) -> Any:  # type: ignore[no-untyped-def]
        for piece in pieces:
            ctx.send_chunk(ModelResponseChunk(role=Role.MODEL, content=[Part(text=piece)]))
        return ModelResponse(message=Message(role=Role.MODEL, content=[Part(text=text)]))

    ai.define_model(name="streamer", fn=streamer)

    async def stream(read_output: bool) -> int:
        """One streamed generate; with `read_output`, every chunk's `.output` too (Genkit parses it on access)."""
        chunks, last = 0, expected
        result = ai.generate_stream(model="streamer", prompt="order", output_schema=ORDER_SCHEMA)
        async for chunk in result.stream:
            chunks += 1
            if read_output:
                last = chunk.output
        output = (await result.response).output
        if output != expected or last != expected:
            raise SystemExit("genkit: the stream's last chunk output or final output differs from the document")
        return chunks

    return GenkitSide(loop, stream, importlib.metadata.version("genkit"))


# -- timing ----------------------------------------------------------------------------------------

def block_of(fn: Callable[[], Awaitable[Any]]) -> Block:
    return async_block(fn, collect=True)  # the Genkit side leaves much garbage; collect it outside the timed part


async def best_of(blocks: Sequence[Block], rounds: int, seconds: float, calibrate: bool = True) -> list[float]:
    return await interleaved_best(blocks, rounds, seconds, calibration_calls=CALIBRATION_CALLS, calibrate=calibrate)


# -- main ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figures:
    ours_loop: float  # seconds per generate
    ours_stream: float  # seconds per whole stream
    chunks: int
    genkit_loop: float | None = None
    genkit_stream_bare: float | None = None  # chunk.output not read
    genkit_stream_output: float | None = None  # every chunk.output read; one timed run (it takes seconds)
    genkit_version: str | None = None


async def measure(text: str, expected: Any, args: argparse.Namespace) -> Figures:
    stream = ours_stream(text, expected)
    chunks = await stream()
    peer = None if args.no_genkit else genkit_side(text, expected)
    if peer is None:
        (ours_l,) = await best_of([block_of(ours_loop)], args.rounds, args.seconds)
        (ours_s,) = await best_of([block_of(stream)], args.stream_rounds, args.seconds)
        return Figures(ours_l, ours_s, chunks)
    if (peer_chunks := await peer.stream(False)) != chunks:
        raise SystemExit(f"genkit streamed {peer_chunks} chunks, ours {chunks}")
    ours_l, genkit_l = await best_of([block_of(ours_loop), block_of(peer.loop)], args.rounds, args.seconds)
    ours_s, genkit_bare = await best_of([block_of(stream), block_of(lambda: peer.stream(False))],
                                                 args.stream_rounds, args.seconds)
    genkit_output = None
    if args.genkit_output_runs > 0:
        genkit_output = (await best_of([block_of(lambda: peer.stream(True))], args.genkit_output_runs, 0.0,
                                                calibrate=False))[0]
    return Figures(ours_l, ours_s, chunks, genkit_l, genkit_bare, genkit_output, peer.version)


def per_chunk(seconds: float, chunks: int) -> str:
    return f"{seconds * 1e3:9.2f} ms per stream = {seconds / chunks * 1e6:8.1f} µs per chunk"


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="timed loop rounds per library, best kept (default 10)")
    parser.add_argument("--stream-rounds", type=int, default=5, help="timed stream rounds per library, best kept (default 5)")
    parser.add_argument("--seconds", type=float, default=0.25, help="length of one round (default 0.25)")
    parser.add_argument("--genkit-output-runs", type=int, default=1, metavar="N",
                        help="timed runs of Genkit's stream reading every chunk.output, ~20 s each (default 1; 0 skips)")
    parser.add_argument("--no-genkit", action="store_true", help="time ours only")
    args = parser.parse_args()

    text, expected = order_document(STREAM_DOC_CHARS)
    f = asyncio.run(measure(text, expected, args))

    print(f"loop: {MODEL_CALLS} model calls, {TOOL_ROUNDS} tool runs per generate (counted on each side); best of {args.rounds}")
    print(f"  ours   (ScriptedModel, sync tool):      {f.ours_loop * 1e6:9.1f} µs per generate")
    if f.genkit_loop is not None:
        ratio = f.ours_loop / f.genkit_loop
        print(f"  genkit {f.genkit_version} (define_model, async tool): {f.genkit_loop * 1e6:9.1f} µs per generate")
        print(f"  ratio ours/genkit: {ratio:.3f} ({1 / ratio:.1f}x faster)")
    print(f"stream: one {len(text):,}-character JSON reply in {f.chunks} chunks of {STREAM_CHUNK}, output_schema given; "
          f"best of {args.stream_rounds}")
    print(f"  ours   generate_stream, every chunk.output: {per_chunk(f.ours_stream, f.chunks)}")
    if f.genkit_stream_bare is not None:
        print(f"  genkit generate_stream, chunk.output unread: {per_chunk(f.genkit_stream_bare, f.chunks)}  (informational)")
    if f.genkit_stream_output is not None:
        runs = f"best of {args.genkit_output_runs} runs" if args.genkit_output_runs > 1 else "one run"
        print(f"  genkit generate_stream, every chunk.output: {per_chunk(f.genkit_stream_output, f.chunks)}  "
              f"(informational, {runs})")

    stream_figure = f"ours {f.ours_stream / f.chunks * 1e6:.1f} µs/chunk ({f.chunks} chunks, {len(text):,} chars)"
    if f.genkit_stream_output is not None:
        stream_figure += f" vs genkit {f.genkit_stream_output / f.chunks * 1e6:,.0f} µs/chunk"
    stream_result = Result("generate_stream per chunk", stream_figure, "none (informational)", True, informational=True)
    if f.genkit_loop is None:
        print("genkit: not timed (--no-genkit, or not importable: run with bench/.peers/bin/python)")
        loop_result = Result("tool loop ours (no genkit)", f"ours {f.ours_loop * 1e6:.1f} µs per generate",
                             f"<= {TARGET_RATIO:.2f} of genkit (not run)", False, informational=True)
    else:
        ratio = f.ours_loop / f.genkit_loop
        figure = f"{f.ours_loop * 1e6:.0f} µs vs {f.genkit_loop * 1e6:.0f} µs = {ratio:.3f}"
        loop_result = Result("tool loop ours/genkit", figure, f"<= {TARGET_RATIO:.2f}", ratio <= TARGET_RATIO)
    report_all([loop_result, stream_result], args.json)


if __name__ == "__main__":
    main()
