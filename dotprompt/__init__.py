"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate."""

from __future__ import annotations

from .errors import (
    DotpromptError,
    InputProblem,
    InputValidationError,
    InvalidPromptNameError,
    PromptFileError,
    PromptNotFoundError,
    RenderError,
    SchemaError,
)
from .library import PromptInfo, PromptLibrary
from .loader import default_library, load_prompt
from .picoschema import PicoschemaError
from .prompt import Prompt
from .rendered import InputSpec, OutputSpec, RenderedPrompt
from .types import Media, Message, Part, ToolDefinition, ToolRequest, ToolResponse

__version__ = "0.1.0"

__all__ = [
    "DotpromptError",
    "InputProblem",
    "InputSpec",
    "InputValidationError",
    "InvalidPromptNameError",
    "Media",
    "Message",
    "OutputSpec",
    "Part",
    "PicoschemaError",
    "Prompt",
    "PromptFileError",
    "PromptInfo",
    "PromptLibrary",
    "PromptNotFoundError",
    "RenderError",
    "RenderedPrompt",
    "SchemaError",
    "ToolDefinition",
    "ToolRequest",
    "ToolResponse",
    "__version__",
    "default_library",
    "load_prompt",
]
