"""`dotprompt run NAME --input-file rows.jsonl --output out.jsonl --batch-api [--resume]`: the provider's batch API."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, CommandLineError

__all__ = ["run_batch_api"]


def run_batch_api(prompt: Any, args: argparse.Namespace) -> int:
    from ..batch.api.jobs import resume, state_path, submit
    from ..batch.runner import InputFile
    from ..generation.api import run_sync
    from ..settings import BATCH_JOB_MAX_ROWS

    rows = InputFile(args.input_file, args.key)
    try:
        rows.check()
    except OSError as exc:
        raise CommandLineError(f"cannot read {args.input_file}: {exc.strerror}") from None
    if args.resume:
        report = run_sync(resume(prompt, rows, args.output,
                                 on_status=lambda job, status: print(f"job {job}: {status}", file=sys.stderr)))
        for problem in report.problems:
            print(f"warning: {problem}", file=sys.stderr)
        written = report.written
        print(f"{written.succeeded} succeeded, {written.failed} failed, {written.skipped} skipped (already done) "
              f"-> {args.output}; {report.pending} job(s) still running", file=sys.stderr)
        if report.pending:
            print("run the same command again later to download them", file=sys.stderr)
        return EXIT_FAILED if written.failed else EXIT_OK
    submitted = run_sync(submit(prompt, rows, args.output, model=args.model, first_turn_only=args.return_tool_requests,
                                batch_size=args.batch_size or BATCH_JOB_MAX_ROWS,
                                on_job=lambda job, n: print(f"submitted job {job} ({n} rows)", file=sys.stderr)))
    print(f"{submitted.rows} rows in {len(submitted.jobs)} job(s), {submitted.skipped} skipped (already done), "
          f"{submitted.failed} failed before submission; job ids in {state_path(args.output)}", file=sys.stderr)
    if submitted.jobs:
        print("poll and download with the same command and --resume", file=sys.stderr)
    return EXIT_FAILED if submitted.failed else EXIT_OK
