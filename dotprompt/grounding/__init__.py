"""Grounding: where in the input each value of an extracted output came from.

`ground(output, sources, schema)` returns a `Grounding`: per JSON path of every leaf, a status
(`exact`, `normalised`, `fuzzy`, `ungrounded`, `not_applicable`), the spans of the input variables
that hold it and their text. Schema annotation `x-derived: true` (Picoschema: `total(derived): number`)
marks computed fields, which are not looked for.
"""

from .align import Inputs, Limits, ground
from .leaves import DERIVED
from .logged import grounding_from_dict
from .result import GROUNDED, FieldGrounding, Grounding, Span, Status
from .sources import cited_sources, input_sources

__all__ = ["DERIVED", "GROUNDED", "FieldGrounding", "Grounding", "Inputs", "Limits", "Span", "Status",
           "cited_sources", "ground", "grounding_from_dict", "input_sources"]
