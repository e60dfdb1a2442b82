"""The folder's prompts as MCP sees them: each prompt and variant an MCP prompt and a tool.

Read from the library on every list, so a file added, changed or removed shows at the client's next
list (the library recompiles what changed). A file that does not load is left out of both lists and
reported by the `check` tool: one broken file never hides the others.

Names: an MCP prompt is named by the prompt's label (`summary`, `summary.formal`, `support/reply`).
Tool names allow only letters, digits, `_`, `-` and `.`, so a `/` becomes `__` and any other
character `_`; a name taken by a built-in tool (`check`, `render`) or by an earlier prompt gets
`_prompt`, then a number, appended.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import DotpromptError
from ..prompts.library import PromptInfo, PromptLibrary
from ..prompts.prompt import Prompt

__all__ = ["BUILT_IN_TOOLS", "MAX_TOOL_NAME", "Catalog", "Entry", "tool_names"]

BUILT_IN_TOOLS = ("check", "render")
MAX_TOOL_NAME = 128  # the MCP specification's limit on a tool name
_NOT_IN_TOOL_NAMES = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class Entry:
    """One prompt file that loads: its label (the MCP prompt's name), its tool's name, the prompt."""

    label: str
    tool: str
    prompt: Prompt

    @property
    def meta(self) -> dict[str, Any]:
        return self.prompt.compiled.meta


def tool_names(labels: Iterable[str]) -> dict[str, str]:
    """Each label's tool name (see the module's docstring), unique and apart from the built-in tools."""
    taken, out = set(BUILT_IN_TOOLS), {}
    for label in labels:
        base = _NOT_IN_TOOL_NAMES.sub("_", label.replace("/", "__"))[:MAX_TOOL_NAME - 12]
        name, number = base, 1
        while name in taken:
            name = f"{base}_prompt" if number == 1 else f"{base}_prompt{number}"
            number += 1
        taken.add(name)
        out[label] = name
    return out


class Catalog:
    """The library's prompts, by label and by tool name: listed when they load, found (or their load error
    raised) by name."""

    def __init__(self, library: PromptLibrary) -> None:
        self.library = library

    def named(self) -> list[tuple[PromptInfo, str]]:
        """Every prompt file with its tool name (a folder scan: nothing is read)."""
        infos = self.library.prompts()
        names = tool_names(info.label for info in infos)
        return [(info, names[info.label]) for info in infos]

    def load(self, info: PromptInfo, tool: str) -> Entry:
        """The prompt of `info`, compiled (or recompiled when its file changed); a DotpromptError if it does not load."""
        prompt = self.library.load(info.name, info.variant)
        prompt.compiled  # noqa: B018  # compiles now, so a broken file fails here and not in the middle of a list
        return Entry(info.label, tool, prompt)

    def entries(self) -> list[Entry]:
        """Every prompt that loads; the others are left out (the `check` tool reports them)."""
        found = []
        for info, tool in self.named():
            try:
                found.append(self.load(info, tool))
            except DotpromptError:
                continue
        return found

    def by_label(self, label: str) -> Entry | None:
        return next((self.load(info, tool) for info, tool in self.named() if info.label == label), None)

    def by_tool(self, name: str) -> Entry | None:
        return next((self.load(info, tool) for info, tool in self.named() if tool == name), None)

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        """Every prompt file with its mtime and size: when this changes, the lists may have."""
        found = []
        for info in self.library.prompts():
            try:
                st = os.stat(info.path)
            except OSError:
                continue
            found.append((info.path, st.st_mtime_ns, st.st_size))
        return tuple(found)

    def labels(self) -> list[str]:
        return [info.label for info in self.library.prompts()]
