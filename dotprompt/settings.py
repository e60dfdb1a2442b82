"""Every user setting in one place: the `DOTPROMPT_*` variables, `[tool.dotprompt]`, and their defaults.

The ground floor: this module imports nothing of the package but `errors`, `_util.cache` and `_util.escape`,
and every other module reads an environment variable, the project's table or a user setting's default from
here, never on its own. A user setting is one set from outside the source: a variable, a `[tool.dotprompt]`
key, a command-line option or a prompt key (tests/test_settings_scope.py lists them). An internal limit (a
cap, a budget, a retry constant) lives beside the module that uses it, or in its subsystem's `limits.py`.

    [tool.dotprompt]            in the nearest pyproject.toml (read by `project_settings`)
      prompts_dir, default_model, engine, tools, schemas, helpers,
      providers.NAME.{base_url, api_key_env, timeout, headers, ...},
      render_max_chars, render_max_seconds, log, log_path, log_keep_runs, log_keep_days,
      pytest (true: plain `pytest` collects the project's *.test.yaml files),
      types (the module `dotprompt types` writes; default prompt_types.py)
      mcp.servers.NAME.{command, args, env, cwd, url, headers, timeout, startup_timeout, approve}
    DOTPROMPT_DIR               the prompt folder (over prompts_dir)
    DOTPROMPT_MODEL             the model when none is named (over the local model)
    DOTPROMPT_TEST_MODE         record | replay | auto | live for `dotprompt test` and pytest
    DOTPROMPT_LOCAL_DIR         where `dotprompt local setup` puts the local model
    DOTPROMPT_LOCAL_THREADS     llama-server threads (default: every core this process may use but one)
    DOTPROMPT_RENDER_MAX_CHARS  the render budget's text size (over render_max_chars)
    DOTPROMPT_RENDER_MAX_SECONDS  the render budget's time (over render_max_seconds)
    DOTPROMPT_TRACING           0 turns OpenTelemetry spans off (they are on whenever an SDK is installed)
    DOTPROMPT_TRACE_CONTENT     1 records message content on spans (also OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)
    DOTPROMPT_LOG               1 / 0: the run log on / off (over `log`; unset: the CLI logs, the Python API does not)
    DOTPROMPT_LOG_PATH          the run log's SQLite file (over log_path; default $XDG_DATA_HOME/dotprompt/logs.db)
    DOTPROMPT_LOG_KEEP_RUNS     runs the log keeps, the newest (over log_keep_runs; default 10,000)
    DOTPROMPT_LOG_KEEP_DAYS     days the log keeps a run (over log_keep_days; default 90)
    DOTPROMPT_HTTP_TRANSPORT    httpx | aiohttp: the HTTP transport of batch runs (default: aiohttp when
                                httpx-aiohttp is installed)
    DOTPROMPT_SAFE_DIRECTORIES  folders (separated by os.pathsep; `*`: all) whose pyproject.toml is obeyed though
                                another user owns it (as git's safe.directory)
    CI                          set (to anything): `dotprompt test` replays, progress and reports stay plain
    NO_COLOR                    set (to anything): no colours on a terminal (https://no-color.org)
    GITHUB_STEP_SUMMARY         the file `dotprompt eval` appends its Markdown summary to
    HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY   the proxy of a provider's base URL (`proxy_environment`)

Variables whose names are given elsewhere (a provider's key and URL variables, a token source's variable) and a
child process's environment are read through `environment()`. No other module touches `os.environ` but
_util/redact.py, below this one, which masks the values of key-like variables (tests/test_environment_reads.py).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final

from ._util.cache import LRU
from ._util.escape import terminal
from .errors import UsageError

__all__ = [
    "BATCH_JOB_MAX_ROWS",
    "BATCH_KEY_COLUMN",
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_TIMEOUT",
    "HTTP_TRANSPORTS",
    "LOCAL_MODEL",
    "MCP_CALL_TIMEOUT",
    "MCP_SERVE_DEFAULT_PORT",
    "MCP_STARTUP_TIMEOUT",
    "MCP_TOOLS_CACHE",
    "RENDER_MAX_CHARS",
    "RENDER_MAX_SECONDS",
    "RUNLOG_KEEP_DAYS",
    "RUNLOG_KEEP_RUNS",
    "SAFE_DIRECTORIES_VAR",
    "TEMPLATE_ENGINES",
    "TYPES_MODULE",
    "UI_DEFAULT_PORT",
    "RenderBudget",
    "RunLogSettings",
    "check_max_tool_calls",
    "check_max_turns",
    "default_log_path",
    "env_http_transport",
    "env_model",
    "env_prompts_dir",
    "env_test_mode",
    "environment",
    "github_step_summary",
    "in_ci",
    "local_dir",
    "local_threads",
    "mcp_server_sections",
    "no_color",
    "opted_into_pytest",
    "project_root",
    "project_settings",
    "provider_section",
    "provider_sections",
    "proxy_environment",
    "render_budget",
    "run_log_settings",
    "template_engine",
    "trace_content",
    "tracing_enabled",
    "types_module",
    "valid_max_turns",
]

DEFAULT_MAX_TURNS: Final = 5
"""Model calls one generate run may make when the prompt or caller names no `maxTurns`."""

DEFAULT_MAX_TOOL_CALLS: Final = 32
"""Tool calls one model reply may ask for when the prompt (`maxToolCalls`) or caller names no limit:
`maxTurns` bounds rounds, and one reply may hold any number of calls. Real parallel calls are a
handful; a reply past the limit stops the run before any of its calls runs."""


DEFAULT_TIMEOUT: Final = 120.0
"""Seconds a provider request may take, unless the provider's settings say otherwise."""

DEFAULT_DEADLINE: Final = 1800.0
"""Seconds a whole model call, stream included, may last (unless the read timeout is longer): generous,
because a long reasoning stream can honestly take many minutes; keep-alives do not extend it."""

DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
"""The most a reply (or a whole stream) may send: 64 MiB is ~100x the longest text reply any API gives."""


LOCAL_MODEL: Final = "local/smollm2"
"""The small model `dotprompt local setup` prepares; the default model once it is set up."""


MCP_CALL_TIMEOUT: Final = 60.0
"""Seconds one call to an MCP server's tool may take, unless its `[tool.dotprompt.mcp.servers.NAME]` says
otherwise (`timeout`)."""

MCP_STARTUP_TIMEOUT: Final = 30.0
"""Seconds an MCP server may take to start and answer `initialize` and `tools/list` (`startup_timeout`)."""

MCP_TOOLS_CACHE: Final = ".dotprompt/mcp-tools.json"
"""The configured MCP servers' tool lists, beside pyproject.toml: written by `dotprompt mcp tools --refresh`,
read by `dotprompt check` (which never starts a server)."""


RENDER_MAX_CHARS: Final = 20_000_000
"""Characters one render may produce, and the largest text or list a template may build on the way
(about 5 million tokens: far past any model's context, far short of running out of memory)."""

RENDER_MAX_SECONDS: Final = 10.0
"""Seconds one render may take (checked between loop steps, calls and output pieces)."""


@dataclass(frozen=True)
class RenderBudget:
    """What one render may spend: `max_chars` of text (output, and any text or list built on the way)
    and `max_seconds` of time. Breaking it is a RenderError naming the file and the template line."""

    max_chars: int = RENDER_MAX_CHARS
    max_seconds: float = RENDER_MAX_SECONDS

    def __post_init__(self) -> None:
        chars, seconds = self.max_chars, self.max_seconds
        if isinstance(chars, bool) or not isinstance(chars, int) or chars < 1:
            raise UsageError(f"render budget: max_chars must be a whole number of at least 1, got {chars!r}")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (seconds > 0) \
                or math.isnan(seconds):
            raise UsageError(f"render budget: max_seconds must be a number above 0, got {seconds!r}")


_BUDGET_KEYS = {"max_chars": "render_max_chars", "max_seconds": "render_max_seconds"}


def render_budget(value: RenderBudget | Mapping[str, Any] | None = None, *,
                  project: Mapping[str, Any] | None = None) -> RenderBudget:
    """The render budget: `value` (a RenderBudget or {max_chars, max_seconds}) over
    $DOTPROMPT_RENDER_MAX_CHARS / $DOTPROMPT_RENDER_MAX_SECONDS over the project's `[tool.dotprompt]`
    render_max_chars / render_max_seconds (`project`, as `project_settings` reads it) over the defaults."""
    if isinstance(value, RenderBudget):
        return value
    fields: dict[str, Any] = {}
    for field, key in _BUDGET_KEYS.items():
        if project and key in project:
            fields[field] = project[key]
        env = os.environ.get(f"DOTPROMPT_{key.upper()}", "").strip()
        if env:
            try:
                fields[field] = int(env) if field == "max_chars" else float(env)
            except ValueError:
                raise UsageError(f"DOTPROMPT_{key.upper()} must be a number, got {env!r}") from None
    if value is not None:
        unknown = set(value) - set(_BUDGET_KEYS)
        if unknown:
            raise UsageError(f"render budget: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                             f"known: {', '.join(_BUDGET_KEYS)}")
        fields.update(value)
    return RenderBudget(**fields)


TEMPLATE_ENGINES: Final = ("auto", "jinja2", "handlebars")
"""What a library, `[tool.dotprompt] engine` and `--engine` accept; auto (the default) reads each file's syntax."""


def template_engine(value: str | None = None, *, project: Mapping[str, Any] | None = None) -> str:
    """The template engine: `value` (`--engine`, `PromptLibrary(engine=...)`) over `[tool.dotprompt] engine`
    (`project`) over auto. A file's own `dotprompt.engine` wins over all of them."""
    if value is not None:
        return value
    chosen = (project or {}).get("engine", "auto")
    if chosen not in TEMPLATE_ENGINES:
        raise UsageError(f"[tool.dotprompt] engine must be one of {', '.join(TEMPLATE_ENGINES)}, got {chosen!r}"[:300])
    return str(chosen)


def valid_max_turns(value: object) -> bool:
    """A turn limit is a whole number of at least 1."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_max_turns(value: int) -> int:
    if not valid_max_turns(value):
        raise UsageError(f"max_turns must be at least 1, got {value!r}")
    return value


def check_max_tool_calls(value: int) -> int:
    if not valid_max_turns(value):  # the same rule: a whole number of at least 1
        raise UsageError(f"max_tool_calls must be at least 1, got {value!r}")
    return value


def project_settings(start: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """`[tool.dotprompt]` of the nearest pyproject.toml at or above `start`, and that file's folder.

    Parsed once per version of the file (its size and modification time): pricing and provider
    lookups ask for it on every call, and parsing it each time was a quarter of a batch row's CPU.
    What is left per call is one stat per folder up to the file (the folders of a start are
    resolved once). The table returned is shared: read it, never change it."""
    for candidate in _candidates(os.getcwd() if start is None else os.path.abspath(start)):
        try:
            stat = os.stat(candidate)
        except OSError:
            continue
        if not S_ISREG(stat.st_mode):
            continue
        if not _trusted(candidate, stat.st_uid):
            return {}, None
        version = f"{stat.st_mtime_ns}:{stat.st_size}"
        cached = _PARSED.get(candidate, version)
        if cached is not None:
            return cached, Path(candidate).parent
        try:
            data = tomllib.loads(Path(candidate).read_text(encoding="utf-8"))
            table = data.get("tool", {}).get("dotprompt", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            table = {}
        _PARSED.put(candidate, version, table)
        return table, Path(candidate).parent
    return {}, None


def check_ignore(start: Path | None = None) -> tuple[tuple[str, ...], Path | None]:
    """`[tool.dotprompt] ignore`: the warning codes `dotprompt check` and the language server do not
    report for the project (lint/ignore.py checks each is a known warning code), and the
    pyproject.toml that says so (None: there is none). A value that is not a list of strings is a
    UsageError naming the file and the fix."""
    table, root = project_settings(start)
    value = table.get("ignore", [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        where = f"{root / 'pyproject.toml'}: " if root is not None else ""
        raise UsageError(f"{where}[tool.dotprompt] ignore must be a list of warning codes (`ignore = "
                         f"[\"unknown-tool\"]`), got {terminal(repr(value))[:200]}")
    return tuple(value), (root / "pyproject.toml") if root is not None else None


TYPES_MODULE: Final = "prompt_types.py"
"""The module `dotprompt types` writes and `dotprompt check` compares, relative to pyproject.toml's
folder, when `[tool.dotprompt] types` names none."""


def types_module(start: Path | None = None) -> Path:
    """`[tool.dotprompt] types` (a .py path relative to pyproject.toml, inside the project folder), else
    TYPES_MODULE there (the working folder without a pyproject.toml). A path outside the project is
    refused: a checkout's settings must not make `dotprompt types` write elsewhere on the machine."""
    table, root = project_settings(start)
    base = (root or Path(os.getcwd() if start is None else start)).resolve()
    where = f"{root / 'pyproject.toml'}: [tool.dotprompt] types" if root is not None else "types"
    value = table.get("types", TYPES_MODULE)
    if not isinstance(value, str) or not value.endswith(".py"):
        raise UsageError(f"{where} must be the path of a .py file (relative to pyproject.toml), got "
                         f"{terminal(repr(value))[:200]}")
    path = (base / value).resolve()
    if not path.is_relative_to(base):
        raise UsageError(f"{where}: {terminal(value)[:200]!r} is outside the project folder {base} (write a path "
                         "inside it, relative to pyproject.toml)")
    return path


def project_root(start: Path | None = None) -> Path:
    """The project a run belongs to: the folder of the nearest pyproject.toml at or above `start` (default:
    the working folder), the one whose `[tool.dotprompt]` applies; else that folder itself. Resolved, so
    two spellings of one checkout are one project and two checkouts are two."""
    here = Path(os.getcwd() if start is None else start)
    _, root = project_settings(here)
    return (root or here).resolve()


@functools.lru_cache(maxsize=64)
def _candidates(start: str) -> tuple[str, ...]:
    here = Path(start).resolve()
    return tuple(str(folder / "pyproject.toml") for folder in (here, *here.parents))


_PARSED: LRU[dict[str, Any]] = LRU(64)  # by path, for the file's version

SAFE_DIRECTORIES_VAR: Final = "DOTPROMPT_SAFE_DIRECTORIES"
log = logging.getLogger("dotprompt.settings")
_WARNED: set[tuple[str, int]] = set()  # (file, owner) said once per process: settings are read on every lookup


def _trusted(path: str, owner: int) -> bool:
    """Whether a pyproject.toml is obeyed: git's `safe.directory` rule. Its settings name modules to import
    and URLs to send the user's key to, so a file another user owns (a shared parent folder, /tmp) is
    ignored with a warning. Owned by this user or root (who can do anything anyway); under sudo, by the
    user who ran it (SUDO_UID, as git); or in a folder the user trusts ($DOTPROMPT_SAFE_DIRECTORIES: CI
    containers whose checkout belongs to another uid). Where there are no owners (Windows), obeyed."""
    me = getattr(os, "geteuid", None)
    if me is None or owner in (me(), 0):
        return True
    if me() == 0 and os.environ.get("SUDO_UID", "").strip() == str(owner):
        return True
    folder = os.path.dirname(path)
    if any(_within(folder, trusted) for trusted in os.environ.get(SAFE_DIRECTORIES_VAR, "").split(os.pathsep)):
        return True
    if (path, owner) not in _WARNED:
        _WARNED.add((path, owner))
        log.warning("%s", terminal(
            f"{path}: ignored: it is owned by another user (uid {owner}), and its [tool.dotprompt] could run "
            f"their code or send your keys to their server. If you trust it, set {SAFE_DIRECTORIES_VAR}="
            f"{folder} (folders separated by {os.pathsep!r}; * trusts every folder), or take it over "
            "(chown)", lines=False))
    return False


def _within(folder: str, trusted: str) -> bool:
    """`folder` is `trusted` or below it; `*` trusts every folder; an empty entry none."""
    trusted = trusted.strip()
    if trusted == "*":
        return True
    if not trusted:
        return False
    base = os.path.realpath(os.path.expanduser(trusted))
    here = os.path.realpath(folder)
    return here == base or here.startswith(base.rstrip(os.sep) + os.sep)


def provider_section(provider: str) -> Mapping[str, Any]:
    """`[tool.dotprompt.providers.NAME]`, or an empty table; a value that is no table is a UsageError."""
    return provider_sections().get(provider, {})


def provider_sections() -> Mapping[str, Mapping[str, Any]]:
    """Every `[tool.dotprompt.providers.NAME]` table by NAME (each checked to be a table)."""
    settings, _ = project_settings()
    tables = settings.get("providers", {}) if isinstance(settings, Mapping) else {}
    if not isinstance(tables, Mapping):
        raise UsageError(f"[tool.dotprompt.providers] in pyproject.toml must be a table of provider tables, got {tables!r}"[:300])
    for name, section in tables.items():
        if not isinstance(section, Mapping):
            raise UsageError(f"[tool.dotprompt.providers.{name}] in pyproject.toml must be a table "
                             f"(base_url = ..., api_key_env = ...), got {section!r}"[:300])
    return tables


def mcp_server_sections(project: Mapping[str, Any] | None = None) -> Mapping[str, Mapping[str, Any]]:
    """Every `[tool.dotprompt.mcp.servers.NAME]` table by NAME (each checked to be a table); `project`: a
    `[tool.dotprompt]` table already read (default: the nearest pyproject.toml's)."""
    settings = project_settings()[0] if project is None else project
    mcp = settings.get("mcp", {}) if isinstance(settings, Mapping) else {}
    tables = mcp.get("servers", {}) if isinstance(mcp, Mapping) else None
    if not isinstance(tables, Mapping):
        raise UsageError("[tool.dotprompt.mcp.servers] in pyproject.toml must be a table of server tables "
                         f"([tool.dotprompt.mcp.servers.NAME] with command = ... or url = ...), got {tables!r}"[:300])
    for name, section in tables.items():
        if not isinstance(section, Mapping):
            raise UsageError(f"[tool.dotprompt.mcp.servers.{name}] in pyproject.toml must be a table "
                             f"(command = ..., args = [...] or url = ...), got {section!r}"[:300])
    return tables


def opted_into_pytest(start: Path | None = None) -> bool:
    """`[tool.dotprompt] pytest = true` in the nearest pyproject.toml at or above `start`: the project
    asks the installed pytest plugin to collect its `*.test.yaml` files (off when absent)."""
    table, root = project_settings(start)
    value = table.get("pytest", False)
    if not isinstance(value, bool):
        where = root / "pyproject.toml" if root is not None else "pyproject.toml"
        raise UsageError(f"{where}: [tool.dotprompt] pytest must be true or false, got {value!r}")
    return value


def env_prompts_dir() -> Path | None:
    value = os.environ.get("DOTPROMPT_DIR")
    return Path(value) if value else None


def env_model() -> str | None:
    return os.environ.get("DOTPROMPT_MODEL") or None


def env_test_mode() -> str | None:
    return os.environ.get("DOTPROMPT_TEST_MODE") or None


# -- the environment beyond DOTPROMPT_* -----------------------------------------------------------------


def environment() -> Mapping[str, str]:
    """The process environment, for variables whose names are given elsewhere: a provider's key and URL
    variables (its ProviderSpec, `api_key_env`), a token source's variable, the environment a child process
    starts from. The live mapping: a change is seen at once."""
    return os.environ


def in_ci() -> bool:
    """`CI` is set to anything (GitHub Actions, GitLab, ... set it): replay, no progress bars."""
    return bool(os.environ.get("CI"))


def no_color() -> bool:
    """`NO_COLOR` is set to anything (https://no-color.org): plain text even on a terminal."""
    return bool(os.environ.get("NO_COLOR"))


def github_step_summary() -> Path | None:
    """`$GITHUB_STEP_SUMMARY`: the file a GitHub Actions step appends its Markdown summary to."""
    value = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None


def proxy_environment() -> dict[str, str]:
    """The proxies HTTP_PROXY / HTTPS_PROXY / ALL_PROXY / NO_PROXY name, by scheme (`no`: the exempt hosts)."""
    import urllib.request  # here, not at the top: most commands never build an HTTP client

    return urllib.request.getproxies_environment()


def local_dir() -> Path:
    """`$DOTPROMPT_LOCAL_DIR`, else `dotprompt/local` in the user's cache folder."""
    if os.environ.get("DOTPROMPT_LOCAL_DIR"):
        return Path(os.environ["DOTPROMPT_LOCAL_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "dotprompt" / "local"


def local_threads(cores: int) -> int:
    """$DOTPROMPT_LOCAL_THREADS, else every core but one (at least one).

    On a busy machine fewer threads can be much faster: llama.cpp's threads wait for each other
    after every step, so one thread that loses its core stalls them all. Leaving a core to the rest of
    the machine (the test runner, the CLI itself) keeps a 2-core runner from stalling: measured under
    load on 2 cores, one thread answered in 9-18 s where two took 71-134 s or timed out."""
    value = os.environ.get("DOTPROMPT_LOCAL_THREADS", "").strip()
    if not value:
        return max(1, cores - 1)
    if not value.isdigit() or int(value) < 1:
        raise UsageError(f"DOTPROMPT_LOCAL_THREADS must be a whole number of threads (1 or more), got {value!r}")
    return int(value)


# -- observability: spans and the run log ---------------------------------------------------------

_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")
# The GenAI conventions' content switch: instrumentations read "true", newer ones a mode name.
_CONTENT_MODES = (*_ON, "span_only", "span_and_event")

RUNLOG_KEEP_RUNS: Final = 10_000
"""Runs the run log keeps (the newest); older ones are deleted as new ones arrive."""

RUNLOG_KEEP_DAYS: Final = 90.0
"""Days the run log keeps a run."""



def tracing_enabled() -> bool:
    """Spans are on unless DOTPROMPT_TRACING says 0/false/no/off."""
    return os.environ.get("DOTPROMPT_TRACING", "").strip().lower() not in _OFF


def trace_content() -> bool:
    """Message content on spans: only when DOTPROMPT_TRACE_CONTENT or the conventions' variable opts in."""
    own = os.environ.get("DOTPROMPT_TRACE_CONTENT", "").strip().lower()
    if own:
        return own in _ON
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() in _CONTENT_MODES


@dataclass(frozen=True)
class RunLogSettings:
    """Where the run log is and what it keeps; `path` None means logging is off."""

    path: Path | None
    keep_runs: int = RUNLOG_KEEP_RUNS
    keep_days: float = RUNLOG_KEEP_DAYS


def run_log_settings(log: bool | str | os.PathLike[str] | None = None, *, default: bool = False,
                     project: Mapping[str, Any] | None = None, root: Path | None = None) -> RunLogSettings:
    """The run log for a library or command: `log` (True/False, or a database path) over DOTPROMPT_LOG /
    DOTPROMPT_LOG_PATH over `[tool.dotprompt]` log / log_path (`project`; a relative log_path is relative
    to `root`, the folder of its pyproject.toml) over `default` (on for the CLI)."""
    project = project or {}
    enabled = _flag("DOTPROMPT_LOG", project.get("log"), default)
    path: str | os.PathLike[str] | None = os.environ.get("DOTPROMPT_LOG_PATH") or None
    if path is None and project.get("log_path"):
        path = (root or Path.cwd()) / Path(str(project["log_path"])).expanduser()
    if isinstance(log, (str, os.PathLike)):
        enabled, path = True, log
    elif log is not None:
        enabled = bool(log)
    keep_runs = _number("DOTPROMPT_LOG_KEEP_RUNS", project.get("log_keep_runs"), RUNLOG_KEEP_RUNS, int)
    keep_days = _number("DOTPROMPT_LOG_KEEP_DAYS", project.get("log_keep_days"), RUNLOG_KEEP_DAYS, float)
    if not enabled:
        return RunLogSettings(None, keep_runs, keep_days)
    return RunLogSettings(Path(path).expanduser() if path else default_log_path(), keep_runs, keep_days)


def default_log_path() -> Path:
    """`dotprompt/logs.db` in the user's data folder ($XDG_DATA_HOME, else ~/.local/share)."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "dotprompt" / "logs.db"


def _flag(variable: str, project: Any, default: bool) -> bool:
    value = os.environ.get(variable, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    if value:
        raise UsageError(f"{variable} must be 1 or 0 (on or off), got {value!r}")
    return default if project is None else bool(project)


def _number(variable: str, project: Any, default: Any, kind: type) -> Any:
    value = os.environ.get(variable, "").strip() or project
    if value is None:
        return default
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < 1:
        raise UsageError(f"{variable} (or [tool.dotprompt] {variable[10:].lower()}) must be a number of at least 1, "
                         f"got {value!r}")
    return number


HTTP_TRANSPORTS: Final = ("httpx", "aiohttp")


def env_http_transport() -> str | None:
    """$DOTPROMPT_HTTP_TRANSPORT: `httpx` or `aiohttp` for batch runs, or None (the default choice)."""
    value = os.environ.get("DOTPROMPT_HTTP_TRANSPORT", "").strip().lower()
    if not value:
        return None
    if value not in HTTP_TRANSPORTS:
        raise UsageError(f"DOTPROMPT_HTTP_TRANSPORT must be one of {', '.join(HTTP_TRANSPORTS)}, got {value!r}")
    return value


# -- the defaults of command-line options (and of the library calls behind them) ----------------------

BATCH_KEY_COLUMN: Final = "id"
"""The column that keys batch rows unless `--key` names another (rows without it are keyed by content)."""

BATCH_LOG_ROWS: Final = ("failed", "all", "none")
"""Which rows of a batch the run log keeps besides the batch's own entry (`--log-rows`); the first is the default."""

BATCH_JOB_MAX_ROWS: Final = 10_000
"""The most rows one submitted provider batch job holds (`--batch-size` chooses fewer or more)."""

UI_DEFAULT_PORT: Final = 8765
"""The port `dotprompt ui` listens on unless `--port` says otherwise."""

MCP_SERVE_DEFAULT_PORT: Final = 8766
"""The port `dotprompt mcp serve --http` listens on unless `--port` says otherwise (beside the workbench's)."""
