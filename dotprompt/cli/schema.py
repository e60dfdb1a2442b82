"""`dotprompt schema`: print a prompt's output (or input) JSON Schema, or the editor schemas of the file formats."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import DIR_HELP, EXIT_OK, CommandLineError, add_engine_flag, library

__all__ = ["add_parser", "print_shipped", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("schema", help="print a prompt's output (or input) JSON Schema, or the JSON "
                                                  "Schema of the frontmatter or of test files (for editors)")
    parser.add_argument("name", nargs="?", help="the prompt's name, e.g. extract or billing/refund")
    parser.add_argument("--variant", help="the prompt variant (NAME.VARIANT.prompt)")
    parser.add_argument("--input", action="store_true", help="the input schema instead")
    parser.add_argument("--dir", help=DIR_HELP)
    add_engine_flag(parser)
    shipped = parser.add_mutually_exclusive_group()
    shipped.add_argument("--frontmatter", action="store_true",
                         help="the JSON Schema of a .prompt file's frontmatter (no NAME)")
    shipped.add_argument("--test-file", action="store_true",
                         help="the JSON Schema of a test file (NAME.test.yaml), for `# yaml-language-server: $schema=`")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.frontmatter or args.test_file:
        return print_shipped("frontmatter" if args.frontmatter else "test-file", args)
    if not args.name:
        raise CommandLineError("name a prompt (`dotprompt schema extract`), or ask for --frontmatter or --test-file")
    prompt = library(args.dir, engine=args.template_engine).load(args.name, args.variant)
    section = "input" if args.input else "output"
    schema = (prompt.metadata.get(section) or {}).get("schema")
    if schema is None:
        for name in prompt.compiled.unresolved:  # a named schema nothing defines: say that, not "declares none"
            if name.kind == "schema" and (name.where or "").startswith(f"{section}."):
                raise name.error()
        raise CommandLineError(f"prompt {args.name!r} declares no {section} schema")
    print(json.dumps(schema, indent=2, ensure_ascii=False))
    return EXIT_OK


def print_shipped(kind: str, args: argparse.Namespace) -> int:
    from ..lint.editor_schemas import shipped_schema_text

    if args.name or args.input or args.variant:
        raise CommandLineError(f"--{kind} prints a fixed schema: drop the prompt name, --input and --variant")
    sys.stdout.write(shipped_schema_text(kind))  # type: ignore[arg-type]
    return EXIT_OK
