"""The Handlebars dialect of `.prompt` templates: the engine, and the conversion to jinja2.

Inside the package imports point one way: `names` <- `upstream` (the only module that touches
`dotpromptz-handlebars`) <- `helpers` <- `syntax` <- `to_jinja` <- `fast` <- `metered` <- `engine`.
The rest of dotprompt imports from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._util.lazy import lazy_names
from .names import KNOWN_HELPERS

# The engine and the converter (and with them dotpromptz-handlebars) load on first use: loading and
# checking jinja2 prompts never pay for them; only the helper names are needed for those.
_LAZY = {"Conversion": ".to_jinja", "Problem": ".to_jinja", "convert_file": ".to_jinja", "convert_source": ".to_jinja",
         "HandlebarsEngine": ".engine", "HandlebarsTemplate": ".engine", "PartialLookup": ".engine"}


if TYPE_CHECKING:
    from .engine import HandlebarsEngine, HandlebarsTemplate, PartialLookup
    from .to_jinja import Conversion, Problem, convert_file, convert_source

__all__ = [
    "KNOWN_HELPERS",
    "Conversion",
    "HandlebarsEngine",
    "HandlebarsTemplate",
    "PartialLookup",
    "Problem",
    "convert_file",
    "convert_source",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
