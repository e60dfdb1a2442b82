"""Where a name is defined and where it is used: a partial's file and every file that includes it; a
tool's Python function and a code-defined schema's class (found in the modules `[tool.dotprompt]` lists,
read with `ast`, never imported); a variant's base prompt."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..prompts.loader import code_entries, module_file
from ..settings import project_settings
from .hover import word_at
from .project import Project, file_kind

__all__ = ["INCLUDE", "Location", "definition", "partial_uses", "references"]

INCLUDE = re.compile(r"""(\{\{#?>\s*|\{%-?\s*include\s+["'])([\w./-]+)""")


@dataclass(frozen=True)
class Location:
    """A zero-based line and a range of characters (code points) on it, in the file at `path`."""

    path: str
    line: int
    start: int = 0
    end: int = 0


def definition(project: Project, path: str, text: str, line: int, column: int) -> list[Location]:
    lines = text.split("\n")
    found = word_at(lines[line], column) if line < len(lines) else None
    if found is None:
        return []
    word, start, _ = found
    included = INCLUDE.search(lines[line][max(0, start - 100):start] + word)
    if included is not None and included.group(2) == word:
        partial = _partial_file(project, word)
        return [Location(str(partial), 0)] if partial is not None else []
    if re.match(r"^\s*variant:", lines[line]) or (re.match(r"^\s*name:", lines[line]) and word != "name"):
        base = _base_prompt(project, path)
        return [Location(str(base), 0)] if base is not None else []
    return code_definitions(project, word)


def _partial_file(project: Project, name: str) -> Path | None:
    head, _, tail = name.rpartition("/")
    candidate = project.folder / head / f"_{tail}.prompt"
    return candidate if candidate.is_file() else None


def _base_prompt(project: Project, path: str) -> Path | None:
    info = project.info_for(path)
    if info.variant is None:
        return None
    base = project.folder / f"{info.name}.prompt"
    return base if base.is_file() else None


def code_definitions(project: Project, name: str) -> list[Location]:
    """The function, class or assignment named `name` (or a `@tool(name=...)`) in the project's code modules."""
    settings, root = project_settings(project.root)
    out, seen = [], set()
    for setting, entry in code_entries(settings, root):
        module = _module_path(entry, root, setting)
        if module is None or module in seen:  # one module may be listed as tools and as schemas
            continue
        seen.add(module)
        try:
            tree = ast.parse(module.read_bytes())
        except (SyntaxError, OSError, ValueError):
            continue
        for node in ast.walk(tree):
            if _defines(node, name):
                column = getattr(node, "col_offset", 0)
                out.append(Location(str(module), getattr(node, "lineno", 1) - 1, column, column))
    return out


def _module_path(entry: str, root: Path | None, setting: str) -> Path | None:
    if entry.endswith(".py"):
        try:
            return module_file(entry, root, setting)
        except UsageError:  # a path outside the project: check reports it
            return None
    base = Path(root or Path.cwd(), *entry.split("."))
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defines(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if node.name == name:
            return True
        return any(isinstance(d, ast.Call) and any(k.arg == "name" and isinstance(k.value, ast.Constant)
                                                   and k.value.value == name for k in d.keywords)
                   for d in getattr(node, "decorator_list", []))
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    return False


def references(project: Project, path: str, text: str, line: int, column: int) -> list[Location]:
    """Every include of the partial under the cursor (or of this partial file, when the cursor is in one)."""
    name = _partial_under(project, path, text, line, column)
    return partial_uses(project, name) if name else []


def _partial_under(project: Project, path: str, text: str, line: int, column: int) -> str | None:
    lines = text.split("\n")
    if line < len(lines):
        for found in INCLUDE.finditer(lines[line]):
            if found.start(2) <= column <= found.end(2):
                return found.group(2)
    if file_kind(path) == "partial":
        head, _, tail = project.info_for(path).name.rpartition("/")
        return f"{head}/{tail.removeprefix('_')}" if head else tail.removeprefix("_")
    return None


def partial_uses(project: Project, name: str) -> list[Location]:
    """Each `{{> name}}` and `{% include 'name' %}` in the prompt folder: the name's range."""
    out = []
    for file in sorted(project.folder.rglob("*.prompt")):
        try:
            content = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if name not in content:
            continue
        for number, text in enumerate(content.split("\n")):
            for found in INCLUDE.finditer(text):
                if found.group(2) == name:
                    out.append(Location(os.fspath(file), number, found.start(2), found.end(2)))
    return out
