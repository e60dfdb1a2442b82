"""`dotprompt check`: every problem in a prompt folder, without calling a model."""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._util.escape import github_message, github_property, terminal
from ..document.parse import (
    INPUT_KEYS,
    KNOWN_KEYS,
    OUTPUT_KEYS,
    PromptSource,
    did_you_mean,
    is_blank,
    parse_source,
    unopened_frontmatter,
)
from ..document.unresolved import Unresolved, near_miss
from ..engines.detect import EngineChoice, plain_tags
from ..engines.jinja import HANDLEBARS_HINT, looks_like_handlebars
from ..errors import DotpromptError, InputProblem, PromptFileError, SchemaError, UsageError
from ..formats import get_format, list_formats
from ..prompts.compiler import helper_names, read_text
from ..prompts.library import PromptInfo, PromptLibrary
from ..prompts.prompt import checked_part
from ..schema.compiled import CompiledSchema
from ..tools.mcp_names import is_mcp_name
from .codes import CODES
from .workers import forkable, inherited, map_in_workers

if TYPE_CHECKING:
    from .declared import DeclaredNames

__all__ = ["PARALLEL_FROM", "Diagnostic", "check_library", "check_partial", "check_prompt", "check_test_file"]

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int | None
    column: int | None
    level: Level
    message: str
    code: str = field(kw_only=True)  # a key of lint/codes.py's CODES, whose level it has: no default hides one

    def __post_init__(self) -> None:
        known = CODES.get(self.code)
        if known is None or known.level != self.level:
            raise ValueError(f"diagnostic code {self.code!r} is not a {self.level} code of lint/codes.py's CODES")

    def format(self, style: str = "text") -> str:
        """One line: a GitHub workflow command (`github`, the code its title) or `path:line:col: level:
        message  [code]` (the code last, as mypy writes it: what parses `path:line:col: level: message`
        still does). A key or a tool name quoted in the message comes from the file: escaped, it can
        start no line of its own."""
        if style == "github":
            where = f"file={github_property(self.path)}" + (f",line={self.line}" if self.line else "") + (
                f",col={self.column}" if self.column else "") + f",title={github_property(self.code)}"
            return f"::{self.level} {where}::{github_message(self.message)}"
        where = self.path + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return terminal(f"{where}: {self.level}: {self.message}  [{self.code}]", lines=False)


def _from_unresolved(name: Unresolved, fallback: str, declared: DeclaredNames | None = None) -> list[Diagnostic]:
    """A name the application may define in code: a warning (an error with --strict), as for tools. With
    the names read from the project's modules (`declared`: check imported none), one they define is no
    problem, and a near miss of one is a typo: an error, as a near miss of a known name always is."""
    if declared is not None:
        known = declared.of(name.kind)
        if name.name in known:
            return []
        typo = near_miss(name.name, known)
        if typo:
            return [Diagnostic(name.path or fallback, name.line, name.column, "error", f"{name.message} ({typo})",
                               code=f"misspelled-{name.kind}")]
    return [Diagnostic(name.path or fallback, name.line, name.column, "warning", f"{name.message} ({name.hint})",
                       code=f"unknown-{name.kind}")]


def _from_error(exc: PromptFileError, fallback: str, code: str = "invalid-prompt-file") -> Diagnostic:
    message = exc.message + (f" ({exc.hint})" if exc.hint else "")
    return Diagnostic(exc.path or fallback, exc.line, exc.column, "error", message, code=code)


PARALLEL_FROM = 64  # below this many prompts, starting worker processes costs more than it saves


def check_library(lib: PromptLibrary, *, jobs: int | None = None,
                  declared: DeclaredNames | None = None) -> list[Diagnostic]:
    """Every problem in the folder, in file order. Large folders are checked in parallel processes.
    `declared`: the names the project's modules define, read without importing them (`read_declared`),
    when the library was built without their code."""
    infos = lib.prompts()
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    large = jobs > 1 and len(infos) >= PARALLEL_FROM
    # decided once: a thread started later must not leave workers with neither; asked only of a large
    # folder, as asking loads multiprocessing
    inherit = large and forkable()
    if large and (inherit or _rebuildable(lib)):
        found = _check_in_parallel(lib, infos, jobs, inherit=inherit, declared=declared)
    else:
        found = [d for info in infos for d in check_prompt(lib, info, declared)]
    found += lookalike_names(infos)
    for path in _partial_files(lib):
        found += check_partial(lib, path)
    for test_file in _test_files(lib):
        found += check_test_file(lib, test_file)
    return found


def engine_choices(lib: PromptLibrary) -> list[tuple[str, EngineChoice | None]]:
    """(path, the engine it renders with and why) for every prompt and partial file; None: it does not parse."""
    out: list[tuple[str, EngineChoice | None]] = []
    for path in [info.path for info in lib.prompts()] + _partial_files(lib):
        try:
            out.append((path, lib.engine_for(parse_source(read_text(path, lib.directory), path))))
        except DotpromptError:
            out.append((path, None))
    return out


# Letters of other scripts drawn like Latin ones: the usual homoglyphs of a spoofed name.
_HOMOGLYPHS = str.maketrans("аеорсухіјѕԁһӏԛԝαορντυχκ", "aeopcyxijsdhlqwaopvtuxk")


def _skeleton(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().translate(_HOMOGLYPHS)


def lookalike_names(infos: list[PromptInfo]) -> list[Diagnostic]:
    """A warning for each prompt whose name looks like another's: the same once Unicode is normalised
    (NFC vs NFD `café`) or once look-alike letters are read as Latin (a Cyrillic `е` in `extract`)."""
    groups: dict[tuple[str, str | None], list[PromptInfo]] = {}
    for info in infos:
        groups.setdefault((_skeleton(info.name), info.variant), []).append(info)
    out = []
    for group in groups.values():
        for info in group:
            for other in group:
                if other.name != info.name:
                    out.append(Diagnostic(info.path, None, None, "warning", f"prompt name `{info.name}` looks like "
                                          f"`{other.name}` ({other.path}): {_difference(info.name, other.name)}",
                                          code="lookalike-name"))
                    break
    return out


def _difference(name: str, other: str) -> str:
    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):
        return "they differ only in Unicode normalisation (NFC vs NFD); rename one"
    odd = [c for c in dict.fromkeys(name) if not c.isascii()]
    shown = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in odd) or "only ASCII letters"
    return f"it holds {shown}; rename one"


def _rebuildable(lib: PromptLibrary) -> bool:
    """A worker can rebuild this library from its folder alone (nothing was defined in code)."""
    return lib.directory is not None and not lib.defined_in_code()


def _check_in_parallel(lib: PromptLibrary, infos: list[PromptInfo], jobs: int, *, inherit: bool,
                       declared: DeclaredNames | None = None) -> list[Diagnostic]:
    slices = [(str(lib.directory), lib.engine, infos[i::jobs], declared) for i in range(jobs)]
    # Forked workers check the library itself (`inherit`); else each rebuilds it from its folder.
    results = map_in_workers(_check_slice, slices, jobs=jobs, shared=lib if inherit else None)
    by_path = {d_path: ds for chunk in results for d_path, ds in chunk}
    return [d for info in infos for d in by_path.get(info.path, [])]


def _check_slice(work: tuple[str, str, list[PromptInfo], DeclaredNames | None]) -> list[tuple[str, list[Diagnostic]]]:
    directory, engine, infos, declared = work
    shared = inherited()
    lib = shared if shared is not None else PromptLibrary(directory, engine=engine)
    return [(info.path, check_prompt(lib, info, declared)) for info in infos]


def _test_files(lib: PromptLibrary) -> list[Path]:
    if lib.directory is None:
        return []
    return sorted(p for p in lib.directory.rglob("*.test.yaml") if "__recordings__" not in p.parts)


def check_test_file(lib: PromptLibrary, path: Path) -> list[Diagnostic]:
    """A test file parses; each case's input fits the prompt's input schema; each path can exist in its output."""
    from ..evals.config import load_eval
    from ..testing.cases import load_test_file

    try:
        cases = load_test_file(path, lib.directory)
        load_eval(path, lib.directory)  # the `eval:` section: scorers, paths, thresholds
    except PromptFileError as exc:  # a TestFileError holds every problem of the file in `errors`
        return [_from_error(problem, str(path), "invalid-test-file") for problem in getattr(exc, "errors", [exc])]
    found: list[Diagnostic] = []
    for case in cases:
        found += _check_case(lib, case)
    return found


def _check_case(lib: PromptLibrary, case: Any) -> list[Diagnostic]:
    from ..testing.paths import parse_path, schema_problem

    def problem(message: str, line: int | None = None) -> Diagnostic:
        return Diagnostic(case.file, line or case.line, None, "error", f"case {case.name!r}: {message}",
                          code="invalid-test-case")

    try:
        compiled = lib.load(case.prompt, case.variant).compiled
    except DotpromptError as exc:
        return [problem(str(exc).splitlines()[0])]
    out = []
    if compiled.validator is not None:
        default = compiled.meta.get("input", {}).get("default") or {}
        data = {**default, **(case.input or {})} if isinstance(case.input, (dict, type(None))) else case.input
        data = checked_part(data, case.input, default, compiled.validator)
        out += [problem(f"input {p.path}: {p.message}") for p in compiled.validator.problems(data)]
    schema = (compiled.meta.get("output") or {}).get("schema")
    if schema is not None:
        for check in case.expect.paths:
            reason = schema_problem(schema, parse_path(check.path))
            if reason:
                out.append(problem(f"path {check.path} cannot exist in the output schema: {reason}", check.line))
    return out


def _partial_files(lib: PromptLibrary) -> list[str]:
    if lib.directory is None:
        return []
    return sorted(str(p) for p in lib.directory.rglob("_*.prompt"))


def check_prompt(lib: PromptLibrary, info: PromptInfo, declared: DeclaredNames | None = None, *,
                 text: str | None = None) -> list[Diagnostic]:
    """Every problem of one prompt file. A file that does not load is compiled again, going on past
    each problem, so that all of them are reported, in line order, not only the first. `text`: the
    file's unsaved text (an editor's buffer, `dotprompt lsp`), checked instead of the file."""
    try:
        if text is None:
            compiled = lib.load(info.name, info.variant).compiled
        else:
            compiled = lib.from_source(text, info.name, path=info.path, variant=info.variant).compiled
    except PromptFileError:
        return _check_broken(lib, info, declared, text)
    except DotpromptError as exc:
        return [Diagnostic(info.path, None, None, "error", str(exc), code="invalid-prompt-file")]
    return _lint(lib, compiled.source, compiled.meta, compiled.validator, compiled.variables, compiled.unresolved,
                 compiled.engine, declared)


def _check_broken(lib: PromptLibrary, info: PromptInfo, declared: DeclaredNames | None = None,
                  text: str | None = None) -> list[Diagnostic]:
    try:
        found = lib.diagnose(info.name, info.variant, text=text, path=info.path if text is not None else None)
    except PromptFileError as exc:
        return [_from_error(exc, info.path)]
    except DotpromptError as exc:
        return [Diagnostic(info.path, None, None, "error", str(exc), code="invalid-prompt-file")]
    out = [_from_error(exc, info.path) for exc in found.problems]
    if found.source is not None and found.meta is not None:
        out += _lint(lib, found.source, found.meta, found.validator, found.variables, found.unresolved, found.engine,
                     declared)
    return sorted(out, key=lambda d: (d.line or 0, d.column or 0))


def _lint(lib: PromptLibrary, src: PromptSource, meta: dict, validator: CompiledSchema | None,
          variables: frozenset[str] | None, unresolved: tuple[Unresolved, ...] = (),
          choice: EngineChoice | None = None, declared: DeclaredNames | None = None) -> list[Diagnostic]:
    engine = (choice or lib.engine_for(src)).engine  # the compile already chose it: not read from the template again
    found = [d for name in unresolved for d in _from_unresolved(name, src.path or "", declared)]
    found += _file_shape(src) + _unknown_keys(src) + _format_problems(src, declared)
    found += _output_schema_problems(src, meta) + _default_problems(src, meta, validator)
    found += _handlebars_syntax(engine, src)
    found += _guessed_engine_printing(src, meta, choice)
    found += _unknown_tools(lib, src, meta, declared)
    if variables is not None:
        found += _undeclared_variables(src, meta, variables, helper_names(engine))
    return found


def check_partial(lib: PromptLibrary, path: str, *, text: str | None = None) -> list[Diagnostic]:
    try:
        lib.check_partial_file(path, text=text)
    except PromptFileError as exc:
        return [_from_error(exc, path, "invalid-partial")]
    return []


def _file_shape(src: PromptSource) -> list[Diagnostic]:
    """An empty file (it loads, as in dotpromptz, and renders no messages) and frontmatter whose opening
    `---` is missing (its keys are read as prompt text): both load, both most likely a slip."""
    if is_blank(src):
        return [Diagnostic(src.path or "", 1, None, "warning", "the file is empty: it renders no messages "
                           "(write a template, or delete the file)", code="empty-file")]
    keys = unopened_frontmatter(src)
    if not keys:
        return []
    shown = ", ".join(f"`{key}`" for key in keys[:3])
    return [Diagnostic(src.path or "", src.body_line, 1, "warning", f"frontmatter keys ({shown}) with no opening "
                       "`---`: they are read as prompt text; add a `---` line before line 1",
                       code="unopened-frontmatter")]


def _unknown_keys(src: PromptSource) -> list[Diagnostic]:
    out = []
    for key in src.unknown_keys:
        line, column = src.locate(key)
        hint = did_you_mean(key, KNOWN_KEYS) or "extensions use a dotted key such as `myapp.key`"
        out.append(Diagnostic(src.path or "", line, column, "warning", f"unknown key `{key}` ({hint})", code="unknown-key"))
    for section, key in src.ignored_keys:
        line, column = src.locate(section, key)
        where = "an output schema goes under `output.schema`" if section == "output" else \
            "an input schema goes under `input.schema`"
        out.append(Diagnostic(src.path or "", line, column, "warning", f"unknown key `{section}.{key}` is ignored, "
                              f"as Genkit ignores it ({where}; known keys: "
                              f"{', '.join(INPUT_KEYS if section == 'input' else OUTPUT_KEYS)})",
                              code="ignored-key"))
    return out


def _format_problems(src: PromptSource, declared: DeclaredNames | None = None) -> list[Diagnostic]:
    fmt = src.metadata.get("output", {}).get("format")
    # the registry, so a format added with define_format is known too (or seen in the project's modules)
    known = sorted({*list_formats(), *(declared.of("format") if declared is not None else ())})
    if fmt is None or fmt in known:
        return []
    line, column = src.locate("output", "format")
    hint = did_you_mean(str(fmt), known) or f"known formats: {', '.join(known)}"
    return [Diagnostic(src.path or "", line, column, "warning", f"unknown output format {fmt!r} ({hint})",
                       code="unknown-output-format")]


def _output_schema_problems(src: PromptSource, meta: dict) -> list[Diagnostic]:
    """The output schema against its format, as the run will build it: a schema the format refuses is
    an error; one that gives the model no instructions (an `enum` listing no values) is accepted at
    run time, as in Genkit, so only a warning."""
    output = meta.get("output") or {}
    schema = output.get("schema")
    name = output.get("format") or "json"
    if not isinstance(schema, dict) or name not in list_formats():
        return []
    fmt = get_format(name)
    try:
        handler = fmt.handler(schema)
    except SchemaError as exc:
        line, column = src.locate("output", "schema")
        return [Diagnostic(src.path or "", line, column, "error", f"output schema for format {name!r}: {exc}",
                           code="invalid-output-schema")]
    if handler.instructions is None and fmt.default_instructions and output.get("instructions") is None:
        line, column = src.locate("output", "schema")
        return [Diagnostic(src.path or "", line, column, "warning",
                           f"output format {name!r}: the schema lists no values, so the model is told nothing and "
                           "any reply is accepted; list them (`enum: [a, b]`)", code="uninstructive-output-schema")]
    return []


def _default_problems(src: PromptSource, meta: dict, validator: CompiledSchema | None) -> list[Diagnostic]:
    default = (meta.get("input") or {}).get("default")
    if not default or validator is None:
        return []
    # Defaults may leave required fields to the caller; a default the schema does not declare renders
    # (Genkit merges defaults after validating the caller's input), so it is a warning; any other
    # mismatch is an error.
    properties = validator.schema.get("properties")
    extra = sorted(set(default) - set(properties)) if isinstance(properties, dict) else []
    declared = {key: value for key, value in default.items() if key not in extra}
    problems = _default_mismatches(validator, declared)
    out = []
    for key in extra:
        line, column = src.locate("input", "default", key)
        out.append(Diagnostic(src.path or "", line, column, "warning",
                              f"input.default `{key}` is not declared in input.schema: the template gets it, but "
                              "it is never validated (declare it in input.schema, or remove it)",
                              code="undeclared-default"))
    if not problems:
        return out
    line, column = src.locate("input", "default")
    return out + [Diagnostic(src.path or "", line, column, "error", f"input.default {p.path}: {p.message}",
                             code="invalid-input-default")
                  for p in problems]


def _default_mismatches(validator: CompiledSchema, declared: dict[str, Any]) -> list[InputProblem]:
    """What is wrong with the defaults, besides the required fields they leave to the caller."""
    schema = validator.schema
    # Keywords of one schema object judge the value independently: valid without the top-level
    # `required`, the defaults break nothing but it, which is not reported. The fast check says so
    # without building jsonschema's validator for each file.
    loose = {k: v for k, v in schema.items() if k != "required"} if isinstance(schema, dict) else None
    if loose is not None and len(loose) < len(schema) and CompiledSchema(loose, checked=True).is_valid(declared):
        return []
    return [p for p in validator.problems(declared) if "is a required property" not in p.message]


# How jinja2 and Handlebars (Genkit, dotpromptz) print a value of each JSON type, where they differ.
_PRINTED = {"boolean": ("`True`", "`true`"), "number": ("`9.0` and `1e+21`", "`9` and `1000000000000000000000`"),
            "array": ("`['a', 'b']`", "`a,b`"), "object": ("`{'a': 1}`", "`[object Object]`")}


def _guessed_engine_printing(src: PromptSource, meta: dict, choice: EngineChoice | None) -> list[Diagnostic]:
    """A file either engine reads alike, jinja2 by default (nothing around it decided): each value it
    prints that Handlebars would print otherwise (a boolean, number, list or object), at its line."""
    if choice is None or not choice.guessed:
        return []
    input_block = meta.get("input") or {}
    schema = input_block.get("schema") if isinstance(input_block.get("schema"), dict) else {}
    default = input_block.get("default") if isinstance(input_block.get("default"), dict) else {}
    out = []
    for written, path, offset in plain_tags(src.template):
        kind = _printed_type(schema, default, path.split("."))
        if kind not in _PRINTED:
            continue
        python, js = _PRINTED[kind]
        line = src.body_line + src.template.count("\n", 0, offset)
        out.append(Diagnostic(src.path or "", line, None, "warning", f"`{written}` is {'an' if kind == 'array' else 'a'} "
                              f"{kind}: read as jinja2 (guessed: neither the file, its folder nor its project says "
                              f"which engine), it prints like {python} where Handlebars (Genkit) prints {js}; name "
                              "the engine: `dotprompt.engine: handlebars` for a Genkit file, else "
                              "`dotprompt.engine: jinja2`", code="guessed-engine-printing"))
    return out


def _printed_type(schema: Any, default: Any, path: list[str]) -> str | None:
    """The JSON type of the value at `path`, from the input schema (else the default's value), or None."""
    for key in path:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        schema = properties.get(key) if isinstance(properties, dict) else None
        default = default.get(key) if isinstance(default, dict) else None
    kind = schema.get("type") if isinstance(schema, dict) else None
    kinds = [kind] if isinstance(kind, str) else [k for k in kind if k != "null"] if isinstance(kind, list) else []
    if len(kinds) == 1:
        return str(kinds[0])
    for python_type, name in ((bool, "boolean"), (float, "number"), (list, "array"), (dict, "object")):
        if isinstance(default, python_type):
            return name
    return None


def _handlebars_syntax(engine: str, src: PromptSource) -> list[Diagnostic]:
    if engine != "jinja2" or not looks_like_handlebars(src.template):
        return []
    return [Diagnostic(src.path or "", src.body_line, 1, "warning", HANDLEBARS_HINT, code="handlebars-syntax")]


def _unknown_tools(lib: PromptLibrary, src: PromptSource, meta: dict,
                   declared: DeclaredNames | None = None) -> list[Diagnostic]:
    """A tool name nothing defines fails the run; `check` sees the tools of `[tool.dotprompt] tools`
    (and any defined on the library in code), so it is a warning: tools defined only at call time
    (`generate(tools=[...])`) are out of its sight. A near miss of a known tool is a typo, an error,
    as a near miss of a known schema or helper is."""
    inline = {str(d.get("name")) for d in meta.get("toolDefs", ()) if isinstance(d, dict)}
    in_code = set(lib.tool_names())
    known = {*in_code, *inline, *(declared.of("tool") if declared is not None else ())}
    out = []
    for index, name in enumerate(meta.get("tools", ())):
        if name in in_code and name not in inline:
            out += _invalid_tool(lib, name, src, index)
            continue
        if name in known or lib.tool_definition(name) is not None:
            continue
        line, column = src.locate("tools", index)
        if is_mcp_name(name):
            out += _mcp_tool(lib, str(name), src.path or "", line, column)
            continue
        typo = near_miss(str(name), known)
        if typo:
            found = Unresolved("tool", name, src.path, line, column)
            out.append(Diagnostic(src.path or "", line, column, "error", f"{found.message} ({typo})",
                                  code="misspelled-tool"))
            continue
        found = Unresolved("tool", name, src.path, line, column, extra_hint="describe it in toolDefs",
                           suggestion=did_you_mean(name, known))
        out += _from_unresolved(found, src.path or "")
    return out


def _invalid_tool(lib: PromptLibrary, name: str, src: PromptSource, index: int) -> list[Diagnostic]:
    """A tool defined in code builds its schemas on first use (`@tool`); a run of this prompt would build
    them, so `check` does: one whose parameters have no JSON Schema is an error at the `tools:` line."""
    try:
        lib.tool_definition(name)
    except UsageError as exc:
        line, column = src.locate("tools", index)
        return [Diagnostic(src.path or "", line, column, "error", str(exc), code="invalid-tool")]
    return []


def _mcp_tool(lib: PromptLibrary, name: str, path: str, line: int | None, column: int | None) -> list[Diagnostic]:
    from .mcp_tools import mcp_name_problem  # only files naming MCP tools read the cached tool lists

    found = mcp_name_problem(name, lib.mcp_servers)
    return [] if found is None else [Diagnostic(path, line, column, found[0], found[2], code=found[1])]


def _undeclared_variables(src: PromptSource, meta: dict, variables: frozenset[str],
                          helpers: frozenset[str]) -> list[Diagnostic]:
    """With an input schema, a variable it does not declare renders as empty text: an error."""
    schema = (meta.get("input") or {}).get("schema")
    if not isinstance(schema, dict) or "properties" not in schema:
        return []
    declared = set(schema["properties"]) | set(meta["input"].get("default") or {})
    out = []
    for name in sorted(variables - declared - helpers):
        line = _first_use(src, name)
        hint = did_you_mean(name, declared) or "declare it in input.schema"
        out.append(Diagnostic(src.path or "", line, None, "error",
                              f"template variable `{name}` is not declared in input.schema ({hint})",
                              code="undeclared-variable"))
    return out


def _first_use(src: PromptSource, name: str) -> int | None:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for offset, text in enumerate(src.template.splitlines()):
        if pattern.search(text):
            return src.body_line + offset
    return None
