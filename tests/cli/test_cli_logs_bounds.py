"""`dotprompt logs` with numbers past SQLite's integer range: no such run, or no limit; never a
traceback, never "the log is corrupt"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "channels"))
from limited_cli import cli

HUGE = "99999999999999999999"


@pytest.mark.slow
def test_a_run_id_or_a_limit_past_the_integer_range(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hi.prompt").write_text("---\nmodel: echo\n---\nhello")
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "DOTPROMPT_DIR": "prompts"}
    assert cli("run", "hi", cwd=tmp_path, env=env).returncode == 0
    shown = cli("logs", HUGE, cwd=tmp_path, env=env)
    assert shown.returncode == 1 and f"no run {HUGE} in " in shown.stderr
    listed = cli("logs", "-n", HUGE, cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "cannot read the run log" not in listed.stderr and "(1 run, newest first" in listed.stdout
    exported = cli("logs", "--json", "-n", HUGE, cwd=tmp_path, env=env)
    assert exported.returncode == 0 and json.loads(exported.stdout)["prompt"] == "hi"
