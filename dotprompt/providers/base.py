"""The Model protocol and what a model can do (ModelInfo): all the generate loop knows of a model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from ..types import GenerateRequest, ModelChunk, ModelResponse

__all__ = ["Constrained", "Model", "ModelFactory", "ModelInfo", "OnChunk"]

OnChunk = Callable[[ModelChunk], None]
Constrained = Literal["all", "no-tools", "none"]


@dataclass(frozen=True)
class ModelInfo:
    """Capabilities the loop consults: native constrained output or injected instructions, warnings."""

    label: str = ""
    tools: bool = True
    tool_choice: bool = True
    constrained: Constrained = "none"
    media: bool = False


@runtime_checkable
class Model(Protocol):
    name: str
    info: ModelInfo

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse: ...

    def wire_request(self, request: GenerateRequest, *, stream: bool = False) -> dict[str, Any] | None:
        """The JSON body this model's provider would be sent for `request` (`preview_request(..., wire=True)`),
        or None for a model with no wire format. A class that inherits Model gets this None."""
        return None


ModelFactory = Callable[[str], Model]
"""Makes the model for a full name such as `openai/gpt-4o-mini`."""
