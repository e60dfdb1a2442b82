"""`dotprompt render`: print the messages and settings a prompt would send, without calling a model."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .._util.escape import terminal
from ..prompts.prompt import render_record, render_view
from .common import DIR_HELP, EXIT_OK, add_engine_flag, json_arg, library

if TYPE_CHECKING:
    from ..document.rendered import RenderedPrompt
    from ..document.view import RenderView
    from ..mcp.cache import CachedTools

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
    lib = library(args.dir, engine=args.template_engine)
    prompt = lib.load(args.name, args.variant)
    input, context = json_arg(args.input, "--input"), json_arg(args.context, "--context")
    if args.json:  # the Dotprompt shape is the RenderedPrompt's own dump
        rendered = prompt.render(input, context=context)
        mcp = _mcp_tools(rendered, lib)
        record = render_record(prompt, rendered)
        if mcp is not None:
            record["toolDefs"] = [*record.get("toolDefs", []), *(d.to_dict() for d in mcp.definitions)]
            record["mcpTools"] = {"from": mcp.path, "notes": mcp.notes}
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:  # the same render as plain classes: the printout loads no pydantic, most of the start-up
        view = render_view(prompt, input, context)
        print(readable(view, _mcp_tools(view, lib)))
    return EXIT_OK


def _mcp_tools(rendered: RenderedPrompt | RenderView, lib: Any) -> CachedTools | None:
    """The prompt's MCP tools as the cached lists define them (render starts no server: docs/mcp.md), or
    None for a prompt naming none (the cache is then never read)."""
    from ..tools.mcp_names import is_mcp_name

    if not any(is_mcp_name(name) for name in rendered.tools):
        return None
    from ..mcp.cache import cached_definitions  # plain JSON: no SDK

    return cached_definitions(rendered.tools, lib.mcp_servers)


CONTENT_INDENT = "  "


def readable(rendered: RenderedPrompt | RenderView, mcp: CachedTools | None = None) -> str:
    """Settings, then each message under a `--- role ---` header with its content indented: input
    text holding `--- system ---` then stays inside its message and cannot pass for another one.
    `mcp`: the prompt's MCP tools from the cached lists, listed after the settings with where they came from."""
    lines = []
    for label, value in (("model", rendered.model), ("config", rendered.config or None),
                         ("tools", ", ".join(rendered.tools) or None), ("max turns", rendered.max_turns),
                         ("output format", rendered.output.format)):
        if value is not None:
            # One line each: a model name holding a newline cannot pass for a message header.
            lines.append(terminal(f"{label}: {json.dumps(value) if isinstance(value, dict) else value}", lines=False))
    if rendered.output.schema is not None:
        lines.append(f"output schema: {json.dumps(rendered.output.schema, ensure_ascii=False)}")
    if mcp is not None:
        lines += _mcp_lines(mcp)
    for message in rendered.messages:
        tag = f" ({message.metadata['purpose']})" if message.metadata and "purpose" in message.metadata else ""
        lines.append(f"--- {message.role}{tag} ---")
        for part in message.content:
            lines += [CONTENT_INDENT + line if line else line for line in _part_text(part).split("\n")]
    return terminal("\n".join(lines))


def _mcp_lines(mcp: CachedTools) -> list[str]:
    lines = [terminal(f"MCP tools (from the cached tool list {mcp.path}; no server was started):", lines=False)]
    for definition in mcp.definitions:
        about = definition.description.splitlines()[0][:200] if definition.description else ""
        lines.append(terminal(f"{CONTENT_INDENT}{definition.name}" + (f": {about}" if about else ""), lines=False))
        lines.append(terminal(f"{CONTENT_INDENT * 2}input schema: {json.dumps(definition.input_schema)}", lines=False))
    lines += [terminal(f"note: {note}", lines=False) for note in mcp.notes]
    return lines


def _part_text(part: Any) -> str:
    if part.text is not None:
        return part.text.strip("\n")  # the readable view; --json shows the exact text
    if part.media is not None:
        kind = f" {part.media.content_type}" if part.media.content_type else ""
        return f"[media{kind}: {part.media.url}]"
    return f"[{json.dumps(part.to_dict(), ensure_ascii=False)}]"
