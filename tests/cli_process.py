"""Running `dotprompt` as a real subprocess, as a user or CI would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def run(cmd: list[str], *args: str, cwd: Path | None = None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=60)


def dotprompt(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dotprompt.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)
