"""`dotprompt render`: print the messages and settings a prompt would send, without calling a model."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._util.escape import terminal
from ..document.rendered import RenderedPrompt
from ..prompts.prompt import render_record
from .common import DIR_HELP, EXIT_OK, add_engine_flag, json_arg, library

__all__ = ["add_parser", "readable", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("render", help="print the messages and settings a prompt would send")
    parser.add_argument("name", help="prompt name, e.g. extract or billing/extract")
    parser.add_argument("--variant", help="the prompt variant (NAME.VARIANT.prompt)")
    parser.add_argument("--input", help="input as JSON, or @file.json")
    parser.add_argument("--context", help="context (auth, state, ...) as JSON, or @file.json")
    parser.add_argument("--dir", help=DIR_HELP)
    parser.add_argument("--json", action="store_true", help="print the Dotprompt JSON shape (and the engine, and why)")
    add_engine_flag(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    prompt = library(args.dir, engine=args.template_engine).load(args.name, args.variant)
    rendered = prompt.render(json_arg(args.input, "--input"), context=json_arg(args.context, "--context"))
    if args.json:
        print(json.dumps(render_record(prompt, rendered), indent=2, ensure_ascii=False))
    else:
        print(readable(rendered))
    return EXIT_OK


CONTENT_INDENT = "  "


def readable(rendered: RenderedPrompt) -> str:
    """Settings, then each message under a `--- role ---` header with its content indented: input
    text holding `--- system ---` then stays inside its message and cannot pass for another one."""
    lines = []
    for label, value in (("model", rendered.model), ("config", rendered.config or None),
                         ("tools", ", ".join(rendered.tools) or None), ("max turns", rendered.max_turns),
                         ("output format", rendered.output.format)):
        if value is not None:
            # One line each: a model name holding a newline cannot pass for a message header.
            lines.append(terminal(f"{label}: {json.dumps(value) if isinstance(value, dict) else value}", lines=False))
    if rendered.output.schema is not None:
        lines.append(f"output schema: {json.dumps(rendered.output.schema, ensure_ascii=False)}")
    for message in rendered.messages:
        tag = f" ({message.metadata['purpose']})" if message.metadata and "purpose" in message.metadata else ""
        lines.append(f"--- {message.role}{tag} ---")
        for part in message.content:
            lines += [CONTENT_INDENT + line if line else line for line in _part_text(part).split("\n")]
    return terminal("\n".join(lines))


def _part_text(part: Any) -> str:
    if part.text is not None:
        return part.text.strip("\n")  # the readable view; --json shows the exact text
    if part.media is not None:
        kind = f" {part.media.content_type}" if part.media.content_type else ""
        return f"[media{kind}: {part.media.url}]"
    return f"[{json.dumps(part.to_dict(), ensure_ascii=False)}]"
