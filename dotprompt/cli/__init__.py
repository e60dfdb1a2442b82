"""The `dotprompt` command: one module per subcommand, registered in `COMMANDS`.

Each command module has `add_parser(subparsers)` (declares its name, help and options) and
`run(args) -> exit code` (calls the library). Adding a command is one module plus one line in
`COMMANDS`. Errors become one clear line and an exit code here, in `main`, and nowhere else.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from .._util.escape import terminal
from .._util.shutdown import exit_on_sigterm
from ..errors import DotpromptError, OutputValidationError
from ..settings import REPLY_SHOWN_CHARS
from . import check, convert, listing, local, logs, render, run, schema, test, ui
from . import evaluate as eval
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandLineError, package_version

# The order is the order of `dotprompt --help`.
COMMANDS: tuple[ModuleType, ...] = (render, check, schema, run, test, eval, logs, convert, listing, local, ui)

__all__ = ["COMMANDS", "build_parser", "main"]


def build_parser(commands: Sequence[ModuleType] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dotprompt", description="Render, check and run .prompt files.")
    parser.add_argument("--version", action="version", version=f"dotprompt {package_version()}",
                        help="print the version of dotprompt-toolkit and exit")
    subparsers = parser.add_subparsers(dest="command", help="what to do (`dotprompt COMMAND --help` for more)")
    for command in commands:
        command_parser = command.add_parser(subparsers)
        command_parser.set_defaults(run=command.run, command_parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None, *, commands: Sequence[ModuleType] = COMMANDS) -> int:
    exit_on_sigterm()  # `timeout`, `kill`, CI: exit cleanly, so atexit stops the local llama-server
    parser = build_parser(commands)
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


def _reply_shown(text: str, limit: int = REPLY_SHOWN_CHARS) -> str:
    """A long reply's start and end, the middle left out: a looping model's 9,000 characters would bury
    the error above them. The run log keeps the reply whole."""
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    hidden = len(text) - head - tail
    return (f"{text[:head]}\n[... {hidden:,} characters of the reply not shown; the whole reply is in the run log: "
            f"dotprompt logs --status error -n 1 (unless logging is off) ...]\n{text[-tail:]}")
