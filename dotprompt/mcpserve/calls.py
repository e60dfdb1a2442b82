"""What a tool call does: run a prompt, `check` the folder, `render` a prompt; each answer a CallToolResult.

A failure of the call itself (the model's error, an output that fails its schema, an input the schema
refuses, a render error) is an `isError` result naming the prompt, so the client's model can read it
and try again; only an unknown tool is a protocol error. Every answer has text content (for clients
that read no structured content) and, when the output is JSON, the same value as structured content.
Messages are redacted of the keys the process knows; paths are relative to the prompt folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
import mcp_types as mcp

from .._util.escape import finite_json, json_dumps
from .._util.redact import redact, redact_data
from .._util.suggest import did_you_mean
from ..errors import DotpromptError
from ..lint.check import Diagnostic, check_library, check_prompt
from ..prompts.prompt import render_record
from .catalog import Catalog, Entry
from .tools import RESULT_KEY, output_schema, tool_input, wraps_output

__all__ = ["MAX_ARGUMENT_CHARS", "call_check", "call_prompt", "call_render", "error_result", "json_result"]

MAX_ARGUMENT_CHARS: Final = 1_000_000
"""The most a tool call's arguments may hold, as JSON text: a prompt's input is read by the template and
sent to a model, and a client that sends more is refused at once (a clear error, the server stays up)."""


def error_result(text: str) -> mcp.CallToolResult:
    return mcp.CallToolResult(content=[mcp.TextContent(text=redact(text))], is_error=True)


def json_result(value: Any) -> mcp.CallToolResult:
    value = redact_data(finite_json(value))
    return mcp.CallToolResult(content=[mcp.TextContent(text=json_dumps(value))], structured_content=value)


def too_large(arguments: Mapping[str, Any] | None) -> str | None:
    size = len(json_dumps(arguments or {}))
    if size <= MAX_ARGUMENT_CHARS:
        return None
    return f"the arguments are {size:,} characters of JSON, over the limit of {MAX_ARGUMENT_CHARS:,}: send a smaller input"


async def call_prompt(entry: Entry, arguments: Mapping[str, Any] | None) -> mcp.CallToolResult:
    """Run the prompt on its model: its validated output, or an error result naming it."""
    try:
        response = await entry.prompt.generate(tool_input(entry.meta, arguments))
    except DotpromptError as exc:
        return error_result(f"prompt {entry.label!r} failed: {exc}")
    except Exception as exc:  # a tool or model of the project's own code: its error is the answer, the server stays up
        return error_result(f"prompt {entry.label!r} failed: {type(exc).__name__}: {exc}")
    if response.interrupts:
        names = ", ".join(p.tool_request.name for p in response.interrupts if p.tool_request is not None)
        return error_result(f"prompt {entry.label!r} stopped on tool requests that wait for a human ({names}): "
                            "run it where they can be answered (`dotprompt run`, or the workbench)")
    return _output_result(entry, response.output)


def _output_result(entry: Entry, output: Any) -> mcp.CallToolResult:
    """Text for a text prompt; JSON as structured content, `{"result": ...}` where MCP wants an object."""
    if output_schema(entry.meta) is None:
        if isinstance(output, str):
            return mcp.CallToolResult(content=[mcp.TextContent(text=redact(output))])
        return json_result(output if isinstance(output, dict) else {RESULT_KEY: output})
    return json_result({RESULT_KEY: output} if wraps_output(entry.meta) else output)


async def call_check(catalog: Catalog, arguments: Mapping[str, Any] | None) -> mcp.CallToolResult:
    """`dotprompt check` on the folder, or on one prompt, in a thread (it reads and compiles every file)."""
    wanted = (arguments or {}).get("prompt")
    library = catalog.library
    if wanted is None:
        found = await anyio.to_thread.run_sync(lambda: check_library(library, jobs=1))
    else:
        info = next((info for info, tool in catalog.named() if wanted in (info.label, tool)), None)
        if info is None:
            return error_result(_unknown(str(wanted), catalog))
        found = await anyio.to_thread.run_sync(lambda: check_prompt(library, info))
    return _diagnostics(found, str(library.directory))


def _diagnostics(found: list[Diagnostic], folder: str) -> mcp.CallToolResult:
    shown = [{"path": _relative(d.path, folder), "line": d.line, "column": d.column, "level": d.level,
              "code": d.code, "message": d.message} for d in found]
    errors = sum(d.level == "error" for d in found)
    summary = {"folder": folder, "errors": errors, "warnings": len(found) - errors, "diagnostics": shown}
    lines = [f"{_relative(d.path, folder)}{_at(d.line)}{_at(d.column)}: {d.level}: {d.message}" for d in found]
    lines.append(f"{errors} error(s), {len(found) - errors} warning(s) in {folder}")
    value = redact_data(summary)
    return mcp.CallToolResult(content=[mcp.TextContent(text=redact("\n".join(lines)))], structured_content=value)


def _at(number: int | None) -> str:
    return f":{number}" if number else ""


def _relative(path: str, folder: str) -> str:
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


async def call_render(catalog: Catalog, arguments: Mapping[str, Any] | None) -> mcp.CallToolResult:
    """The messages and settings the prompt would send (`dotprompt render --json`), or the error."""
    arguments = arguments or {}
    wanted = arguments.get("prompt")
    if not isinstance(wanted, str):
        return error_result("render needs `prompt`: the name of one of the folder's prompts (see prompts/list)")
    context = arguments.get("context")
    if context is not None and not isinstance(context, dict):
        return error_result("render: `context` is an object (the values `ctx` or @-variables read)")
    try:
        entry = _find(catalog, wanted)
        if entry is None:
            return error_result(_unknown(wanted, catalog))
        rendered = await anyio.to_thread.run_sync(lambda: entry.prompt.render(arguments.get("input"), context=context))
        return json_result(render_record(entry.prompt, rendered))
    except DotpromptError as exc:
        return error_result(f"prompt {wanted!r} does not render: {exc}")


def _find(catalog: Catalog, wanted: str) -> Entry | None:
    return catalog.by_label(wanted) or catalog.by_tool(wanted)


def _unknown(wanted: str, catalog: Catalog) -> str:
    labels = catalog.labels()
    hint = did_you_mean(wanted, labels)
    return (f"no prompt named {wanted!r} in {catalog.library.directory}" + (f"; {hint}" if hint else "")
            + f" (the folder has {len(labels)} prompt(s): prompts/list names them)")
