"""A jinja2 template's generated Python, compiled by Python only when it first renders.

Loading a prompt generates its template's Python code (that is where jinja finds unknown filters
and tests, and where the linter learns the names the template reads), then Python compiles that
code: about a sixth of a load, and work `dotprompt check`, which never renders, does not need.

Compiling can still fail after the code was generated, for one reason only: the code nests past
CPython's limits (20 statically nested blocks in one function, 100 indentation levels, 200 nested
brackets), which a template nesting blocks or expressions deeply enough reaches. Its error must
come at load, with the line, as it always has; so code is deferred only when it nests far less
than that (`compiles_surely`), and is compiled at once otherwise.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = ["MAX_DEFERRED_CHARS", "MAX_DEFERRED_DEPTH", "MAX_DEFERRED_INDENT", "DeferredTemplate", "compiles_surely",
           "jinja_template"]

# jinja's code opens at most one block per indentation level, and an `except ... as` handler counts
# as two blocks: 9 levels stay under CPython's 20 nested blocks, whatever they hold.
MAX_DEFERRED_INDENT = 9
# jinja writes one or two brackets per level of the template's tree, plus a few around a statement:
# 50 levels stay well under CPython's 200 nested brackets (150 nested `-x` still compile).
MAX_DEFERRED_DEPTH = 50
# Ordinary templates generate a few thousand characters; a huge one compiles at load, so that the
# memory its compile needs is asked for where it always was.
MAX_DEFERRED_CHARS = 200_000


def compiles_surely(code: str, indent: int, depth: int) -> bool:
    """Whether Python's compile of this generated code cannot fail: `indent` is its deepest
    indentation level, `depth` the depth of the template tree it was generated from."""
    return indent <= MAX_DEFERRED_INDENT and depth <= MAX_DEFERRED_DEPTH and len(code) <= MAX_DEFERRED_CHARS


class DeferredTemplate:
    """A jinja2 template's generated code and the Template Python compiles from it, on first use
    (once; two threads racing on the first render may both compile it, and get the same template).
    `template()` at load compiles it at once: what a template that might not compile does."""

    __slots__ = ("_code", "_env", "_globals", "_template", "filename")

    def __init__(self, env: ImmutableSandboxedEnvironment, code: str, filename: str) -> None:
        self._env = env
        self._code = code
        self.filename = filename
        # The globals as they are at load. A plain dict, not jinja's ChainMap: each render copies it,
        # and copying a dict is cheaper.
        self._globals: dict[str, Any] = dict(env.globals)
        self._template: Template | None = None

    @property
    def deferred(self) -> bool:
        """Whether Python has not compiled the code yet."""
        return self._template is None

    def template(self) -> Template:
        template = self._template
        if template is None:
            code = compile(self._code, self.filename, "exec")
            template = self._template = self._env.template_class.from_code(self._env, code, self._globals, None)
        return template


def jinja_template(template: Any) -> Any:
    """The template to render: a jinja2 one compiled now if it was deferred, a Handlebars one as it is."""
    return template.template() if isinstance(template, DeferredTemplate) else template
