"""The `dotprompt` entry point: the console script, the command table, errors to exit codes."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

from dotprompt.cli import COMMANDS, build_parser, main
from dotprompt.cli.common import CommandLineError
from dotprompt.errors import UsageError
from tests.cli_inprocess import cli
from tests.cli_process import run


def test_console_script_is_installed(cli_env):
    script = shutil.which("dotprompt", path=str(Path(sys.executable).parent))
    assert script is not None
    done = run([script], "--help", env=cli_env)
    assert done.returncode == 0 and "render" in done.stdout


def _name(command) -> str:
    """The name a command module gives itself, read from the parser it builds."""
    parser = command.add_parser(argparse.ArgumentParser(prog="dotprompt").add_subparsers())
    return parser.prog.split()[-1]


def test_the_command_table_drives_help(cli_env):
    done = cli("--help", env=cli_env)
    assert done.returncode == 0
    listed = re.search(r"\{([a-z,]+)\}", done.stdout).group(1).split(",")
    assert listed == [_name(command) for command in COMMANDS]
    assert listed == ["render", "check", "types", "schema", "run", "test", "eval", "logs", "convert", "list", "local",
                      "mcp", "ui", "lsp"]


def _hello_command(behaviour):
    """A command module as a third party would write one: add_parser + run."""

    def add_parser(subparsers):
        parser = subparsers.add_parser("hello", help="say hello")
        parser.add_argument("--name", default="world")
        return parser

    return SimpleNamespace(add_parser=add_parser, run=behaviour)


def test_one_table_entry_is_a_whole_command(capsys):
    hello = _hello_command(lambda args: print(f"hello {args.name}") or 0)
    assert "say hello" in build_parser([*COMMANDS, hello]).format_help()
    assert main(["hello", "--name", "Ann"], commands=[*COMMANDS, hello]) == 0
    assert capsys.readouterr().out == "hello Ann\n"


def test_errors_become_one_line_and_an_exit_code(capsys):
    def fails(exc):
        def run(args):
            raise exc
        return [_hello_command(run)]

    assert main(["hello"], commands=fails(CommandLineError("--name is odd"))) == 2
    assert capsys.readouterr().err == "dotprompt: error: --name is odd\n"
    assert main(["hello"], commands=fails(UsageError("unknown model 'x'"))) == 1  # the library's misuse: a failed run
    assert capsys.readouterr().err == "unknown model 'x'\n"
    assert main(["hello"], commands=fails(BrokenPipeError())) == 0
    assert main([], commands=fails(ValueError())) == 2
    assert "hello" in capsys.readouterr().out


def test_version_prints_the_package_version(cli_env):
    import dotprompt

    done = cli("--version", env=cli_env)
    assert done.returncode == 0 and done.stdout == f"dotprompt {dotprompt.__version__}\n"


def _undocumented(parser: argparse.ArgumentParser, path: str):
    """Every argument and option (subcommands included, at any depth) without a help text."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            if not action.help:
                yield f"{path} (its subcommand argument)"
            for name, sub in action.choices.items():
                yield from _undocumented(sub, f"{path} {name}")
        elif not action.help or action.help == argparse.SUPPRESS:
            yield f"{path} {'/'.join(action.option_strings) or action.dest}"


def test_every_argument_and_option_has_a_help_text():
    assert list(_undocumented(build_parser(), "dotprompt")) == []


def test_the_help_walk_sees_a_missing_help():
    parser = argparse.ArgumentParser(prog="x")
    sub = parser.add_subparsers(dest="c", help="commands").add_parser("go")
    sub.add_argument("--fast")
    assert list(_undocumented(parser, "x")) == ["x go --fast"]


def test_every_command_help_runs_in_the_real_cli(cli_env):
    for command in ("render", "check", "schema", "run", "test", "convert", "list", "local", "local setup"):
        done = cli(*command.split(), "--help", env=cli_env)
        assert done.returncode == 0 and "usage: dotprompt" in done.stdout, command


def test_the_lazy_command_list_is_the_one_the_modules_declare(cli_env):
    # `dotprompt --help` lists the commands from the table without importing them: the same text as a
    # parser built from every command module (their own names and help), so the two cannot drift apart.
    done = cli("--help", env=cli_env)
    assert done.returncode == 0
    full = build_parser(COMMANDS).format_help()  # every module loaded
    assert done.stdout == full
    for command in COMMANDS:
        sub = argparse.ArgumentParser(prog="dotprompt").add_subparsers()
        command.load().add_parser(sub)
        assert [(a.dest, a.help) for a in sub._choices_actions] == [(command.name, command.help)], command.name


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_a_chosen_command_gets_its_whole_parser():
    lazy, full = _commands(build_parser(chosen="check")), _commands(build_parser())
    assert lazy["check"].format_help() == full["check"].format_help()
    assert "--variant" in full["render"].format_help()
    assert "--variant" not in lazy["render"].format_help()  # not chosen: a name and a help line only
