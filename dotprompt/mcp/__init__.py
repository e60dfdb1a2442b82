"""The Model Context Protocol (extra `[mcp]`): MCP servers' tools in prompt files (docs/mcp.md)."""

__all__: list[str] = []
