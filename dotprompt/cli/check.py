"""`dotprompt check`: lint every prompt file (and test file) of a folder without calling a model."""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import sys
from pathlib import Path
from typing import Any

from ..lint.check import Diagnostic, check_library, engine_choices
from ..lint.declared import read_declared
from .common import DIR_HELP, EXIT_FAILED, EXIT_OK, add_engine_flag, library, package_version

__all__ = ["add_parser", "print_sarif", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("check", help="lint every prompt file without calling a model")
    parser.add_argument("dir", nargs="?", help=DIR_HELP)
    parser.add_argument("--format", choices=["text", "github", "sarif"], default="text",
                        help="text: path:line:col: level: message  [code]; github: workflow annotations "
                             "titled with the code; sarif: one SARIF 2.1.0 log on stdout for GitHub code "
                             "scanning (default: text). Codes: docs/check-diagnostics.md")
    parser.add_argument("--strict", action="store_true", help="warnings fail the check too")
    parser.add_argument("--import-code", action="store_true",
                        help="import the modules [tool.dotprompt] tools, schemas and helpers name, running the "
                             "project's code, to see every name they define. Off by default, so that check is "
                             "safe on untrusted code (a pull request, with CI's tokens in reach): it reads those "
                             "modules without running them, and a name it cannot see stays a warning")
    parser.add_argument("-v", "--verbose", action="store_true", help="also say which engine each prompt renders with, and why")
    add_engine_flag(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    _quick_exit()
    lib = library(args.dir, engine=args.template_engine, import_code=args.import_code)
    declared = None if args.import_code else read_declared()
    diagnostics = ignoring(check_library(lib, declared=declared) + stale_types(lib))
    if args.verbose and args.format != "sarif":
        print_engines(lib, args.format)
    if args.format == "sarif":
        print_sarif(diagnostics)
    for diagnostic in diagnostics if args.format != "sarif" else ():
        print(diagnostic.format(args.format))
    errors = sum(d.level == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    count = len(lib.prompts())
    if args.format == "text":
        print(f"checked {count} prompt{'s' if count != 1 else ''}: {errors} error(s), {warnings} warning(s)",
              file=sys.stderr)
    if declared is not None and declared.modules and warnings:
        print("note: check read the modules of [tool.dotprompt] tools, schemas and helpers without running them; "
              "a name they define only when run stays a warning (--import-code imports them: trusted code only)",
              file=sys.stderr)
    return EXIT_FAILED if errors or (args.strict and warnings) else EXIT_OK


def ignoring(found: list[Diagnostic]) -> list[Diagnostic]:
    """`found` less the warnings `[tool.dotprompt] ignore` or their file's `# dotprompt: ignore[...]` silence,
    plus a warning for each ignored code that is no warning's (lint/ignore.py)."""
    from ..lint.ignore import project_ignores, without_ignored
    from ..settings import check_ignore

    codes, pyproject = check_ignore()
    project, problems = project_ignores(codes, pyproject)
    if not found and not problems:
        return found
    return ([] if "invalid-ignore" in project else problems) + without_ignored(found, project)


def stale_types(lib: Any) -> list[Diagnostic]:
    """A warning per prompt file whose frontmatter changed since `dotprompt types` wrote the project's typed
    module (and one for files added or removed). Cheap: the module's header against the files' hashes;
    nothing when the project has no such module, or it was written for another folder."""
    from ..errors import UsageError
    from ..settings import project_root, types_module
    from ..typegen.stale import folder_label, read_folder, read_header, source_key, staleness

    try:
        out = types_module()
        text = read_header(out)
    except UsageError as exc:
        return [Diagnostic("pyproject.toml", None, None, "warning", str(exc), code="invalid-types-setting")]
    except (OSError, UnicodeDecodeError):
        return []  # no typed module: nothing to compare
    folder = lib.directory.resolve()
    if read_folder(text) != folder_label(folder, project_root()):
        return []
    relative = {Path(info.path).resolve().relative_to(folder).as_posix(): info.path for info in lib.prompts()}
    found = staleness(text, folder, list(relative))
    paths = {source_key(name): path for name, path in relative.items()}
    if not found:
        return []
    fix = f"run `dotprompt types` to write {out.name} again"
    warnings = [Diagnostic(paths[name], None, None, "warning",
                           f"its frontmatter changed since {out.name} was written: the typed module is stale ({fix})",
                           code="stale-types")
                for name in found.changed]
    if found.added or found.removed:
        warnings.append(Diagnostic(str(out), None, None, "warning", f"the typed module is stale ({found.summary()}): {fix}",
                                    code="stale-types"))
    return warnings


def _quick_exit() -> None:
    """At exit, freeze what is loaded for the garbage collector: the interpreter's last full collection
    then skips it (~40 ms of a `check`, most of what its exit took). Nothing of check's needs collecting
    to finish its work; registered once, however often check runs in one process."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def print_engines(lib: Any, style: str) -> None:
    """`path: note: engine handlebars (why)`, one line per prompt file (a GitHub notice with --format github)."""
    for path, choice in engine_choices(lib):
        what = (f"engine {choice.engine} ({choice.source}: {choice.reason})" if choice
                else "engine unknown (the frontmatter does not parse)")
        print(f"::notice file={path}::{what}" if style == "github" else f"{path}: note: {what}")


def print_sarif(diagnostics: list[Diagnostic]) -> None:
    from ..lint.sarif import to_sarif

    print(json.dumps(to_sarif(diagnostics, version=package_version()), indent=2, ensure_ascii=False))
