"""Every setting in one place: the defaults, the `DOTPROMPT_*` variables and `[tool.dotprompt]`.

The ground floor: this module imports nothing of the package but `errors`, and every other module
reads a default, an environment variable or the project's table from here, never on its own.

    [tool.dotprompt]            in the nearest pyproject.toml (read by `project_settings`)
      prompts_dir, default_model, tools, providers.NAME.{base_url, api_key_env, timeout, headers}
    DOTPROMPT_DIR               the prompt folder (over prompts_dir)
    DOTPROMPT_MODEL             the model when none is named (over the local model)
    DOTPROMPT_TEST_MODE         record | replay | auto | live for `dotprompt test` and pytest
    DOTPROMPT_LOCAL_DIR         where `dotprompt local setup` puts the local model
    DOTPROMPT_LOCAL_THREADS     llama-server threads (default: every core this process may use)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from .errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_TIMEOUT",
    "LOCAL_LOGS_KEPT",
    "LOCAL_MODEL",
    "MAX_NAME_LENGTH",
    "MAX_NAME_PART_BYTES",
    "PARTIAL_CACHE_SIZE",
    "RELOAD_ATTEMPTS",
    "RELOAD_GRACE_SECONDS",
    "RELOAD_REHASH_SECONDS",
    "RELOAD_SETTLE_SECONDS",
    "RETRYABLE_STATUSES",
    "check_max_turns",
    "env_model",
    "env_prompts_dir",
    "env_test_mode",
    "local_dir",
    "local_threads",
    "project_settings",
    "provider_section",
    "valid_max_turns",
]

DEFAULT_MAX_TURNS: Final = 5
"""Model calls one generate run may make when the prompt or caller names no `maxTurns`."""

DEFAULT_TIMEOUT: Final = 120.0
"""Seconds a provider request may take, unless the provider's settings say otherwise."""

DEFAULT_DEADLINE: Final = 1800.0
"""Seconds a whole model call, stream included, may last (unless the read timeout is longer): generous,
because a long reasoning stream can honestly take many minutes; keep-alives do not extend it."""

DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
"""The most a reply (or a whole stream) may send: 64 MiB is ~100x the longest text reply any API gives."""

RETRYABLE_STATUSES: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server errors, overload (529)."""

LOCAL_MODEL: Final = "local/smollm2"
"""The small model `dotprompt local setup` prepares; the default model once it is set up."""

LOCAL_LOGS_KEPT: Final = 20
"""llama-server logs kept under `<local dir>/logs/` from servers that did not stop cleanly (failed, or
their process was killed); older ones are removed when a server starts."""

MAX_NAME_LENGTH: Final = 1024
"""Characters a prompt or partial name (with its namespace folders) may have; longer is an InvalidPromptNameError."""

MAX_NAME_PART_BYTES: Final = 200
"""UTF-8 bytes one part of a name may have: with `_`, `.variant` and `.prompt` it must fit a file name (255)."""

RELOAD_SETTLE_SECONDS: Final = 0.05
"""Hot reload: a file changed this recently may still be being written; it is read again after this
long and used only if it did not change meanwhile (a render never sees half a save)."""

RELOAD_GRACE_SECONDS: Final = 0.5
"""Hot reload: a changed file that fails to compile (empty, cut off: a save that stalled half-way) raises
its error only once it is this old; until then renders keep the last whole version."""

RELOAD_ATTEMPTS: Final = 8
"""Hot reload: reads of a changing or briefly missing file (unlink-then-create saves) before giving up;
until then, and when giving up on a file that is still there, renders keep the last whole version."""

RELOAD_REHASH_SECONDS: Final = 2.0
"""Hot reload: a file whose stat looks unchanged is still re-read and hashed this often, so an edit that
keeps size, mtime and ctime (coarse file system clocks) is seen too."""

PARTIAL_CACHE_SIZE: Final = 256
"""Parsed partials (jinja2 and Handlebars) kept per library: one entry per partial, least recently used dropped."""


def valid_max_turns(value: object) -> bool:
    """A turn limit is a whole number of at least 1."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_max_turns(value: int) -> int:
    if not valid_max_turns(value):
        raise UsageError(f"max_turns must be at least 1, got {value!r}")
    return value


def project_settings(start: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """`[tool.dotprompt]` of the nearest pyproject.toml at or above `start`, and that file's folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                return {}, folder
            return data.get("tool", {}).get("dotprompt", {}), folder
    return {}, None


def provider_section(provider: str) -> Mapping[str, Any]:
    """`[tool.dotprompt.providers.NAME]`, or an empty table."""
    settings, _ = project_settings()
    section = settings.get("providers", {}).get(provider, {})
    return section if isinstance(section, Mapping) else {}


def env_prompts_dir() -> Path | None:
    value = os.environ.get("DOTPROMPT_DIR")
    return Path(value) if value else None


def env_model() -> str | None:
    return os.environ.get("DOTPROMPT_MODEL") or None


def env_test_mode() -> str | None:
    return os.environ.get("DOTPROMPT_TEST_MODE") or None


def local_dir() -> Path:
    """`$DOTPROMPT_LOCAL_DIR`, else `dotprompt/local` in the user's cache folder."""
    if os.environ.get("DOTPROMPT_LOCAL_DIR"):
        return Path(os.environ["DOTPROMPT_LOCAL_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "dotprompt" / "local"


def local_threads(cores: int) -> int:
    """$DOTPROMPT_LOCAL_THREADS, else `cores`.

    On a busy machine fewer threads can be much faster: llama.cpp's threads wait for each other
    after every step, so one thread that loses its core stalls them all."""
    value = os.environ.get("DOTPROMPT_LOCAL_THREADS", "").strip()
    if not value:
        return cores
    if not value.isdigit() or int(value) < 1:
        raise UsageError(f"DOTPROMPT_LOCAL_THREADS must be a whole number of threads (1 or more), got {value!r}")
    return int(value)
