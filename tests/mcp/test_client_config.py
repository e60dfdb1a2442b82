"""Configuring MCP servers (`[tool.dotprompt.mcp.servers.NAME]`, `PromptLibrary(mcp_servers=...)`) and
`dotprompt check` on MCP tool names, without starting any server (the cached tool lists)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dotprompt import PromptLibrary, UsageError
from dotprompt.mcp.cache import fingerprint, read_cache, write_cache
from dotprompt.mcp.config import configured_servers
from tests.cli_inprocess import cli
from tests.conftest import ROOT

SCRIPT = str(Path(__file__).parent / "hostile_server.py")


@pytest.mark.parametrize(("table", "message"), [
    ({"comand": "x"}, "unknown key 'comand' (did you mean `command`?)"),
    ({"command": "x", "url": "http://h/mcp"}, "give `command` (a server started over stdio) or `url`"),
    ({}, "give `command`"),
    ({"url": "ftp://h"}, "`url` must be an http:// or https:// URL"),
    ({"command": "x", "timeout": 0}, "`timeout` must be a number of seconds above 0"),
    ({"command": "x", "args": "--flag"}, "`args` must be a list of strings"),
    ({"command": "x", "headers": {"A": "b"}}, "`headers` are for a `url` server"),
    ({"url": "http://h/mcp", "env": ["TOKEN"]}, "`args`, `env` and `cwd` are for a `command`"),
])
def test_a_bad_server_table_names_the_table_the_key_and_the_fix(table, message):
    with pytest.raises(UsageError, match=r"PromptLibrary\(mcp_servers=\{'fs': \.\.\.}\)") as caught:
        PromptLibrary(None, mcp_servers={"fs": table})
    assert message in str(caught.value)


def test_a_server_name_that_would_break_tool_names_is_refused():
    with pytest.raises(UsageError, match="a server's name is letters, digits"):
        PromptLibrary(None, mcp_servers={"my/fs": {"command": "x"}})


def test_pyproject_servers_are_read_and_nothing_starts(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dotprompt.mcp.servers.fs]\ncommand = "npx"\nargs = ["-y", "server"]\nenv = ["GITHUB_TOKEN"]\n'
        'approve = ["write_*"]\ntimeout = 5\n')
    monkeypatch.chdir(tmp_path)
    servers = PromptLibrary(None).mcp_servers
    assert list(servers) == ["fs"]
    fs = servers["fs"]
    assert (fs.command, fs.args, fs.env, fs.approve, fs.timeout) == ("npx", ("-y", "server"), ("GITHUB_TOKEN",),
                                                                     ("write_*",), 5.0)


def test_pyproject_mistakes_name_the_table(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt.mcp.servers.fs]\ncommand = "npx"\nenvs = ["X"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"\[tool.dotprompt.mcp.servers.fs\] in pyproject.toml: unknown key 'envs' "
                                         r"\(did you mean `env`\?\)"):
        PromptLibrary(None)


def test_a_header_naming_an_unset_variable_is_an_error_naming_it(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    server = configured_servers({"web": {"url": "http://127.0.0.1:1/mcp",
                                         "headers": {"Authorization": "Bearer ${NOT_SET_ANYWHERE}"}}})["web"]
    with pytest.raises(UsageError, match=r"headers.Authorization names \$\{NOT_SET_ANYWHERE\}, which is not set"):
        server.resolved_headers()


def test_the_cache_keeps_other_servers_and_reads_back(tmp_path):
    servers = configured_servers({"a": {"command": "x"}, "b": {"command": "y"}})
    path = tmp_path / ".dotprompt" / "mcp-tools.json"
    write_cache(path, {"a": (servers["a"], [{"name": "one", "description": "One."}])})
    write_cache(path, {"b": (servers["b"], [{"name": "two", "description": ""}])})
    cached = read_cache(path)
    assert cached["a"].tools == ("one",) and cached["b"].tools == ("two",)
    assert cached["a"].fingerprint == fingerprint(servers["a"]) != fingerprint(servers["b"])
    path.write_text("{not json")
    assert read_cache(path) == {}


# -- dotprompt check ---------------------------------------------------------------------------------

def project(tmp_path: Path, tools: str, *, cached: list[str] | None = None, command: str = "never-started") -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text(f"---\ntools: {tools}\n---\nhi\n")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.dotprompt]\nprompts_dir = "prompts"\n\n[tool.dotprompt.mcp.servers.fs]\ncommand = "{command}"\n')
    if cached is not None:
        server = configured_servers({"fs": {"command": command}})["fs"]
        write_cache(tmp_path / ".dotprompt" / "mcp-tools.json",
                    {"fs": (server, [{"name": name, "description": ""} for name in cached])})
    return tmp_path


def test_check_names_an_unconfigured_server_as_an_error_with_a_did_you_mean(tmp_path):
    done = cli("check", cwd=project(tmp_path, "[fz/read_file]", cached=["read_file"]))
    assert done.returncode == 1
    assert "p.prompt:2:9: error: tool `fz/read_file` names MCP server `fz`, which is not configured " \
           "(did you mean fs/read_file?)" in done.stdout + done.stderr


def test_check_finds_a_misspelt_tool_in_the_cached_list_without_starting_the_server(tmp_path):
    done = cli("check", cwd=project(tmp_path, "[fs/read_fil]", cached=["read_file", "write_file"]))
    assert done.returncode == 1
    assert "MCP server `fs` has no tool `read_fil` (did you mean fs/read_file" in done.stdout + done.stderr


def test_check_accepts_known_tools_and_patterns(tmp_path):
    done = cli("check", cwd=project(tmp_path, "[fs/read_file, 'fs/write_*']", cached=["read_file", "write_file"]))
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_warns_when_no_list_is_cached_or_it_is_stale(tmp_path):
    done = cli("check", cwd=project(tmp_path, "[fs/read_file]"))
    assert "warning: tool `fs/read_file` is unchecked: MCP server `fs` has no cached tool list (run " \
           "`dotprompt mcp tools --refresh`" in done.stdout + done.stderr
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dotprompt]\nprompts_dir = "prompts"\n\n[tool.dotprompt.mcp.servers.fs]\ncommand = "other"\n')
    server = configured_servers({"fs": {"command": "never-started"}})["fs"]
    write_cache(tmp_path / ".dotprompt" / "mcp-tools.json", {"fs": (server, [{"name": "read_file"}])})
    done = cli("check", cwd=tmp_path)
    assert "is from another configuration of it" in done.stdout + done.stderr


@pytest.mark.slow
def test_mcp_tools_refresh_caches_the_lists_that_check_then_reads(tmp_path):
    root = project(tmp_path, "[fs/echo, fs/ecko]")
    (root / "pyproject.toml").write_text(
        '[tool.dotprompt]\nprompts_dir = "prompts"\n\n[tool.dotprompt.mcp.servers.fs]\n'
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(SCRIPT)}, \"well\"]\n")
    done = cli("mcp", "tools", "--refresh", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "fs: 3 tools" in done.stdout and "  fs/echo  Echo the text." in done.stdout
    assert json.loads((root / ".dotprompt" / "mcp-tools.json").read_text())["servers"]["fs"]["tools"][0]["name"] == "echo"
    done = cli("check", cwd=root)
    assert done.returncode == 1
    assert "MCP server `fs` has no tool `ecko` (did you mean fs/echo?)" in done.stdout + done.stderr
    assert "fs/echo`" not in done.stdout.replace("fs/echo?", "")


def test_check_of_a_project_using_mcp_tools_loads_no_mcp_sdk(tmp_path):
    root = project(tmp_path, "[fs/read_file]", cached=["read_file"])
    code = ("import sys; from dotprompt.cli import main; code = main(['check']); "
            "print(code, sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr


def test_mcp_tools_with_no_server_configured_says_how_to_configure_one(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dotprompt]\n")
    done = cli("mcp", "tools", cwd=tmp_path)
    assert done.returncode == 2 and "no MCP server is configured: add [tool.dotprompt.mcp.servers.NAME]" in done.stderr


# -- dotprompt render: the MCP tools from the cached lists, never a server started ------------------

def render_project(tmp_path: Path, tools: str, cached: list[dict] | None) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text(f"---\ntools: {tools}\n---\nhi\n")
    # a command that would leave a mark if anything started it
    marker = tmp_path / "started"
    command = json.dumps(sys.executable)
    args = json.dumps(["-c", f"open({str(marker)!r}, 'w').write('x')"])
    (tmp_path / "pyproject.toml").write_text(f'[tool.dotprompt]\nprompts_dir = "prompts"\n\n'
                                             f'[tool.dotprompt.mcp.servers.fs]\ncommand = {command}\nargs = {args}\n')
    if cached is not None:
        server = configured_servers(None, project={"mcp": {"servers": {"fs": {"command": sys.executable,
                                                                               "args": json.loads(args)}}}})["fs"]
        write_cache(tmp_path / ".dotprompt" / "mcp-tools.json", {"fs": (server, cached)})
    return tmp_path


LISTED = [{"name": "read_file", "description": "Read a file.",
           "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
          {"name": "write_file", "description": "Write a file.", "inputSchema": {"type": "object"},
           "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
          {"name": "delete", "description": "Delete.", "inputSchema": {"type": "object"}}]


def test_render_shows_the_mcp_tool_definitions_from_the_cache_and_says_so(tmp_path):
    root = render_project(tmp_path, "[fs/read_file, 'fs/write_*']", LISTED)
    done = cli("render", "p", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    defs = {d["name"]: d for d in record["toolDefs"]}
    assert list(defs) == ["fs/read_file", "fs/write_file"]
    assert defs["fs/read_file"]["inputSchema"] == LISTED[0]["inputSchema"]
    assert defs["fs/read_file"]["description"] == "Read a file."
    assert defs["fs/write_file"]["outputSchema"] == LISTED[1]["outputSchema"]
    assert defs["fs/read_file"]["metadata"] == {"mcp": {"server": "fs", "tool": "read_file", "from": "cache"}}
    assert record["mcpTools"]["from"].endswith(".dotprompt/mcp-tools.json") and record["mcpTools"]["notes"] == []
    done = cli("render", "p", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "MCP tools (from the cached tool list" in done.stdout
    assert "fs/read_file: Read a file." in done.stdout and "fs/write_file: Write a file." in done.stdout
    assert not (root / "started").exists()


def test_render_without_a_cache_says_the_definitions_are_missing_and_starts_nothing(tmp_path):
    root = render_project(tmp_path, "[fs/read_file]", None)
    done = cli("render", "p", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "MCP server `fs` has no cached tool list" in done.stdout
    assert "dotprompt mcp tools --refresh" in done.stdout
    record = json.loads(cli("render", "p", "--json", cwd=root).stdout)
    assert record.get("toolDefs", []) == []
    assert "has no cached tool list" in record["mcpTools"]["notes"][0]
    assert not (root / "started").exists()


def test_render_says_when_the_cache_is_stale(tmp_path):
    root = render_project(tmp_path, "[fs/read_file]", LISTED)
    text = (root / "pyproject.toml").read_text().replace("args = ", "cwd = \".\"\nargs = ")
    (root / "pyproject.toml").write_text(text)
    done = cli("render", "p", cwd=root)
    assert "from another configuration of it" in done.stdout and "fs/read_file: Read a file." in done.stdout
