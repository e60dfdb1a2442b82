"""Neovim, for real: `nvim --headless` (Debian's 0.7.2 in CI) runs the documented setup
(editors/neovim/dotprompt.lua) against `dotprompt lsp` from the project's `.venv`, opens a prompt
with an error, reads the diagnostic, asks for a completion and follows a partial to its file.
tests/editors/nvim_driver.lua does what a user would and writes what it saw as a JSON transcript."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SETUP = ROOT / "editors" / "neovim" / "dotprompt.lua"
DRIVER = Path(__file__).with_name("nvim_driver.lua")

ASK = """\
---
input:
  schema:
    customer(object):
      name: string
      email: string
---
{{ role("system") }}
{% include "style" %}
{{ role("user") }}
Write to {{ customer.name }} at {{ custmer.email }}.
"""

def _project(tmp_path: Path) -> Path:
    """A project as users have one: pyproject.toml, a partial, a prompt, and its own .venv."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "nv"\nversion = "0"\n')
    (tmp_path / "_style.prompt").write_text("Answer in two short sentences, politely.\n")
    (tmp_path / "ask.prompt").write_text(ASK)
    (tmp_path / "ask.test.yaml").write_text("cases:\n  - name: polite\n    input: {customer: {name: Ada, email: a@b.c}}\n")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "dotprompt").symlink_to(Path(sys.executable).parent / "dotprompt")
    return tmp_path


def _drive(project: Path) -> dict:
    nvim = shutil.which("nvim")
    assert nvim, "nvim is not installed: apt-get install neovim (.ci/run does)"
    transcript = project / "transcript.json"
    env = {**os.environ, "DOTPROMPT_NVIM_SETUP": str(SETUP), "DOTPROMPT_NVIM_FILE": str(project / "ask.prompt"),
           "DOTPROMPT_NVIM_TRANSCRIPT": str(transcript), "DOTPROMPT_NVIM_WAIT_MS": "30000"}
    done = subprocess.run([nvim, "--headless", "--clean", "-c", f"luafile {DRIVER}"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert transcript.exists(), f"nvim wrote no transcript (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(transcript.read_text())


@pytest.mark.slow
def test_neovim_shows_the_diagnostic_completes_fields_and_follows_a_partial(tmp_path):
    project = _project(tmp_path)
    seen = _drive(project)
    steps = {step["step"]: step["value"] for step in seen["steps"]}
    shown = json.dumps(seen, indent=1)
    assert "error" not in steps, shown
    assert steps["filetype"] == "dotprompt", shown
    assert steps["attached"]["cmd"] == [str(project / ".venv" / "bin" / "dotprompt"), "lsp"], shown
    [diagnostic] = steps["diagnostics"]
    # The words `dotprompt check` prints, at the typo: line 11 (0-based 10), `custmer` at its column.
    assert diagnostic["lnum"] == 10 and diagnostic["col"] == ASK.splitlines()[10].index("custmer"), shown
    assert "`custmer` is not declared in input.schema (did you mean `customer`?)" in diagnostic["message"], shown
    assert {"name", "email"} <= set(steps["completion"]), shown
    assert steps["test file attached"] == {"filetype": "yaml", "client": True}, shown  # the same server
    assert steps["definition"]["buffer"] == str(project / "_style.prompt"), shown
    assert steps["definition"]["first_line"] == "Answer in two short sentences, politely.", shown
    assert seen["ok"] is True, shown


def test_the_editors_page_shows_the_setup_the_test_runs():
    page = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert "```lua\n" + SETUP.read_text(encoding="utf-8") + "```" in page
