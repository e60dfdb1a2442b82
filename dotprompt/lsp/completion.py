"""What may be written at the cursor of a prompt or test file: one function per place, each from the
source that knows the names (the frontmatter JSON Schema, the provider and format registries, the
library's tools and partials, the input schema, the engine's helpers and filters).

Read from the editor's text as it is: a file being typed into rarely parses, so each place is
recognised from the text before the cursor, and only the frontmatter (when it parses) is read whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ..document.parse import parse_source
from ..engines.handlebars.names import KNOWN_HELPERS
from ..engines.jinja import RESERVED_NAMES
from ..errors import DotpromptError
from ..formats import list_formats
from ..lint.editor_schemas import frontmatter_schema, test_file_schema
from ..schema.picoschema import to_json_schema
from .project import Project, file_kind

__all__ = ["Item", "complete", "frontmatter_bounds", "input_schema", "mapping", "schema_at"]

Kind = Literal["key", "value", "variable", "field", "partial", "helper", "filter", "role", "tool", "model"]
ROLES = ("system", "user", "model")
_BEFORE = 1000  # characters before the cursor the place is read from


@dataclass(frozen=True)
class Item:
    label: str
    kind: Kind
    detail: str = ""
    documentation: str = ""


def frontmatter_bounds(lines: list[str]) -> tuple[int, int] | None:
    """(first, last) zero-based line of the frontmatter's YAML (between the `---` lines), or None."""
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return 1, index - 1
    return 1, len(lines) - 1


def complete(project: Project | None, path: str, text: str, line: int, column: int) -> list[Item]:
    """The items to offer at zero-based `line` and `column` (code points) of `text`."""
    lines = text.split("\n")
    # what decides the place is near the cursor: a megabyte line is not searched whole
    before = lines[line][max(0, column - _BEFORE):column] if line < len(lines) else ""
    kind = file_kind(path)
    if kind == "test":
        if _PATH_VALUE.match(before):
            return [Item(found, "value", "output path") for found in output_paths(project, path)]
        return _yaml_place(test_file_schema(), lines, line, before, project, test=True)
    bounds = frontmatter_bounds(lines)
    if bounds is not None and bounds[0] <= line <= bounds[1]:
        return _yaml_place(frontmatter_schema(), lines, line, before, project)
    return _template_place(project, path, text, before)


# -- frontmatter and test files: YAML keys and values ----------------------------------------------

_PATH_VALUE = re.compile(r"^\s*(?:-\s+)?(?:\{\s*)?path:\s*[\"']?[$\w.\[\]*]*$")
_KEY = re.compile(r"^(\s*)(?:-\s+)?([\w.]*)$")
_VALUE = re.compile(r"^(\s*)(?:-\s+)?([\w.]+):\s*([\w./-]*)$")
_ITEM = re.compile(r"^(\s*)-\s*([\w./-]*)$")


def _parents(lines: list[str], line: int, indent: int) -> list[str]:
    """The keys the cursor's line is nested under, outermost first."""
    out: list[str] = []
    for index in range(line - 1, -1, -1):
        text = lines[index]
        if not text.strip() or text.strip() == "---":
            continue
        own = len(text) - len(text.lstrip(" -"))
        key = re.match(r"^\s*(?:-\s+)?([\w.]+):", text)
        if own < indent and key:
            out.insert(0, key.group(1))
            indent = own
        if indent == 0:
            break
    return out


def schema_at(schema: dict[str, Any], keys: list[str], root: dict[str, Any] | None = None) -> dict[str, Any]:
    """The part of a JSON Schema that describes the value at `keys` (through properties, items and local $refs)."""
    root = root or schema
    for key in keys:
        schema = _deref(schema, root)
        if isinstance(schema.get("items"), dict):
            schema = _deref(schema["items"], root)
        properties = mapping(schema.get("properties"))
        schema = mapping(properties.get(key))
    schema = _deref(schema, root)
    if isinstance(schema.get("items"), dict) and "properties" not in schema:
        schema = _deref(schema["items"], root)
    return schema


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        found: Any = root
        for part in ref[2:].split("/"):
            found = found.get(part, {}) if isinstance(found, dict) else {}
        return found if isinstance(found, dict) else {}
    return schema


def _yaml_place(schema: dict[str, Any], lines: list[str], line: int, before: str, project: Project | None,
                *, test: bool = False) -> list[Item]:
    value = _VALUE.match(before)
    item = _ITEM.match(before)
    key = _KEY.match(before)
    if value:
        parents = _parents(lines, line, len(value.group(1)))
        return _values([*parents, value.group(2)], project, test)
    if item:
        parents = _parents(lines, line, len(item.group(1)) + 1)
        values = _values(parents, project, test)
        if values or not parents:
            return values
    if key:
        parents = _parents(lines, line, len(before) - len(before.lstrip(" -")))
        if test and parents[-1:] == ["paths"]:
            return [Item(name, "key", "path assertion") for name in _assertion_names()] + [Item("path", "key")]
        properties = schema_at(schema, parents).get("properties") or {}
        return [Item(name, "key", _type_of(sub), str(sub.get("description", "")))
                for name, sub in properties.items() if isinstance(sub, dict)]
    return []


def _values(keys: list[str], project: Project | None, test: bool) -> list[Item]:
    last = keys[-1] if keys else ""
    if last == "model":
        return [Item(name.removesuffix("..."), "model", "model" if "/" not in name else "provider")
                for name in _model_names(project)]
    if keys[-2:] == ["output", "format"]:
        return [Item(name, "value", "output format") for name in list_formats()]
    if last == "tools" and not test and project is not None:
        declared = project.declared.of("tool") if project.declared is not None else set()
        return [Item(name, "tool", "tool") for name in sorted({*project.library.tool_names(), *declared})]
    if last == "schema" and keys[-2:-1] in (["input"], ["output"]) and project is not None:
        declared = project.declared.of("schema") if project.declared is not None else set()
        return [Item(name, "value", "schema defined in code") for name in sorted(declared)]
    if last == "use":
        from ..generation.policies import BUILT_IN

        return [Item(name, "value", "middleware") for name in BUILT_IN]
    if last == "prompt" and test and project is not None:
        return [Item(info.label, "value", "prompt") for info in project.library.prompts()]
    if last == "engine" or keys[-2:] == ["dotprompt", "engine"]:
        return [Item(name, "value", "template engine") for name in ("jinja2", "handlebars")]
    schema = schema_at(frontmatter_schema() if not test else test_file_schema(), keys)
    enum = schema.get("enum") or []
    return [Item(str(v).lower() if isinstance(v, bool) else str(v), "value") for v in enum]


def output_paths(project: Project | None, path: str, limit: int = 200) -> list[str]:
    """`$.title`, `$.items[*].sku`, ...: the paths the output schema of a test file's prompt can hold."""
    from pathlib import Path

    stem = Path(path).name.removesuffix(".test.yaml")
    prompt = Path(path).with_name(f"{stem}.prompt")
    if not prompt.is_file():
        return []
    try:
        src = parse_source(prompt.read_text(encoding="utf-8", errors="replace"), str(prompt))
        output = mapping(src.metadata.get("output"))
        schema = to_json_schema(output.get("schema"), lambda name: None) if output.get("schema") is not None else {}
    except (DotpromptError, ValueError, TypeError):
        return []
    out: list[str] = []
    _walk_paths(mapping(schema), "$", out, limit, 0)
    return out


def _walk_paths(schema: dict[str, Any], at: str, out: list[str], limit: int, depth: int) -> None:
    if depth > 6 or len(out) >= limit:
        return
    items = schema.get("items")
    if isinstance(items, dict):
        out.append(f"{at}[*]")
        _walk_paths(items, f"{at}[*]", out, limit, depth + 1)
        return
    for name, sub in mapping(schema.get("properties")).items():
        if len(out) >= limit:
            return
        out.append(f"{at}.{name}")
        _walk_paths(mapping(sub), f"{at}.{name}", out, limit, depth + 1)


def _model_names(project: Project | None) -> list[str]:
    from ..providers.registry import list_models

    names = list_models()
    if project is not None:
        default = project.library.default_model
        names = ([default] if default else []) + names
    return list(dict.fromkeys(names))


@cache
def _assertion_names() -> tuple[str, ...]:
    from ..testing.assertions import path_assertion_names

    return tuple(path_assertion_names())


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    return " | ".join(kind) if isinstance(kind, list) else str(kind or "")


# -- the template ----------------------------------------------------------------------------------

_PARTIAL = re.compile(r"(?:\{\{#?>\s*|\{%-?\s*include\s+[\"'])([\w./-]*)$")
_ROLE = re.compile(r"""(?:\{\{~?\s*role\s+["']|\{\{\s*role\(\s*["'])(\w*)$""")
_FILTER = re.compile(r"\{\{[^}]*\|\s*(\w*)$")
_DOTTED = re.compile(r"(?:\{\{|\{%)[^}]*?(?<![\w.])((?:\w+\.)+)(\w*)$")
_NAME = re.compile(r"(?:\{\{[#/^]?~?|\{%-?)\s*(?:[^}]*[\s(,])?(\w*)$")


def _template_place(project: Project | None, path: str, text: str, before: str) -> list[Item]:
    if _PARTIAL.search(before) is not None:
        partials = project.library.partials() if project is not None else []
        return [Item(name, "partial", "partial") for name in partials]
    if _ROLE.search(before):
        return [Item(role, "role", "role") for role in ROLES]
    if _FILTER.search(before):
        return [Item(name, "filter", "jinja2 filter") for name in _filters()]
    schema = input_schema(project, path, text)
    if (found := _DOTTED.search(before)) is not None:
        fields = schema_at(schema, found.group(1).rstrip(".").split(".")).get("properties") or {}
        return [_field(name, sub, "field") for name, sub in fields.items() if isinstance(sub, dict)]
    if _NAME.search(before) is None:
        return []
    variables = [_field(name, sub, "variable") for name, sub in (schema.get("properties") or {}).items()
                 if isinstance(sub, dict)]
    handlebars = "{{#" in text or "{{>" in text or _engine(text) == "handlebars"
    helpers = sorted(KNOWN_HELPERS) if handlebars else sorted(RESERVED_NAMES - {"ctx"})
    return variables + [Item(name, "helper", "helper") for name in helpers]


def _field(name: str, schema: dict[str, Any], kind: Kind) -> Item:
    return Item(name, kind, _type_of(schema), str(schema.get("description", "")))


def _engine(text: str) -> str | None:
    found = re.search(r"^\s*engine:\s*(\w+)", text, re.MULTILINE)
    return found.group(1) if found else None


@cache
def _filters() -> tuple[str, ...]:
    from jinja2 import DictLoader

    from ..engines.jinja import make_environment

    return tuple(sorted(name for name in make_environment(DictLoader({})).filters if not name.startswith("_")))


def input_schema(project: Project | None, path: str, text: str) -> dict[str, Any]:
    """The input JSON Schema the frontmatter declares (Picoschema converted; named schemas the library
    knows resolved), or {} when it does not parse yet; `input.default` keys count as fields too."""
    try:
        src = parse_source(text, path)
    except DotpromptError:
        return {}
    block = src.metadata.get("input") or {}
    try:
        schema = to_json_schema(block.get("schema"), lambda name: None) if block.get("schema") is not None else {}
    except (DotpromptError, ValueError, TypeError):
        schema = {}
    schema = dict(schema) if isinstance(schema, dict) else {}
    defaults = mapping(block.get("default"))
    properties = dict(schema.get("properties") or {})
    for key, value in defaults.items():
        properties[key] = {**(properties.get(key) or {}), "default": value}
    if properties:
        schema["properties"] = properties
    return schema
