"""Gemini on Vertex AI: `vertexai/gemini-2.5-flash`, the names Genkit `.prompt` files use.

The wire is the Gemini API's (providers/gemini.py builds the body and reads the reply); only the
place and the credentials differ: `{root}/projects/{project}/locations/{location}/publishers/google/
models/{model}:generateContent` with `Authorization: Bearer <token>`. No Google SDK: the token comes
from `token_provider=` (a callable, e.g. google-auth's `credentials.refresh(...)` then `.token`) or
from `$GOOGLE_OAUTH_ACCESS_TOKEN` (e.g. `gcloud auth print-access-token`), read per request.
The project is `project` in `[tool.dotprompt.providers.vertexai]`, `$GOOGLE_CLOUD_PROJECT` or
`$GCLOUD_PROJECT`; the location `location` there, `$GOOGLE_CLOUD_LOCATION` or `$GCLOUD_LOCATION`,
else `us-central1` (Genkit's default); `global` uses the global endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from .. import settings as project_settings
from .._http.token_auth import TokenAuth, TokenSource
from ..errors import UsageError
from .base import ModelInfo
from .config import ProviderConfig, ProviderSpec, provider_config
from .gemini import GeminiModel

__all__ = ["PROVIDERS", "VertexGeminiModel", "vertex_root"]

TOKEN_VAR = "GOOGLE_OAUTH_ACCESS_TOKEN"
DEFAULT_LOCATION = "us-central1"
VERTEX_INFO = ModelInfo(label="Vertex AI Gemini", constrained="no-tools", media=True)
VERTEX = ProviderSpec("vertexai", key_required=False, settings_keys=("project", "location", "token_env"),
                      prices_id="google")
_LOCATION = re.compile(r"[a-z0-9-]{1,63}")  # it becomes part of a host name: nothing else may get in


def vertex_root(location: str) -> str:
    """The regional API root (`https://us-central1-aiplatform.googleapis.com/v1`), or the global one."""
    if not _LOCATION.fullmatch(location):
        raise UsageError(f"vertexai: location {location!r} is not a Google Cloud location (like us-central1 or global)")
    host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
    return f"https://{host}/v1"


class VertexGeminiModel(GeminiModel):
    """A Gemini model on Vertex AI: `vertexai/gemini-2.5-flash`."""

    specs = (VERTEX,)
    default_info = VERTEX_INFO

    def __init__(self, name: str, *, config: ProviderConfig | None = None, project: str | None = None,
                 location: str | None = None, token_provider: TokenSource | None = None,
                 env: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        env = project_settings.environment() if env is None else env
        section = project_settings.provider_section(VERTEX.prefix) if config is None else {}
        config = config or provider_config(VERTEX, env=env, settings=section)
        project = project or section.get("project") or env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")
        if not project:
            raise UsageError(f"no Google Cloud project for {name}: set GOOGLE_CLOUD_PROJECT, or project in "
                             "[tool.dotprompt.providers.vertexai], or pass project=...")
        location = location or section.get("location") or env.get("GOOGLE_CLOUD_LOCATION") \
            or env.get("GCLOUD_LOCATION") or DEFAULT_LOCATION
        root = config.base_url or vertex_root(location)
        place = f"/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}/publishers/google"
        config = replace(config, base_url=root + place)
        super().__init__(name, config=config, auth=_auth(token_provider, section.get("token_env") or TOKEN_VAR, env),
                         **kwargs)


def _auth(source: TokenSource | None, token_var: str, env: Mapping[str, str]) -> TokenAuth:
    if source is not None:
        return TokenAuth("vertexai", source=source)
    if env.get(token_var):
        return TokenAuth("vertexai", env_var=token_var, env=env)
    raise UsageError(f"no credentials for vertexai: set {token_var} (e.g. to `gcloud auth print-access-token`) "
                     "or pass token_provider=... to VertexGeminiModel")


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for `vertexai/`).
PROVIDERS = {"vertexai": VertexGeminiModel}
