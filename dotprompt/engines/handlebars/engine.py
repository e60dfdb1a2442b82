"""The Handlebars engine: Dotprompt (Genkit) `.prompt` templates rendered by `dotpromptz-handlebars`.

One job: compile a template once (syntax, helpers and partials checked, partials resolved and
compiled with it, the fast path chosen when it is exact) and render it with the Dotprompt helpers
(`helpers`). They write the same per-render nonce markers as the jinja2 engine (`template.Markers`),
so `to_messages`, the metadata merge and Picoschema are shared and input text can never forge a
role, history or media.

The parser and renderer are `dotpromptz-handlebars` (pure Python, from the dotpromptz project,
reached through `upstream`); nothing here parses Handlebars. Its compiled program and
`render_program` are used directly so a render passes this render's helpers and this template's
pre-compiled partials without copying or re-parsing anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..._util.cache import LRU
from ...document.files import digest_of
from ...document.unresolved import near_miss
from ...errors import PromptFileError
from ..budget import BudgetExceededError, current
from ..limits import PARTIAL_CACHE_SIZE
from ..markers import Markers
from .helpers import KNOWN_HELPERS, HelperFn, helpers_for
from .metered import PRINT, innermost_line, metered_data, metered_print, metered_program
from .syntax import line_of, syntax_error_line, template_variables, walk
from .upstream import (
    Block,
    HelperOptions,
    InlinePartial,
    Mustache,
    Node,
    Partial,
    PartialBlock,
    SafeString,
    compile_template,
    render_program,
)

if TYPE_CHECKING:
    from .fast import FastTemplate

__all__ = ["HandlebarsEngine", "HandlebarsTemplate", "PartialLookup"]

# (name) -> (source, filename, first_line) or None: where partials come from (library definitions,
# `_name.prompt` files, then the partial resolver).
PartialLookup = Callable[[str], "tuple[str, str | None, int] | None"]
MissingHelper = tuple[str, str, int]  # (helper name, file, line) of a helper nothing defines yet


# -- compiling ------------------------------------------------------------------------------

class HandlebarsTemplate:
    """A compiled Handlebars template with every partial it can reach, compiled.

    `fast` is the same template converted to jinja2 (see `fast`) when that conversion is
    exact for it, else None; a render the fast path cannot vouch for goes through `render_program`.
    """

    __slots__ = ("fast", "filename", "first_line", "helpers", "metered", "missing", "partials", "program", "source",
                 "variables")

    def __init__(self, program: list[Node], partials: dict[str, list[Node]], filename: str,
                 variables: frozenset[str], fast: FastTemplate | None = None, source: str | None = None,
                 first_line: int = 1) -> None:
        self.program = program
        self.partials = partials
        self.filename = filename
        self.variables = variables
        self.fast = fast
        self.source = source  # the template body, for the line of a render that ran out of budget
        self.first_line = first_line
        self.metered: tuple[list[Node], dict[str, list[Node]], dict[int, int]] | None = None
        self.helpers: dict[str, HelperFn] = {}  # the application's helpers it calls
        self.missing: tuple[MissingHelper, ...] = ()  # helpers it calls that nothing defines: rendering fails

    def render(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        """Render with `variables` as the data (`{{name}}`, `@root`) and context keys as `@`-variables."""
        if self.fast is not None:
            try:
                return self.render_fast(variables, context, markers)
            except BudgetExceededError:
                raise  # the reference renderer would only spend the budget again
            except Exception:  # anything unusual: the reference renderer decides (result or error)
                pass
        return self.render_reference(variables, context, markers)

    def render_fast(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        """The fast path alone: raises for whatever it does not render exactly (`render` falls back)."""
        assert self.fast is not None
        try:
            return self.fast.render(variables, context, markers)
        except BudgetExceededError as exc:
            if exc.line is not None:  # the fast template's line: count from the body's first line
                exc.line += self.first_line - 1
            raise

    def render_reference(self, variables: Any, context: Mapping[str, Any] | None, markers: Markers) -> str:
        """The reference renderer alone (dotpromptz-handlebars), whatever the fast path could do.

        Within a metered render (`Prompt.render`), it runs a metered copy of the program and the
        input (`metered`): the same output, charged to the render budget."""
        data = dict(context) if context else {}
        meter = current()
        if meter is None:
            return render_program(self.program, variables, data=data, helpers=self._helpers_for(markers),
                                  partials=self.partials, escape_html=False, strict=False)
        if self.metered is None:
            program, lines = metered_program(self.program, self.source, self.first_line)
            self.metered = (program, {name: metered_program(p, partial=True)[0] for name, p in self.partials.items()}, lines)
        program, partials, lines = self.metered
        try:
            helpers = {**self._helpers_for(markers), PRINT: metered_print}
            text = render_program(program, metered_data(variables), data=metered_data(data),
                                  helpers=helpers, partials=partials, escape_html=False, strict=False)
            meter.check_size(len(text), "output")
        except BudgetExceededError as exc:
            if exc.line is None:
                exc.line = innermost_line(exc.__traceback__, lines) or self.first_line
            raise
        return text


    def _helpers_for(self, markers: Markers) -> dict[str, HelperFn]:
        own = helpers_for(markers)
        return {**self.helpers, **own} if self.helpers else own


class HandlebarsEngine:
    """Compiles templates; partials come from `lookup` and are compiled once per distinct source."""

    name = "handlebars"

    def __init__(self, lookup: PartialLookup, cache_size: int | None = None,
                 helpers: Mapping[str, Callable[..., Any]] | None = None,
                 partial_names: Callable[[], list[str]] | None = None) -> None:
        self._lookup = lookup
        # Every partial name there is (files and definitions): what a dynamic `{{> (name)}}` may pick.
        self._partial_names = partial_names or (lambda: [])
        # The application's own helpers by name (the library's table, read at each compile).
        self._helpers = helpers if helpers is not None else {}
        # One entry per file (or per distinct source without one), holding its content hash: an edit
        # replaces the entry instead of adding one, and the least recently used go past the bound.
        self._programs: LRU[list[Node]] = LRU(cache_size or PARTIAL_CACHE_SIZE)

    def clear(self) -> None:
        self._programs.clear()

    def cache_size(self) -> int:
        """Parsed programs held (prompts and partials)."""
        return len(self._programs)

    def compile(self, source: str, path: str | None, first_line: int = 1, label: str | None = None) -> HandlebarsTemplate:
        where = path or label or "<prompt from source>"
        program = self._parse(source, where, first_line, path)
        partials: dict[str, list[Node]] = {}
        missing = self._missing_helpers(program, source, where, first_line)
        self._resolve(program, source, where, first_line, (), partials, missing)
        self._resolve_dynamic(program, source, where, first_line, partials, missing)
        # Imported here, not at the top: the fast path (and the converter it compiles with) loads with
        # the first Handlebars template, so `import dotprompt` does not pay for it.
        from .fast import fast_template

        own = {name: fn for name, fn in self._helpers.items() if name not in KNOWN_HELPERS}
        called = {n.call["name"] for p in (program, *partials.values()) for n in walk(p) if isinstance(n, (Mustache, Block))}
        # The fast path knows the built-in helpers only: a template calling any other renders by reference.
        fast = fast_template(source, program) if not missing and not (called & set(own)) else None
        template = HandlebarsTemplate(program, partials, where, frozenset(template_variables(program) - set(own)),
                                      fast, source, first_line)
        template.helpers = {name: _application_helper(fn) for name, fn in own.items() if name in called}
        template.missing = tuple(dict.fromkeys(missing))
        return template

    def check(self, source: str, path: str | None, first_line: int = 1) -> None:
        """Raise the PromptFileError compiling would raise (for the linter: partial files)."""
        self.compile(source, path, first_line)

    def _parse(self, source: str, where: str, first_line: int, path: str | None) -> list[Node]:
        digest = digest_of(source.encode("utf-8", "surrogatepass"))
        key = path if path is not None else ("<source>", digest)
        program = self._programs.get(key, digest)
        if program is None:
            try:
                program = compile_template(source)
            except (ValueError, RecursionError) as exc:
                line = first_line - 1 + syntax_error_line(source, str(exc))
                raise PromptFileError(f"Handlebars syntax error: {exc}", path=where, line=line) from None
            self._programs.put(key, digest, program)
        return program

    def _missing_helpers(self, program: list[Node], source: str, where: str, first_line: int) -> list[MissingHelper]:
        """(name, file, line) of each helper called with arguments that nothing defines (an application's
        own, to be defined in code). A near miss of a known helper is a typo: raised at once."""
        known = [*KNOWN_HELPERS, *self._helpers]
        out: list[MissingHelper] = []
        for node in walk(program):
            if not isinstance(node, (Mustache, Block)):
                continue
            call = node.call
            name = call["name"]
            if name in known or call.get("literal") or not (call["args"] or call["hash"]):
                continue
            line = first_line - 1 + line_of(source, rf"{{{{~?\s*[#^]?\s*{re.escape(name)}\b")
            typo = near_miss(name, known)
            if typo:
                raise PromptFileError(f"unknown helper {name!r}", path=where, line=line, hint=typo)
            out.append((name, where, line))
        return out

    def _resolve_dynamic(self, program: list[Node], source: str, where: str, first_line: int,
                         out: dict[str, list[Node]], missing: list[MissingHelper]) -> None:
        """A partial named at render time (`{{> (lookup . 'section')}}`) may be any partial: all are
        compiled with the template (as dotpromptz registers every partial of its folder), so a render
        finds the one it names and an edit to any of them reloads the prompt."""
        if not any(_dynamic_partials(p) for p in (program, *out.values())):
            return
        names = [name for name in self._partial_names() if name not in out]
        if not names and not out:
            line = first_line - 1 + line_of(source, r"{{~?\s*#?>\s*[(@]")
            raise PromptFileError("a partial named at render time, but there is no partial to choose from",
                                  path=where, line=line,
                                  hint="create the partials it may name as _name.prompt files, or define_partial(name, ...)")
        for name in names:
            found = self._lookup(name)
            if found is None or name in out:
                continue
            text, filename, body_line = found
            partial_where = filename or f"<partial {name}>"
            out[name] = self._parse(text, partial_where, body_line, filename)
            missing += self._missing_helpers(out[name], text, partial_where, body_line)
            self._resolve(out[name], text, partial_where, body_line, (name,), out, missing)

    def _resolve(self, program: list[Node], source: str, where: str, first_line: int,
                 chain: tuple[str, ...], out: dict[str, list[Node]], missing: list[MissingHelper]) -> None:
        """Every partial reachable from `program`: found, compiled, and no chain comes back on itself."""
        inline = {node.name for node in walk(program) if isinstance(node, InlinePartial)}
        for node in walk(program):
            if not isinstance(node, (Partial, PartialBlock)):
                continue
            name = node.name
            if name.startswith("(") or name.startswith("@") or name in inline:
                continue  # dynamic names and inline partials are resolved while rendering
            line = first_line - 1 + line_of(source, rf"{{{{~?\s*#?>\s*{re.escape(name)}\b")
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
            missing += self._missing_helpers(partial_program, text, partial_where, body_line)
            self._resolve(partial_program, text, partial_where, body_line, (*chain, name), out, missing)


def _dynamic_partials(program: list[Node]) -> bool:
    return any(isinstance(node, (Partial, PartialBlock)) and node.name.startswith("(") for node in walk(program))


def _application_helper(fn: Callable[..., Any]) -> HelperFn:
    """An application's helper, `fn(*arguments, **hash)` returning text, in the renderer's calling form."""

    def call(args: list[Any], options: HelperOptions) -> Any:
        value = fn(*args, **options.hash)
        return "" if value is None else SafeString(str(value))

    return call

