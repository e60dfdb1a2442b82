"""PromptLibrary: a folder of `.prompt` files, its partials, schemas and tools, compiled and cached.

File names: `name.prompt`, `name.variant.prompt`, `_partial.prompt`; a subfolder is a namespace
(`billing/extract.prompt` is `billing/extract`).

Files are read through `files`: a prompt, partial or namespace folder whose real path leaves the
folder is refused, as is anything that is not a regular file (FIFO, socket, directory, dangling
link), each with a PromptFileError naming the file. Hot reload: a render uses a whole version of
the file, old or new (see `needs_refresh` / `refresh`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import FunctionLoader

from .. import settings
from .._util.cache import LRU
from .._util.suggest import close_matches
from ..document.files import (
    FileChangingError,
    Snapshot,
    decode,
    digest_of,
    file_stamp,
    read_confirmed,
    read_settled,
    read_snapshot,
)
from ..document.metadata import LibraryDefaults, merge, options_metadata, render_fields
from ..document.parse import USE_HINT, PromptSource, parse_source, use_arguments
from ..engines.detect import ENGINE_SETTINGS, EngineChoice, choose_engine
from ..engines.handlebars import KNOWN_HELPERS
from ..engines.jinja import RESERVED_NAMES, make_environment, with_line_offset
from ..engines.project import project_engine
from ..errors import DotpromptError, InvalidPromptNameError, PromptFileError, PromptNotFoundError, UsageError
from ..identity import PromptIdentity, content_hash
from ..schema.compiled import SchemaLike, SchemaRegistry
from ..settings import RenderBudget, RunLogSettings, run_log_settings
from ..settings import render_budget as resolve_budget
from ..tools.registry import RuntimeRegistry
from ..types import ToolDefinition
from .compiler import (
    CompileContext,
    CompiledPrompt,
    Dependency,
    Diagnosis,
    compile_prompt,
    diagnose_prompt,
    parse_template,
    read_text,
)
from .prompt import Prompt

if TYPE_CHECKING:
    from ..engines.handlebars import HandlebarsEngine
    from ..observe.runlog import RunLog

__all__ = ["PromptInfo", "PromptLibrary", "check_name"]

PartialResolver = Callable[[str], "str | None"]


@dataclass(frozen=True)
class PromptInfo:
    """One prompt file found in the library's folder."""

    name: str
    variant: str | None
    path: str

    @property
    def label(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name


class PromptLibrary:
    """Loads, compiles and caches the prompts of one folder (or none: `from_source` only)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, engine: str = "auto",
                 schemas: Mapping[str, SchemaLike] | None = None, partial_resolver: PartialResolver | None = None,
                 schema_resolver: Callable[[str], Any] | None = None, default_model: str | None = None,
                 model_configs: Mapping[str, Mapping[str, Any]] | None = None,
                 render_budget: RenderBudget | Mapping[str, Any] | None = None,
                 log: bool | str | os.PathLike[str] | RunLogSettings | None = None) -> None:
        if engine not in ENGINE_SETTINGS:
            raise DotpromptError(f"unknown template engine {engine!r}; available: {', '.join(ENGINE_SETTINGS)}")
        self.directory = Path(directory) if directory is not None else None
        self.engine = engine
        self.render_budget = resolve_budget(render_budget)  # what one render may spend (settings.RenderBudget)
        # Where runs of its prompts are logged (None: not logged): `log=True`, a database path, or DOTPROMPT_LOG=1.
        self.run_log = _open_run_log(log if isinstance(log, RunLogSettings) else run_log_settings(log))
        self._schemas = SchemaRegistry(schemas, schema_resolver)
        self._partial_resolver = partial_resolver
        self._runtime = RuntimeRegistry()
        self._defaults = LibraryDefaults(default_model, model_configs, self._runtime.tool_definition)
        self._partials: dict[str, str] = {}
        self._partial_asts: LRU[Any] = LRU(settings.PARTIAL_CACHE_SIZE)
        self._partial_bodies: LRU[str] = LRU(settings.PARTIAL_CACHE_SIZE)  # a partial file's template, by its bytes
        # .depends: partial files read by the compile running on this thread; .partials: every partial it
        # read (files, definitions, resolver) with its content hash, for the prompt's identity
        self._reading = threading.local()
        self._prompts: dict[tuple[str, str | None], Prompt] = {}
        self._lock = threading.RLock()
        self._revision = 0  # bumped by every define_*; prompts compiled at an older revision recompile
        self._env = make_environment(FunctionLoader(self._partial_source))
        self._helpers: dict[str, Callable[..., Any]] = {}  # the application's template helpers (define_helper)
        self._handlebars_engine: HandlebarsEngine | None = None  # made with the first Handlebars template
        self._project_verdict: tuple[str | None, str] | None = None  # see _project_engine

    @property
    def _handlebars(self) -> HandlebarsEngine:
        # Made on first use, so a library of jinja2 prompts never loads dotpromptz-handlebars.
        if self._handlebars_engine is None:
            from ..engines.handlebars import HandlebarsEngine

            self._handlebars_engine = HandlebarsEngine(self._handlebars_partial, helpers=self._helpers,
                                                       partial_names=self.partials)
        return self._handlebars_engine

    def __repr__(self) -> str:
        return f"PromptLibrary({str(self.directory) if self.directory else None!r}, engine={self.engine!r})"

    # -- definitions -------------------------------------------------------------------------

    def define_partial(self, name: str, source: str) -> None:
        with self._lock:
            self._partials[name] = source
            self._changed()

    def define_schema(self, name: str, schema: SchemaLike) -> None:
        """Register a named schema (pydantic model or JSON Schema) for Picoschema type names."""
        with self._lock:
            self._schemas.define(name, schema)
            self._changed()

    def define_helper(self, name: str, helper: Callable[..., Any]) -> None:
        """Register a template helper for both engines: `helper(*arguments, **hash)` returns the text.

        Handlebars calls it as `{{name arg key=value}}`, jinja2 as `{{ name(arg, key=value) }}`. The
        built-in helpers (role, history, media, section, json, if, each, ...) cannot be replaced."""
        if not isinstance(name, str) or not name.isidentifier():
            raise UsageError(f"a helper name is an identifier, got {name!r}")
        if name in KNOWN_HELPERS or name in RESERVED_NAMES:
            raise UsageError(f"{name!r} is a built-in template helper; give yours another name")
        if not callable(helper):
            raise UsageError(f"helper {name!r} must be callable, got {type(helper).__name__}")
        with self._lock:
            self._helpers[name] = helper
            self._env.globals[name] = helper
            self._changed()

    def helper_names(self) -> list[str]:
        """The application's helpers (define_helper, `[tool.dotprompt] helpers`)."""
        return sorted(self._helpers)

    def define_tool(self, tool: Any) -> None:
        """Register a tool (a ToolDefinition, its dict form, or an object with `.definition`)."""
        with self._lock:
            self._runtime.define_tool(tool)
            self._changed()

    def tool_definition(self, name: str) -> ToolDefinition | None:
        return self._runtime.tool_definition(name)

    def tool(self, name: str) -> Any:
        """The registered tool object, or its ToolDefinition when it was registered without a function."""
        return self._runtime.tool(name)

    def tool_names(self) -> list[str]:
        return self._runtime.tool_names()

    def define_middleware(self, name: str, middleware: Any) -> None:
        """Register middleware for `use: [name]` in prompt files (an object, or a factory taking keyword args)."""
        self._runtime.define_middleware(name, middleware)

    def middleware(self, name: str, **kwargs: Any) -> Any:
        return self._runtime.middleware(name, **kwargs)

    def _changed(self) -> None:
        self._revision += 1
        if self._env.cache is not None:
            self._env.cache.clear()

    # -- what prompts and `check` ask of the library ----------------------------------------

    @property
    def revision(self) -> int:
        """Bumped by every `define_*`: a prompt compiled at an older revision recompiles."""
        return self._revision

    @property
    def default_model(self) -> str | None:
        return self._defaults.model

    def defined_in_code(self) -> bool:
        """Whether anything (partials, schemas, tools, a partial resolver) was defined in code, so a
        library rebuilt from the folder alone would differ."""
        return bool(self._partials or self._schemas.names() or self._partial_resolver is not None or self._runtime
                    or self._helpers)

    def with_options(self, meta: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Render options merged over a compiled prompt's metadata: (metadata, RenderedPrompt fields)."""
        merged = merge(meta, options_metadata(options, self._schemas))
        return merged, render_fields(merged, self._defaults)

    def check_partial_file(self, path: str) -> None:
        """Parse and compile a partial file with its engine; a problem is a PromptFileError."""
        src = parse_source(read_text(path, self.directory), path)
        if self.engine_for(src).engine == "handlebars":
            self._handlebars.check(src.template, path, src.body_line)
        else:
            parse_template(self._env, with_line_offset(src.template, src.body_line), path, path)

    def engine_for(self, src: PromptSource) -> EngineChoice:
        """The engine a parsed file renders with in this library, and why."""
        return choose_engine(src.ext, src.template, self.engine, src.body_line, self._project_engine)

    def _project_engine(self) -> tuple[str | None, str]:
        """The engine the folder and its project write in, for files either engine reads alike (read once)."""
        with self._lock:
            if self._project_verdict is None:
                verdict = project_engine(self.directory)
                self._project_verdict = (verdict.engine, verdict.reason)
            return self._project_verdict

    # -- prompts ----------------------------------------------------------------------------

    def prompts(self) -> list[PromptInfo]:
        """Every prompt file in the folder, sorted by name then variant (partials excluded)."""
        found = [info for info in self._scan() if not os.path.basename(info.path).startswith("_")]
        return sorted(found, key=lambda i: (i.name, i.variant or ""))

    def partials(self) -> list[str]:
        names = set(self._partials)
        names.update(info.name for info in self._scan() if os.path.basename(info.path).startswith("_"))
        return sorted(names)

    def _scan(self) -> list[PromptInfo]:
        if self.directory is None or not self.directory.is_dir():
            return []
        out = []
        for path in self.directory.rglob("*.prompt"):
            rel = path.relative_to(self.directory).with_suffix("")
            stem = rel.name
            if stem.startswith("_"):
                out.append(PromptInfo(str(rel.with_name(stem[1:]).as_posix()), None, str(path)))
                continue
            base, _, variant = stem.partition(".")
            out.append(PromptInfo(str(rel.with_name(base).as_posix()), variant or None, str(path)))
        return out

    def cache_info(self) -> dict[str, int]:
        """Entries in the library's caches (each bounded): prompts loaded, parsed partials, Handlebars programs."""
        return {"prompts": len(self._prompts), "partial_asts": len(self._partial_asts),
                "partial_bodies": len(self._partial_bodies),
                "handlebars_programs": self._handlebars_engine.cache_size() if self._handlebars_engine else 0}

    def load(self, name: str, variant: str | None = None) -> Prompt:
        """The prompt `name` (optionally its variant), compiled once and cached."""
        check_name(name)
        if variant is not None:
            check_name(variant)
        key = (name, variant)
        with self._lock:
            prompt = self._prompts.get(key)
            if prompt is None:
                prompt = self._prompts[key] = self._load_file(name, variant)
        return prompt

    def _load_file(self, name: str, variant: str | None) -> Prompt:
        path = self._prompt_path(name, variant)
        if path is None:
            labels = [info.label for info in self.prompts()]
            wanted = f"{name}.{variant}" if variant else name
            where = str(self.directory) if self.directory else "a library with no directory"
            raise PromptNotFoundError(name, variant, close_matches(wanted, labels, n=3), where)
        try:
            snapshot = read_settled(path, self.directory)
        except FileNotFoundError:
            raise PromptNotFoundError(name, variant, [], f"{path} (deleted)") from None
        except FileChangingError:
            raise _still_changing(path) from None
        return Prompt(self, name, variant, path, self._compile_snapshot(snapshot, path, name, variant))

    def _prompt_path(self, name: str, variant: str | None) -> str | None:
        """The file for the name, if anything by that name is there (a FIFO or a link too: reading it says what is wrong)."""
        if self.directory is None:
            return None
        for form in (name, *{unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)} - {name}):
            # Names compare in NFC: a file saved decomposed (macOS writes NFD) answers to the composed name.
            path = self.directory / (f"{form}.{variant}.prompt" if variant else f"{form}.prompt")
            if _entry_exists(path):
                return str(path)
        return None

    def from_source(self, source: str, name: str | None = None, *, path: str | None = None) -> Prompt:
        """A prompt compiled from a string (not cached by name)."""
        compiled = self._compile(source, path, name, None, None)
        return Prompt(self, name, None, None, compiled, source=source)

    def _read_prompt_file(self, prompt: Prompt) -> Snapshot:
        """The prompt's file, read once as it settles; gone for good is PromptNotFoundError."""
        assert prompt.path is not None
        try:
            return read_settled(prompt.path, self.directory)
        except FileNotFoundError:
            raise PromptNotFoundError(prompt.name or prompt.path, prompt.variant, [], f"{prompt.path} (deleted)") from None

    # -- hot reload -------------------------------------------------------------------------

    def needs_refresh(self, prompt: Prompt, compiled: CompiledPrompt) -> bool:
        """Whether `compiled` may be out of date: the library changed, the file's or a partial's stat
        changed (mtime, size, inode, ctime), or its periodic re-hash is due. Cheap: stats only."""
        if compiled.revision != self._revision:
            return True
        if prompt.path is None:
            return False
        if compiled.stamp is None or _stamp_or_none(prompt.path) != compiled.stamp:
            return True
        if any(_stamp_or_none(path) != stamp for path, stamp, _ in compiled.depends):
            return True
        return time.monotonic() - compiled.checked_at >= settings.RELOAD_REHASH_SECONDS

    def refresh(self, prompt: Prompt, compiled: CompiledPrompt) -> CompiledPrompt:
        """The compiled form a render should use now.

        The file is read once (waiting out a save in progress) and compiled from exactly those bytes;
        if its bytes and its partials' hash as before, `compiled` is kept (only its stamps move on).
        New bytes are used only once a second read RELOAD_SETTLE_SECONDS later gives them again
        (`read_confirmed`): a save stalled half-way has old timestamps but is not done. A file that
        keeps changing keeps `compiled` (the last whole version) until it holds still; a
        file gone for good raises PromptNotFoundError; a new version that does not compile raises its
        PromptFileError once it has stayed so for RELOAD_GRACE_SECONDS (a stalled save is not an error)."""
        if prompt.path is None:
            return self._compile(prompt.source or "", None, prompt.name, prompt.variant, None)
        try:
            snapshot = self._read_prompt_file(prompt)
        except FileChangingError:
            return compiled
        if compiled.revision == self._revision and snapshot.digest == compiled.digest:
            depends = _same_partials(compiled.depends, self.directory)
            if depends is not None:
                return dataclasses.replace(compiled, stamp=snapshot.stamp, depends=depends, checked_at=time.monotonic())
            if self._env.cache is not None:  # a partial's bytes changed: jinja's loaded copy must go too
                self._env.cache.clear()
        elif snapshot.digest != compiled.digest:
            try:
                snapshot = read_confirmed(snapshot, prompt.path, self.directory)
            except FileChangingError:  # it never held still: the last whole version until it does
                return compiled
        while True:
            # A save that stalls half-way (an empty or cut-off file) can hold still longer than the
            # settle time: a file that fails to compile, or is newly empty (which compiles, to no
            # messages), is trusted only once it is RELOAD_GRACE_SECONDS old. Until then this thread
            # waits for it and other renders keep the last whole version.
            trusted = time.time_ns() - snapshot.stamp[0] >= settings.RELOAD_GRACE_SECONDS * 1e9
            if trusted or snapshot.data.strip():
                try:
                    return self._compile_snapshot(snapshot, prompt.path, prompt.name, prompt.variant)
                except PromptFileError:
                    if trusted:
                        raise
            time.sleep(settings.RELOAD_SETTLE_SECONDS)
            try:
                snapshot = self._read_prompt_file(prompt)
                snapshot = read_confirmed(snapshot, prompt.path, self.directory)
            except FileChangingError:
                return compiled

    def _compile_snapshot(self, snapshot: Snapshot, path: str, name: str | None, variant: str | None) -> CompiledPrompt:
        depends: list[Dependency] = []
        self._reading.depends = depends
        try:
            compiled = self._compile(decode(snapshot.data, path), path, name, variant, snapshot.stamp)
        finally:
            self._reading.depends = None
        return dataclasses.replace(compiled, digest=snapshot.digest, depends=tuple(dict.fromkeys(depends)),
                                   checked_at=time.monotonic())

    def _compile(self, text: str, path: str | None, name: str | None, variant: str | None,
                 stamp: Any) -> CompiledPrompt:
        ctx = CompileContext(self._env, self._schemas, self._defaults, self._partial_source, self._revision,
                             self._partial_asts, self.engine, lambda: self._handlebars, self._project_engine)
        used: dict[str, str] = {}  # partial name -> content hash
        self._reading.partials = used
        try:
            compiled = compile_prompt(text, path, name, variant, ctx, stamp)
        finally:
            self._reading.partials = None
        self._check_use_arguments(compiled.source)
        return dataclasses.replace(compiled, identity=PromptIdentity.of(name, variant, text, used.items()))

    def _check_use_arguments(self, src: PromptSource) -> None:
        """Arguments given to built-in middleware in `use:` must fit its signature, checked at load."""
        problems = self._use_argument_problems(src)
        if problems:
            raise problems[0]

    def _use_argument_problems(self, src: PromptSource) -> list[PromptFileError]:
        entries = [(i, n, a) for i, n, a in use_arguments(src) if self.middleware(n) is None]
        if not entries:
            return []
        from ..generation.policies import BUILT_IN  # only prompts with `use:` arguments load the loop

        problems = []
        for index, name, arguments in entries:
            factory = BUILT_IN.get(name)
            try:
                if factory is not None:
                    inspect.signature(factory).bind(**arguments)
                    factory(**arguments)  # cheap, and it checks the values: a bad one fails now, not at run time
            except (TypeError, UsageError) as exc:
                problems.append(src.error(f"`use` entry {name!r}: {exc}", "use", index, name, hint=USE_HINT))
        return problems

    def diagnose(self, name: str, variant: str | None = None) -> Diagnosis:
        """Every problem of the prompt file `name` (for `dotprompt check`), where `load` raises the first."""
        path = self._prompt_path(name, variant)
        if path is None:
            raise PromptNotFoundError(name, variant, [], str(self.directory))
        ctx = CompileContext(self._env, self._schemas, self._defaults, self._partial_source, self._revision,
                             self._partial_asts, self.engine, lambda: self._handlebars, self._project_engine)
        found = diagnose_prompt(read_text(path, self.directory), path, name, variant, ctx)
        if found.source is not None:
            found.problems += self._use_argument_problems(found.source)
        return found

    # -- partials ---------------------------------------------------------------------------

    def _partial_source(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        """(source, filename, uptodate) for jinja's loader, from definitions, files, then the resolver."""
        found = self._partial_text(name)
        if found is None:
            return None
        text, path, uptodate = found
        return self._partial_body(text, path), path, uptodate

    def _partial_text(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        """(file text, filename, uptodate) of a partial, noted for the identity of the prompt being compiled."""
        found = self._find_partial(name)
        used = getattr(self._reading, "partials", None)
        if found is not None and used is not None:
            used[name] = content_hash(found[0])
        return found

    def _find_partial(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        """(file text, filename, uptodate) of a partial: definitions, then `_name.prompt` files, then the resolver."""
        if name in self._partials:
            revision = self._revision
            return self._partials[name], None, lambda: revision == self._revision
        path = self._partial_path(name)
        if path is not None:
            try:
                snapshot = read_settled(path, self.directory, "partial file")
            except FileNotFoundError:
                snapshot = None  # gone since we looked: as if it never was
            except FileChangingError:
                raise _still_changing(path) from None
            if snapshot is not None:
                depends = getattr(self._reading, "depends", None)
                if depends is not None:
                    depends.append((path, snapshot.stamp, snapshot.digest))
                stamp = snapshot.stamp
                return decode(snapshot.data, path), path, lambda: _stamp_or_none(path) == stamp
        if self._partial_resolver is not None:
            found = self._partial_resolver(name)
            if found is not None:
                return found, None, lambda: True
        return None

    def _handlebars_partial(self, name: str) -> tuple[str, str | None, int] | None:
        """(template body, filename, first body line) of a partial for the Handlebars engine."""
        found = self._partial_text(name)
        if found is None:
            return None
        text, path, _ = found
        if not text.strip():
            return text, path, 1
        src = parse_source(text, path)
        return src.template, path, src.body_line

    def _partial_path(self, name: str) -> str | None:
        if self.directory is None or _unsafe(name):
            return None
        head, _, tail = name.rpartition("/")
        path = self.directory / head / f"_{tail}.prompt"
        return str(path) if _entry_exists(path) else None

    def _partial_body(self, text: str, path: str | None) -> str:
        if not text.strip():
            return text
        # A partial shared by every prompt is read for each of them (its bytes may have changed), but its
        # frontmatter is parsed once per version of the file.
        digest = digest_of(text.encode("utf-8", "surrogatepass"))
        body = self._partial_bodies.get(path, digest)
        if body is None:
            src = parse_source(text, path)
            body = with_line_offset(src.template, src.body_line)
            self._partial_bodies.put(path, digest, body)
        return body


def _open_run_log(found: RunLogSettings) -> RunLog | None:
    if found.path is None:
        return None  # logging off (`check`, `render`, most libraries): the log's SQLite never loads
    from ..observe.runlog import open_run_log

    return open_run_log(found)


def _still_changing(path: str) -> PromptFileError:
    return PromptFileError("this file keeps changing while it is read", path=path,
                           hint="try again once the save has finished")


def _stamp_or_none(path: str) -> Any:
    try:
        return file_stamp(path)
    except (OSError, ValueError):
        return None


def _entry_exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def _same_partials(depends: tuple[Dependency, ...], root: Path | None) -> tuple[Dependency, ...] | None:
    """The partial files with their current stamps if every one still hashes as before, else None."""
    out = []
    for path, stamp, digest in depends:
        if _stamp_or_none(path) == stamp:
            out.append((path, stamp, digest))
            continue
        try:
            snapshot = read_snapshot(path, root, "partial file")
        except (OSError, PromptFileError):
            return None
        if snapshot.digest != digest:
            return None
        out.append((path, snapshot.stamp, digest))
    return tuple(out)


def _name_problem(name: str) -> str | None:
    if not name or os.path.isabs(name) or "\\" in name or name.startswith("/") \
            or any(part in ("..", "") for part in name.split("/")):
        return "names are relative paths inside the prompt folder, without '..', empty parts or a leading '/'"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "names cannot hold control characters (such as NUL or a newline)"
    if len(name) > settings.MAX_NAME_LENGTH:
        return f"names are at most {settings.MAX_NAME_LENGTH} characters, this one has {len(name)}"
    if any(len(part.encode("utf-8", "surrogatepass")) > settings.MAX_NAME_PART_BYTES for part in name.split("/")):
        return f"each part of a name (between '/') is at most {settings.MAX_NAME_PART_BYTES} bytes, to fit a file name"
    return None


def _unsafe(name: str) -> bool:
    return _name_problem(name) is not None


def check_name(name: str) -> None:
    """Refuse names that are absolute, climb out of the prompt folder, or cannot be a file name."""
    problem = _name_problem(name) if isinstance(name, str) else "a name is a string"
    if problem is not None:
        shown = repr(name) if not isinstance(name, str) or len(name) <= 80 else repr(name[:60]) + f"... ({len(name)} characters)"
        raise InvalidPromptNameError(f"invalid prompt name {shown}: {problem}")

