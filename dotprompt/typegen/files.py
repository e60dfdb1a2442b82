"""The module on disk: generated for a library, written only over a module of ours, and compared with
what would be written now (`--check`: by its header's hashes, then by its code, not its layout)."""

from __future__ import annotations

import ast
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..prompts.library import PromptLibrary
from ..settings import project_settings
from .module import TypedPrompt, code_classes, generate_module, typed_prompts
from .stale import HEADER, folder_label, read_sources

__all__ = ["Generated", "generate", "problems_of", "write"]


@dataclass(frozen=True)
class Generated:
    text: str
    prompts: list[TypedPrompt]
    folder: Path


def generate(lib: PromptLibrary, out: Path, root: Path) -> Generated:
    """The module `dotprompt types` would write for `lib` now."""
    if lib.directory is None:
        raise UsageError("dotprompt types needs a prompt folder")
    folder = Path(lib.directory).resolve()
    settings, settings_root = project_settings()
    prompts = typed_prompts(lib, code_classes(settings, settings_root))
    return Generated(generate_module(prompts, folder_label(folder, root)), prompts, folder)


def write(generated: Generated, out: Path) -> bool:
    """Write the module (atomically) unless it already holds exactly this; a file that is not ours is refused."""
    try:
        existing = out.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {out}: {exc}") from None
    if existing == generated.text:
        return False
    if existing is not None and not existing.startswith(HEADER):
        raise UsageError(f"{out} exists and was not written by dotprompt types; it is left alone (move it, or "
                         "choose another path with --out or [tool.dotprompt] types)")
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(generated.text)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def problems_of(generated: Generated, out: Path) -> list[str]:
    """One line per stale prompt file (or for the module as a whole); none when it is up to date."""
    try:
        existing = out.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return [f"{out}: missing (run `dotprompt types`)"]
    recorded = read_sources(existing)
    if recorded is None:
        return [f"{out}: not written by dotprompt types"]
    current = read_sources(generated.text) or {}
    lines = [f"{generated.folder / name}: {_what(name, recorded, current)} since {out.name} was written"
             for name in sorted(set(recorded) | set(current)) if recorded.get(name) != current.get(name)]
    if not lines and existing != generated.text and not _same_code(existing, generated.text):
        lines.append(f"{out}: its code differs from what dotprompt types writes (edited by hand, or by another "
                     "version of dotprompt)")
    return lines


def _what(name: str, recorded: dict[str, str], current: dict[str, str]) -> str:
    if name not in recorded:
        return "new prompt file"
    if name not in current:
        return "prompt file removed"
    return "its frontmatter (schemas) changed"


def _same_code(a: str, b: str) -> bool:
    """Equal as code: a formatter run over the module (black, ruff format) is not a change. (Only asked when
    the bytes differ: ~3 s for 500 prompts.)"""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False
