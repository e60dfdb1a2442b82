"""Provider settings: what a provider declares about itself, and the settings a model uses.

Each provider module declares a `ProviderSpec` (prefix, key variables, base URL). The settings a
model gets come from, in order: the arguments given in code, `[tool.dotprompt.providers.NAME]` in
the nearest pyproject.toml, then the provider's environment variables, then its declared defaults.
Keys are never read from pyproject.toml (it is committed); it may name the variable to read instead
(`api_key_env`). The table is checked before use: a key of the wrong type or one no provider reads
is a UsageError naming the table and the key (a typo in `base_url` must not send calls elsewhere).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import settings as project
from .._util.suggest import close_matches
from ..errors import UsageError

__all__ = ["SETTINGS_KEYS", "ProviderConfig", "ProviderSpec", "check_keys", "check_section", "endpoint_url", "provider_config"]

# Keys every provider's table may hold (a provider module adds its own through ProviderSpec.settings_keys).
SETTINGS_KEYS = ("base_url", "api_key_env", "timeout", "headers", "deadline", "max_response_bytes")


@dataclass(frozen=True)
class ProviderSpec:
    """A provider's own declaration: its name prefix, where it lives and where its key comes from."""

    prefix: str
    base_url: str = ""
    key_vars: tuple[str, ...] = ()  # environment variables holding the key, first found wins
    base_url_var: str | None = None
    key_required: bool = True
    base_url_from_env: Callable[[Mapping[str, str]], str | None] | None = None  # for variables of other shapes
    settings_keys: tuple[str, ...] = ()  # text keys of its [tool.dotprompt.providers.NAME] table beyond SETTINGS_KEYS
    prices_id: str | None = None  # genai-prices' provider id, for pricing when no endpoint URL is known (see cost.py)


@dataclass(frozen=True)
class ProviderConfig:
    provider: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)  # never printed
    timeout: float = project.DEFAULT_TIMEOUT
    headers: Mapping[str, str] = field(default_factory=dict)
    deadline: float | None = None  # seconds for a whole call, stream included (None: settings.DEFAULT_DEADLINE)
    max_response_bytes: int | None = None  # the most a reply may send (None: settings.DEFAULT_MAX_RESPONSE_BYTES)
    timeout_hint: str = ""  # said after a timeout's fix, where the provider knows a better one


def provider_config(spec: ProviderSpec, *, base_url: str | None = None, api_key: str | None = None,
                    timeout: float | None = None, headers: Mapping[str, str] | None = None,
                    env: Mapping[str, str] | None = None, settings: Mapping[str, Any] | None = None) -> ProviderConfig:
    """The settings for the provider `spec` declares; a missing key is a UsageError naming the variable to set."""
    env = project.environment() if env is None else env
    section = project.provider_section(spec.prefix) if settings is None else settings
    check_section(spec, section)
    key_vars = (section["api_key_env"],) if section.get("api_key_env") else spec.key_vars
    url = base_url or endpoint_url(spec, env, section)
    key = api_key or next((env[v] for v in key_vars if env.get(v)), None)
    if key is None and spec.key_required:
        names = " or ".join(key_vars)
        raise UsageError(f"no API key for {spec.prefix}: set {names} in the environment "
                         f"(or pass api_key=... when you register the model)")
    return ProviderConfig(spec.prefix, url.rstrip("/"), key,
                          float(timeout or section.get("timeout") or project.DEFAULT_TIMEOUT),
                          {**section.get("headers", {}), **(headers or {})},
                          section.get("deadline"), section.get("max_response_bytes"))


def endpoint_url(spec: ProviderSpec, env: Mapping[str, str] | None = None,
                 section: Mapping[str, Any] | None = None) -> str:
    """The base URL calls go to: the table's `base_url`, else the provider's variable, else its default.
    Needs no key, so the cost of a replayed call can be looked up by endpoint on a machine without one."""
    env = project.environment() if env is None else env
    section = project.provider_section(spec.prefix) if section is None else section
    return str(section.get("base_url") or _env_base_url(spec, env) or spec.base_url)


def check_section(spec: ProviderSpec, section: Mapping[str, Any]) -> None:
    """A UsageError naming `[tool.dotprompt.providers.PREFIX]` and the key, for the first bad entry."""
    check_keys(spec.prefix, section, (*SETTINGS_KEYS, *spec.settings_keys))


def check_keys(prefix: str, section: Mapping[str, Any], known: tuple[str, ...]) -> None:
    """The same check for a table that reads only the keys `known` (the local model's, for one)."""
    table = f"[tool.dotprompt.providers.{prefix}]"
    for key, value in section.items():
        if key not in known:
            close = close_matches(str(key), known)
            hint = f"did you mean `{close[0]}`?" if close else f"known keys: {', '.join(known)}"
            raise UsageError(f"{table} in pyproject.toml: unknown key {key!r} ({hint})")
        problem = _value_problem(key, value)
        if problem:
            raise UsageError(f"{table} in pyproject.toml: `{key}` must be {problem}, got {value!r}"[:500])


def _value_problem(key: str, value: Any) -> str | None:
    if key == "base_url":
        ok = isinstance(value, str) and value.startswith(("http://", "https://"))
        return None if ok else "an http:// or https:// URL"
    if key in ("timeout", "deadline"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
        return None if ok else "a number of seconds above 0"
    if key == "max_response_bytes":
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        return None if ok else "a whole number of bytes above 0"
    if key == "headers":
        ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        return None if ok else "a table of header names to text values"
    return None if isinstance(value, str) and value else "a non-empty string"


def _env_base_url(spec: ProviderSpec, env: Mapping[str, str]) -> str | None:
    if spec.base_url_from_env is not None:
        return spec.base_url_from_env(env)
    return env.get(spec.base_url_var) if spec.base_url_var else None
