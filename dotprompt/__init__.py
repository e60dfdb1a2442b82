"""Prompt files (`.prompt`: YAML frontmatter + a jinja2 template) as code: render, run, validate.

The public API is the one table below: each public name and the module that defines it. Modules
marked eager load with the package (rendering and `dotprompt check` need only them); the running
side (the loop, tools, models, formats) loads on first use of one of its names.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EAGER = frozenset({".errors", ".identity", ".library", ".loader", ".prompt", ".rendered", ".types"})

_API: dict[str, tuple[str, ...]] = {
    ".errors": ("DotpromptError", "GenerationError", "GenerationResponseError", "InputProblem", "InputValidationError",
                "Interrupt", "InvalidPromptNameError", "ModelError", "OutputValidationError", "PicoschemaError",
                "PromptFileError", "PromptNotFoundError", "RenderError", "RunLogError", "SchemaError", "ToolExecutionError",
                "UsageError"),
    ".identity": ("PromptIdentity",),
    ".library": ("PromptInfo", "PromptLibrary"),
    ".loader": ("default_library", "load_prompt"),
    ".prompt": ("Prompt",),
    ".rendered": ("InputSpec", "OutputSpec", "RenderedPrompt"),
    ".types": ("GenerateRequest", "Media", "Message", "ModelResponse", "Part", "ToolDefinition", "ToolRequest",
               "ToolResponse", "Usage"),
    ".formats": ("Format", "define_format"),
    ".generation.api": ("GenerateStream", "generate", "generate_stream", "generate_sync", "preview_request"),
    ".generation.middleware": ("TurnEnvelope", "generate_middleware"),
    ".generation.policies": ("fallback", "retry", "validate_and_retry"),
    ".generation.options": ("GenerateActionOptions", "GenerateOptions", "Resume"),
    ".generation.response": ("Attempt", "Chunk", "GenerateResponse"),
    ".models.base": ("Model", "ModelInfo"),
    ".models.registry": ("define_model",),
    ".models.doubles": ("EchoModel", "ScriptedModel"),
    ".tools": ("Tool", "ToolContext", "define_interrupt", "define_tool", "tool"),
    ".models": ("models",),  # the subpackage itself: dotprompt.models.define_provider, ...
}

_WHERE = {name: module for module, names in _API.items() for name in names}

__all__ = sorted([*_WHERE, "__version__"])


def _load(name: str) -> Any:
    module = importlib.import_module(_WHERE[name], __name__)
    return module if name == "models" else getattr(module, name)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'dotprompt' has no attribute {name!r}")
    value = globals()[name] = _load(name)
    return value


def __dir__() -> list[str]:
    return __all__


globals().update({name: _load(name) for name, module in _WHERE.items() if module in _EAGER})
