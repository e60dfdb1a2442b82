"""The Handlebars dialect of `.prompt` templates: the engine, and the conversion to jinja2.

Inside the package imports point one way: `upstream` (the only module that touches
`dotpromptz-handlebars`) <- `helpers` <- `syntax` <- `to_jinja` <- `fast` <- `engine`.
The rest of dotprompt imports from here.
"""

from __future__ import annotations

from .engine import ENGINE_KEY, HandlebarsEngine, HandlebarsTemplate, PartialLookup, file_engine
from .helpers import KNOWN_HELPERS
from .to_jinja import Conversion, Problem, convert_file, convert_source

__all__ = [
    "ENGINE_KEY",
    "KNOWN_HELPERS",
    "Conversion",
    "HandlebarsEngine",
    "HandlebarsTemplate",
    "PartialLookup",
    "Problem",
    "convert_file",
    "convert_source",
    "file_engine",
]
