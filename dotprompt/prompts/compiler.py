"""PromptSource -> CompiledPrompt: schemas converted, template compiled, partials checked."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from jinja2 import TemplateAssertionError, TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .._util.cache import LRU
from .._util.suggest import close_matches
from ..document.files import Stamp, decode, digest_of, file_stamp, read_snapshot
from ..document.metadata import LibraryDefaults, ToolDefsError, convert_schemas, input_schema_of, render_fields
from ..document.parse import Problems, PromptSource, did_you_mean, parse_source, report_to
from ..document.unresolved import Unresolved, near_miss
from ..documents.inputs import document_fields
from ..engines.deferred import DeferredTemplate, compiles_surely
from ..engines.detect import EngineChoice, ProjectHint, choose_engine
from ..engines.handlebars import KNOWN_HELPERS
from ..engines.jinja import (
    HANDLEBARS_HINT,
    RESERVED_NAMES,
    BudgetCodeGenerator,
    included_names,
    looks_like_handlebars,
    with_line_offset,
)
from ..engines.jinja import literal_roles as jinja_roles
from ..engines.markers import ROLES
from ..engines.template_index import index_template, template_depth
from ..errors import PromptFileError
from ..identity import PromptIdentity
from ..schema.compiled import CompiledSchema, SchemaRegistry, compile_validator

if TYPE_CHECKING:
    from ..engines.handlebars import HandlebarsEngine, HandlebarsTemplate

__all__ = ["CompileContext", "CompiledPrompt", "Dependency", "Diagnosis", "Stamp", "check_includes", "compile_prompt",
           "diagnose_prompt", "file_stamp", "helper_field_problems", "helper_names", "parse_template", "read_text"]

Dependency = tuple[str, Stamp, str]  # a partial file a compiled prompt read: (path, stamp, content hash)


@dataclass(frozen=True)
class CompiledPrompt:
    source: PromptSource
    meta: dict[str, Any]  # frontmatter-shaped, schemas as JSON Schema, name/variant filled in
    template: DeferredTemplate | HandlebarsTemplate  # jinja2's through `jinja_template`
    validator: CompiledSchema | None
    defaults: LibraryDefaults  # the library's lowest merge layer, for `fields`
    stamp: Stamp | None
    revision: int  # the library's revision it was compiled at
    variables: frozenset[str]  # names the template reads from its data (for the linter)
    digest: str | None = None  # content hash of the file bytes it was compiled from
    depends: tuple[Dependency, ...] = ()  # partial files read while compiling
    checked_at: float = 0.0  # time.monotonic() when its bytes were last hashed against the file
    identity: PromptIdentity | None = None  # name, variant and the hash of its text and partials
    engine: EngineChoice | None = None  # the engine its template was compiled with, and why
    unresolved: tuple[Unresolved, ...] = ()  # schemas and helpers nothing defines yet: rendering fails

    @cached_property
    def fields(self) -> dict[str, Any]:
        """RenderedPrompt keyword arguments for a render without options, made on the first render (a
        compile that is never rendered, as `check`'s, builds none of the render types)."""
        return render_fields(self.meta, self.defaults)

    @cached_property
    def document_fields(self) -> list[str]:
        """The input variables the schema marks as PDF documents, read into their text before a render."""
        return document_fields(input_schema_of(self.meta))


@dataclass
class CompileContext:
    """What compiling needs from the library."""

    env: ImmutableSandboxedEnvironment
    registry: SchemaRegistry
    defaults: LibraryDefaults
    partial_source: Callable[[str], tuple[str, str | None, Any] | None]
    revision: int  # the library's revision it was compiled at
    partial_asts: LRU[nodes.Template]  # one entry per partial (file or name), holding its content hash
    engine: str = "auto"  # the library's engine (auto: read from each template); a file may name its own
    handlebars: Callable[[], HandlebarsEngine] | None = None  # the engine, made on the first Handlebars template
    project: ProjectHint | None = None  # the engine of the folder and project, for a file either engine reads alike


def read_text(path: str, root: str | os.PathLike[str] | None = None) -> str:
    """The file's text: a regular file inside `root` (if given), never opened in a way that blocks."""
    try:
        return decode(read_snapshot(path, root).data, path)
    except OSError as exc:
        raise PromptFileError(f"cannot read this file: {exc.strerror or exc}", path=path) from None


def compile_prompt(text: str, path: str | None, name: str | None, variant: str | None,
                   ctx: CompileContext, stamp: Stamp | None = None) -> CompiledPrompt:
    """The compiled prompt; its first problem is raised as a PromptFileError."""
    compiled = _build(text, path, name, variant, ctx, stamp, None).compiled
    assert compiled is not None  # without a problems list, any problem was raised
    return compiled


@dataclass
class Diagnosis:
    """What `dotprompt check` learns from a file that may not compile: every problem found, and
    whatever did compile (for the checks that need it)."""

    problems: list[PromptFileError]
    source: PromptSource | None = None
    meta: dict[str, Any] | None = None  # as in CompiledPrompt; a schema in error is left out
    variables: frozenset[str] | None = None  # None: the template did not compile
    validator: CompiledSchema | None = None
    compiled: CompiledPrompt | None = None  # only when there was no problem at all
    engine: EngineChoice | None = None  # None: the frontmatter did not parse
    unresolved: tuple[Unresolved, ...] = ()


def diagnose_prompt(text: str, path: str | None, name: str | None, variant: str | None,
                    ctx: CompileContext) -> Diagnosis:
    """Compile as `compile_prompt` does, going on past each problem that leaves the rest checkable."""
    problems: list[PromptFileError] = []
    try:
        return _build(text, path, name, variant, ctx, None, problems)
    except PromptFileError as exc:  # the frontmatter is not YAML: nothing else can be read
        return Diagnosis([*problems, exc])


def _build(text: str, path: str | None, name: str | None, variant: str | None, ctx: CompileContext,
           stamp: Stamp | None, problems: Problems | None) -> Diagnosis:
    report = report_to(problems)
    src = parse_source(text, path, problems)
    unresolved: list[Unresolved] = []
    meta = convert_schemas(src.metadata, ctx.registry, src, problems, unresolved)
    if src.ext:
        meta["ext"] = src.ext
    meta["raw"] = src.raw
    if name and "name" not in meta:
        meta["name"] = name
    if variant and "variant" not in meta:
        meta["variant"] = variant
    choice = choose_engine(src.ext, src.template, ctx.engine, src.body_line, ctx.project)
    engine = choice.engine
    template: DeferredTemplate | HandlebarsTemplate | None = None
    variables: frozenset[str] | None = None
    try:
        roles: list[tuple[str, int]] = []
        if engine == "handlebars" and ctx.handlebars is not None:
            template = ctx.handlebars().compile(src.template, src.path, src.body_line,
                                              f"<prompt {name or 'from source'}>")
            variables = template.variables
            unresolved += [Unresolved("helper", helper, where, line) for helper, where, line in template.missing]
            from ..engines.handlebars.syntax import literal_roles  # loaded with the engine, just above

            roles = [(role, src.body_line - 1 + line) for role, line in literal_roles(template.program, src.template)]
        elif engine == "jinja2":
            template, variables, missing, roles = _compile_template(src, name, ctx)
            unresolved += missing
        else:
            raise src.error(f"unknown template engine {engine!r}; available: jinja2, handlebars", "dotprompt.engine")
        for problem in role_problems(roles, src.path or f"<prompt {name or 'from source'}>"):
            report(problem)
    except PromptFileError as exc:
        report(exc)
    schema = input_schema_of(meta)
    validator = compile_validator(schema, checked=True) if isinstance(schema, dict) else None
    for problem in helper_field_problems(src, schema, engine):
        report(problem)
    tool_defs_ok = True
    if "toolDefs" in meta:  # checked now, so `check` reports them; the other fields are made on the first render
        try:
            render_fields(meta, ctx.defaults)
        except ToolDefsError as exc:
            report(src.error(f"invalid toolDefs: {exc}", "toolDefs"))
            tool_defs_ok = False
    found = Diagnosis(problems if problems is not None else [], src, meta, variables, validator, engine=choice,
                      unresolved=tuple(unresolved))
    if not found.problems and template is not None and tool_defs_ok and variables is not None:
        found.compiled = CompiledPrompt(src, meta, template, validator, ctx.defaults, stamp, ctx.revision, variables,
                                        engine=choice, unresolved=tuple(unresolved))
    return found


def role_problems(roles: list[tuple[str, int]], where: str) -> list[PromptFileError]:
    """A role written as a literal that is no role fails every render that reaches it: an error at its line."""
    return [PromptFileError(f"invalid role {role!r}: a role is one of {', '.join(ROLES)}", path=where, line=line,
                            hint=did_you_mean(role, ROLES) or "Dotprompt has no other roles; a system prompt is "
                            "`system`, the assistant is `model`")
            for role, line in roles if role not in ROLES]


def helper_names(engine: str) -> frozenset[str]:
    """Names a template of this engine reads as a helper, never as an input field of that name."""
    return KNOWN_HELPERS if engine == "handlebars" else RESERVED_NAMES


def helper_field_problems(src: PromptSource, schema: Any, engine: str) -> list[PromptFileError]:
    """An input field named like a template helper would never reach the prompt: the helper wins.

    In jinja2 `{{ role }}` is the role() helper (printing it fails) and `ctx` is the context; in
    Handlebars `{{log}}` calls the log helper. The field has to be renamed."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    out = []
    for field_name in sorted(set(properties) & helper_names(engine)):
        line, column = src.locate_field("input", field_name)
        if engine == "handlebars":
            what = f"`{{{{{field_name}}}}}` calls the {field_name} helper"
        elif field_name == "ctx":
            what = "`ctx` is always the context (auth, state...) of the render"
        else:
            what = f"`{field_name}` is always the {field_name}() helper"
        out.append(PromptFileError(
            f"input field `{field_name}` has the name of a template helper: in a {engine} template "
            f"{what}, so the field's value would never reach the prompt",
            path=src.path, line=line, column=column,
            hint=f"rename the field, e.g. `{field_name}_value`, in the schema, the template and the callers' input"))
    return out


class _RecordingCodeGenerator(BudgetCodeGenerator):
    """jinja's code generator, also noting the names the template reads from its data, and how deep
    the code it writes is indented.

    `jinja2.meta.find_undeclared_variables` finds the names by running the code generator a second
    time; recording them while compiling gives the linter the same set for free.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.variables: set[str] = set()
        self.deepest_indent = 0

    def enter_frame(self, frame: Any) -> None:
        super().enter_frame(frame)
        for action, param in frame.symbols.loads.values():
            if action == "resolve" and param not in self.environment.globals:
                self.variables.add(param)

    def indent(self) -> None:
        super().indent()
        self.deepest_indent = max(self.deepest_indent, self._indentation)


def _compile_template(src: PromptSource, name: str | None,
                      ctx: CompileContext) -> tuple[DeferredTemplate, frozenset[str], list[Unresolved],
                                                list[tuple[str, int]]]:
    label = src.path or f"<prompt {name or 'from source'}>"
    filename = src.path or label
    ast = parse_template(ctx.env, with_line_offset(src.template, src.body_line), label, src.path)
    check_includes(ast, label, src.path, ctx, chain=())
    generator = _RecordingCodeGenerator(ctx.env, label, filename)
    try:
        generator.visit(ast)
        # jinja2 writes to a StringIO when given no stream, but types the stream as TextIO
        code: str = generator.stream.getvalue()  # type: ignore[attr-defined]
        template = DeferredTemplate(ctx.env, code, filename)
        if not compiles_surely(code, generator.deepest_indent, template_depth(ast)):
            template.template()  # compiled now, so that its error comes at load, with its line
    except TemplateAssertionError as exc:  # found while generating code: an unknown filter or test
        raise PromptFileError(f"template error: {exc.message}", path=filename, line=exc.lineno,
                              hint=_unknown_name_hint(exc.message or "", ctx.env)) from None
    except (RecursionError, MemoryError, SyntaxError) as exc:  # SyntaxError: too many levels of indentation
        detail = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise _too_deep(ctx.env, with_line_offset(src.template, src.body_line), path=filename,
                        detail=detail) from None
    missing = _missing_helpers(ast, generator.variables, ctx, filename)
    return template, frozenset(generator.variables - {helper.name for helper in missing}), missing, jinja_roles(ast)


def _missing_helpers(ast: nodes.Template, variables: set[str], ctx: CompileContext, where: str) -> list[Unresolved]:
    """Functions the template calls that nothing defines (read from the data, which holds no function): the
    application's own helpers, to be defined in code. A near miss of a known name is a typo: raised at once."""
    known = [*RESERVED_NAMES, *ctx.env.globals]
    out: dict[str, Unresolved] = {}
    for call in ast.find_all(nodes.Call):
        callee = call.node
        if not isinstance(callee, nodes.Name) or callee.name not in variables or callee.name in out \
                or callee.name in RESERVED_NAMES:  # role(), media()...: given with each render's data
            continue
        typo = near_miss(callee.name, known)
        if typo:
            raise PromptFileError(f"unknown helper {callee.name!r}", path=where, line=call.lineno, hint=typo)
        out[callee.name] = Unresolved("helper", callee.name, where, call.lineno)
    return list(out.values())


_UNKNOWN_NAME = re.compile(r"^No (filter|test) named '([^']*)'")


def _unknown_name_hint(message: str, env: ImmutableSandboxedEnvironment) -> str | None:
    """A did-you-mean for `{{ x | tojsn }}` or `{% if x is evn %}`, from the filters or tests jinja knows."""
    found = _UNKNOWN_NAME.match(message)
    if not found:
        return None
    kind, name = found.groups()
    known = env.filters if kind == "filter" else env.tests
    close = close_matches(name, list(known), n=3)
    return (f"did you mean {', '.join(repr(c) for c in close)}? " if close else "") + \
        f"the {kind}s a template can use are jinja2's built-in ones; for your own, define a helper in code " \
        f"(lib.define_helper) and call it: {{{{ {name}(value) }}}}"


def parse_template(env: ImmutableSandboxedEnvironment, source: str, label: str, path: str | None) -> nodes.Template:
    try:
        return index_template(env.parse(source, label, path))
    except TemplateSyntaxError as exc:
        hint = HANDLEBARS_HINT if looks_like_handlebars(source) else None
        raise PromptFileError(f"template syntax error: {exc.message}", path=path or label, line=exc.lineno,
                              hint=hint) from None
    except (RecursionError, MemoryError) as exc:  # jinja's parser recurses once per nested block
        raise _too_deep(env, source, path=path or label, detail=type(exc).__name__) from None


def _too_deep(env: ImmutableSandboxedEnvironment, source: str, *, path: str, detail: str) -> PromptFileError:
    """A template that nests too deeply to parse or compile: the line where it gets too deep."""
    depth, line = nesting(env, source)
    return PromptFileError(f"template blocks nest too deep to compile ({depth} levels deep here; {detail})",
                           path=path, line=line, hint="nest fewer blocks: move inner parts into macros or partials")


def nesting(env: ImmutableSandboxedEnvironment, source: str) -> tuple[int, int | None]:
    """(deepest block nesting, the line where it is deepest).

    Counted from jinja's lexer (which does not recurse): `{% name %}` opens a block when an
    `{% endname %}` closes one somewhere in the source."""
    tags: list[tuple[str, int]] = []
    try:
        tokens = [token for token in env.lex(source) if token[1] != "whitespace"]
    except TemplateSyntaxError:
        return 0, None
    for (lineno, kind, _), following in itertools.pairwise(tokens):
        if kind == "block_begin" and following[1] == "name":
            tags.append((following[2], lineno))
    closed = {name[3:] for name, _ in tags if name.startswith("end")}
    depth = deepest = 0
    line = None
    for name, lineno in tags:
        if name.startswith("end"):
            depth -= 1
        elif name in closed and name != "set":
            depth += 1
            if depth > deepest:
                deepest, line = depth, lineno
    return deepest, line


def check_includes(ast: nodes.Template, label: str, path: str | None, ctx: CompileContext,
                   chain: tuple[str, ...], checked: set[str] | None = None) -> None:
    """Every included partial exists, compiles, and no include chain comes back on itself.

    Each partial is walked once (`checked`): partials that each include the next one twice, twenty
    deep, are twenty walks, not a million. A partial whose walk finished without a cycle cannot lead
    back into the current chain (that would have been a cycle of its own walk)."""
    checked = set() if checked is None else checked
    for partial, line in included_names(ast):
        if partial in chain:
            cycle = " -> ".join((*chain[chain.index(partial):], partial))  # the loop itself, by partial name
            raise PromptFileError(f"partial cycle: {cycle}", path=path or label, line=line,
                                  hint="a partial cannot include itself, directly or through others")
        if partial in checked:
            continue
        found = ctx.partial_source(partial)
        if found is None:
            raise PromptFileError(f"partial {partial!r} not found", path=path or label, line=line,
                                  hint=f"create _{os.path.basename(partial)}.prompt or define_partial({partial!r}, ...)")
        source, filename, _ = found
        check_includes(_partial_ast(ctx, source, partial, filename), filename or partial, filename, ctx,
                       (*chain, partial), checked)
        checked.add(partial)


def _partial_ast(ctx: CompileContext, source: str, name: str, filename: str | None) -> nodes.Template:
    # A shared partial is included by many prompts; parse each version of it once. Keyed by the
    # partial, holding its content hash: an edit replaces the entry, it does not add one.
    key, digest = filename or f"<partial {name}>", digest_of(source.encode("utf-8", "surrogatepass"))
    ast = ctx.partial_asts.get(key, digest)
    if ast is None:
        ast = parse_template(ctx.env, source, filename or name, filename)
        ctx.partial_asts.put(key, digest, ast)
    return ast
