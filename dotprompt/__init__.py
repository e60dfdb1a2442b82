"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate.

The public API is the table below: each public name and the module that defines it. Only the errors
load with the package (`except dotprompt.DotpromptError` needs them, and they import nothing heavy);
every other name loads its module on first use, so `import dotprompt` brings no pydantic, jinja2 or
YAML until a prompt is loaded. Type checkers read the same names from the `TYPE_CHECKING` block, so
`dotprompt.generate` is typed in an IDE although it loads late.

One concept, one name: `tool` builds a tool, `define_tool` registers one in `default_library()`
(`define_model`, `define_format`: into their registries); `generate` / `generate_sync` /
`generate_stream` run the loop, as `Prompt.generate` / `.generate_sync` / `.generate_stream` do;
`GenerateActionOptions` is the one options type, `GenerateResponse` the one response type.
Subpackages with a public face of their own: `dotprompt.providers` (the model seam: `Model`,
`ModelInfo`, provider classes, the model registry), `dotprompt.types` (the whole message model),
`dotprompt.doubles` (test doubles at the model seam), `dotprompt.batch`, `dotprompt.testing`,
`dotprompt.evals` (each with its own errors, all under `DotpromptError`). The names that left this
page still work for one release, with a DeprecationWarning naming their new home (`_MOVED`).
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EAGER = frozenset({".errors"})

_API: dict[str, tuple[str, ...]] = {
    ".errors": ("DotpromptError", "GenerationError", "GenerationResponseError", "InputValidationError", "Interrupt",
                "InvalidPromptNameError", "McpServerError", "ModelError", "OutputParseError", "OutputValidationError",
                "PicoschemaError", "PromptFileError", "PromptNotFoundError", "RenderError", "SchemaError",
                "ToolExecutionError", "ToolInputError", "UnknownFormatError", "UsageError"),
    ".prompts.library": ("PromptLibrary",),
    ".prompts.loader": ("default_library", "define_tool", "load_prompt"),
    ".prompts.prompt": ("Prompt",),
    ".document.rendered": ("RenderedPrompt",),
    ".types": ("Media", "Message", "Part", "ToolRequest", "ToolResponse", "Usage"),
    ".formats": ("Format", "define_format"),
    ".generation.api": ("generate", "generate_stream", "generate_sync", "preview_request"),
    ".generation.policies": ("fallback", "retry", "validate_and_retry"),
    ".generation.options": ("GenerateActionOptions", "Resume"),
    ".generation.response": ("Chunk", "GenerateResponse"),
    ".providers.registry": ("define_model",),
    ".tools.define": ("Tool", "ToolContext", "tool"),
    ".providers": ("providers",),  # the subpackage itself: dotprompt.providers.define_provider, ...
}

_WHERE = {name: module for module, names in _API.items() for name in names}

# Names that left the top level: each still loads from its new home, with a DeprecationWarning that
# says where (or what replaces it). Removed in the release after next.
_MOVED: dict[str, tuple[str, str]] = {
    # (the module it loads from, what to write instead)
    "GenerateOptions": (".generation.options", "pass its fields as keywords to generate(...), or a "
                        "dotprompt.GenerateActionOptions (the one options type)"),
    "ModelResponse": (".types", "dotprompt.types.ModelResponse (what a Model returns; runs return GenerateResponse)"),
    "GenerateRequest": (".types", "dotprompt.types.GenerateRequest"),
    "ToolDefinition": (".types", "dotprompt.types.ToolDefinition"),
    "Model": (".providers.base", "dotprompt.providers.Model"),
    "ModelInfo": (".providers.base", "dotprompt.providers.ModelInfo"),
    "make_tool": (".tools.define", "dotprompt.tool(fn, name=..., description=..., input_schema=...)"),
    "make_interrupt": (".tools.define", "dotprompt.tool(name=..., description=..., input_schema=..., interrupt=True)"),
    "define_interrupt": (".prompts.loader", "dotprompt.define_tool(dotprompt.tool(name=..., interrupt=True))"),
    "GenerateStream": (".generation.api", "dotprompt.generation.api.GenerateStream"),
    "TurnEnvelope": (".generation.middleware", "dotprompt.generation.middleware.TurnEnvelope"),
    "generate_middleware": (".generation.middleware", "dotprompt.generation.middleware.generate_middleware"),
    "Attempt": (".generation.response", "dotprompt.generation.response.Attempt"),
    "InputSpec": (".document.rendered", "dotprompt.document.rendered.InputSpec"),
    "OutputSpec": (".document.rendered", "dotprompt.document.rendered.OutputSpec"),
    "PromptInfo": (".prompts.library", "dotprompt.prompts.library.PromptInfo"),
    "PromptIdentity": (".identity", "dotprompt.identity.PromptIdentity"),
    "InputProblem": (".errors", "dotprompt.errors.InputProblem"),
    "BatchInputError": (".errors", "dotprompt.batch.BatchInputError"),
    "BatchOutputError": (".errors", "dotprompt.batch.BatchOutputError"),
    "BatchJobError": (".errors", "dotprompt.batch.BatchJobError"),
    "DatasetError": (".errors", "dotprompt.evals.DatasetError"),
    "TestFileError": (".errors", "dotprompt.testing.TestFileError"),
    "RecordingMissingError": (".errors", "dotprompt.testing.RecordingMissingError"),
    "CaseFailedError": (".errors", "dotprompt.testing.CaseFailedError"),
    "LocalSetupError": (".errors", "dotprompt.local.LocalSetupError"),
    "RunLogError": (".errors", "dotprompt.observe.RunLogError"),
}

__all__ = [
    "Chunk", "DotpromptError", "Format", "GenerateActionOptions", "GenerateResponse", "GenerationError",
    "GenerationResponseError", "InputValidationError", "Interrupt", "InvalidPromptNameError", "McpServerError", "Media",
    "Message", "ModelError", "OutputParseError", "OutputValidationError", "Part", "PicoschemaError", "Prompt", "PromptFileError",
    "PromptLibrary", "PromptNotFoundError", "RenderError", "RenderedPrompt", "Resume", "SchemaError", "Tool",
    "ToolContext", "ToolExecutionError", "ToolInputError", "ToolRequest", "ToolResponse", "UnknownFormatError",
    "Usage", "UsageError", "__version__", "default_library", "define_format", "define_model", "define_tool",
    "fallback", "generate", "generate_stream", "generate_sync", "load_prompt", "preview_request", "providers", "retry",
    "tool", "validate_and_retry"
]

if TYPE_CHECKING:
    from . import providers
    from .document.rendered import RenderedPrompt
    from .errors import (
        DotpromptError,
        GenerationError,
        GenerationResponseError,
        InputValidationError,
        Interrupt,
        InvalidPromptNameError,
        McpServerError,
        ModelError,
        OutputParseError,
        OutputValidationError,
        PicoschemaError,
        PromptFileError,
        PromptNotFoundError,
        RenderError,
        SchemaError,
        ToolExecutionError,
        ToolInputError,
        UnknownFormatError,
        UsageError,
    )
    from .formats import Format, define_format
    from .generation.api import generate, generate_stream, generate_sync, preview_request
    from .generation.options import GenerateActionOptions, Resume
    from .generation.policies import fallback, retry, validate_and_retry
    from .generation.response import Chunk, GenerateResponse
    from .prompts.library import PromptLibrary
    from .prompts.loader import default_library, define_tool, load_prompt
    from .prompts.prompt import Prompt
    from .providers.registry import define_model
    from .tools.define import Tool, ToolContext, tool
    from .types import Media, Message, Part, ToolRequest, ToolResponse, Usage


def _load(name: str) -> Any:
    module = importlib.import_module(_WHERE[name], __name__)
    return module if name == "providers" else getattr(module, name)


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        module, instead = _MOVED[name]
        warnings.warn(f"dotprompt.{name} is deprecated and leaves the top level in the next release; "
                      f"use {instead}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module, __name__), name)  # not cached: every use warns
    if name not in _WHERE:
        raise AttributeError(f"module 'dotprompt' has no attribute {name!r}")
    value = globals()[name] = _load(name)
    return value


def __dir__() -> list[str]:
    return __all__


globals().update({name: _load(name) for name, module in _WHERE.items() if module in _EAGER})
