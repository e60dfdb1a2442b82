"""`dotprompt types`: write the typed module of a prompt folder; `--check`: is it up to date."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._util.escape import terminal
from ..settings import project_root, types_module
from ..typegen.files import Generated, generate, problems_of, write
from .common import DIR_HELP, EXIT_FAILED, EXIT_OK, CommandLineError, library

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("types", help="write a typed Python module for the prompts (mypy, pyright, editors)")
    parser.add_argument("dir", nargs="?", help=DIR_HELP)
    parser.add_argument("--out", metavar="PATH", help="the module to write (default: [tool.dotprompt] types, else "
                                                      "prompt_types.py beside pyproject.toml)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each prompt whose types "
                                                             "changed since the module was written")
    return parser


def run(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve() if args.out else types_module()
    lib = library(args.dir)  # the modules of [tool.dotprompt] schemas define the schemas prompts name
    generated = generate(lib, out, project_root())
    if args.check:
        return _check(generated, out)
    if out.is_dir():
        raise CommandLineError(f"{out} is a folder: --out names the module file to write (prompt_types.py)")
    changed = write(generated, out)
    count = len(generated.prompts)
    print(f"{'wrote' if changed else 'unchanged:'} {terminal(str(out))} ({count} prompt{'s' if count != 1 else ''})",
          file=sys.stderr)
    return EXIT_OK


def _check(generated: Generated, out: Path) -> int:
    problems = problems_of(generated, out)
    for line in problems:
        print(terminal(line))
    if problems:
        print(f"{terminal(str(out))} is stale: run `dotprompt types` to write it again", file=sys.stderr)
        return EXIT_FAILED
    print(f"{terminal(str(out))} is up to date ({len(generated.prompts)} prompts)", file=sys.stderr)
    return EXIT_OK
