"""The MCP reference servers from npm, installed once (pinned by tests/mcp/npm/package-lock.json) into
~/.cache/dotprompt/npm, as .ci/run does; tests start them as a project would, over stdio or HTTP."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NPM_SPEC = Path(__file__).parent / "npm"
NPM_CACHE = Path.home() / ".cache" / "dotprompt" / "npm"
PACKAGES = NPM_CACHE / "node_modules" / "@modelcontextprotocol"
EVERYTHING = PACKAGES / "server-everything" / "dist" / "index.js"
FILESYSTEM = PACKAGES / "server-filesystem" / "dist" / "index.js"


def reference_servers() -> Path:
    """The install folder, `npm ci` there first if the servers are missing (a clean machine)."""
    lock = NPM_CACHE / "package-lock.json"
    if EVERYTHING.is_file() and FILESYSTEM.is_file() and lock.is_file() and \
            lock.read_bytes() == (NPM_SPEC / "package-lock.json").read_bytes():
        return NPM_CACHE
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed for the MCP reference servers (.ci/run installs them)")
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(NPM_SPEC / name, NPM_CACHE / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NPM_CACHE, check=True, timeout=600,
                   capture_output=True)
    return NPM_CACHE


def everything(**extra) -> dict:
    reference_servers()
    return {"command": shutil.which("node") or "node", "args": [str(EVERYTHING), "stdio"], **extra}


def filesystem(folder: Path, **extra) -> dict:
    reference_servers()
    return {"command": shutil.which("node") or "node", "args": [str(FILESYSTEM), str(folder)], **extra}


def processes_in(folder: Path) -> list[int]:
    """The pids of live processes whose working folder is `folder` (a test starts its servers there, so
    it counts its own servers, not another test's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(entry / "cwd").resolve() == folder.resolve() and (entry / "stat").read_text().split()[2] != "Z":
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
