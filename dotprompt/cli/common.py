"""What every command shares: exit codes, the prompt folder, JSON arguments."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..prompts.library import PromptLibrary

__all__ = ["DIR_HELP", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PENDING", "EXIT_USAGE", "CommandLineError",
           "json_arg", "library",
           "package_version", "prepare_outputs", "usage"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_PENDING = 3  # `run`: the run stopped on tool requests waiting for a human (interrupts); nothing failed
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C
DIR_HELP = "prompt folder (default: $DOTPROMPT_DIR, [tool.dotprompt], ./prompts)"
ENGINE_HELP = ("the template engine of files that name none (`dotprompt.engine`): auto reads each file's syntax "
               "(default: [tool.dotprompt] engine, else auto)")


class CommandLineError(UsageError):
    """Bad command-line input (a flag, a file named on the command line): `main` prints
    `dotprompt: error: ...` and exits 2. A UsageError raised by the library itself is a run
    failure of the command instead (exit 1, its message as it is)."""


def library(directory: str | None, *, log: bool | None = False, engine: str | None = None,
            import_code: bool = True) -> PromptLibrary:
    """The project's library for `directory` (or the default folder); a missing folder is a CommandLineError.

    `log=None`: the runs go to the run log unless a setting turns it off (commands that run prompts).
    `engine`: `--engine` (None: the project's setting). `import_code=False`: the modules of
    `[tool.dotprompt] tools / schemas / helpers` are not imported (`check` on untrusted code)."""
    from ..prompts.loader import project_library, prompts_dir  # with the command that needs a library, not `--version`

    path = prompts_dir(directory)
    if not path.is_dir():
        raise CommandLineError(f"prompt folder {str(path)!r} does not exist (pass --dir, or set DOTPROMPT_DIR)")
    return project_library(path, log=log, log_default=True, engine=engine, import_code=import_code)


def add_engine_flag(parser: argparse.ArgumentParser, *, short: bool = True) -> None:
    """`--engine` (and its long form `--template-engine`, the only one on `run`, whose `--engine` is local/ray)."""
    from ..settings import TEMPLATE_ENGINES

    names = ("--engine", "--template-engine") if short else ("--template-engine",)
    parser.add_argument(*names, dest="template_engine", choices=TEMPLATE_ENGINES, help=ENGINE_HELP)


def json_arg(value: str | None, flag: str) -> Any:
    """`--input '{"a": 1}'` or `--input @file.json`; None when the flag was not given."""
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandLineError(f"{flag}: cannot read {value[1:]!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        source = value[1:] if value.startswith("@") else flag
        raise CommandLineError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


def prepare_outputs(outputs: dict[str, Path | None]) -> None:
    """Create the folders of the report files (`{"--junit": path, ...}`) before the run, so a report is
    never lost after every case ran; a path whose folder cannot be made is a CommandLineError naming the flag."""
    for flag, path in outputs.items():
        if path is None:
            continue
        if path.is_dir():
            raise CommandLineError(f"{flag} {path}: that is a folder; name a file in it")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandLineError(f"{flag} {path}: cannot create the folder {path.parent} "
                                   f"({exc.strerror or exc}); name a file in a folder that can be written") from None


def usage(parser: argparse.ArgumentParser) -> int:
    """A command given without its subcommand: its help on stderr, exit 2."""
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def package_version() -> str:
    from .. import __version__  # the one place the version is written

    return __version__
