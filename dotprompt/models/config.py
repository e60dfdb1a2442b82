"""Provider settings: what a provider declares about itself, and the settings a model uses.

Each provider module declares a `ProviderSpec` (prefix, key variables, base URL). The settings a
model gets come from, in order: the arguments given in code, `[tool.dotprompt.providers.NAME]` in
the nearest pyproject.toml, then the provider's environment variables, then its declared defaults.
Keys are never read from pyproject.toml (it is committed); it may name the variable to read instead
(`api_key_env`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import settings as project
from ..errors import UsageError

__all__ = ["ProviderConfig", "ProviderSpec", "provider_config"]


@dataclass(frozen=True)
class ProviderSpec:
    """A provider's own declaration: its name prefix, where it lives and where its key comes from."""

    prefix: str
    base_url: str = ""
    key_vars: tuple[str, ...] = ()  # environment variables holding the key, first found wins
    base_url_var: str | None = None
    key_required: bool = True
    base_url_from_env: Callable[[Mapping[str, str]], str | None] | None = None  # for variables of other shapes


@dataclass(frozen=True)
class ProviderConfig:
    provider: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)  # never printed
    timeout: float = project.DEFAULT_TIMEOUT
    headers: Mapping[str, str] = field(default_factory=dict)
    deadline: float | None = None  # seconds for a whole call, stream included (None: models/http.py's default)
    max_response_bytes: int | None = None  # the most a reply may send (None: models/http.py's default)


def provider_config(spec: ProviderSpec, *, base_url: str | None = None, api_key: str | None = None,
                    timeout: float | None = None, headers: Mapping[str, str] | None = None,
                    env: Mapping[str, str] | None = None, settings: Mapping[str, Any] | None = None) -> ProviderConfig:
    """The settings for the provider `spec` declares; a missing key is a UsageError naming the variable to set."""
    env = os.environ if env is None else env
    section = project.provider_section(spec.prefix) if settings is None else settings
    key_vars = (section["api_key_env"],) if section.get("api_key_env") else spec.key_vars
    url = base_url or section.get("base_url") or _env_base_url(spec, env) or spec.base_url
    key = api_key or next((env[v] for v in key_vars if env.get(v)), None)
    if key is None and spec.key_required:
        names = " or ".join(key_vars)
        raise UsageError(f"no API key for {spec.prefix}: set {names} in the environment "
                         f"(or pass api_key=... when you register the model)")
    return ProviderConfig(spec.prefix, url.rstrip("/"), key,
                          float(timeout or section.get("timeout") or project.DEFAULT_TIMEOUT),
                          {**section.get("headers", {}), **(headers or {})},
                          section.get("deadline"), section.get("max_response_bytes"))


def _env_base_url(spec: ProviderSpec, env: Mapping[str, str]) -> str | None:
    if spec.base_url_from_env is not None:
        return spec.base_url_from_env(env)
    return env.get(spec.base_url_var) if spec.base_url_var else None
