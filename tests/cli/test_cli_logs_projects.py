"""`dotprompt logs` in one of several checkouts sharing the run log: its own runs by default, `--all`
for every project's (and the runs logged before projects were recorded)."""

from __future__ import annotations

import json
import time

from dotprompt.observe.runlog import RunLog
from dotprompt.settings import RunLogSettings
from tests.cli_inprocess import cli
from tests.echo_project import project


def checkout(root):
    root.mkdir()
    project(root)
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\n')
    return root


def test_logs_lists_this_projects_runs_unless_all(tmp_path, cli_env):
    env = {**cli_env, "XDG_DATA_HOME": str(tmp_path / "data")}
    one, two = checkout(tmp_path / "one"), checkout(tmp_path / "two")
    for root, answer in ((one, "alpha"), (two, "beta")):
        done = cli("run", "yesno", "--input", json.dumps({"answer": answer}), cwd=root, env=env)
        assert done.returncode == 0, done.stderr
    old = RunLog(RunLogSettings(tmp_path / "data" / "dotprompt" / "logs.db"))  # an entry from before projects
    old.add({"run_id": "old", "started": time.time() - 60, "source": "run", "status": "ok", "output": "from before"})
    assert old.flush()
    old.close()

    mine = [json.loads(line) for line in cli("logs", "--json", cwd=one, env=env).stdout.splitlines()]
    assert [r["output"] for r in mine] == [{"answer": "alpha"}] and mine[0]["project"] == str(one.resolve())
    (one / "prompts" / "deeper").mkdir()
    inside = cli("logs", "--json", cwd=one / "prompts" / "deeper", env=env).stdout  # anywhere in the checkout
    assert [json.loads(line)["output"] for line in inside.splitlines()] == [{"answer": "alpha"}]
    every = [json.loads(line) for line in cli("logs", "--json", "--all", cwd=one, env=env).stdout.splitlines()]
    assert [r["output"] for r in every] == ["from before", {"answer": "beta"}, {"answer": "alpha"}]  # by ID

    table = cli("logs", cwd=two, env=env).stdout
    assert "beta" in table and "alpha" not in table and "before" not in table
    assert f"of the project {two.resolve()} (--all: every project's)" in table
    wide = cli("logs", "--all", cwd=two, env=env).stdout
    assert "PROJECT" in wide.splitlines()[0] and "one" in wide and "two" in wide
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    nothing = cli("logs", cwd=empty, env=env).stdout
    assert f"of the project {empty.resolve()} only: `dotprompt logs --all` lists every project's" in nothing
    shown = cli("logs", str(mine[0]["id"]), cwd=two, env=env).stdout  # a run by its ID, whatever its project
    assert f"project  {one.resolve()}" in shown
