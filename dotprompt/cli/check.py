"""`dotprompt check`: lint every prompt file (and test file) of a folder without calling a model."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..check import check_library
from .common import EXIT_FAILED, EXIT_OK, library


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("check", help="lint every prompt file without calling a model")
    parser.add_argument("dir", nargs="?", help="prompt folder (default as for render)")
    parser.add_argument("--format", choices=["text", "github"], default="text")
    parser.add_argument("--strict", action="store_true", help="warnings fail the check too")
    return parser


def run(args: argparse.Namespace) -> int:
    lib = library(args.dir)
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
