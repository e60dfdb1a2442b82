"""The server's tools as MCP lists them: one per prompt, and the `check` and `render` tools.

A prompt's tool takes the prompt's input (its input schema, the defaulted fields no longer required;
an input that is no object is the field `input`) and returns its validated output as structured
content, with the output schema as the tool's `outputSchema`. MCP asks for an object there, so an
output that is no object (a list, a string, a number) is wrapped as `{"result": ...}`, and so is its
schema. Listed schemas write a type list (`["string", "null"]`, as Picoschema's optional fields have
it) as `anyOf` branches of one type each: the same instances validate, and clients that map tool
schemas onto a single-`type` dialect (Gemini's function declarations) take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import mcp_types as mcp

from .arguments import WHOLE_INPUT, input_schema
from .catalog import Entry

__all__ = ["CHECK_TOOL", "RENDER_TOOL", "RESULT_KEY", "output_schema", "prompt_tool", "single_types",
           "tool_input", "tool_input_schema", "wraps_output"]

RESULT_KEY: Final = "result"

_INTEGER_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
_DIAGNOSTIC = {"type": "object", "properties": {
    "path": {"type": "string"}, "line": _INTEGER_OR_NULL, "column": _INTEGER_OR_NULL,
    "level": {"type": "string", "enum": ["error", "warning"]},
    "code": {"type": "string", "description": "the diagnostic's code (docs: Check's diagnostics)"},
    "message": {"type": "string"}}}

CHECK_TOOL = mcp.Tool(
    name="check", title="dotprompt check",
    description="Lint the prompt folder (or one prompt) without calling a model, as `dotprompt check` does: "
                "frontmatter keys, schemas, templates, undeclared variables, unknown tools, test files. "
                "Each problem names its file, line and column.",
    input_schema={"type": "object", "properties": {
        "prompt": {"type": "string", "description": "one prompt's name (as prompts/list names it); all when absent"}}},
    output_schema={"type": "object", "properties": {
        "folder": {"type": "string"}, "errors": {"type": "integer"}, "warnings": {"type": "integer"},
        "diagnostics": {"type": "array", "items": _DIAGNOSTIC}}, "required": ["errors", "warnings", "diagnostics"]},
    annotations=mcp.ToolAnnotations(read_only_hint=True, open_world_hint=False))

RENDER_TOOL = mcp.Tool(
    name="render", title="dotprompt render",
    description="Render a prompt without calling a model: the messages, model, config, tools and output schema "
                "exactly as a run would send them (`dotprompt render --json`).",
    input_schema={"type": "object", "properties": {
        "prompt": {"type": "string", "description": "the prompt's name, as prompts/list names it (or its tool's name)"},
        "input": {"anyOf": [{"type": t} for t in ("object", "array", "string", "number", "boolean")],
                  "description": "the prompt's input (checked against its input schema)"},
        "context": {"type": "object", "description": "the render context (`ctx` in jinja2, @-variables in Handlebars)"}},
        "required": ["prompt"]},
    output_schema={"type": "object"},
    annotations=mcp.ToolAnnotations(read_only_hint=True, open_world_hint=False))


def prompt_tool(entry: Entry) -> mcp.Tool:
    meta = entry.meta
    model = entry.prompt.compiled.fields.get("model") or entry.prompt.library.default_model
    said = meta.get("description") if isinstance(meta.get("description"), str) else None
    runs = f"Runs the prompt {entry.label!r}" + (f" on {model}" if model else "") + " and returns its validated output."
    return mcp.Tool(name=entry.tool, title=entry.label, description=f"{said}\n\n{runs}" if said else runs,
                    input_schema=single_types(tool_input_schema(meta)), output_schema=single_types(output_schema(meta)),
                    annotations=mcp.ToolAnnotations(read_only_hint=False, open_world_hint=True))


_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS: Final = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
_SCHEMA_ONE: Final = frozenset({"items", "additionalItems", "additionalProperties", "not", "if", "then", "else",
                                "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"})


def single_types(schema: Any) -> Any:
    """`schema` with each type list (`{"type": ["string", "null"]}`) written as `anyOf` branches of one type
    each; that schema's other keywords stay beside the `anyOf`, where they mean what they meant. Only
    keywords that hold schemas are walked: an `enum`, `const` or `default` value is data, left as written.
    A loop, not recursion: a schema may nest as deeply as a frontmatter may."""
    if not isinstance(schema, dict):
        return schema
    listed: dict[str, Any] = {}
    pending: list[tuple[dict[str, Any], dict[str, Any]]] = [(schema, listed)]

    def copied(sub: Any) -> Any:  # a schema to walk later, or a value as it is
        if not isinstance(sub, dict):
            return sub
        target: dict[str, Any] = {}
        pending.append((sub, target))
        return target

    while pending:
        source, out = pending.pop()
        for key, value in source.items():
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: copied(sub) for name, sub in value.items()}
            elif (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):
                out[key] = [copied(sub) for sub in value]
            else:
                out[key] = copied(value) if key in _SCHEMA_ONE else value
        kinds = out.get("type")
        if isinstance(kinds, list) and kinds and all(isinstance(k, str) for k in kinds) and "anyOf" not in out:
            del out["type"]
            if len(kinds) == 1:
                out["type"] = kinds[0]
            else:
                out["anyOf"] = [{"type": kind} for kind in kinds]
    return listed


def tool_input_schema(meta: Mapping[str, Any]) -> dict[str, Any]:
    schema = input_schema(meta)
    if schema is None:
        return {"type": "object"}
    defaults = (meta.get("input") or {}).get("default") or {}
    if schema.get("type") != "object" and "properties" not in schema:
        return {"type": "object", "properties": {WHOLE_INPUT: schema}, "required": [] if defaults else [WHOLE_INPUT]}
    required = [name for name in schema.get("required") or () if name not in defaults]
    out = {**schema, "required": required}
    if isinstance(out.get("type"), list):  # a nullable object: MCP's arguments are an object, never null
        out["type"] = "object"
    return out if required else {k: v for k, v in out.items() if k != "required"}


def tool_input(meta: Mapping[str, Any], arguments: Mapping[str, Any] | None) -> Any:
    """The prompt's input from the tool's arguments."""
    schema = input_schema(meta)
    arguments = dict(arguments or {})
    if schema is not None and schema.get("type") != "object" and "properties" not in schema:
        return arguments.get(WHOLE_INPUT)
    return arguments


def _value_schema(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    block = meta.get("output") or {}
    schema = block.get("schema") if isinstance(block, Mapping) else None
    return schema if isinstance(schema, dict) else None


def wraps_output(meta: Mapping[str, Any]) -> bool:
    """Whether the output has a schema that is no object (so it is sent as `{"result": ...}`)."""
    schema = _value_schema(meta)
    return schema is not None and schema.get("type") != "object"


def output_schema(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool's `outputSchema`: the output schema, wrapped when it is no object; None for text output."""
    schema = _value_schema(meta)
    if schema is None:
        return None
    if schema.get("type") == "object":
        return schema
    inner = {k: v for k, v in schema.items() if k not in ("$defs", "definitions", "$schema")}
    shared: dict[str, Any] = {k: schema[k] for k in ("$defs", "definitions") if k in schema}  # refs (#/$defs/...) still resolve
    return {"type": "object", "properties": {RESULT_KEY: inner}, "required": [RESULT_KEY], **shared}
