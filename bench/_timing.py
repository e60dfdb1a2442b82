"""Timing blocks shared by the benchmarks: rounds alternate between the sides so noise hits all alike."""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

Block = Callable[[int], Awaitable[float]]  # runs one call `number` times, returns the seconds taken


def sync_block(fn: Callable[[], Any]) -> Block:
    async def run(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return time.perf_counter() - start
    return run


def async_block(fn: Callable[[], Awaitable[Any]], *, collect: bool = False) -> Block:
    """`collect`: run the garbage collector before each round, so one side's garbage is not timed on the other."""
    async def run(number: int) -> float:
        if collect:
            gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            await fn()
        return time.perf_counter() - start
    return run


async def calls_per_round(block: Block, seconds: float, calibration_calls: int) -> int:
    """How many calls fill `seconds` (timeit's autorange idea), after a warm-up."""
    await block(calibration_calls)
    per_call = await block(calibration_calls) / calibration_calls
    return max(1, int(seconds / per_call))


async def interleaved_best(blocks: Sequence[Block], rounds: int, seconds: float, *, calibration_calls: int = 20,
                           calibrate: bool = True) -> list[float]:
    """Best seconds per call of each block. Without `calibrate`, a round is one call and there is no warm-up."""
    numbers = [await calls_per_round(block, seconds, calibration_calls) if calibrate else 1 for block in blocks]
    best = [float("inf")] * len(blocks)
    for _ in range(rounds):
        for i, (block, number) in enumerate(zip(blocks, numbers, strict=True)):
            best[i] = min(best[i], await block(number) / number)
    return best
