"""PromptLibrary: the registry of a folder's prompts, compiled and cached, and of what the application
defines in code (partials, schemas, helpers, tools, middleware).

The folder's files, how they are read and when a prompt reloads are the file store's
(`prompts/store.py`); this module says what a name means and compiles it. Hot reload: a render
uses a whole version of the file, old or new (see `needs_refresh` / `refresh`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import FunctionLoader

from .._util.cache import LRU
from .._util.suggest import close_matches
from ..document.files import Snapshot, decode, digest_of
from ..document.metadata import LibraryDefaults, convert_schemas, merge, options_metadata, render_fields
from ..document.parse import USE_HINT, PromptSource, parse_source, use_arguments
from ..engines.detect import ENGINE_SETTINGS, EngineChoice, choose_engine
from ..engines.handlebars import KNOWN_HELPERS
from ..engines.jinja import RESERVED_NAMES, make_environment, with_line_offset
from ..engines.limits import PARTIAL_CACHE_SIZE
from ..engines.project import project_engine
from ..errors import DotpromptError, PromptFileError, PromptNotFoundError, UsageError
from ..identity import PromptIdentity, content_hash
from ..schema.compiled import SchemaLike, SchemaRegistry
from ..settings import RenderBudget, RunLogSettings, project_root, run_log_settings
from ..settings import render_budget as resolve_budget
from ..tools.mcp_names import is_mcp_name
from ..tools.registry import RuntimeRegistry
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
from .store import PromptFiles, PromptInfo, check_name, current_stamp

if TYPE_CHECKING:
    from ..engines.handlebars import HandlebarsEngine
    from ..mcp.config import McpServer
    from ..mcp.tools import McpTools
    from ..observe.runlog import RunLog
    from ..types import ToolDefinition

# PromptInfo and check_name live with the files (`store.py`); they are still imported from here.
__all__ = ["PromptInfo", "PromptLibrary", "check_name"]

PartialResolver = Callable[[str], "str | None"]


class PromptLibrary:
    """Loads, compiles and caches the prompts of one folder (or none: `from_source` only)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, engine: str = "auto",
                 schemas: Mapping[str, SchemaLike] | None = None, partial_resolver: PartialResolver | None = None,
                 schema_resolver: Callable[[str], Any] | None = None, default_model: str | None = None,
                 model_configs: Mapping[str, Mapping[str, Any]] | None = None,
                 render_budget: RenderBudget | Mapping[str, Any] | None = None,
                 log: bool | str | os.PathLike[str] | RunLogSettings | None = None,
                 mcp_servers: Mapping[str, Mapping[str, Any] | McpServer] | None = None) -> None:
        if engine not in ENGINE_SETTINGS:
            raise DotpromptError(f"unknown template engine {engine!r}; available: {', '.join(ENGINE_SETTINGS)}")
        self.directory = Path(directory) if directory is not None else None
        self._files = PromptFiles(self.directory)
        self.engine = engine
        self.render_budget = resolve_budget(render_budget)  # what one render may spend (settings.RenderBudget)
        # Where runs of its prompts are logged (None: not logged): `log=True`, a database path, or DOTPROMPT_LOG=1.
        self.run_log = _open_run_log(log if isinstance(log, RunLogSettings) else run_log_settings(log))
        self._schemas = SchemaRegistry(schemas, schema_resolver)
        self._partial_resolver = partial_resolver
        self._runtime = RuntimeRegistry()
        self._defaults = LibraryDefaults(default_model, model_configs, self._runtime.tool_definition)
        self._partials: dict[str, str] = {}
        self._partial_asts: LRU[Any] = LRU(PARTIAL_CACHE_SIZE)
        self._partial_bodies: LRU[str] = LRU(PARTIAL_CACHE_SIZE)  # a partial file's template, by its bytes
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
        # MCP servers whose tools prompts name as SERVER/TOOL (docs/mcp.md): None reads the project's
        # [tool.dotprompt.mcp.servers]. Checked now; nothing starts until a run asks for one of their tools.
        self._mcp_servers = _mcp_servers(mcp_servers, self.directory)
        self._mcp_tools: McpTools | None = None

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
        """The registered tool object, or its ToolDefinition when it was registered without a function;
        `SERVER/TOOL`: that MCP server's tool (the server starts on first use, and is kept)."""
        found = self._runtime.tool(name)
        if found is None and is_mcp_name(name):
            return self._mcp().tool(name)
        return found

    def tool_names(self) -> list[str]:
        return self._runtime.tool_names()

    def expand_tool_name(self, name: str) -> list[str]:
        """The tools a `tools:` entry stands for: itself, or each tool of an MCP pattern (`SERVER/*`)."""
        if self._runtime.tool(name) is None and is_mcp_name(name):
            return self._mcp().expand(name)
        return [name]

    @property
    def mcp_servers(self) -> dict[str, McpServer]:
        """The MCP servers this library's prompts may use, by name (checked, not started)."""
        return dict(self._mcp_servers)

    def close(self) -> None:
        """Stop the MCP servers this library started (they start again on next use; the end of the
        process stops them too)."""
        if self._mcp_tools is not None:
            self._mcp_tools.close()

    def _mcp(self) -> McpTools:
        with self._lock:
            if self._mcp_tools is None:
                from ..mcp.tools import McpTools  # the SDK loads with the first MCP tool a run asks for

                self._mcp_tools = McpTools(self._mcp_servers)
            return self._mcp_tools

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

    def check_partial_file(self, path: str, *, text: str | None = None) -> None:
        """Parse and compile a partial file with its engine; a problem is a PromptFileError. `text`: the
        file's unsaved text (an editor's buffer), read instead of the file."""
        src = parse_source(read_text(path, self.directory) if text is None else text, path)
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
        return self._files.prompts()

    def partials(self) -> list[str]:
        return sorted({*self._partials, *self._files.partial_names()})

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
        path = self._files.prompt_path(name, variant)
        if path is None:
            labels = [info.label for info in self.prompts()]
            wanted = f"{name}.{variant}" if variant else name
            where = str(self.directory) if self.directory else "a library with no directory"
            raise PromptNotFoundError(name, variant, close_matches(wanted, labels, n=3), where)
        snapshot = self._files.read_prompt(path, name, variant)
        return Prompt(self, name, variant, path, self._compile_snapshot(snapshot, path, name, variant))

    def schemas(self, info: PromptInfo) -> tuple[PromptSource, dict[str, Any]]:
        """A prompt file parsed, and its metadata with the input and output schemas as JSON Schema, the
        template not compiled (`dotprompt types` needs no more; compiling 500 templates was 2/3 of its
        time). A problem is a PromptFileError naming the file."""
        snapshot = self._files.read_prompt(info.path, info.name, info.variant)
        src = parse_source(decode(snapshot.data, info.path), info.path)
        return src, convert_schemas(src.metadata, self._schemas, src)

    def from_source(self, source: str, name: str | None = None, *, path: str | None = None,
                    variant: str | None = None) -> Prompt:
        """A prompt compiled from a string (not cached by name)."""
        compiled = self._compile(source, path, name, variant, None)
        return Prompt(self, name, None, None, compiled, source=source)

    # -- hot reload (the file store's, at the library's revision) -----------------------------

    def needs_refresh(self, prompt: Prompt, compiled: CompiledPrompt) -> bool:
        """Whether `compiled` may be out of date: the library changed, the file's or a partial's stat
        changed (mtime, size, inode, ctime), or its periodic re-hash is due. Cheap: stats only."""
        if compiled.revision != self._revision:
            return True
        return prompt.path is not None and self._files.is_stale(prompt.path, compiled)

    def refresh(self, prompt: Prompt, compiled: CompiledPrompt) -> CompiledPrompt:
        """The compiled form a render should use now: the last whole version of the file, recompiled
        when the file, a partial or the library changed (`PromptFiles.refresh` says how)."""
        if prompt.path is None:
            return self._compile(prompt.source or "", None, prompt.name, prompt.variant, None)
        path, name, variant = prompt.path, prompt.name, prompt.variant
        return self._files.refresh(
            path, (name, variant), compiled, current=compiled.revision == self._revision,
            compile_snapshot=lambda snapshot: self._compile_snapshot(snapshot, path, name, variant),
            partials_changed=self._partials_changed)

    def _partials_changed(self) -> None:
        if self._env.cache is not None:  # a partial's bytes changed: jinja's loaded copy must go too
            self._env.cache.clear()

    def _compile_snapshot(self, snapshot: Snapshot, path: str, name: str | None, variant: str | None) -> CompiledPrompt:
        depends: list[Dependency] = []
        self._reading.depends = depends
        try:
            compiled = self._compile(decode(snapshot.data, path), path, name, variant, snapshot.stamp)
        finally:
            self._reading.depends = None
        return self._files.read_as(compiled, snapshot, depends)

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

    def diagnose(self, name: str, variant: str | None = None, *, text: str | None = None,
                 path: str | None = None) -> Diagnosis:
        """Every problem of the prompt file `name` (for `dotprompt check`), where `load` raises the first.
        `text` and `path`: an editor's unsaved buffer of that file, read instead of the file."""
        path = self._files.prompt_path(name, variant) if path is None else path
        if path is None:
            raise PromptNotFoundError(name, variant, [], str(self.directory))
        ctx = CompileContext(self._env, self._schemas, self._defaults, self._partial_source, self._revision,
                             self._partial_asts, self.engine, lambda: self._handlebars, self._project_engine)
        found = diagnose_prompt(read_text(path, self.directory) if text is None else text, path, name, variant, ctx)
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
        path = self._files.partial_path(name)
        if path is not None:
            snapshot = self._files.read_partial(path)
            if snapshot is not None:
                depends = getattr(self._reading, "depends", None)
                if depends is not None:
                    depends.append((path, snapshot.stamp, snapshot.digest))
                stamp = snapshot.stamp
                return decode(snapshot.data, path), path, lambda: current_stamp(path) == stamp
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


def _mcp_servers(given: Mapping[str, Any] | None, directory: Path | None) -> dict[str, McpServer]:
    """The library's servers: a relative `cwd` of one given here is taken from the library's project root (the
    folder of the pyproject.toml at or above its directory, else that directory; no directory: the working
    folder's project), a pyproject.toml server's from that file's folder."""
    from ..mcp.config import configured_servers  # plain configuration: no SDK

    if given is None:
        return configured_servers()
    return configured_servers(given, base=project_root(directory) if directory is not None else None)


def _open_run_log(found: RunLogSettings) -> RunLog | None:
    if found.path is None:
        return None  # logging off (`check`, `render`, most libraries): the log's SQLite never loads
    from ..observe.runlog import open_run_log

    return open_run_log(found)
