"""`load_prompt`: the default library at ./prompts, or DOTPROMPT_DIR, or [tool.dotprompt] prompts_dir."""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import UsageError
from ..settings import env_prompts_dir, project_settings, render_budget, run_log_settings, template_engine
from .library import PromptLibrary
from .prompt import Prompt

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
    when nothing says: the commands log, the Python API does not), and `tools` — modules
    (dotted names, or .py paths relative to pyproject.toml) whose Tool objects are registered."""
    settings, root = project_settings()
    lib = PromptLibrary(directory, engine=template_engine(engine, project=settings), default_model=settings.get("default_model"),
                        render_budget=render_budget(project=settings),
                        log=run_log_settings(log, default=log_default, project=settings, root=root))
    for entry in settings.get("tools", []):
        for found in _tools_in(_import(str(entry), root)):
            lib.define_tool(found)
    return lib


def _import(entry: str, root: Path | None) -> ModuleType:
    if entry.endswith(".py"):
        path = (root or Path.cwd()) / entry
        spec = importlib.util.spec_from_file_location(f"dotprompt_tools_{path.stem}", path)
        if spec is None or spec.loader is None or not path.is_file():
            raise UsageError(f"[tool.dotprompt] tools: cannot load {entry!r} (no such file {path})")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(entry)
    except ImportError as exc:
        raise UsageError(f"[tool.dotprompt] tools: cannot import {entry!r}: {exc}") from None


def _tools_in(module: ModuleType) -> list[Any]:
    from ..tools.define import Tool

    return [value for value in vars(module).values() if isinstance(value, Tool)]


def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None) -> Prompt:
    """`load_prompt("extract")` loads prompts/extract.prompt (cached; reloaded when the file changes)."""
    return default_library(directory).load(name, variant)
