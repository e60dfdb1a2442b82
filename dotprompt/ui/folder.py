"""What the workbench reads from the prompt folder: the tree, one prompt, `check` diagnostics, eval reports.

Every file is read through the package's own readers (`read_snapshot`), which refuse anything whose
real path leaves the folder, anything that is not a regular file, and links to either; names given by
the page are prompt names (checked by the library) or paths relative to the folder, checked here
before anything is opened. Nothing else on the disk is reachable.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..document.files import read_snapshot
from ..document.parse import parse_source
from ..errors import DotpromptError, PromptFileError
from ..lint.check import Diagnostic, check_library
from ..prompts.compiler import read_text
from ..prompts.library import PromptLibrary, check_name
from .limits import UI_MAX_REPORT_BYTES as MAX_REPORT_BYTES

__all__ = ["MAX_REPORT_BYTES", "REPORT_GLOB", "Folder"]

REPORT_GLOB = "*.json"


class Folder:
    """The prompt folder as the workbench shows it; diagnostics cached until a file changes."""

    def __init__(self, library: PromptLibrary) -> None:
        assert library.directory is not None
        self.library = library
        self.root = library.directory
        self._lock = threading.Lock()
        self._root_text = os.path.abspath(self.root)
        self._checked: tuple[Any, list[Diagnostic]] | None = None
        self._tree: tuple[Any, dict[str, Any]] | None = None

    def relative(self, path: str | os.PathLike[str]) -> str:
        text, root = os.fspath(path), self._root_text
        if text.startswith(root + os.sep):
            return text[len(root) + 1:].replace(os.sep, "/")
        return Path(text).name  # never an absolute path in an answer

    def _entries(self) -> Iterator[tuple[os.DirEntry[str], bool]]:
        """Every entry under the folder (links not followed), with whether it is a folder."""
        stack = [self._root_text]
        while stack:
            try:
                with os.scandir(stack.pop()) as found:
                    for entry in found:
                        folder = entry.is_dir(follow_symlinks=False)
                        if folder:
                            stack.append(entry.path)
                        yield entry, folder
            except OSError:
                continue

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        """Every file of the folder with its mtime and size: when this changes, the page reloads what it shows."""
        found = []
        for entry, folder in self._entries():
            try:
                st = entry.stat()
            except OSError:
                continue
            found.append((entry.path, st.st_mtime_ns, -1 if folder else st.st_size))
        return tuple(sorted(found))

    def _layout(self) -> tuple[tuple[str, int], ...]:
        """The folders and their mtimes: a file added, removed or renamed changes one of them."""
        found = [(self._root_text, os.stat(self._root_text).st_mtime_ns)]
        for entry, folder in self._entries():
            if folder:
                with contextlib.suppress(OSError):
                    found.append((entry.path, entry.stat().st_mtime_ns))
        return tuple(found)

    def tree(self) -> dict[str, Any]:
        """The prompts and partials by name (the library's listing), kept until a file is added or removed."""
        layout = self._layout()
        with self._lock:
            if self._tree is not None and self._tree[0] == layout:
                return self._tree[1]
        prompts = [{"name": i.name, "variant": i.variant, "label": i.label, "path": self.relative(i.path)}
                   for i in self.library.prompts()]
        partials = [{"name": p, "path": self.partial_path(p)} for p in self.library.partials()]
        tree = {"folder": self.root.name, "engine": self.library.engine, "prompts": prompts, "partials": partials}
        with self._lock:
            self._tree = (layout, tree)
        return tree

    def partial_path(self, name: str) -> str | None:
        head, _, tail = name.rpartition("/")
        path = self.root / head / f"_{tail}.prompt"
        return self.relative(path) if path.is_file() else None

    def diagnostics(self) -> list[dict[str, Any]]:
        """`dotprompt check` on the folder (one process: the server's threads must not fork), as JSON."""
        signature = self.signature()
        with self._lock:
            if self._checked is None or self._checked[0] != signature:
                self._checked = (signature, check_library(self.library, jobs=1))
            found = self._checked[1]
        return [{"path": self.relative(d.path), "line": d.line, "column": d.column, "level": d.level,
                 "code": d.code, "message": d.message} for d in found]

    def prompt(self, name: str, variant: str | None) -> dict[str, Any]:
        """One prompt: its file, frontmatter, template, engine, input schema and defaults, and its problems."""
        check_name(name)
        if variant is not None:
            check_name(variant)
        path = self.root / (f"{name}.{variant}.prompt" if variant else f"{name}.prompt")
        text = read_text(str(path), self.root)
        out: dict[str, Any] = {"name": name, "variant": variant, "path": self.relative(path), "source": text}
        try:
            src = parse_source(text, str(path))
        except PromptFileError as exc:
            return {**out, "error": _error(exc)}
        out.update(frontmatter=src.raw, template=src.template, body_line=src.body_line,
                   engine=self.library.engine_for(src).engine)
        try:
            compiled = self.library.load(name, variant).compiled
        except DotpromptError as exc:
            return {**out, "error": _error(exc)}
        input_block = compiled.meta.get("input") or {}
        out.update(metadata=compiled.meta, input_schema=input_block.get("schema"), default=input_block.get("default"),
                   model=compiled.fields.get("model") or self.library.default_model,
                   tools=list(compiled.meta.get("tools") or []), identity=compiled.identity.to_dict()
                   if compiled.identity else None)
        return out

    def partial(self, name: str) -> dict[str, Any]:
        check_name(name)
        head, _, tail = name.rpartition("/")
        path = self.root / head / f"_{tail}.prompt"
        return {"name": name, "path": self.relative(path), "source": read_text(str(path), self.root)}

    def reports(self) -> list[dict[str, Any]]:
        """The JSON files of the folder that are `dotprompt eval --json` reports."""
        out = []
        for path in sorted(self.root.rglob(REPORT_GLOB)):
            try:
                if path.is_file() and path.stat().st_size <= MAX_REPORT_BYTES and _looks_like_report(path):
                    out.append({"path": self.relative(path)})
            except OSError:
                continue
        return out

    def report(self, relative: str) -> Any:
        path = self.inside(relative, REPORT_GLOB[1:])
        data = read_snapshot(str(path), self.root, "eval report").data
        if len(data) > MAX_REPORT_BYTES:
            raise PromptFileError(f"this eval report is over {MAX_REPORT_BYTES:,} bytes", path=str(path))
        try:
            report = json.loads(data)
        except ValueError as exc:
            raise PromptFileError(f"not JSON: {exc}", path=self.relative(path)) from None
        if not isinstance(report, dict) or not isinstance(report.get("evals"), list):
            raise PromptFileError("not a `dotprompt eval --json` report (it has no `evals` list)", path=self.relative(path))
        return report

    def inside(self, relative: str, suffix: str) -> Path:
        """`relative` as a path in the folder; anything that could point elsewhere is a PromptFileError."""
        parts = relative.split("/")
        if not relative or relative.startswith("/") or "\\" in relative or any(p in ("", ".", "..") for p in parts) \
                or any(ord(c) < 32 for c in relative) or not relative.endswith(suffix):
            raise PromptFileError(f"not a {suffix} file of the prompt folder", path=relative[:200])
        return self.root.joinpath(*parts)


def _looks_like_report(path: Path) -> bool:
    with path.open("rb") as file:
        head = file.read(64).lstrip()
    return head.startswith(b'{') and b'"evals"' in head


def _error(exc: DotpromptError) -> dict[str, Any]:
    where = {"path": getattr(exc, "path", None), "line": getattr(exc, "line", None)}
    return {"type": type(exc).__name__, "message": str(exc), **where}
