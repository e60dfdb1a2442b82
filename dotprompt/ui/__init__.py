"""`dotprompt ui`: a local web workbench for a prompt folder (the optional extra `dotprompt-toolkit[ui]`).

A Starlette app (`app.create_app`) serving JSON under `/api` and one static page of plain ES modules
(`static/`, no build step). Every rule that keeps it safe to open on files from a pull request lives in
`guard.py` (Host, Origin, CSRF token, headers) and `safejson.py` (redacted, clipped, HTML-inert JSON);
the page writes every value with `textContent`. Only the prompt folder and the run log are read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names

if TYPE_CHECKING:  # what type checkers see; at run time the names load on first use
    from .app import create_app
    from .serve import serve

__all__ = ["create_app", "serve"]


# starlette and uvicorn load only when the workbench is used
__getattr__, __dir__ = lazy_names(__name__, {"create_app": ".app", "serve": ".serve"}, globals(), __all__)
