"""The VS Code extension's npm tooling for the tests: `npm ci` once (under a lock, so two pytest
workers never install at the same time) when editors/vscode/node_modules is missing or older than
package-lock.json. `.ci/run` installs it before the tests; a local run installs it here."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT

EXTENSION = ROOT / "editors" / "vscode"
INSTALLED = EXTENSION / "node_modules" / ".package-lock.json"  # npm writes it last


def _fresh() -> bool:
    return INSTALLED.exists() and INSTALLED.stat().st_mtime >= (EXTENSION / "package-lock.json").stat().st_mtime


def ensure_node_modules() -> None:
    npm = shutil.which("npm")
    assert npm, "npm is not installed: the VS Code extension's tests need Node 18+ and npm"
    with open(EXTENSION / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _fresh():
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=EXTENSION,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"npm ci failed in {EXTENSION}:\n{done.stdout}\n{done.stderr}"


def npm_run(script: str, cwd: Path = EXTENSION, *args: str) -> subprocess.CompletedProcess[str]:
    """`npm run -s SCRIPT -- ARGS` in `cwd`; never raises on a failing script."""
    command = ["npm", "run", "-s", script, *(["--", *args] if args else [])]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
