"""Render for the page: the messages exactly as `dotprompt render --json` prints them, and the body each
provider would POST (`preview_request(wire=True)`).

A wire body does not depend on the API key, so a provider without one is previewed through a model
built with no key (nothing is sent); the prompt's own model, when it resolves, is previewed as the
run would build it (its base URL, its table in pyproject.toml).
"""

from __future__ import annotations

from typing import Any

from ..errors import DotpromptError
from ..generation.api import RunSource, preview
from ..prompts.library import PromptLibrary
from ..prompts.prompt import render_record
from ..providers.anthropic import AnthropicModel
from ..providers.base import Model
from ..providers.config import ProviderConfig
from ..providers.gemini import GeminiModel
from ..providers.openai import OpenAIModel
from ..providers.registry import resolve_model

__all__ = ["PREVIEW_MODELS", "render", "wire_bodies"]

# One model per wire format the page previews besides the prompt's own.
PREVIEW_MODELS: dict[str, tuple[type[Any], str]] = {
    "openai/gpt-4o-mini": (OpenAIModel, "https://api.openai.com/v1"),
    "anthropic/claude-sonnet-4-5": (AnthropicModel, "https://api.anthropic.com/v1"),
    "googleai/gemini-2.5-flash": (GeminiModel, "https://generativelanguage.googleapis.com/v1beta"),
}


def render(library: PromptLibrary, name: str, variant: str | None, data: Any, context: Any) -> dict[str, Any]:
    prompt = library.load(name, variant)
    rendered = prompt.render(data, context=context)
    options = prompt.to_options(data, context=context)
    return {"rendered": render_record(prompt, rendered), "wire": wire_bodies(library, options, rendered.model)}


def wire_bodies(library: PromptLibrary, options: Any, own: str | None) -> list[dict[str, Any]]:
    names = list(dict.fromkeys([*([own] if own else []), *PREVIEW_MODELS]))
    return [_wire(library, options, name) for name in names]


def _wire(library: PromptLibrary, options: Any, name: str) -> dict[str, Any]:
    try:
        body = preview(options, RunSource(library=library), model=_preview_model(name), wire=True)
    except DotpromptError as exc:
        return {"model": name, "error": str(exc)}
    return {"model": name, "body": body}


def _preview_model(name: str) -> Model | str:
    try:
        return resolve_model(name)
    except DotpromptError:
        if name not in PREVIEW_MODELS:
            raise
    kind, base_url = PREVIEW_MODELS[name]
    return kind(name, config=ProviderConfig(name.partition("/")[0], base_url, None))
