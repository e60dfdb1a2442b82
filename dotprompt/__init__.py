"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    DotpromptError,
    GenerationError,
    GenerationResponseError,
    InputProblem,
    InputValidationError,
    InvalidPromptNameError,
    ModelError,
    OutputValidationError,
    PromptFileError,
    PromptNotFoundError,
    RenderError,
    SchemaError,
    ToolExecutionError,
    UsageError,
)
from .library import PromptInfo, PromptLibrary
from .loader import default_library, load_prompt
from .picoschema import PicoschemaError
from .prompt import Prompt
from .rendered import InputSpec, OutputSpec, RenderedPrompt
from .types import (
    GenerateRequest,
    Media,
    Message,
    ModelResponse,
    Part,
    ToolDefinition,
    ToolRequest,
    ToolResponse,
    Usage,
)

# Running prompts (the loop, tools, models, formats) loads on first use, so rendering and
# `dotprompt check` never pay for it.
_LAZY = {
    "Format": ".formats", "define_format": ".formats",
    "GenerateStream": ".generation.api", "generate": ".generation.api", "generate_stream": ".generation.api",
    "generate_sync": ".generation.api", "preview_request": ".generation.api",
    "TurnEnvelope": ".generation.middleware", "fallback": ".generation.middleware",
    "generate_middleware": ".generation.middleware", "retry": ".generation.middleware",
    "validate_and_retry": ".generation.middleware",
    "GenerateActionOptions": ".generation.options", "GenerateOptions": ".generation.options", "Resume": ".generation.options",
    "Attempt": ".generation.response", "Chunk": ".generation.response", "GenerateResponse": ".generation.response",
    "Model": ".models.base", "ModelInfo": ".models.base", "define_model": ".models.registry",
    "EchoModel": ".models.doubles", "ScriptedModel": ".models.doubles",
    "Interrupt": ".tools", "Tool": ".tools", "define_interrupt": ".tools", "define_tool": ".tools", "tool": ".tools",
    "models": ".models",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'dotprompt' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name, __name__)
    value = module if name == "models" else getattr(module, name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from . import models
    from .formats import Format, define_format
    from .generation.api import GenerateStream, generate, generate_stream, generate_sync, preview_request
    from .generation.middleware import TurnEnvelope, fallback, generate_middleware, retry, validate_and_retry
    from .generation.options import GenerateActionOptions, GenerateOptions, Resume
    from .generation.response import Attempt, Chunk, GenerateResponse
    from .models.base import Model, ModelInfo
    from .models.doubles import EchoModel, ScriptedModel
    from .models.registry import define_model
    from .tools import Interrupt, Tool, define_interrupt, define_tool, tool

__version__ = "0.1.0"

__all__ = [
    "Attempt",
    "Chunk",
    "DotpromptError",
    "EchoModel",
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
    "Media",
    "Message",
    "Model",
    "ModelError",
    "ModelInfo",
    "ModelResponse",
    "OutputSpec",
    "OutputValidationError",
    "Part",
    "PicoschemaError",
    "Prompt",
    "PromptFileError",
    "PromptInfo",
    "PromptLibrary",
    "PromptNotFoundError",
    "RenderError",
    "RenderedPrompt",
    "Resume",
    "SchemaError",
    "ScriptedModel",
    "Tool",
    "ToolDefinition",
    "ToolExecutionError",
    "ToolRequest",
    "ToolResponse",
    "TurnEnvelope",
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
    "models",
    "preview_request",
    "retry",
    "tool",
    "validate_and_retry",
]
