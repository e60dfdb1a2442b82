"""Browser fixtures for the workbench: Debian's chromium driven by Playwright (never a downloaded browser).

A failed browser test leaves a screenshot of its page in test-artifacts/ui/. With
DOTPROMPT_UI_SCREENSHOTS=DIR the flows also save a picture of each page there (the docs' pictures).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

CHROMIUM = os.environ.get("DOTPROMPT_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts" / "ui"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


# Per module, not per session: Playwright's sync API keeps its event loop running in this thread while
# it is open, and every later asyncio.run() in the same worker would fail.
@pytest.fixture(scope="module")
def browser_context() -> Iterator[object]:
    if not Path(CHROMIUM).is_file():
        if os.environ.get("CI"):  # .ci/run installs it: a missing browser there is a broken step, not a skip
            pytest.fail(f"no chromium at {CHROMIUM} in CI")
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    profile = tempfile.mkdtemp(prefix="dotprompt-ui-chromium-")  # a fresh user-data-dir for the run
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context, request):
    page = browser_context.new_page()
    page.dialogs = []  # any alert() a hostile value managed to run
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"{request.node.name}.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot of the failed page: {shot}")
    page.close()



_browser_seconds: list[float] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    started = time.perf_counter()
    yield
    if item.module.__name__.endswith("test_ui_browser"):
        _browser_seconds.append(time.perf_counter() - started)


def pytest_terminal_summary(terminalreporter):
    if _browser_seconds:
        terminalreporter.write_line(f"workbench browser tests (chromium): {len(_browser_seconds)} ran in "
                                    f"{sum(_browser_seconds):.1f} s")
