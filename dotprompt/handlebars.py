"""The Handlebars engine: Dotprompt (Genkit) `.prompt` templates rendered by `dotpromptz-handlebars`.

One job: compile a template once (syntax, helpers and partials checked, partials resolved and
compiled with it) and render it with the Dotprompt helpers. The helpers write the same per-render
nonce markers as the jinja2 engine (`template.Markers`), so `to_messages`, the metadata merge and
Picoschema are shared and input text can never forge a role, history or media.

The parser and renderer are `dotpromptz-handlebars` (pure Python, from the dotpromptz project);
nothing here parses Handlebars. Its compiled program and `render_program` are used directly so a
render passes this render's helpers and this template's pre-compiled partials without copying or
re-parsing anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from numbers import Number
from typing import TYPE_CHECKING, Any

from dotpromptz_handlebars import Block, HelperOptions, Mustache, Partial, PartialBlock, SafeString
from dotpromptz_handlebars._render import compile_template, render_program

from .errors import PromptFileError
from .markers import Markers
from .template import to_json

if TYPE_CHECKING:
    from .handlebars_fast import FastTemplate

ENGINE_KEY = "dotprompt"  # frontmatter `dotprompt.engine: handlebars` lands in ext["dotprompt"]["engine"]
_BUILTINS = frozenset({"if", "unless", "each", "with", "lookup", "log"})
_DOTPROMPT_HELPERS = frozenset({"role", "history", "media", "section", "json", "ifEquals", "unlessEquals"})
KNOWN_HELPERS = _BUILTINS | _DOTPROMPT_HELPERS

# (name) -> (source, filename, first_line) or None: where partials come from (library definitions,
# `_name.prompt` files, then the partial resolver).
PartialLookup = Callable[[str], "tuple[str, str | None, int] | None"]


def file_engine(ext: Mapping[str, Any], default: str) -> str:
    """The engine a file asks for with `dotprompt.engine: ...`, else the library's."""
    block = ext.get(ENGINE_KEY)
    engine = block.get("engine") if isinstance(block, Mapping) else None
    return engine if isinstance(engine, str) and engine else default


# -- helpers --------------------------------------------------------------------------------

def _strict_equal(a: Any, b: Any) -> bool:
    """JavaScript `===` on JSON values: no coercion, 5 != "5", 1 != true; 1 == 1.0 (one number type)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Number) and isinstance(b, Number):
        return a == b
    if a is None or b is None:
        return a is b
    return type(a) is type(b) and a == b


def _json(args: list[Any], options: HelperOptions) -> str:
    if not args:
        return ""
    indent = options.hash.get("indent")
    try:
        indent = int(indent) if indent not in (None, "") else None
    except (TypeError, ValueError):
        raise ValueError(f"json: indent must be a number, got {indent!r}") from None
    return SafeString(to_json(args[0], indent))


def _if_equals(args: list[Any], options: HelperOptions) -> str:
    a, b = [*args, None, None][:2]
    return options.fn(options.context) if _strict_equal(a, b) else options.inverse(options.context)


def _unless_equals(args: list[Any], options: HelperOptions) -> str:
    a, b = [*args, None, None][:2]
    return options.inverse(options.context) if _strict_equal(a, b) else options.fn(options.context)


def helpers_for(markers: Markers) -> dict[str, Callable[[list[Any], HelperOptions], Any]]:
    """The helpers of one render: the marker helpers are bound to this render's nonce."""

    def role(args: list[Any], options: HelperOptions) -> str:
        if len(args) != 1:
            raise ValueError("role takes one argument: {{role \"system\"}}")
        return SafeString(markers.role(str(args[0])))

    def history(args: list[Any], options: HelperOptions) -> str:
        return SafeString(markers.history())

    def media(args: list[Any], options: HelperOptions) -> str:
        url = options.hash.get("url", args[0] if args else None)
        if not url:
            raise ValueError("media needs url=...")
        content_type = options.hash.get("contentType") or options.hash.get("content_type") or None
        return SafeString(markers.media(str(url), content_type))

    def section(args: list[Any], options: HelperOptions) -> str:
        if len(args) != 1:
            raise ValueError("section takes one argument: {{section \"output\"}}")
        return SafeString(markers.section(str(args[0])))

    return {"role": role, "history": history, "media": media, "section": section, "json": _json,
            "ifEquals": _if_equals, "unlessEquals": _unless_equals, **_BASE_HELPERS}


def _lookup(args: list[Any], options: HelperOptions) -> Any:
    collection, key = [*args, None, None][:2]
    if isinstance(collection, Mapping):
        return collection.get(key)
    if isinstance(collection, list) and isinstance(key, int) and 0 <= key < len(collection):
        return collection[key]
    return None


def _log(args: list[Any], options: HelperOptions) -> str:
    return ""  # templates do not print to the console of the process rendering them


_BASE_HELPERS = {"lookup": _lookup, "log": _log}


# -- compiling ------------------------------------------------------------------------------

class HandlebarsTemplate:
    """A compiled Handlebars template with every partial it can reach, compiled.

    `fast` is the same template converted to jinja2 (see `handlebars_fast`) when that conversion is
    exact for it, else None; a render the fast path cannot vouch for goes through `render_program`.
    """

    __slots__ = ("fast", "filename", "partials", "program", "variables")

    def __init__(self, program: list[Any], partials: dict[str, list[Any]], filename: str,
                 variables: frozenset[str], fast: FastTemplate | None = None) -> None:
        self.program = program
        self.partials = partials
        self.filename = filename
        self.variables = variables
        self.fast = fast

    def render(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        """Render with `variables` as the data (`{{name}}`, `@root`) and context keys as `@`-variables."""
        if self.fast is not None:
            try:
                return self._render_fast(variables, context, markers)
            except Exception:  # anything unusual: the reference renderer decides (result or error)
                pass
        return self._render_slow(variables, context, markers)

    def _render_fast(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        assert self.fast is not None
        return self.fast.render(variables, context, markers)

    def _render_slow(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        data = dict(context) if context else {}
        return render_program(self.program, variables, data=data, helpers=helpers_for(markers),
                              partials=self.partials, escape_html=False, strict=False)


class HandlebarsEngine:
    """Compiles templates; partials come from `lookup` and are compiled once per distinct source."""

    name = "handlebars"

    def __init__(self, lookup: PartialLookup) -> None:
        self._lookup = lookup
        self._programs: dict[tuple[str, str | None], list[Any]] = {}

    def clear(self) -> None:
        self._programs.clear()

    def compile(self, source: str, path: str | None, first_line: int = 1, label: str | None = None) -> HandlebarsTemplate:
        where = path or label or "<prompt from source>"
        program = self._parse(source, where, first_line, path)
        partials: dict[str, list[Any]] = {}
        self._resolve(program, source, where, first_line, (), partials)
        from .handlebars_fast import fast_template

        return HandlebarsTemplate(program, partials, where, frozenset(_variables(program)), fast_template(source, program))

    def check(self, source: str, path: str | None, first_line: int = 1) -> None:
        """Raise the PromptFileError compiling would raise (for the linter: partial files)."""
        self.compile(source, path, first_line)

    def _parse(self, source: str, where: str, first_line: int, path: str | None) -> list[Any]:
        key = (source, path)
        program = self._programs.get(key)
        if program is None:
            try:
                program = compile_template(source)
            except (ValueError, RecursionError) as exc:
                line = first_line - 1 + _syntax_error_line(source, str(exc))
                raise PromptFileError(f"Handlebars syntax error: {exc}", path=where, line=line) from None
            self._check_helpers(program, source, where, first_line)
            self._programs[key] = program
        return program

    def _check_helpers(self, program: list[Any], source: str, where: str, first_line: int) -> None:
        for node in _walk(program):
            if not isinstance(node, (Mustache, Block)):
                continue
            call = node.call
            name = call["name"]
            if name in KNOWN_HELPERS or call.get("literal") or not (call["args"] or call["hash"]):
                continue
            line = first_line - 1 + _line_of(source, rf"{{{{~?\s*[#^]?\s*{re.escape(name)}\b")
            raise PromptFileError(f"unknown helper {name!r}", path=where, line=line,
                                  hint=f"available helpers: {', '.join(sorted(KNOWN_HELPERS))}")

    def _resolve(self, program: list[Any], source: str, where: str, first_line: int,
                 chain: tuple[str, ...], out: dict[str, list[Any]]) -> None:
        """Every partial reachable from `program`: found, compiled, and no chain comes back on itself."""
        inline = {node.name for node in _walk(program) if type(node).__name__ == "InlinePartial"}
        for node in _walk(program):
            if not isinstance(node, (Partial, PartialBlock)):
                continue
            name = node.name
            if name.startswith("(") or name.startswith("@") or name in inline:
                continue  # dynamic names and inline partials are resolved while rendering
            line = first_line - 1 + _line_of(source, rf"{{{{~?\s*#?>\s*{re.escape(name)}\b")
            if name in chain:
                cycle = " -> ".join((*chain[chain.index(name):], name))
                raise PromptFileError(f"partial cycle: {cycle}", path=where, line=line,
                                      hint="a partial cannot include itself, directly or through others")
            if name in out:
                continue
            found = self._lookup(name)
            if found is None:
                if isinstance(node, PartialBlock):
                    continue  # {{#> name}}fallback{{/name}}: the fallback renders
                raise PromptFileError(f"partial {name!r} not found", path=where, line=line,
                                      hint=f"create _{name.rpartition('/')[2]}.prompt or define_partial({name!r}, ...)")
            text, filename, body_line = found
            partial_where = filename or f"<partial {name}>"
            partial_program = self._parse(text, partial_where, body_line, filename)
            out[name] = partial_program
            self._resolve(partial_program, text, partial_where, body_line, (*chain, name), out)


def _walk(program: list[Any]):
    for node in program:
        yield node
        for attr in ("body", "inverse"):
            children = getattr(node, attr, None)
            if isinstance(children, list):
                yield from _walk(children)


_PATH_HEAD = re.compile(r"^([A-Za-z_][\w-]*)")


def _variables(program: list[Any]) -> set[str]:
    """Top-level input names the template reads (for the linter's undeclared-variable check).

    Bodies of `{{#each}}`, `{{#with}}` and sections read names relative to their item: not counted.
    """
    names: set[str] = set()
    for node in program:
        call = getattr(node, "call", None)
        if call is not None:
            tokens = [*call["args"], *call["hash"].values()]
            if call["name"] not in KNOWN_HELPERS and not call.get("literal"):
                tokens.append(call["name"])
            for token in tokens:
                m = _PATH_HEAD.match(token)
                if m and m.group(1) not in _LITERALS:
                    names.add(m.group(1))
        scoped = isinstance(node, Block) and (node.call["name"] in ("each", "with") or node.call["name"] not in KNOWN_HELPERS)
        if not scoped and isinstance(getattr(node, "body", None), list) and not isinstance(node, (Partial, PartialBlock)):
            names |= _variables(node.body)
        if isinstance(getattr(node, "inverse", None), list):
            names |= _variables(node.inverse)
    return names


_LITERALS = frozenset({"this", "true", "false", "null", "undefined"})


def _line_of(source: str, pattern: str) -> int:
    m = re.search(pattern, source)
    return source.count("\n", 0, m.start()) + 1 if m else 1


_TAG_END = re.compile(r"}}")
_OPEN = re.compile(r"{{~?\s*(?:[#^]\s*>?\s*|#\*inline\s+)\"?([^\s}~\"]+)")
_CLOSE = re.compile(r"{{~?\s*/\s*([^\s}~]+)")


def _syntax_error_line(source: str, message: str) -> int:
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
