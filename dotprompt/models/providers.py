"""The built-in providers, registered through `define_provider` exactly as a user's would be."""

from __future__ import annotations

import importlib
from typing import Any

from .base import Model, ModelInfo, define_provider

OLLAMA_INFO = ModelInfo(label="Ollama (OpenAI-compatible)", constrained="all", media=True)


def _factory(module: str, cls: str, **kwargs: Any) -> Any:
    def make(name: str) -> Model:
        # Each provider's module loads only when one of its models is first used.
        return getattr(importlib.import_module(module, __package__), cls)(name, **kwargs)

    return make


define_provider("openai", _factory(".openai", "OpenAIModel"))
define_provider("ollama", _factory(".openai", "OpenAIModel", info=OLLAMA_INFO))
define_provider("anthropic", _factory(".anthropic", "AnthropicModel"))
define_provider("googleai", _factory(".gemini", "GeminiModel"))
define_provider("local", _factory(".local", "LocalModel"))
