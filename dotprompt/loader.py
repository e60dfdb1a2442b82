"""`load_prompt`: the default library at ./prompts, or DOTPROMPT_DIR, or [tool.dotprompt] prompts_dir."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from .library import PromptLibrary
from .prompt import Prompt

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_libraries: dict[Path, PromptLibrary] = {}
_lock = threading.Lock()


def project_settings(start: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """`[tool.dotprompt]` of the nearest pyproject.toml at or above `start`, and that file's folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                return {}, folder
            return data.get("tool", {}).get("dotprompt", {}), folder
    return {}, None


def prompts_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """Explicit argument, else $DOTPROMPT_DIR, else [tool.dotprompt] prompts_dir, else ./prompts."""
    if directory is not None:
        return Path(directory)
    if os.environ.get("DOTPROMPT_DIR"):
        return Path(os.environ["DOTPROMPT_DIR"])
    settings, root = project_settings()
    if root is not None and settings.get("prompts_dir"):
        return root / str(settings["prompts_dir"])
    return Path("prompts")


def default_library(directory: str | os.PathLike[str] | None = None) -> PromptLibrary:
    """One shared library per prompt folder."""
    path = prompts_dir(directory).resolve()
    with _lock:
        if path not in _libraries:
            _libraries[path] = PromptLibrary(path)
        return _libraries[path]


def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None) -> Prompt:
    """`load_prompt("extract")` loads prompts/extract.prompt (cached; reloaded when the file changes)."""
    return default_library(directory).load(name, variant)
