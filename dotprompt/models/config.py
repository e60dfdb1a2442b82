"""Provider settings: base URL, API key, timeout and extra headers.

Each comes from, in order: the arguments given in code, `[tool.dotprompt.providers.NAME]` in the
nearest pyproject.toml, then the provider's environment variables. Keys are never read from
pyproject.toml (it is committed); it may name the variable to read instead (`api_key_env`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError


@dataclass(frozen=True)
class ProviderDefaults:
    base_url: str
    key_vars: tuple[str, ...] = ()  # environment variables holding the key, first found wins
    base_url_var: str | None = None
    key_required: bool = True


PROVIDERS: dict[str, ProviderDefaults] = {
    "openai": ProviderDefaults("https://api.openai.com/v1", ("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    "ollama": ProviderDefaults("http://127.0.0.1:11434/v1", (), None, key_required=False),
    "anthropic": ProviderDefaults("https://api.anthropic.com/v1", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL"),
    "googleai": ProviderDefaults("https://generativelanguage.googleapis.com/v1beta", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                                 "GEMINI_BASE_URL"),
}


@dataclass(frozen=True)
class ProviderConfig:
    provider: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)  # never printed
    timeout: float = 120.0
    headers: Mapping[str, str] = field(default_factory=dict)
    deadline: float | None = None  # seconds for a whole call, stream included (None: models/http.py's default)
    max_response_bytes: int | None = None  # the most a reply may send (None: models/http.py's default)


def provider_config(provider: str, *, base_url: str | None = None, api_key: str | None = None,
                    timeout: float | None = None, headers: Mapping[str, str] | None = None,
                    env: Mapping[str, str] | None = None, settings: Mapping[str, Any] | None = None) -> ProviderConfig:
    """The settings for `provider`; a missing key is a UsageError naming the variable to set."""
    env = os.environ if env is None else env
    defaults = PROVIDERS.get(provider, ProviderDefaults("", ()))
    section = _settings(provider) if settings is None else settings
    key_vars = (section["api_key_env"],) if section.get("api_key_env") else defaults.key_vars
    url = base_url or section.get("base_url") or _env_base_url(provider, defaults, env) or defaults.base_url
    key = api_key or next((env[v] for v in key_vars if env.get(v)), None)
    if key is None and defaults.key_required:
        names = " or ".join(key_vars)
        raise UsageError(f"no API key for {provider}: set {names} in the environment "
                         f"(or pass api_key=... when you register the model)")
    return ProviderConfig(provider, url.rstrip("/"), key, float(timeout or section.get("timeout") or 120.0),
                          {**section.get("headers", {}), **(headers or {})},
                          section.get("deadline"), section.get("max_response_bytes"))


def _env_base_url(provider: str, defaults: ProviderDefaults, env: Mapping[str, str]) -> str | None:
    if provider == "ollama" and env.get("OLLAMA_HOST"):
        host = env["OLLAMA_HOST"]
        host = host if "://" in host else f"http://{host}"
        return host.rstrip("/") + "/v1"
    return env.get(defaults.base_url_var) if defaults.base_url_var else None


def _settings(provider: str) -> Mapping[str, Any]:
    from ..loader import project_settings

    settings, _ = project_settings()
    section = settings.get("providers", {}).get(provider, {})
    return section if isinstance(section, Mapping) else {}
