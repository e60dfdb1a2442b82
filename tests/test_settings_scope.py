"""settings.py holds what a user sets, nothing else (issue 35): an internal limit (a cap, a budget, a retry
constant, a UI bound) lives beside the module that uses it, or in its subsystem's `limits.py`.

A user setting is something set from outside the package's source, as docs/ describes it: an environment
variable, a `[tool.dotprompt]` key, a command-line option or a prompt key; a constant of settings.py is
one's default or accepted values. USER_SETTINGS names each with what sets it, and the test checks that the
docs name that; a new constant of settings.py needs an entry that holds, or a home beside its user."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

SETTINGS = ROOT / "dotprompt" / "settings.py"
DOCS = "\n".join(path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md")))

# constant -> what the docs say sets it (found verbatim in docs/*.md)
USER_SETTINGS: dict[str, str] = {
    "DEFAULT_MAX_TURNS": "maxTurns",                   # a prompt key / max_turns=, default 5
    "DEFAULT_MAX_TOOL_CALLS": "maxToolCalls",          # a prompt key / max_tool_calls=
    "DEFAULT_TIMEOUT": "`timeout`",                    # [tool.dotprompt.providers.NAME] timeout
    "DEFAULT_DEADLINE": "`deadline`",                  # ... deadline
    "DEFAULT_MAX_RESPONSE_BYTES": "`max_response_bytes`",
    "LOCAL_MODEL": "DOTPROMPT_MODEL",                  # the default model when none is named
    "RENDER_MAX_CHARS": "render_max_chars",            # [tool.dotprompt] / DOTPROMPT_RENDER_MAX_CHARS
    "RENDER_MAX_SECONDS": "render_max_seconds",
    "TEMPLATE_ENGINES": "--template-engine",           # [tool.dotprompt] engine, --engine
    "RUNLOG_KEEP_RUNS": "DOTPROMPT_LOG_KEEP_RUNS",     # and log_keep_runs
    "RUNLOG_KEEP_DAYS": "DOTPROMPT_LOG_KEEP_DAYS",
    "BATCH_KEY_COLUMN": "--key",
    "BATCH_LOG_ROWS": "--log-rows",
    "BATCH_JOB_MAX_ROWS": "--batch-size",
    "HTTP_TRANSPORTS": "DOTPROMPT_HTTP_TRANSPORT",
    "SAFE_DIRECTORIES_VAR": "DOTPROMPT_SAFE_DIRECTORIES",
    "UI_DEFAULT_PORT": "--port",
    "TYPES_MODULE": "`types`",                      # [tool.dotprompt] types, the module `dotprompt types` writes
    "MCP_CALL_TIMEOUT": "seconds one tool call may take",  # [tool.dotprompt.mcp.servers.NAME] timeout
    "MCP_STARTUP_TIMEOUT": "startup_timeout",
    "MCP_TOOLS_CACHE": ".dotprompt/mcp-tools.json",     # written by `dotprompt mcp tools --refresh`
    "MCP_SERVE_DEFAULT_PORT": "--port",
}


def module_constants() -> set[str]:
    """The public UPPER_CASE names settings.py assigns at module level (`_ON`, `_PARSED`: its functions' own)."""
    tree = ast.parse(SETTINGS.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper() and not t.id.startswith("_")}
    return names


def test_settings_defines_only_user_settings():
    internal = sorted(module_constants() - set(USER_SETTINGS))
    assert not internal, ("internal limits belong beside their user (or in their subsystem's limits.py), "
                          f"not in settings.py: {', '.join(internal)}")


def test_settings_imports_no_constant_it_does_not_own():
    from dotprompt import settings

    borrowed = sorted(name for name in settings.__all__ if name.isupper() and name not in module_constants())
    assert not borrowed, f"settings re-exports constants defined elsewhere: {', '.join(borrowed)}"


@pytest.mark.parametrize("name", sorted(USER_SETTINGS))
def test_each_user_setting_is_set_as_the_docs_say(name):
    from dotprompt import settings

    assert hasattr(settings, name), f"{name} is listed as a user setting but settings.py does not define it"
    assert USER_SETTINGS[name] in DOCS, f"{name}: the docs never name {USER_SETTINGS[name]!r}, what sets it"
