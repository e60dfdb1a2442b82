"""The names of the Handlebars helpers, apart from what they do (`helpers`).

A leaf of the package, importing nothing: the library and the linter ask "is this a helper's name?"
for every prompt, jinja2 ones too, and that must not load dotpromptz-handlebars.
"""

from __future__ import annotations

__all__ = ["BUILTIN_HELPERS", "DOTPROMPT_HELPERS", "KNOWN_HELPERS"]

BUILTIN_HELPERS = frozenset({"if", "unless", "each", "with", "lookup", "log"})
DOTPROMPT_HELPERS = frozenset({"role", "history", "media", "section", "json", "ifEquals", "unlessEquals"})
KNOWN_HELPERS = BUILTIN_HELPERS | DOTPROMPT_HELPERS
