"""Middleware: three onion chains of the same shape (the built-in policies are in policies.py).

- generate middleware wraps a turn: `hook(envelope, next) -> GenerateResponse`; the envelope has the
  action options, the current turn and the message index. A turn includes the turns after it, so the
  layer around turn 0 sees the final response (and any error) of the whole run.
- model middleware wraps one model call: `hook(request, next) -> ModelResponse`.
- tool middleware wraps each tool execution (restarts included): `hook(part, next) -> Part`, from the
  tool-request part (its metadata too) to the tool-response part. It may time, authorise, retry, or
  raise `Interrupt` to turn a failure into a question for a human.
A middleware is an object with `generate`, `model` and/or `tool` methods (and an optional `tools`
list: tools it adds to every run it is used in, as Genkit's middleware can), or a plain async
callable: model level by default, generate level when decorated with `@generate_middleware`. A
layer without the hook is skipped.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..providers.base import Model
from ..types import GenerateRequest, ModelResponse
from .options import GenerateActionOptions
from .response import GenerateResponse

__all__ = ["GenerateNext", "ModelNext", "TurnEnvelope", "added_tools", "chain", "generate_hook", "generate_middleware",
           "model_hook", "model_override", "tool_hook"]

ModelNext = Callable[[GenerateRequest], Awaitable[ModelResponse]]
GenerateNext = Callable[["TurnEnvelope"], Awaitable[GenerateResponse]]

# The model the chain end calls, when a layer (fallback) swaps it for the layers inside it.
model_override: contextvars.ContextVar[Model | None] = contextvars.ContextVar("dotprompt_model_override", default=None)


@dataclass(frozen=True)
class TurnEnvelope:
    request: GenerateActionOptions
    current_turn: int
    message_index: int


def generate_middleware(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a plain async callable `(envelope, next)` as generate-level middleware."""
    fn.__dotprompt_level__ = "generate"  # type: ignore[attr-defined]
    return fn


def model_hook(layer: Any) -> Callable[..., Any] | None:
    hook = getattr(layer, "model", None)
    if callable(hook):
        return hook
    if (callable(layer) and getattr(layer, "__dotprompt_level__", "model") == "model"
            and not hasattr(layer, "generate") and not hasattr(layer, "tool")):
        return layer
    return None


def tool_hook(layer: Any) -> Callable[..., Any] | None:
    hook = getattr(layer, "tool", None)
    return hook if callable(hook) else None


def added_tools(layer: Any) -> list[Any]:
    """The tools a middleware brings with it (its `tools` attribute)."""
    tools = getattr(layer, "tools", None)
    return list(tools) if isinstance(tools, (list, tuple)) else []


def generate_hook(layer: Any) -> Callable[..., Any] | None:
    hook = getattr(layer, "generate", None)
    if callable(hook):
        return hook
    if callable(layer) and getattr(layer, "__dotprompt_level__", None) == "generate":
        return layer
    return None


def chain(hooks: Sequence[Callable[..., Any]], end: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """Compose hooks as an onion around `end`: the first hook is the outermost."""
    call = end
    for hook in reversed(hooks):
        call = _layer(hook, call)
    return call


def _layer(hook: Callable[..., Any], inner: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    async def run(value: Any) -> Any:
        async def next_(changed: Any = None) -> Any:
            return await inner(value if changed is None else changed)

        return await hook(value, next_)

    return run
