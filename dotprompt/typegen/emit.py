"""JSON Schema -> Python class definitions: a TypedDict for an input, a pydantic model for an output and
its partial twin (every field optional), TypedDicts for output data that stays JSON (an array, a scalar).

Written by hand for the JSON Schema that prompt files give (Picoschema's output, pydantic's, hand-written):
`type` (lists and `null` too), `properties`/`required`, `items`, `enum` and `const` as `Literal`,
`anyOf`/`oneOf` as unions, `additionalProperties` as `dict[str, T]`, local `$ref` into `$defs` or
`definitions`, `description` as docstrings. Anything else (`allOf` of several, `not`, remote `$ref`) is
`Any`: the run still validates it against the schema. docs/typed-prompts.md says why not
datamodel-code-generator (its figures)."""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .names import class_name, identifier

__all__ = ["LINE", "Emitter", "Kind", "Root", "docstring", "wrapped"]

Kind = Literal["input", "output", "partial", "data"]
"""input: TypedDict (keys not required unless the schema says so); output: pydantic model; partial:
its twin, every field optional; data: TypedDict for objects inside output that stays JSON data."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALARS = {"string": "str", "number": "float", "integer": "int", "boolean": "bool", "null": "None"}
_SUFFIX = {"input": "", "output": "", "partial": "Partial", "data": ""}
_BASEMODEL_NAMES = frozenset({"copy", "dict", "json", "schema", "construct", "validate", "parse_obj", "parse_raw",
                              "parse_file", "from_orm", "fields", "update_forward_refs", "schema_json"})


@dataclass(frozen=True)
class Root:
    """The whole schema a `$ref` points into, and the class name its definitions are named after
    (`ExtractOutput` + `$defs/Line` -> `ExtractOutputLine`)."""

    schema: Any
    base: str


@dataclass
class _Class:
    name: str
    lines: list[str]


@dataclass
class Emitter:
    """Collects the classes of one module, in an order where each is defined before its first use, and the
    names it needs imported. Names are unique in the module (a nested class's clash gets a number)."""

    classes: list[_Class] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    pending: set[str] = field(default_factory=set)  # names reserved, their class not written yet: quoted when used
    typing_names: set[str] = field(default_factory=set)
    pydantic_names: set[str] = field(default_factory=set)
    _refs: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def reserve(self, name: str) -> str:
        """`name`, or `name2`, `name3`... the first one free."""
        candidate, number = name, 2
        while candidate in self.taken:
            candidate, number = f"{name}{number}", number + 1
        self.taken.add(candidate)
        self.pending.add(candidate)
        return candidate

    def alias(self, name: str, expression: str) -> None:
        """`name: TypeAlias = expression`, as a class-like entry in definition order."""
        self.typing_names.add("TypeAlias")
        self.classes.append(_Class(name, wrapped(f"{name}: TypeAlias = ", expression)))
        self.pending.discard(name)

    def type_of(self, schema: Any, hint: str, kind: Kind, root: Root) -> str:
        """The type expression of `schema`; nested objects become classes named from `hint`."""
        if schema is True or schema == {} or not isinstance(schema, Mapping):
            return self._any()
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]), kind, root, hint)
        if "const" in schema:
            return self._literal([schema["const"]]) or self._any()
        if "enum" in schema and isinstance(schema["enum"], list):
            return self._literal(schema["enum"]) or self._scalar_union(schema)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self._union([self.type_of(s, f"{hint}Option{n}" if n else hint, kind, root)
                                    for n, s in enumerate(schema[key])])
        if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            return self.type_of(schema["allOf"][0], hint, kind, root)
        types = schema.get("type")
        if isinstance(types, list):
            return self._union([self.type_of({**schema, "type": t}, hint, kind, root) for t in types])
        if types == "array" or (types is None and "items" in schema):
            items = schema.get("items")
            return f"list[{self.type_of(items, hint + 'Item', kind, root) if items is not None else self._any()}]"
        if types == "object" or (types is None and "properties" in schema):
            return self._object(schema, hint, kind, root)
        if isinstance(types, str) and types in _SCALARS:
            return _SCALARS[types]
        return self._any()

    # -- objects ---------------------------------------------------------------------------

    def _object(self, schema: Mapping[str, Any], hint: str, kind: Kind, root: Root) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            extra = schema.get("additionalProperties")
            value = self.type_of(extra, hint + "Value", kind, root) if isinstance(extra, Mapping) else self._any()
            return f"dict[str, {value}]"
        name = self.reserve(hint + _SUFFIX[kind])
        self.define(name, schema, kind, root)
        return name

    def define(self, name: str, schema: Mapping[str, Any], kind: Kind, root: Root, *,
               defaults: frozenset[str] = frozenset()) -> None:
        """The class `name` (already reserved) for the object `schema`. `defaults`: input keys with a default
        (the caller need not give them)."""
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ()) - defaults
        fields = [(key, self.forward(self.type_of(sub, name.removesuffix(_SUFFIX[kind]) + class_name(key), kind, root)),
                   key in required, sub.get("description") if isinstance(sub, Mapping) else None)
                  for key, sub in properties.items()]
        if kind in ("input", "data"):
            lines = self._typed_dict(name, schema, fields)
        else:
            lines = self._model(name, schema, fields, partial=kind == "partial")
        self.classes.append(_Class(name, lines))
        self.pending.discard(name)

    def forward(self, type_: str) -> str:
        """`type_`, quoted when it names a class not yet written (a model that refers to itself): the module
        has no `from __future__ import annotations`, which would hide NotRequired from TypedDict at run time."""
        if self.pending.isdisjoint(_NAME.findall(type_)):
            return type_
        return f"'{type_}'" if '"' in type_ else f'"{type_}"'

    def _typed_dict(self, name: str, schema: Mapping[str, Any], fields: list[tuple[str, str, bool, Any]]) -> list[str]:
        self.typing_names.add("TypedDict")
        if any(not n.isidentifier() or keyword.iskeyword(n) for n, *_ in fields):  # keys Python cannot spell
            entries = ", ".join(f"{json.dumps(n)}: {self._maybe_required(t, req)}" for n, t, req, _ in fields)
            return [f"{name} = TypedDict({json.dumps(name)}, {{{entries}}})"]
        lines = [f"class {name}(TypedDict):", *_class_docstring(schema)]
        for key, type_, req, description in fields:
            lines.append(f"    {key}: {self._maybe_required(type_, req)}")
            lines += docstring(description, "    ")
        return lines

    def _maybe_required(self, type_: str, required: bool) -> str:
        if required:
            return type_
        self.typing_names.add("NotRequired")
        return f"NotRequired[{type_}]"

    def _model(self, name: str, schema: Mapping[str, Any], fields: list[tuple[str, str, bool, Any]], *,
               partial: bool) -> list[str]:
        self.pydantic_names.add("BaseModel")
        lines = [f"class {name}(BaseModel):", *_class_docstring(schema)]
        aliased = False
        for key, type_, req, description in fields:
            attribute = _attribute(key)
            optional = partial or not req
            if optional and not _has_none(type_.strip("'\"")):
                type_ = f"{type_} | None" if type_[0] not in "'\"" else f"{type_[0]}{type_[1:-1]} | None{type_[0]}"
            if attribute != key:
                aliased = True
                self.pydantic_names.add("Field")
                default = "None, " if optional else ""
                lines.append(f"    {attribute}: {type_} = Field({default}alias={json.dumps(key)})")
            elif optional and len(attribute) + len(type_) + 13 > LINE:  # as ruff formats a long one
                lines += [f"    {attribute}: {type_} = (", "        None", "    )"]
            else:
                lines.append(f"    {attribute}: {type_}" + (" = None" if optional else ""))
            lines += docstring(description, "    ")
        if aliased:
            self.pydantic_names.add("ConfigDict")
            lines.append("    model_config = ConfigDict(populate_by_name=True)")
        if len(lines) == 1:
            lines.append("    pass")
        return lines

    # -- references and small types ------------------------------------------------------------

    def _ref(self, ref: str, kind: Kind, root: Root, hint: str) -> str:
        for prefix in ("#/$defs/", "#/definitions/"):
            definitions = root.schema.get(prefix[2:-1]) if isinstance(root.schema, Mapping) else None
            target = definitions.get(ref[len(prefix):]) if ref.startswith(prefix) and isinstance(definitions, Mapping) else None
            if isinstance(target, Mapping):
                if not _is_object(target):
                    return self.type_of(target, hint, kind, root) if target.get("$ref") != ref else self._any()
                key = (root.base, ref, kind)
                if key not in self._refs:  # a $ref to an object is one class, however often (or deep) it is used
                    self._refs[key] = self.reserve(root.base + class_name(ref[len(prefix):]) + _SUFFIX[kind])
                    self.define(self._refs[key], target, kind, root)
                return self._refs[key]
        return self._any()  # `#` itself, a remote or a broken $ref: left to the run's validation

    def _literal(self, values: list[Any]) -> str | None:
        allowed = [v for v in values if v is None or isinstance(v, (str, int, bool))]  # bool is an int; a float is not
        if len(allowed) != len(values) or not values:
            return None  # a float or an object in an enum: Literal cannot say it
        self.typing_names.add("Literal")
        spelled = [json.dumps(v) if isinstance(v, str) else repr(v) for v in values if v is not None]
        literal = f"Literal[{', '.join(spelled)}]" if spelled else ""
        if None in values:
            return f"{literal} | None" if literal else "None"
        return literal

    def _scalar_union(self, schema: Mapping[str, Any]) -> str:
        kinds = sorted({_json_type(v) for v in schema["enum"]})
        return self._union([_SCALARS.get(k, self._any()) for k in kinds])

    def _union(self, members: list[str]) -> str:
        unique = list(dict.fromkeys(m for part in members for m in _split_union(part)))
        if "Any" in unique:
            return "Any"
        if "None" in unique:  # None last, as people write it
            unique = [m for m in unique if m != "None"] + ["None"]
        return " | ".join(unique)

    def _any(self) -> str:
        self.typing_names.add("Any")
        return "Any"

    def code(self) -> list[str]:
        """Every class, two blank lines apart."""
        out: list[str] = []
        for entry in self.classes:
            out += ["", "", *entry.lines]
        return out


def _is_object(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" or (schema.get("type") is None and "properties" in schema)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string"}.get(type(value), "object")


def _split_union(expression: str) -> list[str]:
    """The members of a top-level `A | B` (a `|` inside brackets stays)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            parts.append(expression[start:i].strip())
            start = i + 1
    parts.append(expression[start:].strip())
    return parts


def _has_none(type_: str) -> bool:
    return "None" in _split_union(type_) or type_ == "Any"


def _attribute(key: str) -> str:
    """The model attribute of a JSON key: itself when Python and pydantic allow it, else a spelling that is
    (the key stays the alias: the JSON keeps its names)."""
    if key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_") \
            and not key.startswith("model_") and key not in _BASEMODEL_NAMES:
        return key
    name = identifier(key)
    if name.startswith("model_") or name in _BASEMODEL_NAMES:
        name = f"{name}_"
    return name


def _class_docstring(schema: Mapping[str, Any]) -> list[str]:
    """The schema's description, then a blank line, as the formatters keep a class docstring."""
    lines = docstring(schema.get("description"), "    ")
    return [*lines, ""] if lines else []


def docstring(text: Any, indent: str) -> list[str]:
    """A description as a docstring (the editor shows it on hover); quotes and backslashes made safe,
    wrapped at the formatters' 88 columns."""
    if not isinstance(text, str) or not text.strip():
        return []
    body = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = textwrap.wrap(body, LINE - len(indent) - 3, break_long_words=False, break_on_hyphens=False)
    lines[0] = '"""' + lines[0]
    lines[-1] += '"""'
    return [indent + line for line in lines]


LINE = 88
"""The line length of black's and ruff's default format, which the module keeps to where it can."""


def wrapped(head: str, expression: str) -> list[str]:
    """`head + expression` on one line, else as ruff formats a long subscript: its arguments on one
    indented line, else one per line with a trailing comma. (Other long lines stay whole: `dotprompt
    types --check` compares code, not layout, so a formatter run over the module changes nothing.)"""
    if len(head) + len(expression) <= LINE or not expression.endswith("]") or "[" not in expression:
        return [head + expression]
    opening = expression.index("[")
    inner = expression[opening + 1:-1]
    if len(inner) + 4 <= LINE:
        return [head + expression[:opening + 1], f"    {inner}", "]"]
    return [head + expression[:opening + 1], *(f"    {part}," for part in _split_top(inner)), "]"]


def _split_top(text: str) -> list[str]:
    """The comma-separated parts of `text` at bracket depth 0."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()]
