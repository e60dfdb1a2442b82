"""The one error hierarchy of the package.

    DotpromptError
     ├── PromptFileError        a .prompt file (or partial) is malformed: path, line, column, hint
     ├── PromptNotFoundError    no prompt by that name; suggests the closest names
     ├── InvalidPromptNameError a name that would leave the prompt directory
     ├── InputValidationError   input fails the prompt's input schema; every failing path
     ├── SchemaError            a schema given in code (not in a file) is not valid
     └── RenderError            the template failed while rendering (sandbox, recursion, ...)

Every message says where the problem is and, where we know it, what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class DotpromptError(Exception):
    """Base class of every error this package raises on purpose."""


class PromptFileError(DotpromptError):
    """A prompt file could not be parsed or compiled."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.hint = hint
        super().__init__(self.format())

    def format(self, level: str = "error") -> str:
        """`path:line:col: error: message (hint)`, the shape editors and CI understand."""
        where = self.path or "<string>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: {level}: {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class PromptNotFoundError(DotpromptError, LookupError):
    """No prompt with this name (and variant) exists in the library."""

    def __init__(self, name: str, variant: str | None, suggestions: Sequence[str], where: str) -> None:
        self.name = name
        self.variant = variant
        self.suggestions = list(suggestions)
        label = f"{name}.{variant}" if variant else name
        text = f"prompt {label!r} not found in {where}"
        if self.suggestions:
            text += f" (did you mean {', '.join(repr(s) for s in self.suggestions)}?)"
        super().__init__(text)


class InvalidPromptNameError(DotpromptError, ValueError):
    """A prompt name that is absolute or climbs out of the prompt directory."""


@dataclass(frozen=True)
class InputProblem:
    """One failing location in the input: a JSON path and why it failed."""

    path: str
    message: str


class InputValidationError(DotpromptError, ValueError):
    """The input does not match the prompt's input schema."""

    def __init__(self, prompt: str, problems: Sequence[InputProblem]) -> None:
        self.prompt = prompt
        self.problems = list(problems)
        lines = [f"input for prompt {prompt!r} does not match its input schema:"]
        lines += [f"  {p.path}: {p.message}" for p in self.problems]
        super().__init__("\n".join(lines))


class SchemaError(DotpromptError, ValueError):
    """A schema passed in code is not a valid JSON Schema, Picoschema or pydantic model."""


class RenderError(DotpromptError):
    """The template raised while rendering."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = path or "<string>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: error: {message}")
