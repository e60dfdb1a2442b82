"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate."""

from __future__ import annotations

from . import models as models
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
from .formats import Format, define_format
from .generate.api import GenerateStream, generate, generate_stream, generate_sync, preview_request
from .generate.middleware import TurnEnvelope, fallback, generate_middleware, retry, validate_and_retry
from .generate.options import GenerateActionOptions, GenerateOptions, Resume
from .generate.response import Attempt, Chunk, GenerateResponse
from .library import PromptInfo, PromptLibrary
from .loader import default_library, load_prompt
from .models.base import Model, ModelInfo, define_model
from .models.testing import EchoModel, ScriptedModel
from .picoschema import PicoschemaError
from .prompt import Prompt
from .rendered import InputSpec, OutputSpec, RenderedPrompt
from .tools import Interrupt, Tool, define_interrupt, define_tool, tool
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
