"""Rendering helpers shared by the Handlebars tests."""

from __future__ import annotations

from dotprompt import PromptLibrary


def render(source: str, input=None, lib: PromptLibrary | None = None, **kwargs) -> list[dict]:
    lib = lib or PromptLibrary(None, engine="handlebars")
    return lib.from_source(source).render(input or {}, **kwargs).to_dict()["messages"]


def texts(messages: list[dict]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(p.get("text", "") for p in m["content"])) for m in messages]
