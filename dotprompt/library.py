"""PromptLibrary: a folder of `.prompt` files, its partials, schemas and tools, compiled and cached.

File names: `name.prompt`, `name.variant.prompt`, `_partial.prompt`; a subfolder is a namespace
(`billing/extract.prompt` is `billing/extract`).
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import FunctionLoader

from .compiler import CompileContext, CompiledPrompt, compile_prompt, file_stamp, parse_template, read_text
from .document import parse_source
from .errors import DotpromptError, InvalidPromptNameError, PromptNotFoundError
from .handlebars import HandlebarsEngine, file_engine
from .metadata import LibraryDefaults, merge, options_metadata, render_fields
from .prompt import Prompt
from .runtime import RuntimeRegistry
from .schemas import SchemaLike, SchemaRegistry
from .settings import RenderBudget
from .settings import render_budget as resolve_budget
from .template import make_environment, with_line_offset
from .types import ToolDefinition

PartialResolver = Callable[[str], "str | None"]
ENGINES = ("jinja2", "handlebars")


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

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, engine: str = "jinja2",
                 schemas: Mapping[str, SchemaLike] | None = None, partial_resolver: PartialResolver | None = None,
                 schema_resolver: Callable[[str], Any] | None = None, default_model: str | None = None,
                 model_configs: Mapping[str, Mapping[str, Any]] | None = None,
                 render_budget: RenderBudget | Mapping[str, Any] | None = None) -> None:
        if engine not in ENGINES:
            raise DotpromptError(f"unknown template engine {engine!r}; available: {', '.join(ENGINES)}")
        self.directory = Path(directory) if directory is not None else None
        self.engine = engine
        self.render_budget = resolve_budget(render_budget)  # what one render may spend (settings.RenderBudget)
        self._schemas = SchemaRegistry(schemas, schema_resolver)
        self._partial_resolver = partial_resolver
        self._runtime = RuntimeRegistry()
        self._defaults = LibraryDefaults(default_model, model_configs, self._runtime.tool_definition)
        self._partials: dict[str, str] = {}
        self._partial_asts: dict[Any, Any] = {}
        self._prompts: dict[tuple[str, str | None], Prompt] = {}
        self._lock = threading.RLock()
        self._revision = 0  # bumped by every define_*; prompts compiled at an older revision recompile
        self._env = make_environment(FunctionLoader(self._partial_source))
        self._handlebars = HandlebarsEngine(self._handlebars_partial)

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

    def define_tool(self, tool: Any) -> None:
        """Register a tool (a ToolDefinition, its dict form, or an object with `.definition`)."""
        with self._lock:
            self._runtime.define_tool(tool)
            self._changed()

    def tool_definition(self, name: str) -> ToolDefinition | None:
        return self._runtime.tool_definition(name)

    def tool(self, name: str) -> Any:
        """The registered tool object (runnable tools only; a bare definition cannot run)."""
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
        return bool(self._partials or self._schemas.names() or self._partial_resolver is not None or self._runtime)

    def with_options(self, meta: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Render options merged over a compiled prompt's metadata: (metadata, RenderedPrompt fields)."""
        merged = merge(meta, options_metadata(options, self._schemas))
        return merged, render_fields(merged, self._defaults)

    def check_partial_file(self, path: str) -> None:
        """Parse and compile a partial file with its engine; a problem is a PromptFileError."""
        src = parse_source(read_text(path), path)
        if file_engine(src.ext, self.engine) == "handlebars":
            self._handlebars.check(src.template, path, src.body_line)
        else:
            parse_template(self._env, with_line_offset(src.template, src.body_line), path, path)

    # -- prompts ----------------------------------------------------------------------------

    def list(self) -> list[PromptInfo]:
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
            labels = [info.label for info in self.list()]
            wanted = f"{name}.{variant}" if variant else name
            where = str(self.directory) if self.directory else "a library with no directory"
            raise PromptNotFoundError(name, variant, difflib.get_close_matches(wanted, labels, n=3, cutoff=0.5), where)
        text, stamp = read_stable(path)
        compiled = self._compile(text, path, name, variant, stamp)
        return Prompt(self, name, variant, path, compiled)

    def _prompt_path(self, name: str, variant: str | None) -> str | None:
        if self.directory is None:
            return None
        path = self.directory / (f"{name}.{variant}.prompt" if variant else f"{name}.prompt")
        return str(path) if path.is_file() else None

    def from_source(self, source: str, name: str | None = None, *, path: str | None = None) -> Prompt:
        """A prompt compiled from a string (not cached by name)."""
        compiled = self._compile(source, path, name, None, None)
        return Prompt(self, name, None, None, compiled, source=source)

    def recompile(self, prompt: Prompt) -> CompiledPrompt:
        """The prompt compiled afresh: from its file as it is now, or from its source string."""
        if prompt.path is None:
            return self._compile(prompt.source or "", None, prompt.name, prompt.variant, None)
        text, stamp = read_stable(prompt.path)
        return self._compile(text, prompt.path, prompt.name, prompt.variant, stamp)

    def _compile(self, text: str, path: str | None, name: str | None, variant: str | None,
                 stamp: Any) -> CompiledPrompt:
        ctx = CompileContext(self._env, self._schemas, self._defaults, self._partial_source, self._revision,
                             self._partial_asts, self.engine, self._handlebars)
        return compile_prompt(text, path, name, variant, ctx, stamp)

    # -- partials ---------------------------------------------------------------------------

    def _partial_source(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        """(source, filename, uptodate) for jinja's loader, from definitions, files, then the resolver."""
        found = self._partial_text(name)
        if found is None:
            return None
        text, path, uptodate = found
        return self._partial_body(text, path), path, uptodate

    def _partial_text(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        """(file text, filename, uptodate) of a partial: definitions, then `_name.prompt` files, then the resolver."""
        if name in self._partials:
            revision = self._revision
            return self._partials[name], None, lambda: revision == self._revision
        path = self._partial_path(name)
        if path is not None:
            text, stamp = read_stable(path)
            return text, path, lambda: _same_stamp(path, stamp)
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
        return str(path) if path.is_file() else None

    @staticmethod
    def _partial_body(text: str, path: str | None) -> str:
        if not text.strip():
            return text
        src = parse_source(text, path)
        return with_line_offset(src.template, src.body_line)


def read_stable(path: str) -> tuple[str, Any]:
    """The file's text with the stamp it had while read (re-read if it changed underneath us)."""
    for _ in range(5):
        before = file_stamp(path)
        text = read_text(path)
        if file_stamp(path) == before:
            break
    return text, before


def _same_stamp(path: str, stamp: Any) -> bool:
    try:
        return file_stamp(path) == stamp
    except OSError:
        return False


def _unsafe(name: str) -> bool:
    return (not name or os.path.isabs(name) or "\\" in name or name.startswith("/")
            or any(part in ("..", "") for part in name.split("/")))


def check_name(name: str) -> None:
    """Refuse names that are absolute or climb out of the prompt folder."""
    if not isinstance(name, str) or _unsafe(name):
        raise InvalidPromptNameError(
            f"invalid prompt name {name!r}: names are relative paths inside the prompt folder, "
            "without '..', empty parts or a leading '/'")

