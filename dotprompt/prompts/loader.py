"""The default library (./prompts, or DOTPROMPT_DIR, or [tool.dotprompt] prompts_dir): `load_prompt` reads
from it; `define_tool` registers a tool there."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..errors import UsageError
from ..schema.compiled import is_model_class
from ..settings import env_prompts_dir, project_settings, render_budget, run_log_settings, template_engine
from .library import PromptLibrary
from .prompt import Prompt

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..tools.define import Tool

__all__ = ["CODE_SETTINGS", "code_entries", "default_library", "define_interrupt", "define_tool", "entry_forms",
           "load_prompt", "module_file", "project_library", "prompts_dir"]

CODE_SETTINGS = ("tools", "schemas", "helpers")
"""The `[tool.dotprompt]` settings that name modules of the application's code, in the order they load."""

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
                    log_default: bool = False, engine: str | None = None, import_code: bool = True) -> PromptLibrary:
    """A library for `directory` set up from `[tool.dotprompt]`: `default_model`, `engine` (the argument
    over the setting over auto), the render budget
    (`render_max_chars`, `render_max_seconds`), the run log (`log`, `log_path`, `log_keep_*`; `log_default`
    when nothing says: the commands log, the Python API does not), and the names the application
    defines in code, each a list of modules (dotted names, or .py paths inside the project folder, relative
    to pyproject.toml): `tools` (their Tool objects), `schemas` (their pydantic models and JSON Schema
    dicts, by attribute name) and `helpers` (their public functions, for both engines). `import_code=False`
    imports none of them (`dotprompt check` on code it must not run)."""
    settings, root = project_settings()
    lib = PromptLibrary(directory, engine=template_engine(engine, project=settings),
                        default_model=settings.get("default_model"), render_budget=render_budget(project=settings),
                        log=run_log_settings(log, default=log_default, project=settings, root=root))
    if import_code:
        defines = {"tools": _define_tools, "schemas": _define_schemas, "helpers": _define_helpers}
        for setting, entry in code_entries(settings, root):
            defines[setting](lib, _import(entry, root, setting))
    return lib


def code_entries(settings: dict[str, Any], root: Path | None) -> list[tuple[str, str]]:
    """(setting, module entry) for every module `[tool.dotprompt] tools / schemas / helpers` lists."""
    out = []
    for setting in CODE_SETTINGS:
        entries = settings.get(setting, [])
        if not isinstance(entries, list):
            raise UsageError(f"{_where(root)}[tool.dotprompt] {setting} must be a list of modules, got {entries!r}"[:300])
        out += [(setting, str(entry)) for entry in entries]
    return out


def module_file(entry: str, root: Path | None, setting: str) -> Path:
    """The file of a `.py` entry: relative to pyproject.toml's folder, and inside it. A path that leaves the
    project (absolute, `../`, a symbolic link out) is refused: the settings of a checkout must not load
    a file from elsewhere on the machine."""
    base = (root or Path.cwd()).resolve()
    path = (base / entry).resolve()
    if not path.is_relative_to(base):
        raise UsageError(f"{_where(root)}[tool.dotprompt] {setting}: {entry!r} is outside the project folder {base} "
                         "(write a .py path inside it, relative to pyproject.toml, or a dotted module name)")
    if not path.is_file():
        raise UsageError(f"{_where(root)}[tool.dotprompt] {setting}: cannot load {entry!r} (no such file {path})")
    return path


def entry_forms(entry: str, folder: str) -> str:
    """How a module entry is written, for the message of one that cannot be loaded."""
    if "/" in entry or "\\" in entry:
        return f"write it as {entry + '.py'!r}"
    return (f"a dotted name is a module importable from {folder} or installed; a file is a .py path relative "
            f"to pyproject.toml, such as {entry.replace('.', '/') + '.py'!r}")


def _where(root: Path | None) -> str:
    return f"{root / 'pyproject.toml'}: " if root is not None else ""


def _import(entry: str, root: Path | None, setting: str = "tools") -> ModuleType:
    """The module, with the project folder importable: as under pytest or `python -m`, `myapp.tools` beside
    pyproject.toml loads however `dotprompt` was started (its console script does not put the working
    folder on sys.path). The folder stays there: a tool may import its neighbours when it runs."""
    folder = str((root or Path.cwd()).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        if entry.endswith(".py"):
            return _import_file(module_file(entry, root, setting), setting)
        return importlib.import_module(entry)
    except ImportError as exc:
        raise UsageError(f"{_where(root)}[tool.dotprompt] {setting}: cannot import {entry!r}: {exc} "
                         f"({entry_forms(entry, folder)})") from None
    except UsageError:
        raise
    except Exception as exc:  # the module raised while importing: one line naming it, never a bare traceback
        raise UsageError(f"{_where(root)}[tool.dotprompt] {setting}: importing {entry!r} raised "
                         f"{type(exc).__name__}: {exc}") from None


def _import_file(path: Path, setting: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"dotprompt_{setting}_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise UsageError(f"[tool.dotprompt] {setting}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


_Model = TypeVar("_Model", bound="BaseModel")
_Twin = TypeVar("_Twin", bound="BaseModel")


@overload
def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None, *,
                output_type: None = None) -> Prompt: ...
@overload
def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None, *,
                output_type: type[_Model], partial_type: type[_Twin]) -> Prompt[Any, _Model, _Twin]: ...
@overload
def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None, *,
                output_type: type[_Model]) -> Prompt[Any, _Model, Any]: ...
def load_prompt(name: str, variant: str | None = None, directory: str | os.PathLike[str] | None = None, *,
                output_type: type[BaseModel] | None = None, partial_type: type[BaseModel] | None = None) -> Prompt:
    """`load_prompt("extract")` loads prompts/extract.prompt (cached; reloaded when the file changes).

    `output_type=Model` validates the output into `Model` (`response.output` is a `Model`) and reads each
    streamed object output into `partial_type` (default: the model's partial twin, every field optional);
    `dotprompt types` writes both, and an accessor per prompt that passes them."""
    prompt = default_library(directory).load(name, variant)
    if output_type is None:
        if partial_type is not None:
            raise UsageError(f"load_prompt({name!r}): partial_type= needs output_type= (the model it is the partial of)")
        return prompt
    return prompt.typed(output_type, partial_type)


def define_tool(tool: Any, *args: Any, directory: str | os.PathLike[str] | None = None, **kwargs: Any) -> Tool:
    """Register a tool in `default_library(directory)`, so a prompt file loaded by `load_prompt` may name
    it in `tools:`; returns it (usable in `tools=[...]` too). `tool` is built with `dotprompt.tool`; a
    plain function is built as `@tool` builds it, so `@define_tool` works as a decorator.

    The old form `define_tool(name, description, input_schema, fn, ...)` still works for one release,
    with a DeprecationWarning."""
    from ..tools.define import Tool, make_tool  # late: the tool machinery loads with the running side
    from ..tools.define import tool as build

    if isinstance(tool, str):
        warnings.warn("define_tool(name, description, input_schema, fn) is deprecated and goes in the next release; "
                      "build the tool, then register it: define_tool(tool(fn, name=..., description=..., "
                      "input_schema=...))", DeprecationWarning, stacklevel=2)
        built = make_tool(tool, *args, **kwargs)
    elif args or kwargs:
        raise UsageError(f"define_tool takes one tool (and directory=), got more: {', '.join([*map(repr, args), *kwargs])}"
                         [:300] + "; pass the options to tool(...) instead")
    elif isinstance(tool, Tool):
        built = tool
    elif callable(tool):
        built = build(tool)
    else:
        raise UsageError(f"define_tool takes a tool built with dotprompt.tool(...) (or a function), got "
                         f"{type(tool).__name__}")
    default_library(directory).define_tool(built)
    return built


def define_interrupt(name: str, description: str, input_schema: Any = None, *, request_metadata: Any = None,
                     directory: str | os.PathLike[str] | None = None) -> Tool:
    """Build a tool that always interrupts (`make_interrupt`: the same arguments) and register it in
    `default_library(directory)`. Returns the Tool. Its `dotprompt.` name is deprecated:
    `define_tool(tool(name=..., interrupt=True))` does the same."""
    from ..tools.define import make_interrupt

    built = make_interrupt(name, description, input_schema, request_metadata=request_metadata)
    default_library(directory).define_tool(built)
    return built
