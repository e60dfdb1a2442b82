"""The MCP Inspector (npm `@modelcontextprotocol/inspector`), pinned by `tests/mcpserve/inspector/`'s
package.json and package-lock.json and installed with `npm ci` into ~/.cache/dotprompt/npm-inspector
(outside the repository; a folder of its own, as `npm ci` replaces the node_modules it installs into).

`.ci/run` installs it (`python -m tests.mcpserve.inspector`); the tests' fixture installs it when it is
missing or its lock changed. Nothing else is fetched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PINNED = Path(__file__).with_name("inspector")
CACHE = Path.home() / ".cache" / "dotprompt" / "npm-inspector"
FILES = ("package.json", "package-lock.json")


def binary(cache: Path = CACHE) -> Path:
    return cache / "node_modules" / ".bin" / "mcp-inspector"


def up_to_date(cache: Path = CACHE) -> bool:
    return binary(cache).exists() and all(
        (cache / name).is_file() and (cache / name).read_bytes() == (PINNED / name).read_bytes() for name in FILES)


def install(cache: Path = CACHE) -> Path:
    """The Inspector's command, installed first when missing or stale; RuntimeError without npm."""
    if up_to_date(cache):
        return binary(cache)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("the MCP Inspector tests need Node.js 18+ and npm on PATH")
    cache.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(PINNED / name, cache / name)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=cache, check=True, timeout=900)
    return binary(cache)


if __name__ == "__main__":
    print(install(), file=sys.stderr)
