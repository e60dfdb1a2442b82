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
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

from dotpromptz_handlebars import Block, HelperOptions, InlinePartial, Mustache, Partial, PartialBlock, SafeString, Text
from dotpromptz_handlebars._render import _if_shows, _show, compile_template, render_program
from jinja2 import Template, Undefined
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .errors import PromptFileError
from .template import Markers, to_json

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

    `fast` is the same template converted to jinja2 (see `_fast_template`) when that conversion is
    exact for it, else None; a render the fast path cannot vouch for goes through `render_program`.
    """

    __slots__ = ("fast", "filename", "partials", "program", "variables")

    def __init__(self, program: list[Any], partials: dict[str, list[Any]], filename: str,
                 variables: frozenset[str], fast: Template | None = None) -> None:
        self.program = program
        self.partials = partials
        self.filename = filename
        self.variables = variables
        self.fast = fast

    def render(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        """Render with `variables` as the data (`{{name}}`, `@root`) and context keys as `@`-variables."""
        if self.fast is not None and _fast_inputs_ok(variables, context):
            try:
                return self._render_fast(variables, context, markers)
            except Exception:  # anything unusual: the reference renderer decides (result or error)
                pass
        return self._render_slow(variables, context, markers)

    def _render_fast(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        assert self.fast is not None
        names = dict(variables)
        names.update(_fast_helpers(markers))
        names["ctx"] = context or {}
        return self.fast.render(names)

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
        return HandlebarsTemplate(program, partials, where, frozenset(_variables(program)),
                                  _fast_template(source, program))

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


# -- the fast path: the template converted to jinja2 ------------------------------------------
#
# `dotprompt convert` already turns a Handlebars AST into jinja2 source. For templates made only of
# constructs whose conversion is exact, that source is compiled once in an environment that keeps
# Handlebars' semantics: printing is dotpromptz-handlebars' own `_show` (true, "", a,b, 1 for 1.0,
# [object Object]); paths step like its `_step` (mapping keys and list indexes, never attributes);
# `#if`/`#unless` use its `_if_shows`, `ifEquals` the engine's strict equality, `#each` iterates lists
# only. Whatever the fast render cannot vouch for at run time (an object in `#each`, a function in the
# input, an error of any kind) raises, and the reference renderer renders instead.

_FAST_BLOCKS = frozenset({"if", "unless", "each", "ifEquals", "unlessEquals"})
_HELPER_NAMES = _DOTPROMPT_HELPERS | frozenset(_BASE_HELPERS)  # {{name}} with no arguments calls these
_JINJA_SPECIAL = frozenset({"self", "varargs", "kwargs", "caller", "super", "loop"})
_LOOP_DATA = frozenset({"key", "index", "first", "last"})
_INVERTED = re.compile(r"\{\{~?\s*\^")
_OTHER_ELSE = re.compile(r"\{\{~?\s*else\s+(?!(?:if|unless)\b)[^\s~}]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")


class _FallbackError(Exception):
    """A value the fast render does not handle exactly: the reference renderer takes over."""


def _none(value: Any) -> Any:
    if isinstance(value, Undefined):
        return None
    if callable(value):
        raise _FallbackError("function in the input")
    return value


def _step(obj: Any, key: Any) -> Any:
    """dotpromptz-handlebars' path step: a mapping key or a list index, nothing else."""
    if isinstance(obj, LoopContext):
        return getattr(obj, key)
    if isinstance(key, int) and not isinstance(key, bool):
        key = str(key)
    if isinstance(obj, Mapping) and key in obj:
        value = obj[key]
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and isinstance(key, str) and key.isdigit() \
            and int(key) < len(obj):
        value = obj[int(key)]
    else:
        return None
    if callable(value):
        raise _FallbackError("function in the input")
    return value


def _fast_finalize(value: Any) -> str:
    return _show(_none(value), raw=True, escape_html=False)


def _fast_truthy(value: Any) -> bool:
    return _if_shows(_none(value), include_zero=False)


def _fast_equal(a: Any, b: Any) -> bool:
    return _strict_equal(_none(a), _none(b))


def _fast_iter(value: Any) -> Any:
    value = _none(value)
    if isinstance(value, Mapping):
        raise _FallbackError("#each over an object")
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return value
    return ()


def _fast_json(value: Any, indent: Any = None) -> str:
    return _json([_none(value)], HelperOptions(hash={"indent": _none(indent)}, fn=None, inverse=None, data={},
                                               context=None, is_block=False))


def _fast_helpers(markers: Markers) -> dict[str, Callable[..., str]]:
    def role(name: Any) -> str:
        return markers.role(str(_none(name)))

    def history() -> str:
        return markers.history()

    def media(url: Any = None, content_type: Any = None) -> str:
        url = _none(url)
        if not url:
            raise ValueError("media needs url=...")
        return markers.media(str(url), _none(content_type) or None)

    def section(name: Any) -> str:
        return markers.section(str(_none(name)))

    return {"role": role, "history": history, "media": media, "section": section}


class _FastEnvironment(ImmutableSandboxedEnvironment):
    def getitem(self, obj: Any, argument: Any) -> Any:
        return _step(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        return _step(obj, attribute)


def _make_fast_environment() -> _FastEnvironment:
    env = _FastEnvironment(autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                           finalize=_fast_finalize, cache_size=0)
    env.globals.clear()
    env.filters.clear()
    env.tests.clear()
    env.filters.update({"json": _fast_json, "hb_truthy": _fast_truthy, "hb_eq": _fast_equal, "hb_iter": _fast_iter})
    return env


_FAST_ENV = _make_fast_environment()


def _fast_inputs_ok(variables: Mapping[str, Any], context: Mapping[str, Any] | None) -> bool:
    """Top-level values the fast render reads without a path step: no functions; `@root` is the input."""
    if context and ("root" in context or any(callable(v) for v in context.values())):
        return False
    return not any(callable(v) for v in variables.values())


def _token_head(token: str) -> str | None:
    rest = token
    while rest.startswith("../"):
        rest = rest[3:]
    for prefix in ("@root.", "this.", "this/", "./"):
        if rest.startswith(prefix):
            rest = rest[len(prefix):]
    m = _PATH_HEAD.match(rest)
    return m.group(1) if m else None


def _fast_data_token(token: str) -> bool:
    """An @-variable the conversion maps exactly: loop data only as @index/@first/@last, never @key."""
    if "[" in token or token == "@key":
        return False
    head = re.split(r"[./]", token[1:], maxsplit=1)[0]
    return head not in _LOOP_DATA or token[1:] in _LOOP_DATA


def _fast_eligible(source: str, program: list[Any]) -> bool:
    """Only constructs whose jinja2 conversion renders exactly what dotpromptz-handlebars renders."""
    if "\r" in source or "{{{{" in source or _INVERTED.search(source) or _OTHER_ELSE.search(source):
        return False
    upward: set[str] = set()
    params: set[str] = set()

    def visit(nodes: list[Any], in_equals: bool) -> bool:
        for node in nodes:
            if isinstance(node, (Partial, PartialBlock, InlinePartial)):
                return False
            if isinstance(node, Text):
                if node.value.endswith("{"):
                    return False
                continue
            call = getattr(node, "call", None)
            if call is None:
                return False
            name, args, hashed = call["name"], call["args"], call["hash"]
            if call.get("literal") or name in ("lookup", "log"):
                return False
            tokens = [*args, *hashed.values()] + ([] if name in KNOWN_HELPERS else [name])
            if isinstance(node, Mustache) and not args and not hashed and name in _HELPER_NAMES and name != "history":
                return False
            for token in tokens:
                if in_equals and ".." in token:
                    return False
                if token.startswith("@") and not _fast_data_token(token):
                    return False
                head = _token_head(token)
                if head in _JINJA_SPECIAL:
                    return False
                if head and (token.startswith("../") or token.startswith("@root.")):
                    upward.add(head)
            if isinstance(node, Block):
                if name not in _FAST_BLOCKS:
                    return False
                for param in call.get("params") or []:
                    if not _IDENTIFIER.match(param) or param in _JINJA_SPECIAL:
                        return False
                    params.add(param)
                inner = in_equals or name in ("ifEquals", "unlessEquals")
                if not visit(node.body, inner) or not visit(node.inverse, inner):
                    return False
        return True

    return visit(program, False) and not (upward & params)


def _all_heads(program: list[Any]) -> set[str]:
    heads: set[str] = set()
    for node in _walk(program):
        call = getattr(node, "call", None)
        if call is not None:
            for token in [*call["args"], *call["hash"].values(), call["name"], *(call.get("params") or [])]:
                head = _token_head(token)
                if head:
                    heads.add(head)
    return heads


def _fast_template(source: str, program: list[Any]) -> Template | None:
    """The jinja2 template rendering exactly what `program` renders, or None (then the reference renderer)."""
    try:
        if not _fast_eligible(source, program):
            return None
        from .convert import _FastConverter

        converter = _FastConverter(source, 1, "<fast path>", _all_heads(program))
        text, problems = converter.run()
        if problems:
            return None
        return _FAST_ENV.template_class.from_code(_FAST_ENV, _FAST_ENV.compile(text), {}, None)
    except Exception:  # no fast path; the reference renderer is always there
        return None
