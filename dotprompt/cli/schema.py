"""`dotprompt schema`: print a prompt's output (or input) JSON Schema."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import EXIT_OK, CommandLineError, library


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("schema", help="print a prompt's output (or input) JSON Schema")
    parser.add_argument("name")
    parser.add_argument("--variant")
    parser.add_argument("--input", action="store_true", help="the input schema instead")
    parser.add_argument("--dir")
    return parser


def run(args: argparse.Namespace) -> int:
    prompt = library(args.dir).load(args.name, args.variant)
    section = "input" if args.input else "output"
    schema = (prompt.metadata.get(section) or {}).get("schema")
    if schema is None:
        raise CommandLineError(f"prompt {args.name!r} declares no {section} schema")
    print(json.dumps(schema, indent=2, ensure_ascii=False))
    return EXIT_OK
