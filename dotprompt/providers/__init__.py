"""The model seam: the Model protocol, capabilities, the registry, the provider classes and their settings.

The provider classes and `ProviderConfig` / `ProviderSpec` load on first use (each provider module
brings its wire code, and loading them here would run imports in a cycle); type checkers read them
from the `TYPE_CHECKING` block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names
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


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
