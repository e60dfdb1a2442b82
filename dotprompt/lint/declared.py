"""The names the project's code modules define, read without running them: what `dotprompt check` knows
of `[tool.dotprompt] tools / schemas / helpers` when it must not import project code (its default: on
a pull request those modules are anyone's code, with CI's tokens in reach).

Each module is parsed with Python's `ast`, nothing executed. What is read, at module level:
- tools: functions decorated with `@tool` or `@define_tool` (by `name=`, else the function's name);
  `tool(...)` and `define_tool(...)` calls by `name=`, else by their first argument: a string (the
  old `define_tool(name, ...)` form) or a function of the module (`tool(refund, input_schema=...)`
  is named `refund`); and the first argument (or `name=`) of the deprecated `make_tool`,
  `make_interrupt` and `define_interrupt`;
- schemas: public classes, and public names assigned a dict literal holding `type`, `properties`,
  `$schema` or `$ref`;
- helpers: public functions that are not tools;
- output formats: the first argument (or `name=`) of `Format(...)` calls (`define_format(Format(...))`).
A name made any other way (in a loop, by `setattr`) is seen only by importing: it stays a warning.
A dotted module is looked for beside pyproject.toml, then on the import path, as a file; a `.py` path
must be inside the project folder (`module_file`).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..prompts.loader import code_entries, entry_forms, module_file
from ..settings import project_settings

__all__ = ["DeclaredNames", "read_declared"]

_MAKERS = {"make_tool": "tool", "make_interrupt": "tool", "define_tool": "tool", "define_interrupt": "tool",
           "tool": "tool", "Format": "format"}
_BY_FUNCTION = frozenset({"tool", "define_tool"})  # callers that may name the tool by the function they are given
_SCHEMA_KEYS = frozenset({"type", "properties", "$schema", "$ref"})
_KINDS = ("tool", "schema", "helper", "format")


@dataclass
class DeclaredNames:
    """Names by kind (`tool`, `schema`, `helper`, `format`) the listed modules are seen to define."""

    names: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in _KINDS})
    modules: int = 0  # modules listed in [tool.dotprompt]
    # tool name -> its description, as defining it would give it: `description=`, else the function's docstring
    descriptions: dict[str, str] = field(default_factory=dict)

    def of(self, kind: str) -> set[str]:
        return self.names.get(kind, set())


def read_declared(settings: dict[str, Any] | None = None, root: Path | None = None) -> DeclaredNames:
    """The names of every module `[tool.dotprompt]` lists (the nearest pyproject.toml's, by default).
    A `.py` path outside the project or a module that does not parse is a UsageError naming it."""
    if settings is None:
        settings, root = project_settings()
    found = DeclaredNames()
    for setting, entry in code_entries(settings, root):
        found.modules += 1
        path = module_file(entry, root, setting) if entry.endswith(".py") else _find_module(entry, root)
        if path is None:
            folder = str(root or Path.cwd())
            raise UsageError(f"{_where(root)}[tool.dotprompt] {setting}: cannot import {entry!r}: no module file "
                             f"found in {folder} or on the import path, read without running it "
                             f"({entry_forms(entry, folder)})")
        if path.suffix != ".py":
            continue  # a compiled extension: its names are seen only by importing, and stay warnings
        module = _parse(path, root, setting)
        for kind, name in _names(module):
            found.names[kind].add(name)
        found.descriptions.update(_tool_descriptions(module))
    return found


def _find_module(dotted: str, root: Path | None) -> Path | None:
    parts = dotted.split(".")
    if not all(part.isidentifier() for part in parts):
        return None  # `myapp/tools`: no module name, as importing it would say
    for folder in [str(root or Path.cwd()), *sys.path]:
        base = Path(folder or ".", *parts)
        for candidate in (base / "__init__.py", *(base.with_name(base.name + s) for s in (".py", *EXTENSION_SUFFIXES))):
            if candidate.is_file():
                return candidate
    return None


def _where(root: Path | None) -> str:
    return f"{root / 'pyproject.toml'}: " if root is not None else ""


def _parse(path: Path, root: Path | None, setting: str) -> ast.Module:
    where = _where(root)
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"{where}[tool.dotprompt] {setting}: {path}:{exc.lineno}: {exc.msg}") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{where}[tool.dotprompt] {setting}: cannot read {path}: {exc}") from None


def _names(module: ast.Module) -> Iterator[tuple[str, str]]:
    functions = {node.name for node in _module_level(module.body) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in _module_level(module.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            tool_name = _tool_name(node)
            if tool_name is not None:
                yield "tool", tool_name
            elif not node.name.startswith("_"):
                yield "helper", node.name
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield "schema", node.name
        elif isinstance(node, ast.Assign | ast.AnnAssign) and _is_schema_literal(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            yield from (("schema", t.id) for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_"))
    for call in ast.walk(module):
        if not isinstance(call, ast.Call):
            continue
        callee = _callee(call.func) or ""
        kind, name = _MAKERS.get(callee), _name_argument(call)
        if name is None and callee in _BY_FUNCTION and call.args and isinstance(call.args[0], ast.Name):
            name = call.args[0].id if call.args[0].id in functions else None
        if kind is not None and name is not None:
            yield kind, name


def _tool_descriptions(module: ast.Module) -> Iterator[tuple[str, str]]:
    """(tool name, description) of the tools `_names` sees that have one: a literal `description=`, else
    the docstring of the function (`inspect.getdoc`'s text, as `@tool` reads it), read unrun."""
    functions = {node.name: node for node in _module_level(module.body)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in functions.values():
        name = _tool_name(node)
        if name is None:
            continue
        given = next((_keyword(d, "description") for d in node.decorator_list if isinstance(d, ast.Call)), None)
        text = given or ast.get_docstring(node)
        if text:
            yield name, text
    for call in ast.walk(module):
        if not isinstance(call, ast.Call) or _callee(call.func) not in _BY_FUNCTION:
            continue
        function = functions.get(call.args[0].id) if call.args and isinstance(call.args[0], ast.Name) else None
        name = _name_argument(call) or (function.name if function is not None else None)
        text = _keyword(call, "description") or (ast.get_docstring(function) if function is not None else None)
        if name and text:
            yield name, text


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at import, into `if`, `try` and `with` blocks, not into functions or classes."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.With):
            yield from _module_level(node.body)
            yield from _module_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level(block)


def _tool_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    for decorator in function.decorator_list:
        if _callee(decorator) in _BY_FUNCTION:
            return function.name
        if isinstance(decorator, ast.Call) and _callee(decorator.func) == "tool":
            return _keyword(decorator, "name") or function.name
    return None


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _name_argument(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return _keyword(call, "name")


def _keyword(call: ast.Call, name: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            return keyword.value.value
    return None


def _is_schema_literal(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Dict) and any(
        isinstance(key, ast.Constant) and key.value in _SCHEMA_KEYS for key in value.keys)
