"""Frontmatter-shaped metadata: schemas converted, layers merged, turned into render fields.

Merge order: library defaults (default model, per-model config) < the file < render options.
`config` merges key by key; every other key is replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import PromptFileError, SchemaError
from ..schema.compiled import REF_HINT, SchemaRegistry, check_schema, json_schema_of, unresolvable_ref
from ..schema.picoschema import PicoschemaError, convert
from .parse import Problems, PromptSource, read_keys
from .unresolved import Unresolved

if TYPE_CHECKING:
    from ..types import ToolDefinition

__all__ = ["LibraryDefaults", "ToolDefsError", "convert_schemas", "input_schema_of", "merge", "options_metadata",
           "plain_fields", "render_fields"]

_FIELD_NAMES = {
    "name": "name", "variant": "variant", "version": "version", "description": "description",
    "model": "model", "tools": "tools", "maxTurns": "max_turns", "maxToolCalls": "max_tool_calls",
    "toolChoice": "tool_choice",
    "returnToolRequests": "return_tool_requests", "use": "use", "raw": "raw",
}


def convert_schemas(meta: dict[str, Any], registry: SchemaRegistry, src: PromptSource | None,
                    problems: Problems | None = None, unresolved: list[Unresolved] | None = None) -> dict[str, Any]:
    """A copy of `meta` with input and output schemas as JSON Schema (Picoschema and models converted).

    With a `problems` list, a schema that does not convert is added to it and left out of the copy.
    With an `unresolved` list (and a file), a schema name nothing defines is added to it (see
    `unresolved`) and the schema is left out of the copy: rendering fails until it is defined."""
    meta = dict(meta)
    for section in ("input", "output"):
        block = meta.get(section)
        if not isinstance(block, Mapping) or block.get("schema") is None:
            continue
        block = dict(block)
        missing: list[tuple[str, tuple[str, ...]]] | None = [] if unresolved is not None and src is not None else None
        try:
            block["schema"] = _convert(block["schema"], section, registry, src, missing)
        except PromptFileError as exc:
            if problems is None:
                raise
            problems.append(exc)
            del block["schema"]
        if missing:
            assert src is not None and unresolved is not None
            unresolved += [_unresolved(src, section, name, path) for name, path in missing]
            del block["schema"]
        meta[section] = block
    return meta


def _unresolved(src: PromptSource, section: str, name: str, path: tuple[str, ...]) -> Unresolved:
    line, column = src.locate(section, "schema", *path)
    return Unresolved("schema", name, src.path, line, column, f"{section}.schema{_dotted(path)}")


def _convert(schema: Any, section: str, registry: SchemaRegistry, src: PromptSource | None,
             missing: list[tuple[str, tuple[str, ...]]] | None = None) -> Any:
    try:
        converted, handwritten = convert(json_schema_of(schema), registry.resolve, registry.names, missing)
    except PicoschemaError as exc:
        raise _located(src, f"{exc.message} in {section}.schema{_dotted(exc.path)}",
                       (section, "schema", *exc.path), exc.hint) from None
    for fragment in handwritten:
        problem = check_schema(fragment)
        if problem:
            raise _located(src, f"{section}.schema is not valid JSON Schema: {problem}", (section, "schema"), None)
    # References are checked against the whole converted schema: `#` means its root, not a fragment's.
    bad = unresolvable_ref(converted)
    if bad:
        raise _located(src, f"{section}.schema: {bad.reason}", (section, "schema", *bad.path), REF_HINT)
    return converted


def _located(src: PromptSource | None, message: str, keys: tuple[Any, ...], hint: str | None) -> Exception:
    if src is None:
        return SchemaError(f"{message} ({hint})" if hint else message)
    return src.error(message, *keys, hint=hint)


def _dotted(path: tuple[str, ...]) -> str:
    return "".join(f".{p}" for p in path)


def options_metadata(options: Mapping[str, Any], registry: SchemaRegistry) -> dict[str, Any]:
    """Render-time options (frontmatter-shaped) checked like a file's frontmatter."""
    src = PromptSource(path="<render options>", template="", raw=dict(options))
    try:
        read_keys(src)
    except PromptFileError as exc:
        raise SchemaError(f"render options: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")) from None
    meta = convert_schemas(src.metadata, registry, None)
    if src.ext:
        meta["ext"] = src.ext
    return meta


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if key == "config":
            out["config"] = {**out.get("config", {}), **value}
        else:
            out[key] = value
    return out


def render_fields(meta: Mapping[str, Any], defaults: LibraryDefaults) -> dict[str, Any]:
    """Keyword arguments for RenderedPrompt; only keys that are set, so `to_dict` stays sparse.

    Raises ToolDefsError for a `toolDefs` entry that is not a tool definition."""
    # The render types (pydantic) load on the first render, not when a prompt is compiled: `dotprompt
    # check` compiles every prompt and renders none.
    from ..types import construct
    from .rendered import InputSpec, OutputSpec

    fields = plain_fields(meta, defaults)
    if "input" in meta:
        fields["input"] = construct(InputSpec, **_spec_fields(meta["input"]))
    if "output" in meta:
        fields["output"] = construct(OutputSpec, **_spec_fields(meta["output"]))
    defs = [_tool_def(d) for d in meta.get("toolDefs", ())]
    inline = {d.name for d in defs}
    for name in meta.get("tools", ()):
        registered = defaults.tool_definition(name)
        if registered is not None and name not in inline:
            defs.append(registered)
    if defs:
        fields["tool_defs"] = defs
    return fields


def plain_fields(meta: Mapping[str, Any], defaults: LibraryDefaults) -> dict[str, Any]:
    """The fields of `render_fields` that are plain data: all but input, output and tool_defs."""
    fields: dict[str, Any] = {_FIELD_NAMES[k]: v for k, v in meta.items() if k in _FIELD_NAMES}
    model = meta.get("model") or defaults.model
    if model:
        fields["model"] = model
    fields["config"] = {**defaults.configs.get(model or "", {}), **meta.get("config", {})}
    fields["metadata"] = dict(meta.get("metadata", {}))
    fields["ext"] = meta.get("ext", {})
    return fields


def input_schema_of(meta: Mapping[str, Any]) -> Any:
    """The input schema of frontmatter-shaped metadata (None when it has none)."""
    block = meta.get("input")
    return block.get("schema") if isinstance(block, Mapping) else None


def _spec_fields(block: Mapping[str, Any]) -> dict[str, Any]:
    return {("json_schema" if k == "schema" else k): v for k, v in block.items()}


class ToolDefsError(ValueError):
    """A `toolDefs` entry that is not a tool definition; the message names the first field at fault."""


def _tool_def(value: Any) -> ToolDefinition:
    from pydantic import ValidationError

    from ..types import ToolDefinition

    if isinstance(value, ToolDefinition):
        return value
    try:
        return ToolDefinition.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ToolDefsError(f"{where}: {error['msg']}") from None


class LibraryDefaults:
    """The lowest merge layer: the library's default model and per-model config."""

    def __init__(self, model: str | None = None, configs: Mapping[str, Mapping[str, Any]] | None = None,
                 tool_definition: Callable[[str], ToolDefinition | None] = lambda name: None) -> None:
        self.model = model
        self.configs = {name: dict(cfg) for name, cfg in (configs or {}).items()}
        self.tool_definition = tool_definition
