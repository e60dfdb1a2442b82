"""User functions named in test files as `module:function` (assertions, eval scorers).

The module is imported by its dotted name with the project's folder (the one holding
pyproject.toml, else the current folder) first on the import path, so `checks:total_ok` finds
`checks.py` beside pyproject.toml however `dotprompt` was started. Naming a function in a test file
runs that module's code, as `[tool.dotprompt] tools` does: test files are part of the project.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..settings import project_settings

__all__ = ["FunctionSpecError", "check_spec", "is_function_spec", "load_function"]

_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


class FunctionSpecError(ValueError):
    """A `module:function` that is malformed, cannot be imported or is not callable; the caller adds where."""


def is_function_spec(text: Any) -> bool:
    return isinstance(text, str) and _SPEC.match(text) is not None


def check_spec(text: Any) -> None:
    if not is_function_spec(text):
        raise FunctionSpecError(f"{text!r} is not a `module:function` name (write e.g. `checks:total_matches`)")


def load_function(spec: str) -> Callable[..., Any]:
    """The function named `module:function`; FunctionSpecError saying why not."""
    check_spec(spec)
    module_name, _, attribute = spec.partition(":")
    _, root = project_settings()
    folder = str(root or Path.cwd())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise FunctionSpecError(f"cannot import {module_name!r} for {spec!r}: {exc} (searched {folder} first)") from None
    except Exception as exc:  # the user's module raised while importing: say so, never a bare traceback
        raise FunctionSpecError(f"importing {module_name!r} for {spec!r} raised {type(exc).__name__}: {exc}") from None
    finally:
        if added:
            sys.path.remove(folder)
    function = getattr(module, attribute, None)
    if not callable(function):
        raise FunctionSpecError(f"{module_name!r} has no function {attribute!r} (for {spec!r})")
    return function
