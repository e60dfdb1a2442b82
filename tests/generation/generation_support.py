"""Shared pieces of the generation tests: a tool, an output model, a sync runner."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from dotprompt import tool


def run(coro):
    return asyncio.run(coro)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Invoice(BaseModel):
    number: str
    total: float


INVOICE_SCHEMA = Invoice.model_json_schema()


def instruction_parts(request):
    """(role, part) of every injected format-instruction part in a request."""
    return [(m.role, p) for m in request.messages for p in m.content if p.metadata and p.metadata.get("purpose") == "output"]
