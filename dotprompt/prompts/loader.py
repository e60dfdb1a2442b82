"""The default library (./prompts, or DOTPROMPT_DIR, or [tool.dotprompt] prompts_dir): `load_prompt` reads
from it; `define_tool` and `define_interrupt` build a tool and register it there."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..schema.compiled import is_model_class
from ..settings import env_prompts_dir, project_settings, render_budget, run_log_settings, template_engine
from .library import PromptLibrary
from .prompt import Prompt

if TYPE_CHECKING:
    from ..tools.define import Tool

__all__ = ["default_library", "define_interrupt", "define_tool", "load_prompt", "project_library", "prompts_dir"]

_libraries: dict[Path, PromptLibrary] = {}
_lock = threading.Lock()


def prompts_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """Explicit argument, else $DOTPROMPT_DIR, else [tool.dotprompt] prompts_dir, else ./prompts."""
    if directory is not None:
        return Path(directory)
    from_env = env_prompts_dir()
    if from_env is not None:
        return from_env
    settings, root = project_settings()
    if root is not None and settings.get("prompts_dir"):
        return root / str(settings["prompts_dir"])
    return Path("prompts")


def default_library(directory: str | os.PathLike[str] | None = None) -> PromptLibrary:
    """One shared library per prompt folder."""
    path = prompts_dir(directory).resolve()
    with _lock:
        if path not in _libraries:
            _libraries[path] = project_library(path)
        return _libraries[path]


def project_library(directory: str | os.PathLike[str], *, log: bool | None = None,
                    log_default: bool = False, engine: str | None = None) -> PromptLibrary:
    """A library for `directory` set up from `[tool.dotprompt]`: `default_model`, `engine` (the argument
    over the setting over auto), the render budget
    (`render_max_chars`, `render_max_seconds`), the run log (`log`, `log_path`, `log_keep_*`; `log_default`
    when nothing says: the commands log, the Python API does not), and the names the application
    defines in code, each a list of modules (dotted names, or .py paths relative to pyproject.toml):
    `tools` (their Tool objects), `schemas` (their pydantic models and JSON Schema dicts, by
    attribute name) and `helpers` (their public functions, for both engines)."""
    settings, root = project_settings()
    lib = PromptLibrary(directory, engine=template_engine(engine, project=settings),
                        default_model=settings.get("default_model"), render_budget=render_budget(project=settings),
                        log=run_log_settings(log, default=log_default, project=settings, root=root))
    for setting, define in (("tools", _define_tools), ("schemas", _define_schemas), ("helpers", _define_helpers)):
        entries = settings.get(setting, [])
        if not isinstance(entries, list):
            raise UsageError(f"[tool.dotprompt] {setting} must be a list of modules, got {entries!r}"[:300])
        for entry in entries:
            define(lib, _import(str(entry), root, setting))
    return lib


def _import(entry: str, root: Path | None, setting: str = "tools") -> ModuleType:
    if entry.endswith(".py"):
        path = (root or Path.cwd()) / entry
        spec = importlib.util.spec_from_file_location(f"dotprompt_{setting}_{path.stem}", path)
        if spec is None or spec.loader is None or not path.is_file():
            raise UsageError(f"[tool.dotprompt] {setting}: cannot load {entry!r} (no such file {path})")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(entry)
    except ImportError as exc:
        raise UsageError(f"[tool.dotprompt] {setting}: cannot import {entry!r}: {exc}") from None


def _define_tools(lib: PromptLibrary, module: ModuleType) -> None:
    from ..tools.define import Tool

    for value in vars(module).values():
        if isinstance(value, Tool):
            lib.define_tool(value)


def _define_schemas(lib: PromptLibrary, module: ModuleType) -> None:
    """Its pydantic models (not pydantic's own classes it imports) and JSON Schema dicts, by attribute name."""
    for name, value in vars(module).items():
        model = is_model_class(value) and not value.__module__.startswith("pydantic")
        json_schema = isinstance(value, dict) and bool({"type", "properties", "$schema", "$ref"} & set(value))
        if (model or json_schema) and not name.startswith("_"):
            lib.define_schema(name, value)


def _define_helpers(lib: PromptLibrary, module: ModuleType) -> None:
    """Its public functions defined there (not the ones it imports): `helper(*arguments, **hash)` -> text."""
    for name, value in vars(module).items():
        if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == module.__name__:
            lib.define_helper(name, value)


def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None) -> Prompt:
    """`load_prompt("extract")` loads prompts/extract.prompt (cached; reloaded when the file changes)."""
    return default_library(directory).load(name, variant)


def define_tool(name: str, description: str, input_schema: Any, fn: Callable[..., Any | Awaitable[Any]] | None,
                *, output_schema: Any = None, multipart: bool = False,
                directory: str | os.PathLike[str] | None = None) -> Tool:
    """Build a tool (`make_tool`: the same arguments) and register it in `default_library(directory)`, so a
    prompt file loaded by `load_prompt` may name it in `tools:`. Returns the Tool (usable in `tools=[...]`)."""
    from ..tools.define import make_tool  # late: the tool machinery loads with the running side, not on import

    built = make_tool(name, description, input_schema, fn, output_schema=output_schema, multipart=multipart)
    default_library(directory).define_tool(built)
    return built


def define_interrupt(name: str, description: str, input_schema: Any = None, *, request_metadata: Any = None,
                     directory: str | os.PathLike[str] | None = None) -> Tool:
    """Build a tool that always interrupts (`make_interrupt`: the same arguments) and register it in
    `default_library(directory)`. Returns the Tool."""
    from ..tools.define import make_interrupt

    built = make_interrupt(name, description, input_schema, request_metadata=request_metadata)
    default_library(directory).define_tool(built)
    return built
