"""`dotprompt eval` as a CI gate: failed runs, baselines that do not cover an eval, report folders, record hints."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.cli_inprocess import cli
from tests.evals.eval_project import project


def replay_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in cli_env.items() if k != "GITHUB_STEP_SUMMARY"}, "CI": "true"}


def test_report_paths_in_missing_folders_are_created(tmp_path, cli_env):
    project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", "--record", "--junit", "reports/junit.xml", "--json", "reports/r.json", "--markdown",
               "reports/md/m.md", "--save-baseline", "baselines/base.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ET.parse(tmp_path / "reports" / "junit.xml").getroot().get("failures") == "0"
    assert json.loads((tmp_path / "reports" / "r.json").read_text())["evals"][0]["passed"] is True
    assert "## dotprompt eval" in (tmp_path / "reports" / "md" / "m.md").read_text()
    assert json.loads((tmp_path / "baselines" / "base.json").read_text())["evals"]


def test_a_report_path_that_cannot_be_written_is_one_line_before_the_run(tmp_path, cli_env):
    prompts = project(tmp_path)
    (tmp_path / "reports").write_text("a file, not a folder")
    done = cli("eval", "--record", "--json", "reports/r.json", cwd=tmp_path, env=replay_env(cli_env))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--json reports/r.json: cannot create the folder reports" in done.stderr, done.stderr
    assert not (prompts / "__recordings__").exists()  # nothing ran


def test_the_no_recording_hint_names_the_command_that_records_eval_rows(tmp_path, cli_env):
    prompts = project(tmp_path)
    env = replay_env(cli_env)
    done = cli("eval", cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert "dotprompt test --record" not in done.stdout
    assert "row a: no recording for case 'eval:a', model call 1 (prompts/__recordings__/inv.jsonl): record the " \
           "missing rows with `dotprompt eval --auto prompts/inv.test.yaml`" in done.stdout, done.stdout
    # ... and following it records them: the eval then replays offline and passes.
    assert cli("eval", "--auto", "prompts/inv.test.yaml", cwd=tmp_path, env=env).returncode == 0
    assert (prompts / "__recordings__" / "inv.jsonl").is_file()
    assert cli("eval", cwd=tmp_path, env=env).returncode == 0
