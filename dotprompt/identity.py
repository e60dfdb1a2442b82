"""PromptIdentity: which exact prompt text produced a result.

A content hash over the prompt file's text and every partial it includes (file, `define_partial`
or resolver), with the prompt's name and variant beside it. It rides on the rendered prompt, the
response, recordings, batch records, run-log entries and spans, so any answer can be traced to
the text that produced it. Two prompts with the same text and partials hash alike whatever their
name; an edit to a partial changes the hash of every prompt that includes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["PromptIdentity", "content_hash"]

HASH_CHARS = 16  # 64 bits: enough to tell prompt versions apart, short enough to read in a log line


def content_hash(text: str) -> str:
    """The hash of one prompt or partial text, as identities hold it."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class PromptIdentity:
    """`name`, `variant` and `hash` (the file and its partials); `partials` maps each partial to its own hash."""

    name: str | None
    variant: str | None
    hash: str
    partials: tuple[tuple[str, str], ...] = ()  # (partial name, its content hash), sorted by name

    @classmethod
    def of(cls, name: str | None, variant: str | None, source: str,
           partials: Iterable[tuple[str, str]] = ()) -> PromptIdentity:
        """The identity of a prompt text and the (name, content hash) of each partial it read. A leading
        byte order mark is not part of the text (the file renders the same with or without it)."""
        own = content_hash(source.removeprefix("\ufeff"))
        used = tuple(sorted(dict(partials).items()))
        whole = json.dumps([own, used], separators=(",", ":"))
        return cls(name, variant, content_hash(whole)[:HASH_CHARS], tuple((n, h[:HASH_CHARS]) for n, h in used))

    @property
    def label(self) -> str:
        """`name.variant@hash`, the way logs and reports show it."""
        name = self.name or "(from source)"
        return f"{name}.{self.variant}@{self.hash}" if self.variant else f"{name}@{self.hash}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "hash": self.hash}
        if self.variant:
            out["variant"] = self.variant
        if self.partials:
            out["partials"] = dict(self.partials)
        return out
