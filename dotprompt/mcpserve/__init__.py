"""`dotprompt mcp serve`: a prompt folder as a Model Context Protocol server (the extra `[mcp]`).

Each prompt (and variant) is an MCP prompt (arguments from its input schema, the rendered messages)
and a tool (runs it with its model, the validated output as structured content), beside the `check`
and `render` tools. Built on the official `mcp` SDK's low-level `Server`; over stdio, or streamable
HTTP on loopback behind the workbench's Host and Origin guard (`ui/guard.py`).

This package sits beside `cli` and `ui`, above `lint` and `prompts` (it runs and checks prompts);
the MCP client half (`dotprompt/mcp/`: servers' tools in prompt files) sits below `prompts`, which
uses it, so the two halves cannot share one folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names

if TYPE_CHECKING:  # what type checkers see; at run time the names load on first use
    from .server import create_server
    from .transports import serve_http, serve_stdio

__all__ = ["create_server", "serve_http", "serve_stdio"]

# the MCP SDK loads only when the server is used
__getattr__, __dir__ = lazy_names(__name__, {"create_server": ".server", "serve_http": ".transports",
                                             "serve_stdio": ".transports"}, globals(), __all__)
