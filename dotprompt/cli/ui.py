"""`dotprompt ui`: serve the workbench for the prompt folder (the extra `dotprompt-toolkit[ui]`)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import DIR_HELP, EXIT_OK, CommandLineError, library

__all__ = ["INSTALL", "add_parser", "run"]

INSTALL = "pip install 'dotprompt-toolkit[ui]'"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("ui", help="a local web workbench: browse, render, run, trace and compare prompts")
    parser.add_argument("--dir", help=DIR_HELP)
    parser.add_argument("--port", type=int, default=8765, help="port to serve on (default 8765; 0: any free port)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1, this machine only; any other is warned about)")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise CommandLineError(f"the workbench needs {exc.name or 'starlette and uvicorn'}: {INSTALL}") from None
    if not 0 <= args.port <= 65535:
        raise CommandLineError("--port must be between 0 and 65535")
    from ..ui.serve import serve
    from .logs import log_path

    lib = library(args.dir, log=None)
    run_log = lib.run_log.path if lib.run_log is not None else log_path()
    try:
        serve(lib, host=args.host, port=args.port, log_path=run_log)
    except OSError as exc:
        raise CommandLineError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        pass
    return EXIT_OK
