"""`dotprompt list`: the prompts of a folder, one `label<TAB>path` line each.

(The module is not called `list.py` so that importing it never hides the builtin.)
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import DIR_HELP, EXIT_OK, add_engine_flag, library

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("list", help="list the prompts of a folder")
    parser.add_argument("dir", nargs="?", help=DIR_HELP)
    add_engine_flag(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    for info in library(args.dir, engine=args.template_engine).prompts():
        print(f"{info.label}\t{info.path}")
    return EXIT_OK
