"""Rendered messages as MCP prompt messages: one content block each, media where MCP has a shape for it.

MCP prompt messages have two roles and one content block. So a message of several parts becomes
several messages of its role; `model` is `assistant`, every other role `user`, and a block from a
`system` (or `tool`) message carries `_meta: {"dotprompt/role": "system"}`, so a client that keeps
system prompts apart can. Media given inline (a `data:` URL) is an image or audio block, or an
embedded resource for any other type; media given by URL is a resource link. Tool requests, tool
responses and data parts are their JSON as text.
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import Any

import mcp_types as mcp

from .._util.escape import json_dumps
from ..types import Media, Message, Part

__all__ = ["ROLE_META", "content_block", "prompt_messages"]

ROLE_META = "dotprompt/role"


def prompt_messages(messages: list[Message], label: str) -> list[mcp.PromptMessage]:
    out: list[mcp.PromptMessage] = []
    for message in messages:
        role: mcp.Role = "assistant" if message.role == "model" else "user"
        meta = None if message.role in ("user", "model") else {ROLE_META: message.role}
        for index, part in enumerate(message.content):
            block = content_block(part, meta, f"dotprompt://{label}/media/{len(out)}-{index}")
            if block is not None:
                out.append(mcp.PromptMessage(role=role, content=block))
    return out


def content_block(part: Part, meta: dict[str, Any] | None, uri: str) -> mcp.ContentBlock | None:
    if part.text is not None:
        return mcp.TextContent(text=part.text, _meta=meta) if part.text else None
    if part.media is not None:
        return _media(part.media, meta, uri)
    shown = part.model_dump(by_alias=True, exclude_none=True, mode="json")
    shown.pop("metadata", None)
    return mcp.TextContent(text=json_dumps(shown), _meta=meta) if shown else None


def _media(media: Media, meta: dict[str, Any] | None, uri: str) -> mcp.ContentBlock:
    inline = _data_url(media.url)
    if inline is None:
        return mcp.ResourceLink(uri=media.url, name=media.url.rsplit("/", 1)[-1] or media.url,
                                mime_type=media.content_type, _meta=meta)
    kind, data = inline
    kind = media.content_type or kind
    if kind.startswith("image/"):
        return mcp.ImageContent(data=data, mime_type=kind, _meta=meta)
    if kind.startswith("audio/"):
        return mcp.AudioContent(data=data, mime_type=kind, _meta=meta)
    return mcp.EmbeddedResource(resource=mcp.BlobResourceContents(uri=uri, mime_type=kind, blob=data), _meta=meta)


def _data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a `data:` URL, or None for any other URL."""
    if not url.startswith("data:") or "," not in url:
        return None
    header, _, payload = url[5:].partition(",")
    kind, *params = header.split(";")
    if "base64" in params:
        return kind or "application/octet-stream", payload
    raw = urllib.parse.unquote_to_bytes(payload)
    return kind or "text/plain", base64.b64encode(raw).decode("ascii")
