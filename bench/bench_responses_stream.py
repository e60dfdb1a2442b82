"""Responses API streaming: µs per event of our stream state at growing stream sizes (linear or not).

Feeds `openai_responses.ResponsesStreamState` the parsed events of a stream of N text deltas and, separately,
of N one-character function-argument deltas (no HTTP: the SSE framing is timed in bench_provider.py),
best of 5 runs per size, and prints µs per event and the ratio of the largest size's cost per event
to the smallest's (near 1 when linear; the string-in-a-dict version this replaced grew with N).

    python bench/bench_responses_stream.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import time

from dotprompt.providers.openai_responses import ResponsesStreamState

TEXT = {"type": "response.output_text.delta", "output_index": 0, "delta": "x" * 64}
ARGS = {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "x"}
CALL = {"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}}


def run(events: list[dict]) -> float:
    best = float("inf")
    for _ in range(5):
        state = ResponsesStreamState("bench")
        started = time.perf_counter()
        for event in events:
            state.add(event, lambda chunk: None)
        state.snapshot()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    sizes = parser.parse_args().sizes
    for label, first, event in (("text deltas (64 chars)", [], TEXT), ("argument deltas (1 char)", [CALL], ARGS)):
        per_event = []
        for size in sizes:
            seconds = run([*first, *[event] * size])
            per_event.append(seconds / size * 1e6)
            print(f"{label:26} {size:>8,} events: {seconds * 1000:8.1f} ms, {per_event[-1]:6.2f} µs/event")
        print(f"{label:26} µs/event at {sizes[-1]:,} / at {sizes[0]:,}: {per_event[-1] / per_event[0]:.2f}x")


if __name__ == "__main__":
    main()
