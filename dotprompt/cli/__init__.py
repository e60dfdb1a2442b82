"""The `dotprompt` command: one module per subcommand, registered in `COMMANDS`.

Each command module has `add_parser(subparsers)` (declares its name, help and options) and
`run(args) -> exit code` (calls the library). Adding a command is one module plus one line in
`COMMANDS`. Errors become one clear line and an exit code here, in `main`, and nowhere else.

A command's module is imported only when the command is chosen: `dotprompt check` runs in every
pre-commit hook and `dotprompt --version` should answer at once, so neither pays for the run stack
that `run` or `test` bring. The table keeps each command's name and one-line help for the command
list of `dotprompt --help` (as pip's `commands_dict` does); a test holds them equal to what each
module declares.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

from .._util.escape import terminal
from .._util.shutdown import exit_on_sigterm
from ..errors import DotpromptError, OutputValidationError
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandLineError, package_version


@dataclass(frozen=True)
class Command:
    """A command of `COMMANDS`: its name and help as `dotprompt --help` lists them, and its module
    (below `dotprompt.cli`), imported on first use; it serves as that module (`add_parser`, `run`)."""

    name: str
    help: str
    module: str

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def add_parser(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self.load().add_parser(subparsers)
        return parser

    def run(self, args: argparse.Namespace) -> int:
        return int(self.load().run(args))


# The order is the order of `dotprompt --help`.
COMMANDS: tuple[Command, ...] = (
    Command("render", "print the messages and settings a prompt would send", "render"),
    Command("check", "lint every prompt file without calling a model", "check"),
    Command("types", "write a typed Python module for the prompts (mypy, pyright, editors)", "types"),
    Command("schema", "print a prompt's output (or input) JSON Schema, or the JSON Schema of the frontmatter or "
                      "of test files (for editors)", "schema"),
    Command("run", "run a prompt on a model and print the validated output", "run"),
    Command("test", "run the prompts' test cases (replayed from recordings in CI)", "test"),
    Command("eval", "score prompts field by field on gold datasets (replayed from recordings)", "evaluate"),
    Command("logs", "list, show, search and export the runs in the run log", "logs"),
    Command("convert", "rewrite a Handlebars prompt file in the jinja2 dialect", "convert"),
    Command("list", "list the prompts of a folder", "listing"),
    Command("local", "the small local model (llama.cpp + SmolLM2-135M or another), for offline runs", "local"),
    Command("mcp", "the Model Context Protocol: the configured servers' tools, and the prompt folder served to MCP "
                   "clients", "mcp"),
    Command("ui", "a local web workbench: browse, render, run, trace and compare prompts", "ui"),
    Command("lsp", "the language server for editors (LSP over stdio)", "lsp"),
)

__all__ = ["COMMANDS", "Command", "build_parser", "main"]


def build_parser(commands: Sequence[Any] = COMMANDS, *, chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole command line. With `chosen` (a command name, or "" for none), only that command's
    module is loaded: the others are listed by the name and help of their `Command` entry."""
    parser = argparse.ArgumentParser(prog="dotprompt", description="Render, check and run .prompt files.")
    parser.add_argument("--version", action="version", version=f"dotprompt {package_version()}",
                        help="print the version of dotprompt-toolkit and exit")
    subparsers = parser.add_subparsers(dest="command", help="what to do (`dotprompt COMMAND --help` for more)")
    for command in commands:
        if chosen is not None and isinstance(command, Command) and command.name != chosen:
            subparsers.add_parser(command.name, help=command.help)
            continue
        command_parser = command.add_parser(subparsers)
        command_parser.set_defaults(run=command.run, command_parser=command_parser)
    return parser


def chosen_command(argv: Sequence[str]) -> str:
    """The command named on the command line ("" for none): its first word that is no option
    (`dotprompt` itself takes no option with a value)."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None, *, commands: Sequence[Any] = COMMANDS) -> int:
    exit_on_sigterm()  # `timeout`, `kill`, CI: exit cleanly, so atexit stops the local llama-server
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(commands, chosen=chosen_command(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except CommandLineError as exc:
        print(terminal(f"dotprompt: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except OutputValidationError as exc:
        # never lose what the model said; shown, its escape sequences are text, not commands to the terminal
        print(terminal(f"{exc}\n--- model reply ---\n{_reply_shown(exc.text)}"), file=sys.stderr)
        return EXIT_FAILED
    except DotpromptError as exc:
        print(terminal(str(exc)), file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `dotprompt render x | head`
        return EXIT_OK


REPLY_SHOWN_CHARS: Final = 2000
"""Characters of a failed run's reply the command line prints (its start and end; the run log keeps it whole)."""


def _reply_shown(text: str, limit: int | None = None) -> str:
    """A long reply's start and end, the middle left out: a looping model's 9,000 characters would bury
    the error above them. The run log keeps the reply whole."""
    limit = REPLY_SHOWN_CHARS if limit is None else limit
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    hidden = len(text) - head - tail
    return (f"{text[:head]}\n[... {hidden:,} characters of the reply not shown; the whole reply is in the run log: "
            f"dotprompt logs --status error -n 1 (unless logging is off) ...]\n{text[-tail:]}")
