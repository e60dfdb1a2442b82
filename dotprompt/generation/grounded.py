"""Grounding in the run: after the output validates, each value is located in the prompt's input.

`output.grounding` says what happens: `off`; `report` (the default for JSON output with a schema)
puts the result on `response.grounding`; `require` also treats an ungrounded value as a validation
failure, so `validate_and_retry` re-asks (naming the paths and what the input says near them) and
the run fails when the re-asks run out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InputProblem, OutputValidationError
from ..grounding import FieldGrounding, Inputs, Limits, ground, input_sources
from ..grounding.text import WORD
from .options import OutputOptions

__all__ = ["JSON_FORMATS", "GroundingCheck", "Mode", "mode_of"]

Mode = Literal["off", "report", "require"]
JSON_FORMATS = ("json", "jsonl", "array")  # formats whose output is JSON data worth grounding
_NEARBY = 60  # characters of input shown either side in a re-ask


def mode_of(output: OutputOptions) -> Mode:
    """The policy written in the prompt, or the default: report for JSON output with a schema."""
    if output.grounding is not None:
        return output.grounding
    fmt = output.format or ("json" if output.json_schema is not None else None)
    return "report" if output.json_schema is not None and fmt in JSON_FORMATS else "off"


@dataclass
class GroundingCheck:
    """One run's grounding: the input (normalised once, reused by every re-ask) and the policy."""

    mode: Mode
    sources: Mapping[str, str]
    schema: Any
    limits: Limits = field(default_factory=Limits)
    _inputs: Inputs | None = None

    @classmethod
    def for_run(cls, output: OutputOptions, input: Any) -> GroundingCheck | None:
        mode = mode_of(output)
        sources = input_sources(input) if mode != "off" and input is not None else {}
        if not sources:  # a prompt without input text has nothing to ground in: every value would be flagged
            return None
        return cls(mode, sources, output.json_schema)

    def apply(self, value: Any, response: Any, text: str) -> None:
        """Ground `value` (the validated JSON output) onto `response`; with `require`, raise on ungrounded values."""
        if self._inputs is None:
            self._inputs = Inputs(self.sources)
        grounding = ground(value, self._inputs, self.schema, self.limits)
        response.grounding = grounding
        if self.mode != "require":
            return
        problems = [InputProblem(f.path, self._problem(f)) for f in grounding.ungrounded]
        if grounding.skipped is not None:
            problems.append(InputProblem("$", f"grounding could not check every value: {grounding.skipped}"))
        if problems:
            raise OutputValidationError("the output holds values the input does not contain (output.grounding: require)",
                                        problems, text=text, response=response, messages=response.messages)

    def _problem(self, found: FieldGrounding) -> str:
        message = f"{_short(found.value)} is not in the input"
        near = self._nearby(found.path)
        return f"{message}; the input says near `{near[0]}`: {near[1]!r}" if near else message

    def _nearby(self, path: str) -> tuple[str, str] | None:
        """What the input says around the first mention of the field's name (or of a word of it)."""
        assert self._inputs is not None
        name = path.rsplit(".", 1)[-1].split("[", 1)[0]
        spaced = "".join(f" {c}" if c.isupper() else c for c in name.replace("_", " "))  # vatId -> vat Id
        words = [name.lower(), *(w.lower() for w in WORD.findall(spaced) if len(w) > 1)]
        index = self._inputs.text.words
        for word in words:
            places = index.get(word)
            found = self._inputs.span(places[0], places[0] + len(word)) if places else None
            if found is not None:
                text = self.sources[found.variable]
                excerpt = text[max(found.start - _NEARBY, 0):found.end + _NEARBY]
                return found.variable, " ".join(excerpt.split())
        return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

