"""A parsed jinja2 template walked once: every later `find_all` on its root answered from that walk.

Compiling a prompt asks its tree for nodes of some kind about eight times: the loop meter (every
`{% for %}`), jinja's own code generator (extends, blocks, imports), the partials it includes, the
helpers it calls. Each `find_all` walks the whole tree again, through nested generators. The index
walks it once, in the same order, and notes how deep the tree goes (the code a template generates
nests with it: see `deferred.compiles_surely`).

jinja allows no subclass of its node types, so the index is given to the parsed root itself: its
`find_all` (and `find`, which calls it) is the index's. Only what was parsed is indexed: nodes
added later (the loop meter wraps each loop's iterable in a filter node) are not, so the index is
asked only for kinds nobody adds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jinja2 import nodes

__all__ = ["TemplateIndex", "index_template", "template_depth"]


class TemplateIndex:
    """The nodes below a root by their exact type, each with its place in a depth-first walk."""

    __slots__ = ("by_kind", "depth")

    def __init__(self, root: nodes.Node) -> None:
        self.by_kind: dict[type[nodes.Node], list[tuple[int, nodes.Node]]] = {}
        self.depth = 0  # levels of nodes below the root
        # Depth-first, children in order: the order jinja's own find_all yields them in.
        pending = [(child, 1) for child in reversed(_children(root))]
        position = 0
        while pending:
            node, depth = pending.pop()
            self.by_kind.setdefault(type(node), []).append((position, node))
            position += 1
            self.depth = max(self.depth, depth)
            pending.extend((child, depth + 1) for child in reversed(_children(node)))

    def find_all(self, node_type: Any) -> Iterator[Any]:
        """As `nodes.Node.find_all`: every node below the root that is an instance of `node_type` (a
        type or a tuple of types), in document order."""
        kinds = node_type if isinstance(node_type, tuple) else (node_type,)
        found = [entry for kind, entries in self.by_kind.items() if issubclass(kind, kinds) for entry in entries]
        if len(found) > 1:
            found.sort(key=_position)
        return iter([node for _, node in found])


def _position(entry: tuple[int, nodes.Node]) -> int:
    return entry[0]


def _children(node: nodes.Node) -> list[nodes.Node]:
    """`node.iter_child_nodes()` as a list, without its two layers of generators."""
    out: list[nodes.Node] = []
    for name in node.fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(item for item in value if isinstance(item, nodes.Node))
        elif isinstance(value, nodes.Node):
            out.append(value)
    return out


def index_template(ast: nodes.Template) -> nodes.Template:
    """`ast`, its `find_all` now answered by one walk made here."""
    index = TemplateIndex(ast)
    ast.find_all = index.find_all  # type: ignore[method-assign]  # this one instance: see the module docstring
    ast.index = index  # type: ignore[attr-defined]
    return ast


def template_depth(ast: nodes.Template) -> int:
    """Levels of nodes below the root of an indexed template (walked now if it is not)."""
    index = getattr(ast, "index", None)
    return (index if isinstance(index, TemplateIndex) else TemplateIndex(ast)).depth
