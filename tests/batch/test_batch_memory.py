"""The single-process batch runner streams: its memory does not grow with the number of rows.

Each size runs in its own child process under a memory limit; the peak RSS of a run ten times
longer must stay within a few megabytes of the shorter one (a list of rows, or a task per row,
would add tens of megabytes at this size)."""

from __future__ import annotations

import pytest

from tests.isolation import assert_finishes

CHILD = '''
import asyncio, json, resource, sys, tempfile
from pathlib import Path
from dotprompt import PromptLibrary
from dotprompt.batch.runner import InputFile, run_batch
from dotprompt.providers import define_model
from dotprompt.providers.base import ModelInfo
from dotprompt.types import Message, ModelResponse, Part


class Instant:  # answers at once and keeps nothing (ScriptedModel keeps every request)
    name = "instant-mem"
    info = ModelInfo()

    async def generate(self, request, on_chunk=None):
        return ModelResponse(message=Message(role="model", content=[Part(text='{{"double": 2}}')]))

rows = int(sys.argv[1]) if len(sys.argv) > 1 else {rows}
root = Path(tempfile.mkdtemp())
(root / "p").mkdir()
prompt_text = "---\\nmodel: instant-mem\\noutput:\\n  schema:\\n    double: integer\\n---\\n{{{{ n }}}} "
(root / "p" / "double.prompt").write_text(prompt_text + "x" * 200)
define_model(Instant())
source = root / "in.jsonl"
with open(source, "w") as handle:
    for n in range(rows):
        handle.write(json.dumps({{"id": n, "n": n, "text": "y" * 300}}) + "\\n")
prompt = PromptLibrary(root / "p").load("double")
warm = root / "warm.jsonl"  # imports and first-call caches are not the run's memory
warm.write_text('{{"n": 1}}\\n')
asyncio.run(run_batch(prompt, InputFile(warm), root / "warm.out.jsonl", concurrency=32))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = asyncio.run(run_batch(prompt, InputFile(source), root / "out.jsonl", concurrency=32))
again = asyncio.run(run_batch(prompt, InputFile(source), root / "out.jsonl", concurrency=32))  # resume: all skipped
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"succeeded": report.succeeded, "skipped": again.skipped, "before_kb": before, "peak_kb": peak}}))
'''


def peak(rows: int) -> dict:
    return assert_finishes(CHILD.format(rows=rows), timeout=240, memory_mb=700).json()


@pytest.mark.slow
def test_ten_times_the_rows_does_not_take_more_memory():
    small, large = peak(1_500), peak(15_000)
    assert (small["succeeded"], small["skipped"]) == (1_500, 1_500)
    assert (large["succeeded"], large["skipped"]) == (15_000, 15_000)
    growth_mb = ((large["peak_kb"] - large["before_kb"]) - (small["peak_kb"] - small["before_kb"])) / 1024
    assert growth_mb < 8, (small, large)
