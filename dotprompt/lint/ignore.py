"""Silencing warning codes: for the project (`[tool.dotprompt] ignore = ["code", ...]` in pyproject.toml)
and per prompt file (a `# dotprompt: ignore[code, code]` line among the `#` lines before the opening
`---`, where a prompt file allows comments: the frontmatter and the template stay as they are).

Only warnings are silenced: an error's code in an ignore is itself reported (`invalid-ignore`), as is
a code that does not exist, since an ignore that silences nothing is most likely a typo. A file's
ignore line is read only when `check` has something to say of that file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .._util.suggest import did_you_mean
from .check import Diagnostic
from .codes import CODES

__all__ = ["IGNORE_LINE", "file_ignores", "project_ignores", "without_ignored"]

# `# dotprompt: ignore[unknown-tool, unknown-key]`: spaces are allowed around each part
IGNORE_LINE = re.compile(r"#\s*dotprompt:\s*ignore\[([^\]]*)\]\s*$")
_HEAD = 64 * 1024  # the comment lines before the frontmatter are read from this much of the file


def _problem(code: str, path: str, line: int | None, column: int | None, where: str) -> Diagnostic | None:
    """An `invalid-ignore` warning when `code` is no warning code; None when it is one."""
    known = CODES.get(code)
    if known is not None and known.level == "warning":
        return None
    if known is not None:
        message = (f"{where}: `{code}` is an error's code, and errors cannot be ignored: the prompt fails or "
                   "renders wrongly at run time (fix it, or remove the code from the ignore)")
    else:
        hint = did_you_mean(code, list(CODES)) or "`dotprompt check`'s codes are listed in docs/check-diagnostics.md"
        message = f"{where}: unknown code `{code}` ({hint})"
    return Diagnostic(path, line, column, "warning", message, code="invalid-ignore")


def file_ignores(text: str, path: str) -> tuple[set[str], list[Diagnostic]]:
    """The warning codes a prompt file's `# dotprompt: ignore[...]` lines silence, and a warning for each
    code there that is not a warning's. Only lines before the opening `---` count: without frontmatter
    a `#` line is template text."""
    codes: set[str] = set()
    problems: list[Diagnostic] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped == "---":
            return codes, problems
        if stripped and not stripped.startswith("#"):
            return set(), []  # no frontmatter: the `#` lines were template text
        found = IGNORE_LINE.fullmatch(stripped)
        if found is None:
            continue
        column = line.index("[") + 2
        for part in found.group(1).split(","):
            code = part.strip()
            if not code:
                continue
            problem = _problem(code, path, number, column, "# dotprompt: ignore")
            if problem is None:
                codes.add(code)
            else:
                problems.append(problem)
    return set(), []


def project_ignores(codes: Sequence[str], pyproject: Path | None) -> tuple[set[str], list[Diagnostic]]:
    """The warning codes of `[tool.dotprompt] ignore` (settings.check_ignore), and a warning for each
    that is not a warning's code, on the pyproject.toml that lists it."""
    path = str(pyproject) if pyproject is not None else "pyproject.toml"
    problems = [p for code in codes if (p := _problem(code, path, None, None, "[tool.dotprompt] ignore")) is not None]
    return {code for code in codes if CODES.get(code) and CODES[code].level == "warning"}, problems


def _read_head(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(_HEAD)
    except OSError:
        return ""


def without_ignored(found: Iterable[Diagnostic], project: set[str] | frozenset[str] = frozenset(),
                    text_of: Callable[[str], str | None] | None = None) -> list[Diagnostic]:
    """`found` less the warnings the project or their own prompt file ignores, plus a warning for each
    ignore line of those files naming a code that is no warning's. `text_of(path)`: the file's text when
    it is not the one on disk (an editor's buffer), else None."""
    found = list(found)
    per_file: dict[str, tuple[set[str], list[Diagnostic]]] = {}
    out: list[Diagnostic] = []
    for diagnostic in found:
        path = diagnostic.path
        if path.endswith(".prompt") and path not in per_file:
            text = text_of(path) if text_of is not None else None
            per_file[path] = file_ignores(_read_head(path) if text is None else text, path)
            out += [] if "invalid-ignore" in project else per_file[path][1]
        if diagnostic.level == "warning" and (diagnostic.code in project or
                                               diagnostic.code in per_file.get(path, (set(), []))[0]):
            continue
        out.append(diagnostic)
    return out
