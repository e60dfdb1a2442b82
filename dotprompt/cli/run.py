"""`dotprompt run`: run a prompt on a model and print the validated output; `--input-file` runs a batch."""

from __future__ import annotations

import argparse
import gc
import shlex
import sys
from pathlib import Path
from typing import Any, Final

from .._util.escape import json_dumps, terminal
from .._util.redact import redact
from ..errors import GenerationError
from ..settings import BATCH_LOG_ROWS
from .common import (
    DIR_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PENDING,
    CommandLineError,
    add_engine_flag,
    json_arg,
    library,
)
from .grounding_view import show_grounding
from .progress import StreamView, elapsed_status

__all__ = ["ROW_ERROR_CHARS", "add_parser", "failed_row_line", "run"]

ROW_ERROR_CHARS: Final = 400
"""Characters of a failed batch row's error shown on its stderr line (the output file keeps it whole)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("run", help="run a prompt on a model and print the validated output")
    parser.add_argument("name", help="the prompt's name, e.g. extract or billing/refund")
    parser.add_argument("--variant", help="the prompt variant (NAME.VARIANT.prompt)")
    parser.add_argument("--input", help="input as JSON, or @file.json")
    parser.add_argument("--context", help="context (auth, state, ...) as JSON, or @file.json")
    parser.add_argument("--model", help="model name, overriding the prompt's (e.g. echo, openai/gpt-4o-mini)")
    parser.add_argument("--stream", action="store_true",
                        help="show the reply as it arrives (on a terminal it is replaced by the final output)")
    parser.add_argument("--tool-errors", choices=["return", "raise"],
                        help="a tool that raises: tell the model and go on (return, the default; each error is "
                             "shown on stderr), or stop the run with exit 1 (raise)")
    parser.add_argument("--input-file", type=Path, help="a JSON-lines file of inputs: run them all as a batch")
    parser.add_argument("--output", type=Path, help="with --input-file: where each row's result goes (JSON lines)")
    parser.add_argument("--concurrency", type=int, default=8, help="with --input-file: rows run at once")
    parser.add_argument("--key", metavar="COLUMN",
                        help="with --input-file: the column that names each row (default: `id` when a row has one, "
                             "else its content); it is sent to the model only if the input schema declares it")
    parser.add_argument("--cost", action="store_true",
                        help="always show the run's cost on stderr, or why it is unknown (it is shown whenever known)")
    parser.add_argument("--grounding", action="store_true",
                        help="show where each output value is in the input (stderr); ungrounded values are always shown")
    parser.add_argument("--no-log", action="store_true", help="do not add this run (or these rows) to the run log")
    parser.add_argument("--log-rows", choices=BATCH_LOG_ROWS, default=BATCH_LOG_ROWS[0],
                        help="with --input-file: which rows the run log keeps besides the batch's own entry: the failed "
                             "ones (default; the others are in --output), all of them, or none")
    parser.add_argument("--batch-api", action="store_true",
                        help="with --input-file: submit the rows to the provider's batch API (OpenAI, Anthropic, Gemini; "
                             "about half the price, results within 24 h); the job ids go to OUTPUT.batch.json")
    parser.add_argument("--resume", action="store_true",
                        help="with --batch-api: poll the submitted jobs and write the results of those that ended; "
                             "with --engine ray: skip rows already written")
    parser.add_argument("--return-tool-requests", action="store_true",
                        help="with --batch-api: a prompt with tools sends only its first turn, and each result keeps "
                             "the model's tool requests")
    parser.add_argument("--batch-size", type=int, help="with --batch-api: the most rows per submitted job")
    parser.add_argument("--engine", choices=["local", "ray"], default="local",
                        help="with --input-file: run here (local, the default) or on a Ray cluster (ray; "
                             "pip install 'dotprompt-toolkit[ray]')")
    parser.add_argument("--workers", type=int, default=2, help="with --engine ray: actors running the prompt "
                                                               "(each keeps --concurrency rows in flight)")
    parser.add_argument("--address", help="with --engine ray: the cluster to join (`auto`: the one this machine is in; "
                                          "default: a local Ray started for the run)")
    parser.add_argument("--dir", help=DIR_HELP)
    add_engine_flag(parser, short=False)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..generation.api import run_sync
    from ..observe.runrecord import log_source  # the running side loads with this command, not with `check`

    prompt = library(args.dir, log=False if args.no_log else None,
                     engine=args.template_engine).load(args.name, args.variant)
    if args.input_file is not None:
        if args.tool_errors is not None:
            raise CommandLineError("--tool-errors applies to a single run; with --input-file a row's tool errors "
                                   "go back to the model")
        if args.output is None:
            raise CommandLineError("--input-file needs --output FILE for the results")
        if args.batch_api and args.engine != "local":
            raise CommandLineError("--batch-api runs on the provider: it does not combine with --engine ray")
        if args.key is not None and not args.key.strip():
            raise CommandLineError("--key needs a column name (the field of each row that names it, e.g. --key id)")
        if args.key is not None and args.engine == "ray":
            raise CommandLineError("--key works with local batches and --batch-api; on Ray rows are keyed by their "
                                   "`id` column (rename the column to id)")
        if args.batch_api:
            from .run_batchapi import run_batch_api

            return run_batch_api(prompt, args)
        if args.engine == "ray":
            from .run_ray import run_on_ray

            return run_on_ray(args)
        for flag in ("resume", "return_tool_requests", "batch_size", "address"):
            if getattr(args, flag):
                raise CommandLineError(f"--{flag.replace('_', '-')} needs --batch-api or --engine ray (a local batch "
                                       "always resumes: rows already written are skipped)")
        return _run_batch(prompt, args)
    for flag in ("batch_api", "resume", "return_tool_requests", "batch_size", "address", "key"):
        if getattr(args, flag):
            raise CommandLineError(f"--{flag.replace('_', '-')} needs --input-file")
    inputs = json_arg(args.input, "--input")
    context = json_arg(args.context, "--context")
    overrides = {"tool_errors": args.tool_errors} if args.tool_errors else {}
    try:
        with log_source("run"):
            if args.stream:
                response = run_sync(_stream(prompt, inputs, context, args.model, overrides))
            else:
                with elapsed_status(f"running {prompt.name}"):
                    response = prompt.generate_sync(inputs, context=context, model=args.model, **overrides)
    except GenerationError as exc:  # the run failed after tools ran: their errors may be why
        _show_tool_errors(exc.messages)
        raise
    _show_tool_errors(response.messages)
    if _show_pending(response):
        return EXIT_PENDING
    output = response.output
    if isinstance(output, str):
        print(terminal(output) if sys.stdout.isatty() else output)  # piped, the text stays exact
    else:
        print(json_dumps(output, indent=2, default=lambda o: o.model_dump(mode="json")))
    for repair in response.output_repairs:
        print(terminal(f"note: the output needed a repair: {repair.detail}"), file=sys.stderr)
    show_grounding(response.grounding, sys.stderr, spans=args.grounding)
    from ..batch.runner import model_name

    _show_cost(model_name(prompt, args.model), response, asked=args.cost)
    return EXIT_OK


def _show_pending(response: Any) -> bool:
    """A run that stopped on interrupts has no output: its pending requests on stderr, and how to answer them."""
    from ..observe.runrecord import pending_interrupts

    pending = pending_interrupts(response)
    if not pending:
        return False
    print(f"interrupted: the run stopped on {len(pending)} tool request(s) waiting for an answer:", file=sys.stderr)
    for request in pending:
        ref = f" (ref {request['ref']})" if request["ref"] else ""
        line = f"  {request['name']}{ref} {json_dumps(request['input'])}"
        print(terminal(redact(line), lines=False), file=sys.stderr)  # the input is the model's
    print("answer them in the workbench (`dotprompt ui`: Run, then Answer and resume), or in Python with "
          "generate(messages=response.messages, resume=Resume(respond=[...], restart=[...])) "
          "(docs/running.md); the run log keeps the conversation", file=sys.stderr)
    return True


def _show_cost(model: str | None, response: Any, *, asked: bool) -> None:
    """`cost: $0.00045 (1,234 tokens, 2 calls)` on stderr when known; why not only when asked (`--cost`)."""
    from ..observe.cost import price_response

    cost = price_response(model or "", response)
    if cost.usd is not None:
        tokens = response.usage.total_tokens if response.usage is not None else None
        details = [f"{tokens:,} tokens" if tokens else "", f"{cost.calls} calls" if cost.calls > 1 else ""]
        detail = ", ".join(d for d in details if d)
        print(f"cost: {cost}" + (f" ({detail})" if detail else ""), file=sys.stderr)
    elif asked:
        print(f"cost: unknown ({cost.reason})", file=sys.stderr)


def _run_batch(prompt: Any, args: argparse.Namespace) -> int:
    from ..batch.runner import InputFile, run_batch
    from ..generation.api import run_sync
    from ..observe.cost import format_usd

    try:
        rows = InputFile(args.input_file, args.key)
        total = rows.check()
    except OSError as exc:
        raise CommandLineError(f"cannot read {args.input_file}: {exc.strerror}") from None
    progress = _BatchProgress(total)
    _batch_gc()
    try:
        report = run_sync(run_batch(prompt, rows, args.output, concurrency=args.concurrency, model=args.model,
                                    on_row=progress.row, log_rows=args.log_rows))
    except KeyboardInterrupt:  # Ctrl-C: each row is written whole as it ends, so the file is sound to resume
        progress.close()
        again = shlex.join(["dotprompt", *sys.argv[1:]])
        print(f"\ninterrupted: {progress.done} row(s) written to {args.output} in this run; run the same command "
              f"again to go on (rows already written are skipped):\n  {again}", file=sys.stderr)
        return EXIT_INTERRUPTED
    progress.close()
    cost = f", cost {format_usd(report.cost_usd)}" if report.cost_usd is not None else ""
    stopped = f"{report.interrupted} interrupted (tool requests pending), " if report.interrupted else ""
    print(f"{report.succeeded} succeeded, {report.failed} failed, {stopped}{report.skipped} skipped (already done) "
          f"in {report.seconds:.1f} s{cost} -> {args.output}", file=sys.stderr)
    if args.cost and report.cost_usd is None:
        print(f"cost: unknown ({report.cost_unknown or 'no row was run'})", file=sys.stderr)
    if report.interrupted:
        print(f"{report.interrupted} row(s) stopped on tool requests waiting for a human: each record keeps its "
              "`interrupted` requests and `messages`; answer them with generate(messages=..., resume=Resume(...)), "
              "or run the same command again to run those rows again from the start", file=sys.stderr)
    return EXIT_FAILED if report.failed else EXIT_PENDING if report.interrupted else EXIT_OK


def _batch_gc() -> None:
    """Garbage collection for a long batch in this process (the CLI's own, so its settings are ours to
    choose): what start-up made is frozen out of the full collections, and young objects are collected
    every 20,000 allocations instead of 700. Collections took a twentieth of a batch's time, a full one
    stalling every call in flight for 50 ms; now well under 1%. Each row's garbage is still collected
    (a million-row batch keeps its memory bound)."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)


class _BatchProgress:
    """A live bar on a terminal, a line per failed row otherwise (CI logs)."""

    def __init__(self, total: int) -> None:
        self.done = 0  # rows written in this run
        self.bar = None
        if sys.stderr.isatty():
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            self.task = self.bar.add_task("rows", total=total)

    def row(self, record: dict[str, Any]) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.task)
        elif "error" in record or "interrupted" in record:
            print(terminal(failed_row_line(record), lines=False), file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def failed_row_line(record: dict[str, Any]) -> str:
    """`row 3 (id "a"): InputValidationError: <the message's lines joined>`, cut at ROW_ERROR_CHARS: one
    line per failed row in a CI log, with the reason in it (the whole error is in the output file)."""
    key = record.get("key") or ""
    column, _, value = key.partition(":")
    label = f" ({column} {value})" if value and column != "sha256" else ""
    if "error" not in record:  # stopped on interrupts
        from ..observe.runrecord import pending_summary

        return f"row {record['row']}{label}: interrupted: {pending_summary(record['interrupted'])}"
    lines = [line.strip() for line in str(record["error"].get("message", "")).splitlines() if line.strip()]
    message = " ".join([*lines[:1], "; ".join(lines[1:])]).strip()
    if len(message) > ROW_ERROR_CHARS:
        message = message[:ROW_ERROR_CHARS] + "... (the whole error is in the output file)"
    return f"row {record['row']}{label}: {record['error']['type']}: {message}"


def _show_tool_errors(messages: Any) -> None:
    """Each tool error the model was told of, on stderr: a failing tool must not pass unseen."""
    for message in messages or ():
        for part in getattr(message, "content", None) or ():
            answer = part.tool_response
            if answer is None or not (part.metadata or {}).get("toolError"):
                continue
            error = answer.output.get("error") if isinstance(answer.output, dict) else answer.output
            ref = f" (ref {answer.ref})" if answer.ref else ""
            line = f"tool error: {answer.name}{ref} raised {error} (the model was told and went on)"
            # Redacted again here: the messages may come from a middleware or a resumed run, not error_part.
            print(terminal(redact(line), lines=False), file=sys.stderr)  # the name and the error may be the model's


async def _stream(prompt: Any, inputs: Any, context: Any, model: str | None, overrides: dict[str, Any]) -> Any:
    from ..generation.response import Chunk

    final = None
    with StreamView(f"streaming {prompt.name}") as view:
        async for item in prompt.generate_stream(inputs, context=context, model=model, **overrides):
            if isinstance(item, Chunk):
                if item.role == "model" and item.text:
                    view.add(item.text)
            else:
                final = item
    return final
