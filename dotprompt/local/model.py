"""`local/<name>`: a small model (catalog.py) on llama.cpp's llama-server, on this machine, offline.

`dotprompt local setup [--model NAME]` (or `setup()`) prepares it once; the first request starts the
server (server.py) and every request goes through the OpenAI-compatible provider, with the
local defaults of tuning.py. When the default one is set up it is the default model:
`default_local_model()` is what `default_model_name()` falls back to.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from .. import settings
from ..errors import LocalSetupError, ModelError, UsageError
from ..providers.base import ModelInfo, OnChunk
from ..providers.config import ProviderConfig, check_keys
from ..providers.dialects.strict import LLAMA_CPP_STRICT, Structured, structured_output
from ..providers.openai import OpenAIModel
from ..types import GenerateRequest, ModelResponse
from .catalog import LocalModelSpec, spec_for
from .console import ConsoleProgress, status_lines
from .paths import LocalPaths, local_paths
from .server import LlamaServer, shared_server, stop_all
from .setup import SetupEvent, setup
from .tuning import LocalTuning

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_INFO",
    "PROVIDERS",
    "ConsoleProgress",
    "LlamaServer",
    "LocalModel",
    "LocalPaths",
    "LocalSetupError",
    "LocalTuning",
    "SetupEvent",
    "default_local_model",
    "local_paths",
    "setup",
    "status_lines",
    "stop_all",
]

DEFAULT_LOCAL_MODEL = settings.LOCAL_MODEL

# With response_format llama-server builds its parser from the schema alone, so a reply can no
# longer be a tool call: native constrained output only when no tools are offered.
LOCAL_INFO = ModelInfo(label="SmolLM2-135M-Instruct on llama.cpp (local)", constrained="no-tools", tools=True,
                       tool_choice=True, media=False)


def local_info(spec: LocalModelSpec) -> ModelInfo:
    return dataclasses.replace(LOCAL_INFO, label=f"{spec.label} on llama.cpp (local)")


def default_local_model() -> str | None:
    """The default local model's name when it has been set up, else None."""
    return DEFAULT_LOCAL_MODEL if local_paths().ready() else None


def not_set_up(paths: LocalPaths) -> UsageError:
    missing = ", ".join(str(p) for p in paths.missing())
    command = "dotprompt local setup" + ("" if paths.spec.model_name == DEFAULT_LOCAL_MODEL
                                         else f" --model {paths.spec.name}")
    return UsageError(f"the local model {paths.spec.model_name} is not set up (missing: {missing}): run `{command}`")


class LlamaServerClient(OpenAIModel):
    """Chat Completions on llama-server: the output schema becomes a grammar that also bounds string lengths."""

    def structured(self, request: GenerateRequest) -> Structured | None:
        return structured_output(request, LLAMA_CPP_STRICT)


# What `[tool.dotprompt.providers.local]` may set: the server's address and key are its own.
LOCAL_SETTINGS_KEYS = ("timeout", "deadline", "max_response_bytes")


class LocalModel:
    """The local model. It uses this process's shared server, or the `server` given (tests start their own).
    `timeout` given here wins over `[tool.dotprompt.providers.local] timeout`, which wins over the default."""

    def __init__(self, name: str = DEFAULT_LOCAL_MODEL, *, server: LlamaServer | None = None,
                 timeout: float | None = None, tuning: LocalTuning | None = None) -> None:
        spec = spec_for(name)
        self.name = spec.model_name
        self.info = local_info(spec)
        self.tuning = tuning or LocalTuning()
        self.paths = server.paths if server is not None else local_paths(model=self.name)
        if not self.paths.ready():
            raise not_set_up(self.paths)
        section = settings.provider_section("local")
        check_keys("local", section, LOCAL_SETTINGS_KEYS)
        self.timeout = float(timeout or section.get("timeout") or settings.DEFAULT_TIMEOUT)
        self._deadline: float | None = section.get("deadline")
        self._max_response_bytes: int | None = section.get("max_response_bytes")
        self._server = server
        self._client: tuple[LlamaServer, LlamaServerClient] | None = None
        self._lock = threading.Lock()

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        connected = self._connected()
        server, client = connected if connected is not None else await asyncio.to_thread(self.connect)
        try:
            return await client.generate(self.tuning.apply(request), on_chunk)
        except ModelError as exc:
            # A broken connection may be the server dying; give it a moment to be reaped, then say so.
            if exc.status is None and await asyncio.to_thread(server.wait_exit, 1.0):
                raise server.death_error("during the request", partial=exc.partial) from exc
            raise

    def connect(self) -> tuple[LlamaServer, LlamaServerClient]:
        """The running server and a client for it, starting the server if need be (blocks until healthy)."""
        if not self.paths.ready():
            raise not_set_up(self.paths)
        server = self._server or shared_server(self.paths)
        if not server.alive():
            raise server.death_error("before the request")
        with self._lock:
            if self._client is None or self._client[0] is not server:
                config = ProviderConfig("local", server.base_url, server.api_key, self.timeout,
                                        deadline=self._deadline, max_response_bytes=self._max_response_bytes,
                                        timeout_hint=f"; llama-server runs {server.threads} thread(s): on a busy machine "
                                                     "DOTPROMPT_LOCAL_THREADS=1 is often much faster")
                client = LlamaServerClient(self.name, model_id=self.paths.spec.name, config=config, info=self.info)
                self._client = (server, client)
            return self._client

    def _connected(self) -> tuple[LlamaServer, LlamaServerClient] | None:
        found = self._client
        return found if found is not None and found[0].alive() else None


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for `local/`).
PROVIDERS = {"local": LocalModel}
