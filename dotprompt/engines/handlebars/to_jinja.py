"""Handlebars -> jinja2: `dotprompt convert` and the conversion the engine's fast path compiles.

One job: Handlebars prompt source -> jinja2 prompt source. The template is parsed by
`dotpromptz-handlebars` (the same parser the Handlebars engine uses, through `upstream`) and the AST
is walked; nothing here parses Handlebars. `FastConverter` is the same walk written for the fast
path's environment (`fast`), which keeps Handlebars' semantics. The frontmatter is kept byte for byte, except that a
`dotprompt.engine: handlebars` line is dropped.

Whitespace: the parser has already applied Handlebars' whitespace rules (`~` and standalone
lines) to the text nodes, so the text is written as Handlebars renders it and each `{% %}` tag is
written so jinja's `trim_blocks` / `lstrip_blocks` leave that text alone: a tag that stood alone on
its line stays alone on its line (the newline after it is the one `trim_blocks` eats), `{%+` keeps
indentation before an inline tag, `+%}` keeps a newline after one. A `~` becomes jinja's `-` on the
same side. The converted file renders the same messages.

What has no direct jinja2 equivalent is left in place inside a `{# TODO(convert): ... #}` comment and
reported as a `Problem` (file line + what): custom helpers, subexpressions, partials that change the
context (inside `{{#each}}`/`{{#with}}` or with a context argument), partial blocks, inline partials,
section blocks (`{{#name}}` on a non-helper), `@root` alone, `this` at the top level,
`{{#if x includeZero=true}}` and similar hash options.

Known semantic differences of the mapping (they do not show in the usual prompt):
- `{{#each obj}}` over an object iterates values in Handlebars; the converted loop iterates a
  list, or `obj.items()` when the body uses `@key`.
- Truthiness: an empty object `{}` is true in Handlebars and false in jinja2.
- `ifEquals` is strict (`5 != "5"`, `1 != true`); jinja2's `==` is Python's (`1 == True`).
- Printed values: Handlebars prints `true`/`a,b` for booleans/lists, jinja2 prints `True`/`['a', 'b']`.
- Line endings: the jinja2 engine renders `\r\n` in a template as `\n`; the converted file uses `\n`.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...document.parse import FRONTMATTER_PATTERN, parse_source
from ...errors import PicoschemaError, PromptFileError
from ...schema.picoschema import to_json_schema
from ..jinja import RESERVED_NAMES
from .syntax import syntax_error_line, template_variables
from .upstream import Block, InlinePartial, Mustache, Partial, PartialBlock, Text, compile_template

__all__ = ["Conversion", "FastConverter", "Problem", "convert_file", "convert_source"]

TODO = "TODO(convert)"


@dataclass(frozen=True)
class Problem:
    """A construct left in place: file line and what it is."""

    line: int
    what: str

    def format(self, path: str) -> str:
        return f"{path}:{self.line}: cannot convert: {self.what}"


@dataclass
class Conversion:
    text: str
    problems: list[Problem] = field(default_factory=list)


def convert_file(path: str | Path) -> Conversion:
    path = Path(path)
    return convert_source(path.read_text(encoding="utf-8"), str(path))


def convert_source(source: str, path: str | None = None) -> Conversion:
    """Handlebars prompt source (frontmatter + template) -> jinja2 prompt source and what was left."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    match = FRONTMATTER_PATTERN.match(text)
    head, body, first_line = "", text, 1
    if match is not None:
        head, body = _drop_engine_line(text[: match.end()]), text[match.end():]
        first_line = text.count("\n", 0, match.end()) + 1
    converter = _Converter(body, first_line, path or "<prompt from source>")
    converter.input_schema = _input_schema(head)
    converted, problems = converter.run()
    return Conversion(head + converted, problems)


def _input_schema(head: str) -> Any:
    """The input schema as JSON Schema, or None when there is none or it cannot be read here (a name
    defined in code): then every value is converted to print and test as Handlebars does."""
    if not head:
        return None
    try:
        src = parse_source(head)
        schema = (src.metadata.get("input") or {}).get("schema")
        return to_json_schema(schema, lambda name: None) if schema is not None else None
    except (PromptFileError, PicoschemaError, RecursionError):
        return None


_ENGINE_LINE = re.compile(r"^dotprompt\.engine[ \t]*:[ \t]*[\"']?handlebars[\"']?[ \t]*(?:#[^\n]*)?\n", re.M)
_ENGINE_BLOCK = re.compile(r"^dotprompt[ \t]*:[ \t]*\n[ \t]+engine[ \t]*:[ \t]*[\"']?handlebars[\"']?[ \t]*\n(?![ \t])", re.M)


def _drop_engine_line(head: str) -> str:
    return _ENGINE_BLOCK.sub("", _ENGINE_LINE.sub("", head))


# -- output items -----------------------------------------------------------------------------

@dataclass
class _Loc:
    """Where a tag is in the (comment-masked) source."""

    start: int
    end: int
    line: int
    strip_before: bool = False
    strip_after: bool = False
    standalone: bool = False
    group: str | None = None


@dataclass
class _Tag:
    """A `{% %}` statement (or several on one line) or a `{# #}` comment, placed by `_assemble`."""

    statements: list[str]
    loc: _Loc
    comment: bool = False
    close_loc: _Loc | None = None  # for a TODO comment spanning a block: the closing tag's `~`


def _assemble(items: list[str | _Tag]) -> str:
    buf = ""
    for index, item in enumerate(items):
        if isinstance(item, str):
            buf += item
            continue
        following = items[index + 1] if index + 1 < len(items) else ""
        nxt = following if isinstance(following, str) else ""
        tail = buf[buf.rfind("\n") + 1:]
        at_line_start = tail == ""
        ws_tail = bool(tail) and not tail.strip(" \t")
        strip_before = item.loc.strip_before
        strip_after = (item.close_loc or item.loc).strip_after
        add_nl = item.loc.standalone and at_line_start and not strip_after
        if item.comment:
            text = "{#" + ("-" if strip_before else "") + " " + item.statements[0] + " " + ("-" if strip_after else "") + "#}"
            if not strip_after and nxt.startswith("\n") and not add_nl:
                text += "\n"  # trim_blocks eats one newline after a comment: give it one to eat
            if ws_tail and not strip_before:  # lstrip_blocks would eat the indentation: comment goes first
                buf = buf[: len(buf) - len(tail)] + text + ("\n" if add_nl else "") + tail
                continue
        else:
            opener = "{%-" if strip_before else ("{%+" if ws_tail else "{%")
            closer = "-%}" if strip_after else ("+%}" if nxt.startswith("\n") and not add_nl else "%}")
            text = opener + " " + " %}{% ".join(item.statements) + " " + closer
        buf += text + ("\n" if add_nl else "")
    return buf


def _escape_text(text: str) -> str:
    """Text that jinja would read as a tag start keeps its braces literally."""
    return re.sub(r"\{(?=[{%#])", '{{ "{" }}', text)


# -- scopes and paths -------------------------------------------------------------------------

@dataclass
class _Scope:
    expr: str | None  # jinja expression of `this`; None at the top level (names are bare)
    loop: bool = False
    params: dict[str, str] = field(default_factory=dict)
    key_var: str | None = None
    uses_key: bool = False
    schema: Any = None  # JSON Schema of `this` in the scope (None: unknown)
    param_schemas: dict[str, Any] = field(default_factory=dict)  # `as |name|` -> its JSON Schema


_JINJA_KEYWORDS = frozenset({"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is",
                             "if", "else", "for", "loop", "recursive", "with", "without", "context", "import"})
_SEGMENT = re.compile(r"\[[^\]]*\]|[^./]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?\Z")
_IDENT = re.compile(r"[A-Za-z_]\w*\Z")
_SHADOWED_ATTRS = frozenset(dir(dict)) | frozenset(dir(list)) | frozenset(dir(str))


def _segment(seg: str) -> str:
    if seg.startswith("[") and seg.endswith("]"):
        seg = seg[1:-1]
    if seg.isdigit():
        return f"[{seg}]"
    if _IDENT.match(seg) and seg not in _SHADOWED_ATTRS and not keyword.iskeyword(seg):
        return f".{seg}"
    return f"[{json.dumps(seg, ensure_ascii=False)}]"


def _root_name(seg: str) -> bool:
    return bool(_IDENT.match(seg)) and seg not in _JINJA_KEYWORDS and seg not in RESERVED_NAMES \
        and not keyword.iskeyword(seg)


_LOOP_DATA_TYPES = {"index": {"type": "integer"}, "key": {"type": "string"}, "first": {"type": "boolean"},
                    "last": {"type": "boolean"}}


def _types(schema: Any) -> list[str] | None:
    """The JSON types a schema allows besides null, or None when it does not say (or is not a schema)."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and "type" not in schema:
        values = schema["enum"] if isinstance(schema["enum"], list) else []
        return sorted({_json_type(v) for v in values} - {"null"}) or None
    kind = schema.get("type")
    written = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return [str(k) for k in written if k != "null"] or None


def _json_type(value: Any) -> str:
    for python_type, name in ((bool, "boolean"), (str, "string"), (int, "integer"), (float, "number"),
                              (type(None), "null"), (list, "array")):
        if isinstance(value, python_type):
            return name
    return "object"


def _prints_alike(schema: Any) -> bool:
    """jinja2 prints a value of this type as Handlebars does (text and whole numbers; null is empty in both)."""
    kinds = _types(schema)
    return kinds is not None and all(k in ("string", "integer") for k in kinds)


def _tests_alike(schema: Any) -> bool:
    """jinja2's `if` agrees with Handlebars' `#if` on this type (everything but an object: `{}` is true there)."""
    kinds = _types(schema)
    return kinds is not None and all(k in ("string", "integer", "number", "boolean", "array") for k in kinds)


def _has_type(schema: Any, kind: str) -> bool:
    return _types(schema) == [kind]


def _child_schema(schema: Any, seg: str) -> Any:
    if not isinstance(schema, dict):
        return None
    if seg.isdigit():
        return schema.get("items")
    properties = schema.get("properties")
    return properties.get(seg) if isinstance(properties, dict) else None


class _UnconvertibleError(Exception):
    pass


# -- the converter ----------------------------------------------------------------------------

_COMMENT = re.compile(r"\{\{(~?)!(?:--(.*?)--|(.*?))(~?)\}\}", re.S)
_SENTINEL = "__dpconvert_comment_"
_SENTINEL_TAG = re.compile(r"\{\{~?\s*>\s*" + _SENTINEL + r"(\d+)__\s*~?\}\}")
_TAG_END = re.compile(r"(~?)\}\}\}?")


class _Converter:
    def __init__(self, body: str, first_line: int, path: str) -> None:
        self.first_line = first_line
        self.path = path
        self.comments: list[tuple[str, str]] = []  # (original tag text, comment text)
        self.src = _COMMENT.sub(self._mask, body)
        self.cursor = 0
        self.items: list[str | _Tag] = []
        self.problems: list[Problem] = []
        self.names: set[str] = set()
        self.input_schema: Any = None  # the file's input schema (JSON Schema), for the values' types

    def _mask(self, m: re.Match[str]) -> str:
        """A comment becomes a partial tag (standalone like a comment, kept in the AST), same line count."""
        text = m.group(2) if m.group(2) is not None else m.group(3)
        self.comments.append((m.group(0), text))
        newlines = "\n" * m.group(0).count("\n")
        return "{{" + m.group(1) + "> " + _SENTINEL + f"{len(self.comments) - 1}__" + newlines + m.group(4) + "}}"

    def _unmask(self, text: str) -> str:
        return _SENTINEL_TAG.sub(lambda m: self.comments[int(m.group(1))][0], text)

    def run(self) -> tuple[str, list[Problem]]:
        try:
            program = compile_template(self.src)
        except (ValueError, RecursionError) as exc:
            line = self.first_line - 1 + syntax_error_line(self.src, str(exc))
            raise PromptFileError(f"Handlebars syntax error: {exc}", path=self.path, line=line) from None
        self.names = template_variables(program)
        self._nodes(program, [_Scope(None, schema=self.input_schema)])
        return _assemble(self.items), self.problems

    # locating tags in the source, in order

    def _find(self, head: str) -> _Loc:
        m = re.compile(r"\{\{\{?(~?)\{?\s*" + head).search(self.src, self.cursor)
        if m is None:  # cannot happen for a tag the parser produced; keep going with a best guess
            return _Loc(self.cursor, self.cursor, self._line(self.cursor))
        end_m = _TAG_END.search(self.src, m.end())
        end = end_m.end() if end_m else m.end()
        self.cursor = end
        line_start = self.src.rfind("\n", 0, m.start()) + 1
        line_end = self.src.find("\n", end)
        line_end = len(self.src) if line_end < 0 else line_end
        standalone = not self.src[line_start:m.start()].strip(" \t") and not self.src[end:line_end].strip(" \t")
        group = m.group(2) if m.re.groups >= 2 else None
        return _Loc(m.start(), end, self._line(m.start()), bool(m.group(1)), bool(end_m and end_m.group(1)),
                    standalone, group)

    def _line(self, pos: int) -> int:
        return self.first_line + self.src.count("\n", 0, pos)

    def _close_of(self, name: str) -> _Loc:
        """The closing tag of the block whose opening tag was just found (nested same-name blocks skipped)."""
        pattern = re.compile(r"\{\{~?\s*(?:([#^]\s*(?:>\s*|\*inline\s+)?\"?)" + re.escape(name) + r"(?![\w.-])|/\s*"
                             + re.escape(name) + r"\s*~?\}\})")
        depth = 0
        for m in pattern.finditer(self.src, self.cursor):
            if m.group(1) is not None:
                depth += 1
            elif depth:
                depth -= 1
            else:
                self.cursor = m.start()
                return self._find(r"/\s*" + re.escape(name))
        return _Loc(len(self.src), len(self.src), self._line(len(self.src)))

    # emitting

    def _todo(self, loc: _Loc, what: str, close: _Loc | None = None) -> None:
        end = (close or loc).end
        original = self._unmask(self.src[loc.start:end]).replace("#}", "# }")
        self.problems.append(Problem(loc.line, what))
        self.items.append(_Tag([f"{TODO}: {original}"], loc, comment=True, close_loc=close))

    def _nodes(self, nodes: list[Any], scopes: list[_Scope]) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.items.append(_escape_text(node.value))
            elif isinstance(node, Mustache):
                self._mustache(node, scopes)
            elif isinstance(node, Block):
                self._block(node, scopes)
            elif isinstance(node, Partial):
                self._partial(node, scopes)
            elif isinstance(node, PartialBlock):
                loc = self._find(r"#\s*>\s*\"?" + re.escape(node.name))
                self._todo(loc, f"partial block {{{{#> {node.name}}}}}", self._close_of(node.name))
            elif isinstance(node, InlinePartial):
                loc = self._find(r"#\*inline\s+\"?" + re.escape(node.name))
                self._todo(loc, f"inline partial {node.name!r}", self._close_of("inline"))

    def _expr(self, token: str, scopes: list[_Scope]) -> str:
        """A Handlebars argument (path or literal) as a jinja expression, or _UnconvertibleError."""
        if token[:1] in "\"'":
            return json.dumps(token[1:-1], ensure_ascii=False)
        if _NUMBER.match(token) or token in ("true", "false"):
            return token
        if token in ("null", "undefined"):
            return "none"
        if token.startswith("("):
            raise _UnconvertibleError(f"subexpression {token}")
        if token.startswith("@"):
            return self._data_path(token, scopes)
        depth, rest, explicit = _path_parts(token)
        if depth >= len(scopes):
            raise _UnconvertibleError(f"path {token} goes above the top level")
        segs = _SEGMENT.findall(rest)
        if segs and not explicit and depth == 0:
            for scope in reversed(scopes):
                if segs[0] in scope.params:
                    return scope.params[segs[0]] + "".join(_segment(s) for s in segs[1:])
        scope = scopes[len(scopes) - 1 - depth]
        if scope.expr is None:
            if not segs:
                raise _UnconvertibleError(f"{token} at the top level (jinja2 has no name for the whole input)")
            if not _root_name(segs[0]):
                raise _UnconvertibleError(f"input field {segs[0]!r} has no jinja2 variable name")
            return segs[0] + "".join(_segment(s) for s in segs[1:])
        return scope.expr + "".join(_segment(s) for s in segs)

    def _data_path(self, token: str, scopes: list[_Scope]) -> str:
        segs = _SEGMENT.findall(token[1:])
        if not segs or segs[0] == "..":
            raise _UnconvertibleError(f"data variable {token}")
        head, rest = segs[0], segs[1:]
        if head == "root":
            if not rest:
                raise _UnconvertibleError("@root alone (jinja2 has no name for the whole input)")
            return self._expr(".".join(rest), scopes[:1])
        loops = [s for s in scopes if s.loop]
        if loops and head in ("index", "first", "last", "key") and not rest:
            if head == "key":
                loops[-1].uses_key = True
                return loops[-1].key_var or "key"
            return {"index": "loop.index0", "first": "loop.first", "last": "loop.last"}[head]
        return "ctx" + "".join(_segment(s) for s in segs)

    def _mustache(self, node: Mustache, scopes: list[_Scope]) -> None:
        call = node.call
        name, args, hashed = call["name"], call["args"], call["hash"]
        loc = self._find(r"&?\s*[\"']?" + re.escape(name))
        try:
            expr = self._helper_expr(name, args, hashed, call, scopes)
        except _UnconvertibleError as exc:
            self._todo(loc, str(exc))
            return
        opener = "{{-" if loc.strip_before else "{{"
        closer = "-}}" if loc.strip_after else "}}"
        self.items.append(f"{opener} {expr} {closer}")

    def _helper_expr(self, name: str, args: list[str], hashed: dict[str, str], call: dict[str, Any],
                     scopes: list[_Scope]) -> str:
        if call.get("literal"):
            raise _UnconvertibleError(f"literal as a helper name: {name!r}")
        e = lambda token: self._expr(token, scopes)  # noqa: E731
        if name == "history" and not args and not hashed:
            return "history()"
        if name in ("role", "section") and len(args) == 1 and not hashed:
            return f"{name}({e(args[0])})"
        if name == "json" and len(args) == 1 and set(hashed) <= {"indent"}:
            return f"{e(args[0])} | json" + (f"(indent={e(hashed['indent'])})" if "indent" in hashed else "")
        if name == "media" and len(args) <= 1 and set(hashed) <= {"url", "contentType", "content_type"}:
            url = hashed.get("url", args[0] if args else None)
            if url is None:
                raise _UnconvertibleError("media without url")
            content_type = hashed.get("contentType", hashed.get("content_type"))
            return f"media(url={e(url)}" + (f", content_type={e(content_type)}" if content_type else "") + ")"
        if name == "lookup" and len(args) == 2 and not hashed:
            return self._printed(f"{e(args[0])}[{e(args[1])}]", None)
        if not args and not hashed:
            return self._printed(e(name), self._schema_of(name, scopes))
        raise _UnconvertibleError(f"helper {name!r}" + ("" if name in ("role", "section", "json", "media", "lookup")
                                                    else " (custom helper)") + " with these arguments")

    def _partial(self, node: Partial, scopes: list[_Scope]) -> None:
        if node.name.startswith(_SENTINEL):
            loc = self._find(r">\s*" + re.escape(node.name))
            text = self.comments[int(node.name[len(_SENTINEL):-2])][1].replace("#}", "# }").strip()
            self.items.append(_Tag([text], loc, comment=True))
            return
        loc = self._find(r">\s*\"?" + re.escape(node.name))
        if node.context_path or node.name.startswith(("(", "@")) or scopes[-1].expr is not None or len(scopes) > 1:
            why = "a context argument" if node.context_path else (
                "a dynamic name" if node.name.startswith(("(", "@")) else "inside a block that changes the context")
            self._todo(loc, f"partial {node.name!r} with {why}")
            return
        try:
            assigns = [f"{key}={self._expr(value, scopes)}" for key, value in node.hash.items()]
        except _UnconvertibleError as exc:
            self._todo(loc, str(exc))
            return
        include = f"include {json.dumps(node.name)}"
        opening = [f"with {', '.join(assigns)}"] if assigns else []
        if not node.indent:
            self.items.append(_Tag([*opening, include, *(["endwith"] if assigns else [])], loc))
            return
        # A standalone partial on an indented line: Handlebars indents every line of its output
        # (not the empty rest after a final newline); the output is captured and indented the same way.
        var = self._loop_var(scopes, "partial_text")
        pad = json.dumps(node.indent)
        self.items.append(_Tag([*opening, f"set {var}", include, "endset"], loc))
        newline_pad = json.dumps("\n" + node.indent)
        self.items.append(f'{{{{ {pad} ~ {var}[:-1].replace("\\n", {newline_pad}) ~ {var}[-1:] if {var} }}}}')
        if assigns:
            self.items.append(_Tag(["endwith"], _Loc(loc.start, loc.end, loc.line)))

    def _block(self, node: Block, scopes: list[_Scope]) -> None:
        name = node.call["name"]
        loc = self._find(r"([#^])\s*" + re.escape(name) + r"(?![\w.-])")
        body, inverse = node.body, node.inverse
        mark = (len(self.items), len(self.problems))
        if loc.group == "^":  # {{^x}}: the parser swapped body and inverse
            body, inverse = inverse, body
        try:
            if loc.group == "^" and name not in ("if", "unless", "each", "with", "ifEquals", "unlessEquals"):
                condition = f"not {self._expr(name, scopes)}"
                if node.call["args"] or node.call["hash"]:
                    raise _UnconvertibleError(f"inverted section {name!r} with arguments")
                self._if_chain(condition, body, inverse, loc, scopes, "if")
            elif name in ("if", "unless", "ifEquals", "unlessEquals"):
                condition = self._condition(node, scopes)
                if loc.group == "^":
                    condition = f"not ({condition})"
                self._if_chain(condition, body, inverse, loc, scopes, "if")
            elif name == "each":
                self._each(node, body, inverse, loc, scopes)
            elif name == "with":
                self._with(node, body, inverse, loc, scopes)
            else:
                raise _UnconvertibleError(f"block helper {name!r}" + ("" if name in ("lookup", "log") else " (custom helper)"))
        except _UnconvertibleError as exc:
            del self.items[mark[0]:]
            del self.problems[mark[1]:]
            self.cursor = loc.end
            self._todo(loc, str(exc), self._close_of(name))
            return
        self.items.append(_Tag([{"each": "endfor"}.get(name, "endif")], self._close_of(name)))

    def _condition(self, node: Block, scopes: list[_Scope]) -> str:
        call = node.call
        name, args = call["name"], call["args"]
        if call["hash"]:
            raise _UnconvertibleError(f"{name} with options {' '.join(call['hash'])}")
        wanted = 1 if name in ("if", "unless") else 2
        if name not in ("if", "unless", "ifEquals", "unlessEquals") or len(args) != wanted:
            raise _UnconvertibleError(f"{name} with {len(args)} arguments")
        exprs = [self._expr(arg, scopes) for arg in args]
        if name in ("if", "unless"):
            return self._truth(exprs[0], negate=name == "unless", schema=self._schema_of(args[0], scopes))
        return self._equality(exprs[0], exprs[1], negate=name == "unlessEquals")

    def _truth(self, expr: str, negate: bool, schema: Any = None) -> str:
        # Handlebars counts an empty object `{}` as true, jinja2 as false: said so unless the type rules it out.
        if not _tests_alike(schema):
            expr = f"({expr} is mapping or {expr})"
        return f"not {expr}" if negate else expr

    def _printed(self, expr: str, schema: Any) -> str:
        """`expr` printed as Handlebars prints it: plain where the type prints alike in jinja2, else `| js`."""
        return expr if _prints_alike(schema) else f"{expr} | js"

    def _schema_of(self, token: str, scopes: list[_Scope]) -> Any:
        """The JSON Schema of the value `token` names, as far as the input schema says (None: unknown)."""
        if token[:1] in "\"'":
            return {"type": "string"}
        if token.startswith("@"):
            if token.startswith("@root."):
                return self._schema_of(token[6:], scopes[:1])
            return _LOOP_DATA_TYPES.get(token[1:])
        depth, rest, explicit = _path_parts(token)
        if depth >= len(scopes):
            return None
        segs = [seg[1:-1] if seg.startswith("[") else seg for seg in _SEGMENT.findall(rest)]
        schema = scopes[len(scopes) - 1 - depth].schema
        if segs and not explicit and depth == 0:
            for scope in reversed(scopes):
                if segs[0] in scope.params:
                    schema, segs = scope.param_schemas.get(segs[0]), segs[1:]
                    break
        for seg in segs:
            schema = _child_schema(schema, seg)
        return schema

    def _equality(self, left: str, right: str, negate: bool) -> str:
        return f"{left} {'!=' if negate else '=='} {right}"

    def _if_chain(self, condition: str, body: list[Any], inverse: list[Any], loc: _Loc, scopes: list[_Scope],
                  keyword_: str) -> None:
        self.items.append(_Tag([f"{keyword_} {condition}"], loc))
        self._nodes(body, scopes)
        if not inverse:
            return
        else_loc = self._find(r"else\b(?:\s+(if|unless)\b)?")
        chained = else_loc.group and len(inverse) == 1 and isinstance(inverse[0], Block) \
            and inverse[0].call["name"] == else_loc.group
        if chained:
            try:
                nested = self._condition(inverse[0], scopes)
            except _UnconvertibleError as exc:
                self.problems.append(Problem(else_loc.line, str(exc)))
                self.items.append(_Tag([f"{TODO}: {self._unmask(self.src[else_loc.start:else_loc.end])}"], else_loc,
                                       comment=True))
                nested = "false"
            self._if_chain(nested, inverse[0].body, inverse[0].inverse, else_loc, scopes, "elif")
            return
        self.items.append(_Tag(["else"], else_loc))
        self._nodes(inverse, scopes)

    def _loop_var(self, scopes: list[_Scope], base: str) -> str:
        taken = self.names | {p for s in scopes for p in s.params.values()} | {s.expr for s in scopes if s.expr}
        name, n = base, 1
        while name in taken or name in RESERVED_NAMES:
            n += 1
            name = f"{base}{n}"
        return name

    def _each(self, node: Block, body: list[Any], inverse: list[Any], loc: _Loc, scopes: list[_Scope]) -> None:
        call = node.call
        if len(call["args"]) != 1 or call["hash"]:
            raise _UnconvertibleError("each with other than one argument")
        iterable = self._expr(call["args"][0], scopes)
        schema = self._schema_of(call["args"][0], scopes)
        items = iterable
        if not _has_type(schema, "array"):  # Handlebars iterates an object's values; jinja2 would its keys
            items = f"{iterable}.values()" if _has_type(schema, "object") else \
                f"({iterable}.values() if {iterable} is mapping else {iterable})"
        item_schema = schema.get("items") if isinstance(schema, dict) and _has_type(schema, "array") else None
        params = call.get("params") or []
        item = params[0] if params else self._loop_var(scopes, "item")
        key_var = self._loop_var([*scopes, _Scope(item)], "key")
        scope = _Scope(item, loop=True, key_var=key_var, schema=item_schema)
        if params:
            scope.params[params[0]] = item
            scope.param_schemas[params[0]] = item_schema
        if len(params) > 1:
            scope.params[params[1]] = "loop.index0"
            scope.param_schemas[params[1]] = {"type": "integer"}
        head = _Tag([f"for {item} in {items}"], loc)
        self.items.append(head)
        self._nodes(body, [*scopes, scope])
        if scope.uses_key:
            head.statements = [f"for {key_var}, {item} in {iterable}.items()"]
        if inverse:
            self.items.append(_Tag(["else"], self._find(r"else\b")))
            self._nodes(inverse, scopes)

    def _with(self, node: Block, body: list[Any], inverse: list[Any], loc: _Loc, scopes: list[_Scope]) -> None:
        call = node.call
        if len(call["args"]) != 1 or call["hash"]:
            raise _UnconvertibleError("with with other than one argument")
        value = self._expr(call["args"][0], scopes)
        schema = self._schema_of(call["args"][0], scopes)
        scope = _Scope(value, schema=schema)
        for param in call.get("params") or []:
            scope.params[param] = value
            scope.param_schemas[param] = schema
        self.items.append(_Tag([f"if {self._truth(value, False, schema)}"], loc))
        self._nodes(body, [*scopes, scope])
        if inverse:
            self.items.append(_Tag(["else"], self._find(r"else\b")))
            self._nodes(inverse, scopes)


class FastConverter(_Converter):
    """The conversion the Handlebars engine's fast path compiles (never printed for users).

    Conditions, loops and equality go through filters of the engine's fast environment that keep
    Handlebars' semantics (`hb_truthy`, `hb_iter`, `hb_eq`); what those cannot express is left
    unconverted, so the engine keeps its reference renderer for that template.
    """

    def __init__(self, body: str, first_line: int, path: str, all_names: set[str]) -> None:
        super().__init__(body, first_line, path)
        self.all_names = all_names

    def _loop_var(self, scopes: list[_Scope], base: str) -> str:
        self.names |= self.all_names  # a loop variable never hides a name read anywhere (../name, @root.name)
        return super()._loop_var(scopes, base)

    def _printed(self, expr: str, schema: Any) -> str:
        return expr  # the fast environment prints every value as Handlebars does

    def _truth(self, expr: str, negate: bool, schema: Any = None) -> str:
        test = f"({expr}) | hb_truthy"
        return f"not ({test})" if negate else test

    def _equality(self, left: str, right: str, negate: bool) -> str:
        test = f"({left}) | hb_eq({right})"
        return f"not ({test})" if negate else test

    def _helper_expr(self, name: str, args: list[str], hashed: dict[str, str], call: dict[str, Any],
                     scopes: list[_Scope]) -> str:
        if name == "lookup" or (name == "media" and "contentType" in hashed and "content_type" in hashed):
            raise _UnconvertibleError(f"helper {name!r} with these arguments")
        return super()._helper_expr(name, args, hashed, call, scopes)

    def _each(self, node: Block, body: list[Any], inverse: list[Any], loc: _Loc, scopes: list[_Scope]) -> None:
        call = node.call
        if len(call["args"]) != 1 or call["hash"]:
            raise _UnconvertibleError("each with other than one argument")
        iterable = f"({self._expr(call['args'][0], scopes)}) | hb_iter"
        params = call.get("params") or []
        item = params[0] if params else self._loop_var(scopes, "item")
        scope = _Scope(item, loop=True, key_var=None)
        if params:
            scope.params[params[0]] = item
        if len(params) > 1:
            scope.params[params[1]] = "loop.index0"
        self.items.append(_Tag([f"for {item} in {iterable}"], loc))
        self._nodes(body, [*scopes, scope])
        if scope.uses_key:
            raise _UnconvertibleError("@key")
        if inverse:
            self.items.append(_Tag(["else"], self._find(r"else\b")))
            self._nodes(inverse, scopes)

    def _with(self, node: Block, body: list[Any], inverse: list[Any], loc: _Loc, scopes: list[_Scope]) -> None:
        raise _UnconvertibleError("with")


def _path_parts(token: str) -> tuple[int, str, bool]:
    """A Handlebars path as (how many scopes up `../` climbs, the rest, whether `this`/`./` pinned it
    to the context: such a path is never a block parameter's name)."""
    depth, rest, explicit = 0, token, False
    while rest.startswith("../"):
        depth, rest = depth + 1, rest[3:]
    for prefix in ("this.", "this/", "./"):
        if rest.startswith(prefix):
            rest, explicit = rest[len(prefix):], True
    if rest in ("this", ".", ""):
        rest, explicit = "", True
    return depth, rest, explicit
