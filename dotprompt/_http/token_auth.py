"""Bearer tokens fetched per request (Azure Entra ID, Google Cloud): from a callable or a variable.

Such tokens expire within the hour, so a long-lived model cannot be given one at construction: it
is given where to get one. A callable (sync or async, e.g. azure-identity's
`get_bearer_token_provider(...)` or a function wrapping `gcloud auth print-access-token`) is asked
on every request and is expected to cache; an environment variable is read on every request, so a
refreshed value is picked up. Every token is remembered as a secret, so an echo is redacted.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping

import httpx

from .._util.redact import remember_secret
from ..errors import ModelError, UsageError
from ..settings import environment

__all__ = ["TokenAuth", "TokenSource"]

TokenSource = Callable[[], str | Awaitable[str]]


class TokenAuth(httpx.Auth):
    """Sets `Authorization: Bearer <token>` from `source` (a callable) or the variable `env_var`."""

    def __init__(self, provider: str, *, source: TokenSource | None = None, env_var: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        if source is None and env_var is None:
            raise UsageError(f"{provider}: a token source needs a callable or an environment variable name")
        self.provider = provider
        self.source = source
        self.env_var = env_var
        self.env = environment() if env is None else env

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {await self.token()}"
        yield request

    async def token(self) -> str:
        if self.source is None:
            value = self.env.get(self.env_var or "", "")
            if not value:
                raise UsageError(f"no token for {self.provider}: ${self.env_var} is not set any more")
            return self._checked(value)
        try:
            got = self.source()
            token = await got if inspect.isawaitable(got) else got
        except Exception as exc:  # the user's callable: its failure is this call's failure, said plainly
            raise ModelError(f"the token provider for {self.provider} raised {type(exc).__name__}: {exc}",
                             provider=self.provider) from exc
        return self._checked(token)

    def _checked(self, value: object) -> str:
        token = value.strip() if isinstance(value, str) else ""  # a command's output ends in a newline
        if not token or any(c in token for c in "\r\n"):  # a line break inside would split the header
            raise ModelError(f"the token for {self.provider} is not a usable string (got {type(value).__name__}); "
                             "the token provider must return the bearer token's text", provider=self.provider)
        remember_secret(token)
        return token
