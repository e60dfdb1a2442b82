"""`dotprompt convert`: rewrite a Handlebars prompt file in the jinja2 dialect."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, CommandLineError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("convert", help="rewrite a Handlebars prompt file in the jinja2 dialect")
    parser.add_argument("file", type=Path, help="the Handlebars .prompt file")
    parser.add_argument("--to", choices=["jinja2"], required=True, help="the target dialect")
    parser.add_argument("--output", type=Path, help="write here instead of standard output")
    return parser


def run(args: argparse.Namespace) -> int:
    from ..engines.handlebars import convert_source

    try:
        source = args.file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandLineError(f"cannot read {str(args.file)!r}: {exc.strerror}") from None
    result = convert_source(source, str(args.file))
    if args.output is not None:
        args.output.write_text(result.text, encoding="utf-8")
    else:
        sys.stdout.write(result.text)
    for problem in result.problems:
        print(problem.format(str(args.file)), file=sys.stderr)
    return EXIT_FAILED if result.problems else EXIT_OK
