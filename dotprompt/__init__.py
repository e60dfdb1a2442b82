"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate.

The public API is the table below: each public name and the module that defines it. Only the errors
load with the package (`except dotprompt.DotpromptError` needs them, and they import nothing heavy);
every other name loads its module on first use, so `import dotprompt` brings no pydantic, jinja2 or
YAML until a prompt is loaded. Type checkers read the same names from the `TYPE_CHECKING` block, so
`dotprompt.generate` is typed in an IDE although it loads late.
Every `define_*` registers (`define_tool`, `define_interrupt`: into `default_library()`; `define_model`,
`define_format`: into their registries); `make_tool`, `make_interrupt` and `@tool` only build a Tool.
Subpackages with a public face of their own: `dotprompt.providers` (provider classes, the model
registry), `dotprompt.doubles` (test doubles at the model seam), `dotprompt.batch`, `dotprompt.testing`,
`dotprompt.evals`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EAGER = frozenset({".errors"})

_API: dict[str, tuple[str, ...]] = {
    ".errors": ("BatchInputError", "BatchJobError", "BatchOutputError", "CaseFailedError", "DatasetError",
                "DotpromptError", "GenerationError", "GenerationResponseError", "InputProblem",
                "InputValidationError", "Interrupt", "InvalidPromptNameError", "LocalSetupError", "ModelError",
                "OutputParseError", "OutputValidationError", "PicoschemaError", "PromptFileError",
                "PromptNotFoundError", "RecordingMissingError", "RenderError", "RunLogError", "SchemaError",
                "TestFileError", "ToolExecutionError", "ToolInputError", "UnknownFormatError", "UsageError"),
    ".identity": ("PromptIdentity",),
    ".prompts.library": ("PromptInfo", "PromptLibrary"),
    ".prompts.loader": ("default_library", "define_interrupt", "define_tool", "load_prompt"),
    ".prompts.prompt": ("Prompt",),
    ".document.rendered": ("InputSpec", "OutputSpec", "RenderedPrompt"),
    ".types": ("GenerateRequest", "Media", "Message", "ModelResponse", "Part", "ToolDefinition", "ToolRequest",
               "ToolResponse", "Usage"),
    ".formats": ("Format", "define_format"),
    ".generation.api": ("GenerateStream", "generate", "generate_stream", "generate_sync", "preview_request"),
    ".generation.middleware": ("TurnEnvelope", "generate_middleware"),
    ".generation.policies": ("fallback", "retry", "validate_and_retry"),
    ".generation.options": ("GenerateActionOptions", "GenerateOptions", "Resume"),
    ".generation.response": ("Attempt", "Chunk", "GenerateResponse"),
    ".providers.base": ("Model", "ModelInfo"),
    ".providers.registry": ("define_model",),
    ".tools.define": ("Tool", "ToolContext", "make_interrupt", "make_tool", "tool"),
    ".providers": ("providers",),  # the subpackage itself: dotprompt.providers.define_provider, ...
}

_WHERE = {name: module for module, names in _API.items() for name in names}

__all__ = [
    "Attempt",
    "BatchInputError",
    "BatchJobError",
    "BatchOutputError",
    "CaseFailedError",
    "Chunk",
    "DatasetError",
    "DotpromptError",
    "Format",
    "GenerateActionOptions",
    "GenerateOptions",
    "GenerateRequest",
    "GenerateResponse",
    "GenerateStream",
    "GenerationError",
    "GenerationResponseError",
    "InputProblem",
    "InputSpec",
    "InputValidationError",
    "Interrupt",
    "InvalidPromptNameError",
    "LocalSetupError",
    "Media",
    "Message",
    "Model",
    "ModelError",
    "ModelInfo",
    "ModelResponse",
    "OutputParseError",
    "OutputSpec",
    "OutputValidationError",
    "Part",
    "PicoschemaError",
    "Prompt",
    "PromptFileError",
    "PromptIdentity",
    "PromptInfo",
    "PromptLibrary",
    "PromptNotFoundError",
    "RecordingMissingError",
    "RenderError",
    "RenderedPrompt",
    "Resume",
    "RunLogError",
    "SchemaError",
    "TestFileError",
    "Tool",
    "ToolContext",
    "ToolDefinition",
    "ToolExecutionError",
    "ToolInputError",
    "ToolRequest",
    "ToolResponse",
    "TurnEnvelope",
    "UnknownFormatError",
    "Usage",
    "UsageError",
    "__version__",
    "default_library",
    "define_format",
    "define_interrupt",
    "define_model",
    "define_tool",
    "fallback",
    "generate",
    "generate_middleware",
    "generate_stream",
    "generate_sync",
    "load_prompt",
    "make_interrupt",
    "make_tool",
    "preview_request",
    "providers",
    "retry",
    "tool",
    "validate_and_retry"
]

if TYPE_CHECKING:
    from . import providers
    from .document.rendered import InputSpec, OutputSpec, RenderedPrompt
    from .errors import (
        BatchInputError,
        BatchJobError,
        BatchOutputError,
        CaseFailedError,
        DatasetError,
        DotpromptError,
        GenerationError,
        GenerationResponseError,
        InputProblem,
        InputValidationError,
        Interrupt,
        InvalidPromptNameError,
        LocalSetupError,
        ModelError,
        OutputParseError,
        OutputValidationError,
        PicoschemaError,
        PromptFileError,
        PromptNotFoundError,
        RecordingMissingError,
        RenderError,
        RunLogError,
        SchemaError,
        TestFileError,
        ToolExecutionError,
        ToolInputError,
        UnknownFormatError,
        UsageError,
    )
    from .formats import Format, define_format
    from .generation.api import GenerateStream, generate, generate_stream, generate_sync, preview_request
    from .generation.middleware import TurnEnvelope, generate_middleware
    from .generation.options import GenerateActionOptions, GenerateOptions, Resume
    from .generation.policies import fallback, retry, validate_and_retry
    from .generation.response import Attempt, Chunk, GenerateResponse
    from .identity import PromptIdentity
    from .prompts.library import PromptInfo, PromptLibrary
    from .prompts.loader import default_library, define_interrupt, define_tool, load_prompt
    from .prompts.prompt import Prompt
    from .providers.base import Model, ModelInfo
    from .providers.registry import define_model
    from .tools.define import Tool, ToolContext, make_interrupt, make_tool, tool
    from .types import GenerateRequest, Media, Message, ModelResponse, Part, ToolDefinition, ToolRequest, ToolResponse, Usage


def _load(name: str) -> Any:
    module = importlib.import_module(_WHERE[name], __name__)
    return module if name == "providers" else getattr(module, name)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'dotprompt' has no attribute {name!r}")
    value = globals()[name] = _load(name)
    return value


def __dir__() -> list[str]:
    return __all__


globals().update({name: _load(name) for name, module in _WHERE.items() if module in _EAGER})
