"""The `pytest11` entry point: present wherever the package is installed, so it does nothing unless the
project opts in with `[tool.dotprompt] pytest = true` (in the pyproject.toml at or above pytest's rootdir).
Then it loads the plugin, `dotprompt.testing.pytest_plugin`, as `-p dotprompt.testing.pytest_plugin` does.

A module of its own, not the plugin itself: `-p` registers the plugin under its module name, and the
same module registered again under the entry point's name would be refused by pytest.
"""

from __future__ import annotations

import pytest

from ..errors import UsageError
from ..settings import opted_into_pytest  # not named pytest_*: pytest would take it for a hook

PLUGIN = "dotprompt.testing.pytest_plugin"


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Here, not in pytest_configure: the rootdir is known, and the command line is not parsed for good
    # yet, so the plugin's --dotprompt-mode is still accepted.
    try:
        opted_in = opted_into_pytest(early_config.rootpath)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    if opted_in and not early_config.pluginmanager.has_plugin(PLUGIN):
        early_config.pluginmanager.import_plugin(PLUGIN)
