"""OpenAI-compatible servers by configuration only: `[tool.dotprompt.providers.NAME]` makes `NAME/model` work.

    [tool.dotprompt.providers.openrouter]
    base_url = "https://openrouter.ai/api/v1"     # required: the server's OpenAI-compatible root
    api_key_env = "OPENROUTER_API_KEY"            # optional: local servers (vLLM, LM Studio) need none
    headers = {"X-Title" = "invoices"}            # optional
    api = "chat"                                  # or "responses" (POST /responses)
    constrained = "all"                           # native JSON schema: all, no-tools, none (instructions)

The table's other keys (timeout, deadline, max_response_bytes) are every provider's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from .base import Model, ModelInfo
from .config import ProviderSpec, check_section, provider_config
from .openai import OpenAIModel
from .openai_responses import OpenAIResponsesModel

__all__ = ["configured_model"]

APIS: dict[str, type[OpenAIModel] | type[OpenAIResponsesModel]] = {"chat": OpenAIModel, "responses": OpenAIResponsesModel}
CONSTRAINED = ("all", "no-tools", "none")


def configured_model(name: str, section: Mapping[str, Any]) -> Model:
    """The model `name` (`NAME/model`) of the server its table describes; a bad table is a UsageError naming it."""
    prefix = name.partition("/")[0]
    table = f"[tool.dotprompt.providers.{prefix}]"
    key_var = section.get("api_key_env")
    spec = ProviderSpec(prefix, key_vars=(key_var,) if isinstance(key_var, str) and key_var else (),
                        key_required=bool(key_var), settings_keys=("api", "constrained"))
    check_section(spec, section)
    if not section.get("base_url"):
        raise UsageError(f"{table} in pyproject.toml has no base_url: set it to the server's OpenAI-compatible root "
                         f"(e.g. base_url = \"http://localhost:8000/v1\") to use {name}")
    api = section.get("api", "chat")
    if api not in APIS:
        raise UsageError(f"{table} in pyproject.toml: `api` must be one of {', '.join(APIS)}, got {api!r}")
    constrained = section.get("constrained", "all")
    if constrained not in CONSTRAINED:
        raise UsageError(f"{table} in pyproject.toml: `constrained` must be one of {', '.join(CONSTRAINED)}, "
                         f"got {constrained!r}")
    info = ModelInfo(label=f"{prefix} (OpenAI-compatible)", constrained=constrained, media=True)
    return APIS[api](name, config=provider_config(spec, settings=section), info=info)
