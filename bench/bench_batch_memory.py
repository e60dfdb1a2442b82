"""Peak memory of the single-process batch runner over a 1,000,000-row input (target: <= 200 MB RSS).

A child process (so this script's own memory is not counted) writes nothing but runs
`run_batch(prompt, InputFile(rows.jsonl), out.jsonl, concurrency=32)` with a model that answers at
once with JSON matching the prompt's output schema, then runs it again (a resume: every row is
skipped, which reads the whole output). `--resume-only` writes that output directly instead of
running the rows (the memory of the resume, a fraction of the time). The parent samples the child's RSS from /proc every 0.2 s
and also reads its peak (ru_maxrss). Rows are `{"id": N, "review": ~60 characters}`; the input
file is written by this script in a temporary folder first (about 80 MB for a million rows).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Result, arg_parser, report

TARGET_MB = 200
CHILD = r'''
import asyncio, json, resource, sys, time
from pathlib import Path
from dotprompt import PromptLibrary
from dotprompt.batch import InputFile, run_batch
from dotprompt.providers import define_model
from dotprompt.providers.base import ModelInfo
from dotprompt.types import Message, ModelResponse, Part

class Instant:
    name = "instant"
    info = ModelInfo()
    async def generate(self, request, on_chunk=None):
        return ModelResponse(message=Message(role="model", content=[Part(text='{"label": "positive"}')]))

define_model(Instant())
root = Path(sys.argv[1])
prompt = PromptLibrary(root / "prompts").load("review")
started = time.perf_counter()
if sys.argv[2] == "resume":  # the output of a finished run, written directly (as the runner writes it)
    from dotprompt.batch import BatchReport
    with open(root / "out.jsonl", "w") as handle:
        for row in InputFile(root / "rows.jsonl"):
            handle.write(json.dumps({"key": row.key, "row": row.number, "digest": row.digest, "input": row.input,
                                     "output": {"label": "positive"}, "latency_ms": 0.1}) + "\n")
    first = BatchReport(succeeded=row.number)
else:
    first = asyncio.run(run_batch(prompt, InputFile(root / "rows.jsonl"), root / "out.jsonl", concurrency=32))
middle = time.perf_counter()
again = asyncio.run(run_batch(prompt, InputFile(root / "rows.jsonl"), root / "out.jsonl", concurrency=32))
print(json.dumps({"succeeded": first.succeeded, "failed": first.failed, "skipped": again.skipped,
                  "run_s": middle - started, "resume_s": time.perf_counter() - middle,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''
PROMPT = """---
model: instant
output:
  schema:
    label(enum): [positive, negative, neutral]
---
Label the review #{{ id }}: {{ review }}
"""


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--resume-only", action="store_true",
                        help="skip the run: write the output of a finished run directly, then time the resume alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "prompts").mkdir()
        (root / "prompts" / "review.prompt").write_text(PROMPT, encoding="utf-8")
        with open(root / "rows.jsonl", "w", encoding="utf-8") as handle:
            for n in range(args.rows):
                handle.write(json.dumps({"id": n, "review": f"Row {n}: arrived quickly and works as described."}) + "\n")
        phase = "resume" if args.resume_only else "run"
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), phase], stdout=subprocess.PIPE, text=True)
        samples: list[tuple[float, float]] = []
        started = time.perf_counter()
        while child.poll() is None:
            samples.append((time.perf_counter() - started, rss_mb(child.pid)))
            time.sleep(0.2)
        out, _ = child.communicate()
        if child.returncode != 0:
            sys.exit(f"the child failed with exit {child.returncode}")
        figures = json.loads(out.strip().splitlines()[-1])
    peak = figures["peak_kb"] / 1024
    tenth = len(samples) // 10
    print(f"{args.rows} rows: {figures['succeeded']} succeeded, {figures['failed']} failed in {figures['run_s']:.0f} s; "
          f"resume skipped {figures['skipped']} in {figures['resume_s']:.0f} s")
    print("RSS over the run (MB, at each tenth):", " ".join(f"{mb:.0f}" for _, mb in samples[::max(1, tenth)]))
    print(f"peak RSS {peak:.0f} MB (ru_maxrss), sampled max {max(mb for _, mb in samples):.0f} MB")
    report(Result(f"batch memory, {args.rows} rows", f"{peak:.0f} MB peak RSS", f"<= {TARGET_MB} MB",
                  peak <= TARGET_MB and figures["succeeded"] == args.rows), args.json)


if __name__ == "__main__":
    main()
