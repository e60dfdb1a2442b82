"""A misbehaving MCP server over stdio, written by hand (newline-delimited JSON-RPC) so it can break the
protocol in ways an SDK would not let it: `python hostile_server.py MODE`.

Modes: well (behaves: tools `echo`, `add_tool` and `fail`), never (reads, never answers), garbage (answers
with non-JSON lines), tools10k (lists 10,000 tools), huge (a 20 MB result), crash (exits during a
call, after a line on stderr), shapes (a tool list and a result of the wrong shapes), slow (answers a
call after 60 s), env (the result is its environment), cwd (the result is its working folder). With `--sticky` it
outlives its stdin: only its client stopping it ends it.
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "well"
TOOLS = [{"name": "echo", "description": "Echo the text.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
         {"name": "add_tool", "description": "Adds the tool `extra` and says the list changed.",
          "inputSchema": {"type": "object"}},
         {"name": "fail", "description": "Reports an error (isError).", "inputSchema": {"type": "object"}}]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict) -> dict | None:
    method = request.get("method")
    if method == "initialize":
        return {"protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "hostile", "version": "1"}}
    if method == "tools/list":
        if MODE == "tools10k":
            return {"tools": [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(10_000)]}
        if MODE == "shapes":
            return {"tools": [{"name": "echo", "inputSchema": "not a schema"}, {"description": "no name"}]}
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(request["params"])
    if method == "ping":
        return {}
    return None


def call(params: dict) -> dict:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if MODE == "huge":
        return {"content": [{"type": "text", "text": "x" * 20_000_000}]}
    if MODE == "crash":
        sys.stderr.write("hostile: out of cheese\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "slow":
        time.sleep(60)
    if MODE == "cwd":
        return {"content": [{"type": "text", "text": os.getcwd()}]}
    if MODE == "env":
        return {"content": [{"type": "text", "text": json.dumps(dict(os.environ))}]}
    if name == "add_tool":
        TOOLS.append({"name": "extra", "description": "Added later.", "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "added"}]}
    if name == "fail":
        return {"content": [{"type": "text", "text": "the disk is full"}], "isError": True}
    return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request or MODE == "never":
        continue
    if MODE == "garbage":
        sys.stdout.write("this is not JSON {{{\n")
        sys.stdout.flush()
        continue
    result = answer(request)
    if result is None:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}})
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})

if "--sticky" in sys.argv:
    time.sleep(3600)
