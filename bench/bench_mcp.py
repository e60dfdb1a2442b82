"""Per-call overhead of an MCP tool over a local Python tool, through the whole tool loop.

Each side runs `generate` with an instant scripted model that asks for the tool once, then replies
`done` (2 model calls, 1 tool run per generate): the local side's tool is a sync `@tool` echo, the MCP
side's is the `echo` tool of a stdio server, named `srv/echo` in `tools:` and kept running across
calls (as a library keeps it). The Python server is tests/mcp/hostile_server.py in its well-behaved
mode (a hand-written JSON-RPC loop: the transport and our client are what is measured); with
`--everything`, the npm reference server too (Node, the SDK's server). Rounds alternate between the
sides; best of N rounds of ~0.3 s each. Needs the `[mcp]` extra: run it with the project's venv
(`.venv/bin/python bench/bench_mcp.py`); not part of run_all.sh (the peers' venv has no SDK).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

from _common import Result, arg_parser, report_all
from _timing import async_block, interleaved_best

from dotprompt import PromptLibrary, tool
from dotprompt.doubles import ScriptedModel, tool_call

ROOT = Path(__file__).resolve().parent.parent
PYTHON_SERVER = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "hostile_server.py"), "well"]}
EVERYTHING = Path.home() / ".cache" / "dotprompt" / "npm" / "node_modules" / "@modelcontextprotocol" / \
    "server-everything" / "dist" / "index.js"


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def side(lib: PromptLibrary, name: str, arguments: dict):
    prompt = lib.from_source(f"---\ntools: [{name}]\n---\ngo")

    async def once() -> None:
        model = ScriptedModel([tool_call(name, arguments), "done"])
        response = await prompt.generate({}, model=model)
        assert response.text == "done" and len(model.requests) == 2
    return once


async def measure(rounds: int, everything: bool) -> list[Result]:
    local = PromptLibrary(None, mcp_servers={})
    local.define_tool(echo)
    servers = {"srv": PYTHON_SERVER}
    if everything:
        servers["node"] = {"command": shutil.which("node") or "node", "args": [str(EVERYTHING), "stdio"]}
    remote = PromptLibrary(None, mcp_servers=servers)
    blocks = [async_block(side(local, "echo", {"text": "hi"})), async_block(side(remote, "srv/echo", {"text": "hi"}))]
    if everything:
        blocks.append(async_block(side(remote, "node/echo", {"message": "hi"})))
    try:
        best = await interleaved_best(blocks, rounds, 0.3, calibration_calls=10)
    finally:
        remote.close()
    local_us, *mcp_us = (seconds * 1e6 for seconds in best)
    results = [Result("mcp: generate with a local tool", f"{local_us:,.0f} µs", "none", True, informational=True)]
    for label, us in zip(["Python stdio server", "server-everything (Node)"], mcp_us, strict=False):
        results.append(Result(f"mcp: overhead per call, {label}", f"{us - local_us:,.0f} µs "
                              f"({us:,.0f} µs per generate)", "< 5 ms", us - local_us < 5000))
    return results


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--everything", action="store_true", help="also the npm reference server (Node)")
    args = parser.parse_args()
    report_all(asyncio.run(measure(args.rounds, args.everything)), args.json)


if __name__ == "__main__":
    main()
