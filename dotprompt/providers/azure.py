"""Azure OpenAI: Chat Completions on a deployment, `azure/<deployment>`.

Calls go to `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...` with the
body and reply mapping of providers/openai.py (the wire is the same). Authentication is an `api-key`
header (`AZURE_OPENAI_API_KEY`) or an Entra ID bearer token: from `token_provider=` (a callable,
e.g. azure-identity's `get_bearer_token_provider(credential, "https://cognitiveservices.azure.com/.default")`)
or from `$AZURE_OPENAI_AD_TOKEN`, read per request. The endpoint is `$AZURE_OPENAI_ENDPOINT` or
`base_url` in `[tool.dotprompt.providers.azure]`; the API version `api_version` there,
`$AZURE_OPENAI_API_VERSION` or `$OPENAI_API_VERSION`, else DEFAULT_API_VERSION.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from .. import settings as project
from .._http.token_auth import TokenAuth, TokenSource
from ..errors import UsageError
from .base import ModelInfo
from .config import ProviderConfig, ProviderSpec, provider_config
from .openai import OpenAIModel

__all__ = ["DEFAULT_API_VERSION", "PROVIDERS", "AzureOpenAIModel"]

DEFAULT_API_VERSION = "2024-10-21"  # the newest GA version with json_schema output and stream usage
TOKEN_VAR = "AZURE_OPENAI_AD_TOKEN"
AZURE_INFO = ModelInfo(label="Azure OpenAI", constrained="all", media=True)
AZURE = ProviderSpec("azure", key_vars=("AZURE_OPENAI_API_KEY",), base_url_var="AZURE_OPENAI_ENDPOINT",
                     key_required=False, settings_keys=("api_version", "token_env"), prices_id="azure")


class AzureOpenAIModel(OpenAIModel):
    """A Chat Completions deployment on Azure OpenAI: `azure/gpt-4o-prod` (the part after `azure/` is the deployment)."""

    specs = (AZURE,)
    default_info = AZURE_INFO

    def __init__(self, name: str, *, config: ProviderConfig | None = None, api_version: str | None = None,
                 token_provider: TokenSource | None = None, env: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        env = project.environment() if env is None else env
        section = project.provider_section(AZURE.prefix) if config is None else {}
        config = config or provider_config(AZURE, env=env, settings=section)
        deployment = name.partition("/")[2] or name
        if not config.base_url:
            raise UsageError(f"no endpoint for {name}: set AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com) "
                             "or base_url in [tool.dotprompt.providers.azure]")
        auth = _auth(config, token_provider, section.get("token_env") or TOKEN_VAR, env)
        config = replace(config, base_url=f"{config.base_url}/openai/deployments/{quote(deployment, safe='')}")
        version = api_version or section.get("api_version") or env.get("AZURE_OPENAI_API_VERSION") \
            or env.get("OPENAI_API_VERSION") or DEFAULT_API_VERSION
        super().__init__(name, model_id=deployment, config=config, auth=auth, params={"api-version": version}, **kwargs)
        self.use_key = auth is None

    def headers(self) -> dict[str, str]:
        return {"api-key": self.config.api_key} if self.use_key and self.config.api_key else {}


def _auth(config: ProviderConfig, source: TokenSource | None, token_var: str, env: Mapping[str, str]) -> TokenAuth | None:
    """Entra ID when given a callable or when its variable is set and no key is; a key alone needs no auth."""
    if source is not None:
        return TokenAuth("azure", source=source)
    if config.api_key:
        return None
    if env.get(token_var):
        return TokenAuth("azure", env_var=token_var, env=env)
    raise UsageError(f"no credentials for azure: set AZURE_OPENAI_API_KEY (or the variable api_key_env names), "
                     f"set {token_var} to an Entra ID token, or pass token_provider=... to AzureOpenAIModel")


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for `azure/`).
PROVIDERS = {"azure": AzureOpenAIModel}
