"""The folder a language server serves: its prompt library, rebuilt when a file changes on disk,
and `dotprompt check`'s analysis of one file, from the editor's unsaved text when there is one.

The project's code is never imported (`check`'s default): an editor opens untrusted repositories,
and the names `[tool.dotprompt] tools / schemas / helpers` define are read from their modules unrun.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import DotpromptError
from ..lint.check import Diagnostic, check_partial, check_prompt, check_test_file
from ..lint.declared import DeclaredNames, read_declared
from ..lint.ignore import project_ignores, without_ignored
from ..prompts.library import PromptInfo, PromptLibrary
from ..prompts.loader import project_library, prompts_dir
from ..settings import check_ignore

__all__ = ["FileKind", "Project", "file_kind", "included_partials"]

FileKind = Literal["prompt", "partial", "test"]


def file_kind(path: str) -> FileKind | None:
    """What the server knows of the file at `path`: a prompt, a partial (`_name.prompt`), a test file, or nothing."""
    name = os.path.basename(path)
    if name.endswith(".test.yaml"):
        return "test"
    if name.endswith(".prompt"):
        return "partial" if name.startswith("_") else "prompt"
    return None


# `{{> name}}`, `{{#> name}}` (Handlebars) and `{% include "name" %}` (jinja2): what a file includes.
_INCLUDES = re.compile(r"""\{\{#?>\s*([\w./-]+)|\{%-?\s*include\s+["']([\w./-]+)["']""")


def included_partials(text: str) -> set[str]:
    """The partial names a template includes, read from its text (cheap: no parse)."""
    return {a or b for a, b in _INCLUDES.findall(text)}


@dataclass
class Project:
    """One workspace folder: where its prompts are, and the library that checks them."""

    root: Path
    folder: Path
    _library: PromptLibrary | None = None
    _declared: DeclaredNames | None = None

    @classmethod
    def open(cls, root: Path) -> Project:
        """The project at `root`: `[tool.dotprompt] prompts_dir` of its pyproject.toml, else `prompts/`
        (else the root itself, a folder of prompt files). The process works from `root` from now on,
        so the settings read from the working folder are the project's."""
        os.chdir(root)
        folder = prompts_dir(None)
        folder = (root / folder) if not folder.is_absolute() else folder
        return cls(root, folder.resolve() if folder.is_dir() else root.resolve())

    @property
    def library(self) -> PromptLibrary:
        if self._library is None:
            self._library = project_library(self.folder, log=False, import_code=False)
        return self._library

    @property
    def declared(self) -> DeclaredNames | None:
        if self._declared is None:
            try:
                self._declared = read_declared()
            except DotpromptError:
                return None  # a module listed but unreadable: check names it; here the names stay unknown
        return self._declared

    def forget(self) -> None:
        """Something changed on disk (or an analysis was stopped half-way): build the library again."""
        self._library = None
        self._declared = None

    def info_for(self, path: str) -> PromptInfo:
        """The prompt's name and variant, as the library names the file (it need not exist on disk yet)."""
        try:
            relative = Path(path).resolve().relative_to(self.folder)
        except ValueError:
            relative = Path(os.path.basename(path))
        stem = relative.name.removesuffix(".prompt")
        base, _, variant = stem.partition(".")
        return PromptInfo((relative.parent / base).as_posix().removeprefix("./"), variant or None, path)

    def diagnostics(self, path: str, text: str | None) -> list[Diagnostic]:
        """What `dotprompt check` says of the file at `path`, from `text` when the editor holds unsaved
        changes; only the diagnostics of this file (a test file's may also name its prompt)."""
        kind = file_kind(path)
        if kind == "prompt":
            found = check_prompt(self.library, self.info_for(path), self.declared, text=text)
        elif kind == "partial":
            found = check_partial(self.library, path, text=text)
        elif kind == "test":
            found = check_test_file(self.library, Path(path))
        else:
            return []
        found = [d if _same_file(d.path, path) else self._brought_home(d, path, text) for d in found]
        return without_ignored(found, self.ignored, lambda file: text if _same_file(file, path) else None)

    @property
    def ignored(self) -> set[str]:
        """The warning codes `[tool.dotprompt] ignore` silences (`check`'s rule); none when it is no list."""
        try:
            codes, pyproject = check_ignore()
        except DotpromptError:
            return set()  # `check` names the setting; here nothing is silenced
        return project_ignores(codes, pyproject)[0]

    def _brought_home(self, found: Diagnostic, path: str, text: str | None) -> Diagnostic:
        """A problem `check` found in another file this one uses (a partial it includes): shown on the
        line that includes that file (else the first line), the other file and line named first."""
        where = os.path.relpath(found.path, self.folder) + (f":{found.line}" if found.line else "")
        line = None
        partial = os.path.basename(found.path).removeprefix("_").removesuffix(".prompt")
        for number, content in enumerate((text if text is not None else _read(path)).splitlines(), start=1):
            if partial in included_partials(content) or any(p.endswith(f"/{partial}") for p in included_partials(content)):
                line = number
                break
        return Diagnostic(path, line or 1, None, found.level, f"{where}: {found.message}", code=found.code)

    def dependants(self, path: str) -> list[str]:
        """The files to check again when the file at `path` changed: a partial's includers, a prompt's
        test files and variants' tests; a Python module or pyproject.toml: every prompt."""
        kind = file_kind(path)
        if kind == "partial":
            head, _, tail = self.info_for(path).name.rpartition("/")
            wanted = f"{head}/{tail.removeprefix('_')}" if head else tail.removeprefix("_")
            return [info.path for info in self.library.prompts() if wanted in included_partials(_read(info.path))]
        if kind == "prompt":
            stem = Path(path).name.removesuffix(".prompt")
            return [str(p) for p in Path(path).parent.glob(f"{stem.partition('.')[0]}*.test.yaml")]
        if path.endswith((".py", "pyproject.toml")) or path.endswith((".json", ".yaml")):
            return [info.path for info in self.library.prompts()]
        return []


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _same_file(reported: str, path: str) -> bool:
    return reported == path or os.path.abspath(reported) == os.path.abspath(path)
