"""`dotprompt check`: every problem in a prompt folder, without calling a model."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from jinja2 import meta

from .compiler import parse_template, read_text
from .document import KNOWN_KEYS, PromptSource, did_you_mean, parse_source
from .errors import DotpromptError, PromptFileError
from .library import PromptInfo, PromptLibrary
from .schemas import CompiledSchema
from .template import HANDLEBARS_HINT, RESERVED_NAMES, looks_like_handlebars, with_line_offset

Level = Literal["error", "warning"]
FORMATS = ("json", "jsonl", "array", "enum", "text", "media")


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int | None
    column: int | None
    level: Level
    message: str

    def format(self, style: str = "text") -> str:
        if style == "github":
            where = f"file={self.path}" + (f",line={self.line}" if self.line else "") + (
                f",col={self.column}" if self.column else "")
            return f"::{self.level} {where}::{self.message}"
        where = self.path + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.level}: {self.message}"


def _from_error(exc: PromptFileError, fallback: str) -> Diagnostic:
    message = exc.message + (f" ({exc.hint})" if exc.hint else "")
    return Diagnostic(exc.path or fallback, exc.line, exc.column, "error", message)


def check_library(lib: PromptLibrary) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for info in lib.list():
        found += check_prompt(lib, info)
    for path in _partial_files(lib):
        found += check_partial(lib, path)
    return found


def _partial_files(lib: PromptLibrary) -> list[str]:
    if lib.directory is None:
        return []
    return sorted(str(p) for p in lib.directory.rglob("_*.prompt"))


def check_prompt(lib: PromptLibrary, info: PromptInfo) -> list[Diagnostic]:
    try:
        prompt = lib.load(info.name, info.variant)
        compiled = prompt.compiled
    except PromptFileError as exc:
        return [_from_error(exc, info.path)]
    except DotpromptError as exc:
        return [Diagnostic(info.path, None, None, "error", str(exc))]
    src = compiled.source
    found = _unknown_keys(src) + _format_problems(src)
    found += _default_problems(src, compiled.meta, compiled.validator)
    found += _handlebars_syntax(lib, src) + _undeclared_variables(lib, src, compiled.meta)
    return found


def check_partial(lib: PromptLibrary, path: str) -> list[Diagnostic]:
    try:
        src = parse_source(read_text(path), path)
        parse_template(lib._env, with_line_offset(src.template, src.body_line), path, path)
    except PromptFileError as exc:
        return [_from_error(exc, path)]
    return []


def _unknown_keys(src: PromptSource) -> list[Diagnostic]:
    out = []
    for key in src.unknown_keys:
        line, column = src.locate(key)
        hint = did_you_mean(key, KNOWN_KEYS) or "extensions use a dotted key such as `myapp.key`"
        out.append(Diagnostic(src.path or "", line, column, "warning", f"unknown key `{key}` ({hint})"))
    return out


def _format_problems(src: PromptSource) -> list[Diagnostic]:
    fmt = src.metadata.get("output", {}).get("format")
    if fmt is None or fmt in FORMATS:
        return []
    line, column = src.locate("output", "format")
    hint = did_you_mean(str(fmt), FORMATS) or f"known formats: {', '.join(FORMATS)}"
    return [Diagnostic(src.path or "", line, column, "warning", f"unknown output format {fmt!r} ({hint})")]


def _default_problems(src: PromptSource, meta: dict, validator: CompiledSchema | None) -> list[Diagnostic]:
    default = (meta.get("input") or {}).get("default")
    if not default or validator is None:
        return []
    line, column = src.locate("input", "default")
    # Defaults may leave required fields to the caller; every other mismatch is an error.
    return [Diagnostic(src.path or "", line, column, "error", f"input.default {p.path}: {p.message}")
            for p in validator.problems(default) if "is a required property" not in p.message]


def _handlebars_syntax(lib: PromptLibrary, src: PromptSource) -> list[Diagnostic]:
    if lib.engine != "jinja2" or not looks_like_handlebars(src.template):
        return []
    return [Diagnostic(src.path or "", src.body_line, 1, "warning", HANDLEBARS_HINT)]


def _undeclared_variables(lib: PromptLibrary, src: PromptSource, meta: dict) -> list[Diagnostic]:
    schema = (meta.get("input") or {}).get("schema")
    if not isinstance(schema, dict) or "properties" not in schema:
        return []
    declared = set(schema["properties"]) | set(meta["input"].get("default") or {})
    ast = lib._env.parse(with_line_offset(src.template, src.body_line))
    out = [Diagnostic(src.path or "", *src.locate("input", "schema", name), "warning",
                      f"input field `{name}` is hidden by the template helper of that name; rename the field")
           for name in sorted(declared & RESERVED_NAMES)]
    for name in sorted(meta_names(ast) - declared - RESERVED_NAMES):
        line = _first_use(src, name)
        hint = did_you_mean(name, declared) or "declare it in input.schema"
        out.append(Diagnostic(src.path or "", line, None, "warning",
                              f"template variable `{name}` is not declared in input.schema ({hint})"))
    return out


def meta_names(ast: object) -> set[str]:
    return set(meta.find_undeclared_variables(ast))  # type: ignore[arg-type]


def _first_use(src: PromptSource, name: str) -> int | None:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for offset, text in enumerate(src.template.splitlines()):
        if pattern.search(text):
            return src.body_line + offset
    return None
