"""The model seam: the Model protocol, capabilities, the registry, and shipped test doubles."""

from .base import Model, ModelInfo, OnChunk
from .registry import define_model, define_provider, list_models, resolve_model

__all__ = ["Model", "ModelInfo", "OnChunk", "define_model", "define_provider", "list_models", "resolve_model"]
