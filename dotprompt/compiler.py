"""PromptSource -> CompiledPrompt: schemas converted, template compiled, partials checked."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jinja2 import Template, TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import ValidationError

from .document import PromptSource, parse_source
from .errors import PromptFileError
from .metadata import LibraryDefaults, convert_schemas, render_fields
from .schemas import CompiledSchema, SchemaRegistry, compile_validator
from .template import HANDLEBARS_HINT, included_names, looks_like_handlebars, with_line_offset

Stamp = tuple[int, int, int]


@dataclass(frozen=True)
class CompiledPrompt:
    source: PromptSource
    meta: dict[str, Any]  # frontmatter-shaped, schemas as JSON Schema, name/variant filled in
    template: Template
    validator: CompiledSchema | None
    fields: dict[str, Any]  # RenderedPrompt keyword arguments for a render without options
    stamp: Stamp | None
    generation: int


@dataclass
class CompileContext:
    """What compiling needs from the library."""

    env: ImmutableSandboxedEnvironment
    registry: SchemaRegistry
    defaults: LibraryDefaults
    partial_source: Callable[[str], tuple[str, str | None, Any] | None]
    generation: int


def file_stamp(path: str) -> Stamp:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def read_text(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PromptFileError(f"file is not UTF-8 text (byte 0x{data[exc.start]:02x})", path=path, line=line,
                              hint="save the file as UTF-8") from None


def compile_prompt(text: str, path: str | None, name: str | None, variant: str | None,
                   ctx: CompileContext, stamp: Stamp | None = None) -> CompiledPrompt:
    src = parse_source(text, path)
    meta = convert_schemas(src.metadata, ctx.registry, src)
    if src.ext:
        meta["ext"] = src.ext
    meta["raw"] = src.raw
    if name and "name" not in meta:
        meta["name"] = name
    if variant and "variant" not in meta:
        meta["variant"] = variant
    template = _compile_template(src, name, ctx)
    schema = (meta.get("input") or {}).get("schema")
    validator = compile_validator(schema) if isinstance(schema, dict) else None
    try:
        fields = render_fields(meta, ctx.defaults)
    except ValidationError as exc:
        raise src.error(f"invalid toolDefs: {_first_error(exc)}", "toolDefs") from None
    return CompiledPrompt(src, meta, template, validator, fields, stamp, ctx.generation)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}"


def _compile_template(src: PromptSource, name: str | None, ctx: CompileContext) -> Template:
    label = src.path or f"<prompt {name or 'from source'}>"
    ast = parse_template(ctx.env, with_line_offset(src.template, src.body_line), label, src.path)
    check_includes(ast, label, src.path, ctx, chain=())
    code = ctx.env.compile(ast, label, src.path or label)
    # A plain dict of globals, not jinja's ChainMap: each render copies it, and copying a dict is cheaper.
    return ctx.env.template_class.from_code(ctx.env, code, dict(ctx.env.globals), None)


def parse_template(env: ImmutableSandboxedEnvironment, source: str, label: str, path: str | None) -> nodes.Template:
    try:
        return env.parse(source, label, path)
    except TemplateSyntaxError as exc:
        hint = HANDLEBARS_HINT if looks_like_handlebars(source) else None
        raise PromptFileError(f"template syntax error: {exc.message}", path=path or label, line=exc.lineno,
                              hint=hint) from None


def check_includes(ast: nodes.Template, label: str, path: str | None, ctx: CompileContext,
                   chain: tuple[str, ...]) -> None:
    """Every included partial exists, compiles, and no include chain comes back on itself."""
    for partial, line in included_names(ast):
        if partial in chain:
            cycle = " -> ".join((*chain[chain.index(partial):], partial))  # the loop itself, by partial name
            raise PromptFileError(f"partial cycle: {cycle}", path=path or label, line=line,
                                  hint="a partial cannot include itself, directly or through others")
        found = ctx.partial_source(partial)
        if found is None:
            raise PromptFileError(f"partial {partial!r} not found", path=path or label, line=line,
                                  hint=f"create _{os.path.basename(partial)}.prompt or define_partial({partial!r}, ...)")
        source, filename, _ = found
        inner = parse_template(ctx.env, source, filename or partial, filename)
        check_includes(inner, filename or partial, filename, ctx, (*chain, partial))
