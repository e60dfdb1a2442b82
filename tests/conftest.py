from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from dotprompt import PromptLibrary

ROOT = Path(__file__).resolve().parent.parent  # the repository: the one definition every test module imports

_data_home: list[str] = []


def pytest_configure(config):
    # `dotprompt run` logs every run to the user's data folder: the tests' runs go to a folder of their own.
    # Done here, not at import: child processes import this module for ROOT and keep their environment.
    for name in ("DOTPROMPT_LOG", "DOTPROMPT_LOG_PATH"):
        os.environ.pop(name, None)
    _data_home.append(tempfile.mkdtemp(prefix="dotprompt-tests-data-"))
    os.environ["XDG_DATA_HOME"] = _data_home[-1]
    from tests.cli_inprocess import take_pristine_state

    take_pristine_state()  # before any test module is imported: the in-process CLI starts from this state


def pytest_sessionfinish(session, exitstatus):
    for folder in _data_home:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def folder(tmp_path: Path):
    """A prompt folder; `folder.write("name.prompt", text)` adds a file and returns its path."""

    class Folder:
        path = tmp_path / "prompts"

        def write(self, name: str, text: str | bytes) -> Path:
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                target.write_bytes(text)
            else:
                target.write_text(text, encoding="utf-8")
            return target

        def library(self, **kwargs) -> PromptLibrary:
            return PromptLibrary(self.path, **kwargs)

    Folder.path.mkdir()
    return Folder()


@pytest.fixture
def example_prompts(tmp_path: Path) -> Path:
    """A copy of the repository's example prompt library."""
    target = tmp_path / "prompts"
    shutil.copytree(ROOT / "prompts", target)
    return target


@pytest.fixture
def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DOTPROMPT_DIR", None)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture
def dotprompt_cmd() -> list[str]:
    return [sys.executable, "-m", "dotprompt.cli"]
