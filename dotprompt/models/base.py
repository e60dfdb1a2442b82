"""The Model protocol, what a model can do (ModelInfo), and the registry that resolves names.

Built-in models register through `define_model` / `define_provider`, the same calls a user makes.
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ..errors import UsageError
from ..types import GenerateRequest, ModelChunk, ModelResponse

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
    system_role: bool = True
    multiturn: bool = True
    streaming: bool = True


@runtime_checkable
class Model(Protocol):
    name: str
    info: ModelInfo

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse: ...


ModelFactory = Callable[[str], Model]

_models: dict[str, Model] = {}
_providers: dict[str, ModelFactory] = {}
_lock = threading.Lock()


def default_model_name() -> str:
    """The model to use when none is named anywhere: $DOTPROMPT_MODEL, else the local model if it is set up."""
    from .local import default_local_model

    chosen = os.environ.get("DOTPROMPT_MODEL") or default_local_model()
    if chosen:
        return chosen
    raise UsageError("no model given and none configured: set `model:` in the prompt file, pass --model / model=..., "
                     "set DOTPROMPT_MODEL, or run `dotprompt local setup` to use a small local model offline")


def define_model(model: Model, name: str | None = None) -> Model:
    """Register a model under its name (or `name`); a later definition replaces an earlier one."""
    with _lock:
        _models[name or model.name] = model
    return model


def define_provider(prefix: str, factory: ModelFactory) -> None:
    """Resolve every `prefix/anything` name by calling `factory("prefix/anything")` (once per name)."""
    with _lock:
        _providers[prefix] = factory


def _load_built_ins() -> None:
    # Built-in models and providers register themselves on import, through the public calls.
    from . import providers, testing  # noqa: F401


def list_models() -> list[str]:
    _load_built_ins()
    return sorted(_models) + sorted(f"{p}/..." for p in _providers)


def resolve_model(model: str | Model | None) -> Model:
    if model is None:
        model = default_model_name()
    if not isinstance(model, str):
        return model
    _load_built_ins()
    found = _models.get(model)
    if found is not None:
        return found
    prefix = model.partition("/")[0]
    factory = _providers.get(prefix)
    if factory is not None and "/" in model:
        made = factory(model)
        with _lock:
            return _models.setdefault(model, made)
    known = list_models()
    close = difflib.get_close_matches(model, known, n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise UsageError(f"unknown model {model!r}{hint}; known: {', '.join(known) or 'none'}; "
                     "register one with dotprompt.models.define_model")
