"""The render budget around the reference renderer (dotpromptz-handlebars), which is not ours to change.

One job: let a render through `render_program` be charged to the current meter (`..budget`) without
touching upstream code. Four hooks, all invisible in the output:

- a metered copy of the program whose text nodes charge their characters (and check the deadline)
  each time they are copied into the output, however many loops repeat them;
- in that copy, every printed value (`{{name}}`, `{{{json x}}}`) wrapped in a block of the `PRINT`
  helper, which renders it exactly as before and charges what it printed: the output is counted as
  it grows, not once the whole text is built (two `{{#each}}` printing a 100 KB value reached a
  gigabyte first); and every partial call reads the clock (partials that each call the next one
  twice, 24 deep, print nothing and loop over nothing);
- a metered copy of the input whose lists and objects check the deadline at every step of an
  `{{#each}}` (or any other iteration), so loops that print only values stop too;
- the template line of the innermost block (or partial call) running when the budget ran out.

The fast path needs none of this: it is jinja2, metered by `..template`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from ..budget import current
from .upstream import Block, HelperOptions, Mustache, Node, Partial, PartialBlock, SafeString, Text

__all__ = ["PRINT", "MeteredDict", "MeteredList", "MeteredPartial", "MeteredText", "innermost_line", "metered_data",
           "metered_print", "metered_program"]

# The helper name of the print blocks: a space, so no template can call it by name.
PRINT = "dotprompt print"


class MeteredText(Text):
    """A text node charging its length to the current render's meter each time it is output."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:  # Text's own field stays unset: `value` is this property
        self.text = text

    @property
    def value(self) -> str:  # type: ignore[override]  # read-only on purpose: the renderer only reads it
        meter = current()
        if meter is not None:
            meter.spend(len(self.text))
        return self.text


def metered_print(args: list[Any], options: HelperOptions) -> SafeString:
    """The `PRINT` helper: its body (one printed value) rendered where it stands, and charged."""
    text = options.fn()
    meter = current()
    if meter is not None:
        meter.spend(len(text))
    return text


def _printing(node: Mustache) -> Block:
    return Block({"name": PRINT, "args": [], "hash": {}, "params": [], "literal": False}, [node], [])


class MeteredPartial(Partial):
    """A partial call (`{{> name}}`) that reads the clock each time it runs."""

    __slots__ = ("partial_name",)

    def __init__(self, node: Partial) -> None:  # `name` is the property below, not the parent's field
        self.partial_name = node.name
        self.context_path = node.context_path
        self.hash = node.hash
        self.indent = node.indent

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only on purpose: the renderer only reads it
        meter = current()
        if meter is not None:
            meter.tick()
        return self.partial_name


def metered_program(program: list[Node], source: str | None = None, first_line: int = 1,
                    partial: bool = False) -> tuple[list[Node], dict[int, int]]:
    """A copy of `program` with metered text nodes, and (given its source) the line of each block and
    partial call of the copy, by `id` (the copy keeps them alive).

    Printed values are charged where they may run more than once: inside a block, and anywhere in a
    `partial`. One at a prompt's top level prints once, its size bounded by the input's, and the
    whole output is checked at the end: it skips the charging block, which costs a reference
    render about a quarter of its time where it is used."""
    lines: dict[int, int] = {}
    seen: dict[str, int] = {}  # tag pattern -> how many of them the pre-order walk has met
    matches: dict[str, list[re.Match[str]]] = {}

    def line(pattern: str) -> int | None:
        if source is None:
            return None
        index = seen.get(pattern, 0)
        seen[pattern] = index + 1
        found = matches.get(pattern)
        if found is None:
            found = matches[pattern] = list(re.finditer(pattern, source))
        if index >= len(found):
            return None
        return first_line + source.count("\n", 0, found[index].start())

    def copy(nodes: list[Node], repeated: bool) -> list[Node]:
        out: list[Node] = []
        for node in nodes:
            if type(node) is Text:
                out.append(MeteredText(node.value))
                continue
            if type(node) is Mustache:
                out.append(_printing(node) if repeated else node)
                continue
            where = None
            if isinstance(node, Block):
                where = line(rf"{{{{~?\s*[#^]\s*{re.escape(node.call['name'])}(?=[\s}}~])")
            elif isinstance(node, (Partial, PartialBlock)):
                where = line(rf"{{{{~?\s*#?>\s*{re.escape(node.name)}(?=[\s}}~])")
            changes = {field.name: copy(value, True) for field in dataclasses.fields(node)
                       if isinstance(value := getattr(node, field.name), list) and field.name in ("body", "inverse")}
            # mypy checks replace() against every node class of the union at once; `changes` names only
            # fields of this node's own class (taken from dataclasses.fields(node) above)
            new = dataclasses.replace(node, **changes) if changes else node  # type: ignore[arg-type]
            if type(new) is Partial:
                new = MeteredPartial(new)
            if where is not None:
                lines[id(new)] = where
            out.append(new)
        return out

    return copy(program, partial), lines


def innermost_line(tb: TracebackType | None, lines: dict[int, int]) -> int | None:
    """The line of the innermost block or partial call of the template that the traceback passes through."""
    found = None
    while tb is not None:
        node = tb.tb_frame.f_locals.get("node")
        if node is not None and id(node) in lines:
            found = lines[id(node)]
        tb = tb.tb_next
    return found


class MeteredList(list):
    """An input list whose iteration checks the deadline at every step."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        meter = current()
        if meter is None:
            return list.__iter__(self)
        return _ticking(list.__iter__(self), meter.step)


class MeteredDict(dict):
    """An input object whose `items()` (how `{{#each}}` walks it) checks the deadline at every step."""

    __slots__ = ()

    def items(self) -> Any:
        meter = current()
        if meter is None:
            return dict.items(self)
        return _ticking(iter(dict.items(self)), meter.step)


def _ticking(items: Iterator[Any], step: Any) -> Iterator[Any]:
    for item in items:
        step()
        yield item


def metered_data(value: Any) -> Any:
    """`value` with every list and dict in it (exactly those types) copied as its metered kind.

    Iterative, so a deeply nested input cannot overflow the stack; shared values stay shared."""
    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []

    def make(item: Any) -> Any:
        kind = type(item)
        if kind is not list and kind is not dict:
            return item
        made = memo.get(id(item))
        if made is None:
            made = memo[id(item)] = MeteredList() if kind is list else MeteredDict()
            pending.append((item, made))
        return made

    top = make(value)
    while pending:
        original, made = pending.pop()
        if type(original) is list:
            list.extend(made, [make(item) for item in original])
        else:
            dict.update(made, {key: make(item) for key, item in original.items()})
    return top
