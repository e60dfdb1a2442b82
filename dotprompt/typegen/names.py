"""Prompt names -> Python names: an accessor function (`billing/refund` -> `billing_refund`) and a class
prefix (`BillingRefund`); two prompts that would share a name are an error naming both files."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from ..errors import UsageError

__all__ = ["PromptNames", "class_name", "identifier", "prompt_names"]

_NOT_WORD = re.compile(r"[^0-9A-Za-z]+")


def identifier(text: str) -> str:
    """A valid Python identifier for `text`: non-word runs become `_`, a leading digit gets `p_`, a keyword `_`."""
    name = _NOT_WORD.sub("_", text).strip("_") or "prompt"
    if name[0].isdigit():
        name = f"p_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def class_name(*parts: str) -> str:
    """CamelCase of the words of `parts`: ("billing/refund", "output") -> BillingRefundOutput."""
    words = [w for part in parts for w in _NOT_WORD.split(part) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Prompt"
    return f"P{name}" if name[0].isdigit() else name


@dataclass(frozen=True)
class PromptNames:
    """The Python names of one prompt file: its accessor (shared by its variants) and its class prefix."""

    accessor: str
    prefix: str


def prompt_names(files: list[tuple[str, str | None, str]]) -> dict[tuple[str, str | None], PromptNames]:
    """(name, variant, path) of each prompt file -> its names. Accessors and class prefixes must be unique:
    `extract-v2` and `extract_v2` both make `extract_v2`, so they are refused, naming both files."""
    out: dict[tuple[str, str | None], PromptNames] = {}
    accessors: dict[str, tuple[str, str]] = {}
    prefixes: dict[str, str] = {}
    for name, variant, path in files:
        names = PromptNames(identifier(name), class_name(name, variant or ""))
        other = accessors.setdefault(names.accessor, (name, path))
        if other[0] != name:
            raise UsageError(f"{path}: prompt {name!r} and prompt {other[0]!r} ({other[1]}) both make the Python "
                             f"name {names.accessor!r}; rename one of the files")
        clash = prefixes.setdefault(names.prefix, path)
        if clash != path:
            raise UsageError(f"{path}: its classes and those of {clash} would both be named {names.prefix}...; "
                             "rename one of the files (or the variant)")
        out[(name, variant)] = names
    return out
