"""The model seam: the Model protocol, capabilities, the registry, the provider classes and their settings.

The provider classes and `ProviderConfig` / `ProviderSpec` load on first use (each provider module
brings its wire code, and loading them here would run imports in a cycle); type checkers read them
from the `TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Model, ModelInfo, OnChunk
from .registry import define_model, define_provider, list_models, resolve_model

_LAZY = {
    "AnthropicModel": ".anthropic",
    "AzureOpenAIModel": ".azure",
    "GeminiModel": ".gemini",
    "OpenAIModel": ".openai",
    "OpenAIResponsesModel": ".openai_responses",
    "ProviderConfig": ".config",
    "ProviderSpec": ".config",
    "VertexGeminiModel": ".vertex",
}

__all__ = ["AnthropicModel", "AzureOpenAIModel", "GeminiModel", "Model", "ModelInfo", "OnChunk", "OpenAIModel",
           "OpenAIResponsesModel", "ProviderConfig", "ProviderSpec", "VertexGeminiModel", "define_model",
           "define_provider", "list_models", "resolve_model"]

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .azure import AzureOpenAIModel
    from .config import ProviderConfig, ProviderSpec
    from .gemini import GeminiModel
    from .openai import OpenAIModel
    from .openai_responses import OpenAIResponsesModel
    from .vertex import VertexGeminiModel


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name], __name__), name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
