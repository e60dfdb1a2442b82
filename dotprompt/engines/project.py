"""`engine: auto` for a file either engine reads alike: the engine its folder and project write in.

One job: a verdict for the files whose template holds nothing only one engine reads (plain
`{{name}}` tags, see `detect.is_ambiguous`). Such a file prints `true`, `a,b` and `9` under
Handlebars but `True`, `['a', 'b']` and `9.0` under jinja2, so its engine is read from around it,
in this order:

1. the other prompt files of its folder (subfolders and partials included): all that decide are
   Handlebars, or all are jinja2;
2. the project around the folder (the nearest folder upwards holding a manifest): a JavaScript, Go
   or Dart app (package.json, go.mod, pubspec.yaml) with no Python manifest, whose Dotprompt is
   Handlebars; or a manifest naming Genkit or dotpromptz.

Nothing decides: no verdict, and the file stays jinja2 as before (`dotprompt check` warns where
its output would differ). Model names are no sign: dotprompt reads Genkit's (`googleai/...`) too.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from ..document.files import decode, read_snapshot
from ..document.parse import FRONTMATTER_PATTERN
from ..errors import PromptFileError
from .detect import syntax_engine
from .limits import ENGINE_MANIFEST_BYTES, ENGINE_SCAN_FILES

__all__ = ["ProjectEngine", "project_engine"]

_APP_MANIFESTS = {"package.json": "a JavaScript app", "go.mod": "a Go app", "pubspec.yaml": "a Dart app"}
_PYTHON_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")
_GENKIT = re.compile(r"""(?:^|["'/\s@=])genkit|dotpromptz""", re.I | re.M)


@dataclass(frozen=True)
class ProjectEngine:
    """The engine a folder's ambiguous files render with (None: nothing decides), and why."""

    engine: str | None
    reason: str


NO_VERDICT = ProjectEngine(None, "")


def project_engine(directory: str | os.PathLike[str] | None) -> ProjectEngine:
    if directory is None or not os.path.isdir(directory):
        return NO_VERDICT
    folder = Path(directory)
    return _folder_verdict(folder) or _manifest_verdict(folder) or NO_VERDICT


def _folder_verdict(folder: Path) -> ProjectEngine | None:
    counts = {"handlebars": 0, "jinja2": 0}
    for path in islice(folder.rglob("*.prompt"), ENGINE_SCAN_FILES):
        engine = _file_engine(str(path), folder)
        if engine in counts:
            counts[engine] += 1
    handlebars, jinja = counts["handlebars"], counts["jinja2"]
    if handlebars and not jinja:
        return ProjectEngine("handlebars", f"the other prompt files of its folder are Handlebars ({handlebars})")
    if jinja and not handlebars:
        return ProjectEngine("jinja2", f"the other prompt files of its folder are jinja2 ({jinja})")
    return None


def _file_engine(path: str, folder: Path) -> str | None:
    try:
        text = decode(read_snapshot(path, folder).data, path)
    except (OSError, PromptFileError):
        return None  # `dotprompt check` reports the file itself
    match = FRONTMATTER_PATTERN.match(text.replace("\r\n", "\n"))
    return syntax_engine(text[match.end():] if match else text)


def _manifest_verdict(folder: Path) -> ProjectEngine | None:
    for directory in (folder, *folder.parents):
        found = {name: directory / name for name in (*_APP_MANIFESTS, *_PYTHON_MANIFESTS) if _regular(directory / name)}
        if found:
            return _from_manifests(found)
        if (directory / ".git").exists():
            return None
    return None


def _from_manifests(found: dict[str, Path]) -> ProjectEngine | None:
    for path in found.values():
        if _GENKIT.search(_head(path)):
            return ProjectEngine("handlebars", f"its project uses Genkit ({path})")
    apps = [name for name in found if name in _APP_MANIFESTS]
    if apps and len(apps) == len(found):
        return ProjectEngine("handlebars", f"its project is {_APP_MANIFESTS[apps[0]]} ({found[apps[0]]}), "
                                           "whose Dotprompt is Handlebars")
    return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(ENGINE_MANIFEST_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
