"""Every read of the process environment is in dotprompt/settings.py, as docs/architecture.md says.

Read from the source with `ast`: `os.environ`, `os.environb`, `os.getenv`, `os.putenv`, `os.unsetenv`, those
names imported from `os`, and urllib's proxy variables (`getproxies`, `getproxies_environment`) anywhere else
in dotprompt/ fail the test. A module that needs a variable asks settings: a named function for each variable
the package knows (`in_ci()`, `no_color()`, ...), `environment()` for variables whose names come from elsewhere
(a provider's key variables, a token source's variable, a child process's environment). The one exception,
with its reason, is DOCUMENTED_EXCEPTIONS."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "dotprompt"
SETTINGS = PACKAGE / "settings.py"
OS_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
URLLIB_NAMES = {"getproxies", "getproxies_environment"}

# Modules allowed to read the environment themselves, each with its reason (also given in docs/architecture.md).
# A new entry needs a reason that holds: "it was simpler" does not.
DOCUMENTED_EXCEPTIONS: dict[str, str] = {
    "_util/redact.py": "it scans every variable for key-like names to mask their values, and it sits below "
                       "settings: errors.py masks its messages with it, and settings imports errors",
}


def environment_reads(path: Path) -> list[str]:
    """`line: what` for every environment access in the module at `path`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and (node.attr in URLLIB_NAMES or (
                node.attr in OS_NAMES and isinstance(node.value, ast.Name) and node.value.id == "os")):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "urllib.request"):
            names = OS_NAMES if node.module == "os" else URLLIB_NAMES
            found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names if a.name in names]
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_the_scan_sees_every_spelling(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os, urllib.request\nfrom os import getenv\nos.environ.get('A')\nos.getenv('B')\n"
                      "urllib.request.getproxies_environment()\nx = os.environ\nos.path.join('a')\n")
    assert [line.split(":")[0] for line in environment_reads(module)] == ["2", "3", "4", "5", "6"]


def test_every_environment_read_is_in_settings():
    outside = [f"{path.relative_to(ROOT)}:{read}"
               for path in sorted(PACKAGE.rglob("*.py")) if path != SETTINGS
               and str(path.relative_to(PACKAGE)) not in DOCUMENTED_EXCEPTIONS
               for read in environment_reads(path)]
    assert not outside, ("read the environment through dotprompt/settings.py (a function per variable, or "
                         "settings.environment() for a name given elsewhere):\n" + "\n".join(outside))


def test_settings_reads_the_environment_and_each_exception_still_does():
    assert environment_reads(SETTINGS)  # the scan is not blind: the module that reads it is seen reading it
    stale = [name for name in DOCUMENTED_EXCEPTIONS if not environment_reads(PACKAGE / name)]
    assert not stale, f"no longer read the environment: remove them from DOCUMENTED_EXCEPTIONS: {stale}"
