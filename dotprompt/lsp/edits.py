"""Edits the server proposes: rename (an input variable across its schema and the template; a partial
across the folder, its file renamed too) and code actions (apply check's did-you-mean; declare an
undeclared variable in the input schema; convert a Handlebars file to jinja2 where nothing is lost).

Each edit is a `TextEdit` of code points; the server encodes it for the client."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .completion import frontmatter_bounds
from .definition import INCLUDE, Location, partial_uses
from .hover import word_at
from .project import Project, file_kind

__all__ = ["Action", "Rename", "TextEdit", "code_actions", "rename"]

_NAME = re.compile(r"^[A-Za-z_]\w*$")
_PARTIAL_NAME = re.compile(r"^[\w-]+(?:/[\w-]+)*$")
_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
_DID_YOU_MEAN = re.compile(r"did you mean `([^`]+)`")
_UNDECLARED = re.compile(r"^template variable `(\w+)` is not declared in input\.schema")


@dataclass(frozen=True)
class TextEdit:
    where: Location
    new_text: str
    end_line: int | None = None  # a range over several lines ends here (at column `where.end`)


@dataclass
class Rename:
    edits: list[TextEdit] = field(default_factory=list)
    renamed_file: tuple[str, str] | None = None  # (old path, new path)
    error: str | None = None


@dataclass(frozen=True)
class Action:
    title: str
    edits: tuple[TextEdit, ...]
    fixes: str | None = None  # the message of the diagnostic it fixes


# -- rename ---------------------------------------------------------------------------------------

def rename(project: Project, path: str, text: str, line: int, column: int, new_name: str) -> Rename:
    lines = text.split("\n")
    if line >= len(lines):
        return Rename(error="nothing to rename here")
    for found in INCLUDE.finditer(lines[line]):
        if found.start(2) <= column <= found.end(2):
            return _rename_partial(project, found.group(2), new_name)
    if file_kind(path) == "partial" and not lines[line].strip():
        return Rename(error="put the cursor on a name to rename")
    found_word = word_at(lines[line], column)
    if found_word is None:
        return Rename(error="put the cursor on an input variable or a partial name to rename")
    root = found_word[0].split(".")[0].rstrip("?").split("(")[0]
    if not _NAME.match(new_name):
        return Rename(error=f"{new_name!r} is no variable name: letters, digits and _, not starting with a digit")
    edits = _schema_key_edits(lines, root, new_name) + _template_edits(lines, root, new_name)
    if not edits:
        return Rename(error=f"`{root}` is not an input variable of this prompt")
    return Rename([TextEdit(Location(path, e.line, e.start, e.end), new) for e, new in edits])


def _schema_key_edits(lines: list[str], name: str, new: str) -> list[tuple[Location, str]]:
    """The field's key under `input.schema` (Picoschema or `properties:`) and under `input.default`."""
    bounds = frontmatter_bounds(lines)
    if bounds is None:
        return []
    out, section, block, depth = [], None, None, None
    for index in range(bounds[0], bounds[1] + 1):
        text = lines[index]
        top = re.match(r"^(\w+):", text)
        if top:
            section, block, depth = top.group(1), None, None
            continue
        if section != "input":
            continue
        sub = re.match(r"^(\s+)(schema|default|properties):", text)
        if sub and sub.group(2) in ("schema", "default"):
            block, depth = sub.group(2), None
            continue
        key = re.match(r"^(\s+)([A-Za-z_]\w*)(?=[?(:\s])", text)
        if block and key:
            indent = len(key.group(1))
            if key.group(2) == "properties":
                continue
            depth = indent if depth is None else depth
            if indent == depth and key.group(2) == name:
                out.append((Location("", index, indent, indent + len(name)), new))
    return out


def _template_edits(lines: list[str], name: str, new: str) -> list[tuple[Location, str]]:
    bounds = frontmatter_bounds(lines)
    first = bounds[1] + 2 if bounds is not None else 0
    pattern = re.compile(rf"(?<![\w.\"'@]){re.escape(name)}(?![\w\"'(])")
    out = []
    for index in range(first, len(lines)):
        for tag in _TAG.finditer(lines[index]):
            for found in pattern.finditer(tag.group()):
                start = tag.start() + found.start()
                out.append((Location("", index, start, start + len(name)), new))
    return out


def _rename_partial(project: Project, name: str, new: str) -> Rename:
    if not _PARTIAL_NAME.match(new):
        return Rename(error=f"{new!r} is no partial name: letters, digits, _ and -, folders separated by /")
    head, _, tail = name.rpartition("/")
    old_file = project.folder / head / f"_{tail}.prompt"
    new_head, _, new_tail = new.rpartition("/")
    new_file = project.folder / new_head / f"_{new_tail}.prompt"
    if new_file.exists():
        return Rename(error=f"{new_file.name} exists already: choose another name")
    edits = [TextEdit(use, new) for use in partial_uses(project, name)]
    return Rename(edits, (str(old_file), str(new_file)) if old_file.is_file() else None)


# -- code actions ---------------------------------------------------------------------------------

def code_actions(path: str, text: str, diagnostics: list[tuple[str, int, int, int]]) -> list[Action]:
    """Fixes for `diagnostics` ((message, line, start, end) in code points) and the file-wide actions."""
    lines = text.split("\n")
    out: list[Action] = []
    for message, line, start, end in diagnostics:
        suggested = _DID_YOU_MEAN.search(message)
        if suggested and end > start:
            out.append(Action(f"Change to `{suggested.group(1)}`",
                              (TextEdit(Location(path, line, start, end), suggested.group(1)),), message))
        undeclared = _UNDECLARED.match(message)
        if undeclared:
            edit = _declare(path, lines, undeclared.group(1))
            if edit is not None:
                out.append(Action(f"Declare `{undeclared.group(1)}` in input.schema", (edit,), message))
    converted = _converted(path, text)
    if converted is not None:
        last = len(lines) - 1
        out.append(Action("Convert this Handlebars file to jinja2",
                          (TextEdit(Location(path, 0, 0, len(lines[last])), converted, end_line=last),)))
    return out


def _declare(path: str, lines: list[str], name: str) -> TextEdit | None:
    """`name: string` as the input schema's first field (Picoschema), or under its `properties:`."""
    bounds = frontmatter_bounds(lines)
    if bounds is None:
        return None
    in_input = False
    for index in range(bounds[0], bounds[1] + 1):
        text = lines[index]
        if re.match(r"^\w", text):
            in_input = text.startswith("input:")
            continue
        schema = re.match(r"^(\s+)schema:\s*$", text)
        if in_input and schema:
            indent = len(schema.group(1)) + 2
            following = lines[index + 1] if index + 1 <= bounds[1] else ""
            properties = re.match(r"^(\s+)properties:\s*$", following)
            if properties:
                inner = " " * (len(properties.group(1)) + 2)
                return TextEdit(Location(path, index + 2, 0, 0), f"{inner}{name}: {{type: string}}\n")
            own = re.match(r"^(\s+)\S", following)
            spaces = " " * (len(own.group(1)) if own and len(own.group(1)) > len(schema.group(1)) else indent)
            return TextEdit(Location(path, index + 1, 0, 0), f"{spaces}{name}: string\n")
    return None


def _converted(path: str, text: str) -> str | None:
    """The jinja2 text of a Handlebars prompt, when the conversion leaves nothing behind; else None."""
    if file_kind(path) == "test" or "{%" in text or not re.search(r"\{\{[#/>^]|\{\{\s*(?:role|history|media|section)\s", text):
        return None
    from ..engines.handlebars import convert_source

    try:
        result = convert_source(text, path)
    except Exception:  # a file being typed into: no action offered, nothing broken
        return None
    if result.problems or result.text == text:
        return None
    return result.text
