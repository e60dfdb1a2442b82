"""What the name under the cursor is, as Markdown: a template variable's type, description and default;
a partial's text; a tool's description and input schema; a model's provider; a schema field's JSON Schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .._util.escape import markdown
from ..document.parse import parse_source
from ..errors import DotpromptError
from .completion import frontmatter_bounds, input_schema, mapping, schema_at
from .project import Project

__all__ = ["hover", "word_at"]

_WORD = re.compile(r"[\w./-]+")
_FENCE_LIMIT = 4000  # characters of a partial or schema shown in a hover


def fenced(body: str, language: str = "") -> str:
    """`body` in a code fence no line of it can close: the fence is longer than any run of backticks in it."""
    runs = [len(run) for run in re.findall(r"`+", body)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{language}\n{body[:_FENCE_LIMIT]}\n{fence}"


_WINDOW = 500  # characters either side of the cursor a word may reach (a megabyte line is not scanned whole)


def word_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The word (letters, digits, `_ . / -`) at `column`, and where it starts and ends."""
    offset = max(0, column - _WINDOW)
    for found in _WORD.finditer(line[offset:column + _WINDOW]):
        if offset + found.start() <= column <= offset + found.end():
            return found.group(), offset + found.start(), offset + found.end()
    return None


def hover(project: Project | None, path: str, text: str, line: int, column: int) -> str | None:
    lines = text.split("\n")
    if line >= len(lines):
        return None
    found = word_at(lines[line], column)
    if found is None:
        return None
    word, start, _ = found
    bounds = frontmatter_bounds(lines)
    if bounds is not None and bounds[0] <= line <= bounds[1]:
        return _frontmatter_hover(project, path, text, lines, line, word)
    before = lines[line][:start]
    if re.search(r"(?:\{\{#?>\s*|\{%-?\s*include\s+[\"'])$", before):
        return _partial_hover(project, word)
    return _variable_hover(project, path, text, word, column - start)


def _variable_hover(project: Project | None, path: str, text: str, word: str, offset: int) -> str | None:
    parts = word.split(".")
    # the part under the cursor, and the parts before it: `customer.email` hovered on `email`
    upto = len(word[:offset].split(".")) if offset else 1
    keys = parts[:upto]
    schema = input_schema(project, path, text)
    if not keys or keys[0] not in (schema.get("properties") or {}):
        return None
    field = schema_at(schema, keys)
    return _describe(".".join(keys), field)


def _describe(name: str, field: dict[str, Any]) -> str:
    kind = field.get("type")
    shown = " | ".join(kind) if isinstance(kind, list) else str(kind or "any")
    out = [f"**{markdown(name)}**: {markdown(shown)}"]
    if field.get("description"):
        out.append(markdown(str(field["description"])))
    if "default" in field:
        out.append(f"default: {markdown(json.dumps(field['default'], ensure_ascii=False))}")
    out.append(fenced(json.dumps(field, indent=2, ensure_ascii=False), "json"))
    return "\n\n".join(out)


def _partial_hover(project: Project | None, name: str) -> str | None:
    if project is None:
        return None
    head, _, tail = name.rpartition("/")
    path = project.library.directory / head / f"_{tail}.prompt" if project.library.directory else None
    if path is None or not path.is_file():
        return f"partial {markdown(name)}: no file {markdown(f'_{tail}.prompt')} in the prompt folder"
    body = path.read_text(encoding="utf-8", errors="replace")
    return f"partial **{markdown(name)}** ({markdown(Path(path).name)})\n\n{fenced(body)}"


def _frontmatter_hover(project: Project | None, path: str, text: str, lines: list[str], line: int,
                       word: str) -> str | None:
    try:
        src = parse_source(text, path)
    except DotpromptError:
        return None
    meta = src.metadata
    current = lines[line]
    if re.match(r"^\s*model:", current) and word != "model":
        return _model_hover(word)
    tools = [str(t) for t in meta.get("tools") or [] if isinstance(t, str)] if isinstance(meta.get("tools"), list) else []
    if word in tools and re.match(r"^\s*-\s*", current):
        return _tool_hover(project, meta, word)
    for section in ("input", "output"):
        block = mapping(meta.get(section))
        name = word.split("(")[0].rstrip("?")
        if section == _section_of(lines, line):
            schema = input_schema(project, path, text) if section == "input" else _output_schema(block)
            found = _find_field(schema, name)
            if found is not None:
                return _describe(name, found)
    return None


def _section_of(lines: list[str], line: int) -> str | None:
    for index in range(line, -1, -1):
        top = re.match(r"^(\w+):", lines[index])
        if top:
            return top.group(1)
    return None


def _output_schema(block: dict[str, Any]) -> dict[str, Any]:
    from ..schema.picoschema import to_json_schema

    try:
        schema = to_json_schema(block.get("schema"), lambda name: None) if block.get("schema") is not None else {}
    except (DotpromptError, ValueError, TypeError):
        return {}
    return schema if isinstance(schema, dict) else {}


def _find_field(schema: dict[str, Any], name: str, depth: int = 0) -> dict[str, Any] | None:
    """The first field called `name`, breadth first (a Picoschema key names its field wherever it is)."""
    if depth > 20 or not isinstance(schema, dict):
        return None
    items = schema.get("items")
    nested: dict[str, Any] = items if isinstance(items, dict) else schema
    found = nested.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    if name in properties and isinstance(properties[name], dict):
        return dict(properties[name])
    for sub in properties.values():
        found = _find_field(sub, name, depth + 1)
        if found is not None:
            return found
    return None


def _tool_hover(project: Project | None, meta: dict[str, Any], name: str) -> str:
    for definition in meta.get("toolDefs") or []:
        if isinstance(definition, dict) and definition.get("name") == name:
            schema = definition.get("inputSchema") or definition.get("input_schema") or {}
            return (f"tool **{markdown(name)}** (toolDefs)\n\n{markdown(str(definition.get('description', '')))}\n\n"
                    f"{fenced(json.dumps(schema, indent=2, ensure_ascii=False), 'json')}")
    declared = project.declared if project is not None else None
    if declared is not None and name in declared.of("tool"):
        about = declared.descriptions.get(name)
        shown = markdown(about[:_FENCE_LIMIT]) if about else "no description (give the function a docstring)"
        return (f"tool **{markdown(name)}**, defined in the project's code (`[tool.dotprompt] tools`); the language server "
                f"reads those modules without importing them\n\n{shown}")
    return (f"tool **{markdown(name)}**: nothing defines it (describe it in toolDefs, or list its module in "
            "`[tool.dotprompt] tools`)")


def _model_hover(name: str) -> str:
    from ..providers.registry import provider_spec

    prefix = name.split("/", 1)[0] if "/" in name else None
    spec = provider_spec(prefix) if prefix else None
    if spec is None:
        return f"model **{markdown(name)}**" + ("" if prefix else " (a model defined in code, or the test double `echo`)")
    fields = {key: value for key, value in vars(spec).items() if not key.startswith("_") and value}
    shown = "\n".join(f"- {key}: {markdown(str(value))}" for key, value in fields.items())
    info = _declared_info(str(prefix), name.split("/", 1)[1])
    can = "" if info is None else "\n\ncapabilities" + (f" ({markdown(info.label)})" if info.label else "") + ":\n" + \
        "\n".join(f"- {what}: {value}" for what, value in (
            ("tool calls", _yes(info.tools)), ("tool choice", _yes(info.tool_choice)),
            ("constrained output", _CONSTRAINED[info.constrained]), ("media input", _yes(info.media))))
    return f"model **{markdown(name)}**, provider {markdown(str(prefix))}\n\n{shown}{can}"


_CONSTRAINED = {"all": "native JSON schema, with tools too", "no-tools": "native JSON schema, except with tools "
                "(then instructions)", "none": "instructions in the prompt"}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _declared_info(prefix: str, model_id: str) -> Any:
    """The capabilities (`ModelInfo`) a built-in provider declares for `model_id`, read from its model
    class without making a model (no key, no network); None for a provider defined elsewhere or the
    local model (its capabilities are known once it loads)."""
    import functools
    import importlib

    from ..providers.registry import BUILT_IN_PROVIDERS

    module = BUILT_IN_PROVIDERS.get(prefix)
    if module is None or "." in module:
        return None
    try:
        table = importlib.import_module(f"dotprompt.providers.{module}")
        factory = getattr(table, "PROVIDERS", {}).get(prefix)
    except ImportError:
        return None
    if isinstance(factory, functools.partial):
        info = factory.keywords.get("info") or getattr(factory.func, "default_info", None)
    else:
        info = getattr(factory, "default_info", None)
    if prefix == "googleai":  # a Gemini 3 id implies other capabilities (GeminiModel asks the same)
        from ..providers.gemini import gemini_info

        info = gemini_info(model_id) or info
    return info
