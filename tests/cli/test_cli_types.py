"""`dotprompt types` in-process: write, `--check` naming each stale prompt, `check`'s warning, and the
files it refuses to write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_inprocess import cli
from tests.typegen.project import make_project

RUFF = Path(sys.executable).with_name("ruff")


@pytest.fixture
def project(tmp_path) -> Path:
    root = make_project(tmp_path)
    done = cli("types", cwd=root)
    assert done.returncode == 0 and "wrote" in done.stderr and "(6 prompts)" in done.stderr, done.stderr
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_check_passes_on_a_fresh_module_and_writing_again_changes_nothing(project):
    done = cli("types", "--check", cwd=project)
    assert done.returncode == 0 and "is up to date (6 prompts)" in done.stderr
    again = cli("types", cwd=project)
    assert again.returncode == 0 and "unchanged:" in again.stderr


def test_check_names_the_prompt_whose_schema_changed(project):
    edit(project / "prompts" / "extract.prompt", "    total: number", "    total: string")
    done = cli("types", "--check", cwd=project)
    assert done.returncode == 1
    assert done.stdout == (f"{project / 'prompts' / 'extract.prompt'}: its frontmatter (schemas) changed since "
                           "prompt_types.py was written\n")
    assert "is stale: run `dotprompt types`" in done.stderr
    assert cli("types", cwd=project).returncode == 0
    assert cli("types", "--check", cwd=project).returncode == 0
    assert "    total: str\n" in (project / "myapp" / "prompt_types.py").read_text(encoding="utf-8")


def test_check_names_new_and_removed_prompt_files(project):
    (project / "prompts" / "fresh.prompt").write_text("hi", encoding="utf-8")
    (project / "prompts" / "route.prompt").unlink()
    done = cli("types", "--check", cwd=project)
    assert done.returncode == 1
    assert f"{project / 'prompts' / 'fresh.prompt'}: new prompt file since" in done.stdout
    assert f"{project / 'prompts' / 'route.prompt'}: prompt file removed since" in done.stdout


def test_a_template_edit_or_a_formatter_run_is_no_change(project):
    edit(project / "prompts" / "extract.prompt", "Read {{ text }}", "Read this: {{ text }}")
    module = project / "myapp" / "prompt_types.py"
    subprocess.run([str(RUFF), "format", "--isolated", "--line-length", "50", str(module)], check=True,
                   capture_output=True, timeout=120)
    assert cli("types", "--check", cwd=project).returncode == 0


def test_a_hand_edit_of_the_module_is_caught(project):
    edit(project / "myapp" / "prompt_types.py", "    paid: bool\n", "    paid: int\n")
    done = cli("types", "--check", cwd=project)
    assert done.returncode == 1 and "its code differs from what dotprompt types writes" in done.stdout


def test_check_on_a_missing_module_fails(tmp_path):
    root = make_project(tmp_path)
    done = cli("types", "--check", cwd=root)
    assert done.returncode == 1 and "prompt_types.py: missing (run `dotprompt types`)" in done.stdout


def test_dotprompt_check_warns_when_the_module_is_stale(project):
    assert "stale" not in cli("check", cwd=project).stdout
    edit(project / "prompts" / "extract.short.prompt", "    paid: boolean", "    paid: string")
    done = cli("check", cwd=project)
    assert ("prompts/extract.short.prompt: warning: its frontmatter changed since prompt_types.py was written: the "
            "typed module is stale (run `dotprompt types` to write prompt_types.py again)") in done.stdout
    assert cli("check", "--strict", cwd=project).returncode == 1


def test_dotprompt_check_is_silent_without_a_typed_module(tmp_path):
    root = make_project(tmp_path)
    done = cli("check", cwd=root)
    assert "stale" not in done.stdout + done.stderr and "prompt_types" not in done.stdout


def test_a_file_it_did_not_write_is_left_alone(tmp_path):
    root = make_project(tmp_path)
    mine = root / "myapp" / "prompt_types.py"
    mine.write_text("MY_CODE = 1\n", encoding="utf-8")
    done = cli("types", cwd=root)
    assert done.returncode == 1 and "was not written by dotprompt types; it is left alone" in done.stderr
    assert mine.read_text(encoding="utf-8") == "MY_CODE = 1\n"


def test_the_setting_may_not_point_outside_the_project(tmp_path):
    root = make_project(tmp_path / "project")
    (root / "pyproject.toml").write_text('[tool.dotprompt]\ntypes = "../elsewhere.py"\n', encoding="utf-8")
    done = cli("types", cwd=root)
    assert done.returncode == 1 and "is outside the project folder" in done.stderr
    assert not (tmp_path / "elsewhere.py").exists()


def test_the_setting_must_name_a_python_file(tmp_path):
    root = make_project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.dotprompt]\ntypes = 3\n', encoding="utf-8")
    done = cli("types", cwd=root)
    assert done.returncode == 1 and "[tool.dotprompt] types must be the path of a .py file" in done.stderr


def test_out_writes_elsewhere_and_the_default_is_beside_pyproject(tmp_path):
    root = make_project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nschemas = ["myapp/schemas.py"]\n', encoding="utf-8")
    assert cli("types", cwd=root).returncode == 0 and (root / "prompt_types.py").is_file()
    assert cli("types", "--out", str(root / "other.py"), cwd=root).returncode == 0
    assert (root / "other.py").read_text(encoding="utf-8") == (root / "prompt_types.py").read_text(encoding="utf-8")


def test_a_broken_prompt_is_one_line_naming_it(tmp_path):
    root = make_project(tmp_path)
    (root / "prompts" / "bad.prompt").write_text("---\noutput:\n  schema:\n    n: strng\n---\nx", encoding="utf-8")
    done = cli("types", cwd=root)
    assert done.returncode == 1 and "bad.prompt: cannot read its types" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_pre_commit_hook_entry_runs_the_real_cli(project, cli_env):
    import shlex

    import yaml

    from tests.cli_process import run
    from tests.conftest import ROOT

    [hook] = [h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
              if h["id"] == "dotprompt-types"]
    command = [str(Path(sys.executable).with_name("dotprompt")), *shlex.split(hook["entry"])[1:]]
    assert run(command, cwd=project, env=cli_env).returncode == 0
    edit(project / "prompts" / "route.prompt", "enum: [billing, bug]", "enum: [billing, bug, other]")
    done = run(command, cwd=project, env=cli_env)
    assert done.returncode == 1 and "route.prompt: its frontmatter (schemas) changed" in done.stdout
