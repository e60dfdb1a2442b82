"""pytest plugin: `*.test.yaml` prompt test files become test items, replayed from recordings by default.

Opt-in, so that installing the package changes no other project's test run: a project turns it on with
`[tool.dotprompt] pytest = true` in pyproject.toml (the `pytest11` entry point, testing/_pytest_entry.py,
then loads this module), or for one run with `pytest -p dotprompt.testing.pytest_plugin`. Its plain
`pytest` then also gates its prompts.
`--dotprompt-mode record|replay|auto|live` (or $DOTPROMPT_TEST_MODE) changes the mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import CaseFailedError, PromptFileError
from ..generation.api import run_sync
from ..prompts.library import PromptLibrary
from ..prompts.loader import project_library, prompts_dir
from ..settings import env_test_mode
from .cases import TestCase, load_test_file
from .runner import TestRun

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr  # what pytest's own repr_failure returns besides text

__all__ = ["PromptTestFile", "PromptTestItem", "prompt_library", "pytest_addoption", "pytest_collect_file"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dotprompt")
    group.addoption("--dotprompt-mode", choices=["record", "replay", "auto", "live"], default=None,
                    help="how prompt test cases reach the model (default: replay)")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.name.endswith(".test.yaml") and "__recordings__" not in file_path.parts:
        return PromptTestFile.from_parent(parent, path=file_path)
    return None


def _prompts_root(path: Path) -> Path:
    """The prompt folder the file belongs to: the configured one if it holds the file, else the file's folder."""
    configured = prompts_dir().resolve()
    return configured if configured in path.resolve().parents else path.parent


class PromptTestFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        root = _prompts_root(self.path)
        try:
            cases = load_test_file(self.path, root)
        except PromptFileError as exc:
            raise self.CollectError(str(exc)) from None
        runner = _runner(self.config, root)
        for case in cases:
            yield PromptTestItem.from_parent(self, name=case.name, case=case, runner=runner)


_RUNNERS: dict[Path, TestRun] = {}


def _runner(config: pytest.Config, root: Path) -> TestRun:
    mode = config.getoption("--dotprompt-mode") or env_test_mode() or "replay"
    if root not in _RUNNERS:
        _RUNNERS[root] = TestRun(project_library(root), mode)  # type: ignore[arg-type]
    return _RUNNERS[root]


class PromptTestItem(pytest.Item):
    def __init__(self, *, case: TestCase, runner: TestRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.runner = runner
        # No fixtures, as a plain function test without arguments has. Other plugins' hook wrappers read
        # `item.funcargs` (pytest-lsp 1.0's `pytest_runtest_call` returns without yielding when it is
        # missing, which fails every case of a project that also has pytest-lsp installed).
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        # run_sync: another plugin or fixture may hold a running event loop in this thread (Playwright's
        # sync API does), where asyncio.run refuses to start.
        result = run_sync(self.runner.run_case(self.case))
        self.runner.save()
        if not result.passed:
            raise CaseFailedError(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailedError):
            lines = [f"{self.case.file}:{self.case.line}: case {self.case.name!r} failed:"]
            return "\n".join(lines + [f"  - {f}" for f in excinfo.value.result.failures])
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.path.name}::{self.case.name}"


@pytest.fixture
def prompt_library() -> PromptLibrary:
    """The project's prompt library (./prompts, $DOTPROMPT_DIR or [tool.dotprompt] prompts_dir)."""
    return project_library(prompts_dir())
