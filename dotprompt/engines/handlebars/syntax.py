"""Reading a parsed Handlebars template: walking its nodes, the input names it reads, error lines.

One job: questions about the syntax tree and the source text it came from, shared by the engine
(helper and partial checks, the linter's variables), the fast path and the converter. The parser
is `dotpromptz-handlebars` (through `upstream`); it reports no line numbers, so they are found here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .helpers import KNOWN_HELPERS
from .upstream import Block, Node, Partial, PartialBlock, compile_template

__all__ = ["PATH_HEAD", "line_of", "literal_roles", "syntax_error_line", "template_variables", "walk"]

PATH_HEAD = re.compile(r"^([A-Za-z_][\w-]*)")  # the first name of a path: `user` in `user.name`
_LITERALS = frozenset({"this", "true", "false", "null", "undefined"})


def walk(program: list[Node]) -> Iterator[Node]:
    """Every node of `program`, depth first, block bodies and `{{else}}` branches included."""
    for node in program:
        yield node
        for attr in ("body", "inverse"):
            children = getattr(node, attr, None)
            if isinstance(children, list):
                yield from walk(children)


def template_variables(program: list[Node]) -> set[str]:
    """Top-level input names the template reads (for the linter's undeclared-variable check).

    Bodies of `{{#each}}`, `{{#with}}` and sections read names relative to their item: not counted.
    """
    names: set[str] = set()
    for node in program:
        call = getattr(node, "call", None)
        if call is not None:
            tokens = [*call["args"], *call["hash"].values()]
            # A name called with arguments is a helper (the application's own, if not known), never input.
            if call["name"] not in KNOWN_HELPERS and not call.get("literal") and not (call["args"] or call["hash"]):
                tokens.append(call["name"])
            for token in tokens:
                m = PATH_HEAD.match(token)
                if m and m.group(1) not in _LITERALS:
                    names.add(m.group(1))
        scoped = isinstance(node, Block) and (node.call["name"] in ("each", "with") or node.call["name"] not in KNOWN_HELPERS)
        body, inverse = getattr(node, "body", None), getattr(node, "inverse", None)
        if not scoped and isinstance(body, list) and not isinstance(node, (Partial, PartialBlock)):
            names |= template_variables(body)
        if isinstance(inverse, list):
            names |= template_variables(inverse)
    return names


def literal_roles(program: list[Node], source: str) -> list[tuple[str, int]]:
    """(name, 1-based line in `source`) of each `{{role "name"}}` written with a string literal."""
    out = []
    for node in walk(program):
        call = getattr(node, "call", None)
        if call is None or call["name"] != "role" or len(call["args"]) != 1 or call["args"][0][:1] not in "\"'":
            continue
        name = call["args"][0][1:-1]
        out.append((name, line_of(source, rf"{{{{~?\s*role\s+[\"']{re.escape(name)}[\"']")))
    return out


def line_of(source: str, pattern: str) -> int:
    """The 1-based line of the first match of `pattern` in `source` (1 when there is none)."""
    m = re.search(pattern, source)
    return source.count("\n", 0, m.start()) + 1 if m else 1


_TAG_END = re.compile(r"}}")
_OPEN = re.compile(r"{{~?\s*(?:[#^]\s*>?\s*|#\*inline\s+)\"?([^\s}~\"]+)")
_CLOSE = re.compile(r"{{~?\s*/\s*([^\s}~]+)")


def syntax_error_line(source: str, message: str) -> int:
    """The 1-based line of a Handlebars syntax error (the library reports none)."""
    if not message.startswith("unclosed"):
        # The first prefix (cut after a tag) that fails for another reason than being unfinished.
        for m in _TAG_END.finditer(source):
            try:
                compile_template(source[: m.end()])
            except (ValueError, RecursionError) as exc:
                if not str(exc).startswith("unclosed"):
                    start = source.rfind("{{", 0, m.start())
                    return source.count("\n", 0, max(start, 0)) + 1
    if message == "unclosed tag":
        start = source.rfind("{{")
        while start > 0 and "}}" in source[start:]:
            start = source.rfind("{{", 0, start)
        return source.count("\n", 0, max(start, 0)) + 1
    stack: list[tuple[str, int]] = []
    events = sorted([(m.start(), "open", m.group(1)) for m in _OPEN.finditer(source)]
                    + [(m.start(), "close", m.group(1)) for m in _CLOSE.finditer(source)])
    for pos, kind, name in events:
        if kind == "open":
            stack.append((name, pos))
        elif stack and stack[-1][0] == name:
            stack.pop()
    pos = stack[-1][1] if stack else 0
    return source.count("\n", 0, pos) + 1
