"""Model names to Model objects: `define_model`, `define_provider`, `resolve_model`, the default model.

Built-in providers are a table of prefixes and the modules that declare them (each module's
`PROVIDERS` maps its prefixes to model factories); a module loads when one of its names is first
resolved, and registers through `define_provider`, the same call a user's provider makes.
Any other prefix with a `[tool.dotprompt.providers.NAME]` table is an OpenAI-compatible server
(providers/compatible.py), registered the same way when one of its names is first resolved.
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import Any

from .. import settings
from .._util.suggest import close_matches
from ..errors import UsageError
from .base import Model, ModelFactory
from .config import ProviderSpec

__all__ = ["BUILT_IN_PROVIDERS", "default_model_name", "define_model", "define_provider", "list_models",
           "provider_spec", "resolve_model"]

# prefix -> the module (in this package, or a full dotted path) whose PROVIDERS declares it
BUILT_IN_PROVIDERS = {
    "openai": "openai",
    "ollama": "openai",
    "openai-responses": "openai_responses",
    "azure": "azure",
    "vertexai": "vertex",
    "anthropic": "anthropic",
    "googleai": "gemini",
    "local": "dotprompt.local.model",
}
# Always-present models by name (`echo`): the module whose MODELS makes them.
BUILT_IN_MODELS = {"echo": "dotprompt.doubles"}
# The provider whose module's `default_local_model()` names the model to use when none is named
# anywhere (or None while it is not set up): the local model sits above this package, found by name
# like every provider, so the registry imports none of it.
FALLBACK_PROVIDER = "local"

_models: dict[str, Model] = {}
_providers: dict[str, ModelFactory] = {}
_lock = threading.Lock()
_built_ins_loaded = False


def default_model_name() -> str:
    """The model to use when none is named anywhere: $DOTPROMPT_MODEL, else the local model if it is set up."""
    chosen = settings.env_model() or _declared(BUILT_IN_PROVIDERS[FALLBACK_PROVIDER], "default_local_model")()
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
    global _built_ins_loaded
    if _built_ins_loaded:
        return
    for name, module in BUILT_IN_MODELS.items():
        if name not in _models:
            define_model(_declared(module, "MODELS")[name](), name)
    for prefix, module in BUILT_IN_PROVIDERS.items():
        if prefix not in _providers:
            define_provider(prefix, _lazy_factory(prefix, module))
    _built_ins_loaded = True


def _lazy_factory(prefix: str, module: str) -> ModelFactory:
    def make(name: str) -> Model:
        # A provider's module (and its HTTP stack) loads only when one of its models is first used.
        return _declared(module, "PROVIDERS")[prefix](name)

    return make


def _declared(module: str, table: str) -> Any:  # a table (PROVIDERS, MODELS) or a function (configured_model)
    return getattr(importlib.import_module(_module_path(module)), table)


def provider_spec(prefix: str) -> ProviderSpec | None:
    """What the provider of `prefix/...` declares (built-in or configured), without making a model or needing a key."""
    if prefix in BUILT_IN_PROVIDERS:
        return _built_in_spec(prefix)
    return ProviderSpec(prefix) if prefix in _configured_prefixes() else None


@functools.cache
def _built_in_spec(prefix: str) -> ProviderSpec | None:
    # Asked for on every priced call; a built-in module's declarations never change.
    declared = vars(importlib.import_module(_module_path(BUILT_IN_PROVIDERS[prefix]))).values()
    return next((s for s in declared if isinstance(s, ProviderSpec) and s.prefix == prefix), None)


def _configured_factory(prefix: str) -> ModelFactory | None:
    """A factory for `prefix/...` from its `[tool.dotprompt.providers.prefix]` table, if it has one."""
    section = settings.provider_sections().get(prefix)
    if section is None or prefix in BUILT_IN_PROVIDERS:
        return None
    make = _declared("compatible", "configured_model")
    return lambda name: make(name, section)


def _configured_prefixes() -> list[str]:
    try:
        return [p for p in settings.provider_sections() if p not in BUILT_IN_PROVIDERS]
    except UsageError:  # a broken table is reported when a name using it is resolved, not in a listing
        return []


def list_models() -> list[str]:
    _load_built_ins()
    prefixes = {*_providers, *_configured_prefixes()}
    return sorted(_models) + sorted(f"{p}/..." for p in prefixes)


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
    if factory is None and "/" in model and (factory := _configured_factory(prefix)) is not None:
        define_provider(prefix, factory)
    if factory is not None and "/" in model:
        made = factory(model)
        with _lock:
            return _models.setdefault(model, made)
    known = list_models()
    close = close_matches(model, known, n=3)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise UsageError(f"unknown model {model!r}{hint}; known: {', '.join(known) or 'none'}; "
                     "register one with dotprompt.providers.define_model, or describe an OpenAI-compatible server "
                     f"in [tool.dotprompt.providers.{prefix}] (base_url = ...)")


def _module_path(module: str) -> str:
    return module if "." in module else f"{__package__}.{module}"
