"""The one error hierarchy of the package: every public exception is defined here.

    DotpromptError
     ├── PromptFileError          a .prompt file (or partial) is malformed: path, line, column, hint
     │    └── TestFileError        a `.test.yaml` file cannot be read: file, line, case
     ├── PromptNotFoundError      no prompt by that name; suggests the closest names
     ├── InvalidPromptNameError   a name that would leave the prompt directory
     ├── InputValidationError     input fails the prompt's input schema; every failing path
     ├── SchemaError              a schema given in code (not in a file) is not valid
     ├── PicoschemaError          a Picoschema value cannot be converted (where, and a hint)
     ├── RenderError              the template failed while rendering (sandbox, budget, recursion, ...)
     ├── UsageError               the library was called wrongly: unknown model/tool/format, duplicate
     │    │                       tool names, max_turns <= 0, an unresolved interrupt on resume
     │    └── UnknownFormatError   no output format by that name (also a KeyError)
     ├── OutputParseError         no value could be found in the model's text (also a ValueError)
     ├── BatchInputError          a batch input line is not JSON/UTF-8, or two rows share an id
     ├── BatchOutputError         the batch output is the input, or another run is writing it
     ├── DatasetError             a gold dataset (or eval baseline) cannot be read: names the file and line
     ├── BatchJobError            a provider batch job cannot be built, submitted or resumed
     ├── RecordingMissingError    a replayed prompt test has no recording for a request
     ├── CaseFailedError          a prompt test case failed under pytest (also an AssertionError)
     ├── LocalSetupError          `dotprompt local setup` failed: names the log
     ├── RunLogError              `dotprompt logs` cannot read the run log file (corrupt, not SQLite)
     ├── McpServerError           an MCP server did not start, stopped, answered late or out of shape: names it
     └── GenerationError          a run failed; `.response` and `.messages` keep everything produced
          ├── GenerationResponseError  the loop stopped (status ABORTED: too many tool turns, ...)
          ├── OutputValidationError    the final output is not JSON or fails its schema
          ├── ToolExecutionError       a tool raised and the caller asked for tool_errors="raise"
          └── ModelError               the model call failed: status, provider, request id, retryable

    Interrupt                     not an error: a tool raises it to stop the loop for a human (exit C)
    ToolInputError (ValueError)   the model's tool input fails the tool's schema; sent back to the model

Every message says where the problem is and, where we know it, what to do. Misuse (UsageError)
is raised before any model call; run failures carry what the model and tools produced. Internal
signals (a fast path falling back, a file changing while read) are private to the modules that
raise and catch them, and never escape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._util.redact import redact, redact_data
from ._util.suggest import close_matches

__all__ = [
    "MAX_RETRY_AFTER",
    "BatchInputError",
    "BatchJobError",
    "BatchOutputError",
    "CaseFailedError",
    "DatasetError",
    "DotpromptError",
    "GenerationError",
    "GenerationResponseError",
    "InputProblem",
    "InputValidationError",
    "Interrupt",
    "InvalidPromptNameError",
    "LocalSetupError",
    "McpServerError",
    "ModelError",
    "OutputParseError",
    "OutputValidationError",
    "PicoschemaError",
    "PromptFileError",
    "PromptNotFoundError",
    "RecordingMissingError",
    "RenderError",
    "RunLogError",
    "SchemaError",
    "TestFileError",
    "ToolExecutionError",
    "ToolInputError",
    "UnknownFormatError",
    "UsageError",
]


# The longest wait a provider's Retry-After may ask for; more (or infinity) is clamped to it, NaN is ignored.
# An internal limit, beside ModelError, which clamps with it.
MAX_RETRY_AFTER = 600.0


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


class PicoschemaError(DotpromptError, ValueError):
    """A Picoschema value cannot be converted; `path` is where in the schema, `hint` what to write."""

    def __init__(self, message: str, path: tuple[str, ...], hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.hint = hint


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


class UsageError(DotpromptError, ValueError):
    """The library was called in a way that cannot work; raised before any model call."""


class GenerationError(DotpromptError):
    """A generate run failed. Nothing is lost: `response` is the last model reply (if any) and
    `messages` the whole conversation so far."""

    def __init__(self, message: str, *, response: Any = None, messages: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.response = response
        self.messages = list(messages) if messages else list(getattr(response, "messages", []) or [])


class GenerationResponseError(GenerationError):
    """The loop stopped with a status, e.g. ABORTED after `max_turns` tool rounds."""

    def __init__(self, message: str, status: str, *, response: Any = None, messages: Sequence[Any] = ()) -> None:
        super().__init__(message, response=response, messages=messages)
        self.status = status


class OutputValidationError(GenerationError):
    """The final output could not be parsed or does not match its schema."""

    def __init__(self, message: str, problems: Sequence[InputProblem], *, text: str, response: Any = None,
                 messages: Sequence[Any] = ()) -> None:
        self.problems = list(problems)
        self.text = text
        lines = [message, *(f"  {p.path}: {p.message}" for p in self.problems), *_cut_at_cap(response)]
        super().__init__("\n".join(lines), response=response, messages=messages)


def _cut_at_cap(response: Any) -> list[str]:
    """A line saying the reply ended at its token cap, when it did: then the output is cut, not wrong."""
    if getattr(response, "finish_reason", None) != "length":
        return []
    tokens = getattr(getattr(response, "usage", None), "output_tokens", None)
    spent = f", {tokens:,} output tokens" if isinstance(tokens, int) else ""
    return [f"the reply stopped at the token cap (finish reason: length{spent}): raise maxOutputTokens in the "
            "prompt's config (config: {maxOutputTokens: N}) or ask for a shorter output"]


class ToolExecutionError(GenerationError):
    """A tool raised while the caller asked for `tool_errors="raise"`; the tool's exception is the cause."""

    def __init__(self, tool: str, ref: str | None, error: BaseException, *, messages: Sequence[Any] = ()) -> None:
        self.tool = tool
        self.ref = ref
        label = f"{tool}({ref})" if ref else tool
        # A tool's exception may quote a key it used; the message is what the CLI prints.
        super().__init__(redact(f"tool {label} raised {type(error).__name__}: {error}"), messages=messages)


class ModelError(GenerationError):
    """A model call failed. `retryable` marks rate limits, server errors and timeouts.

    Every known key and URL credential is redacted from the message, the request id and `partial`
    (what had streamed before the failure), so whatever prints or stores the error cannot leak one.
    """

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None,
                 request_id: str | None = None, retryable: bool = False, retry_after: float | None = None,
                 response: Any = None, partial: Any = None) -> None:
        self.status = status
        self.provider = provider
        self.request_id = redact(request_id) if request_id else request_id
        self.retryable = retryable
        self.retry_after = clamp_retry_after(retry_after)
        self.partial = redact_data(partial)  # what had streamed before the failure
        where = " ".join(x for x in (provider, f"HTTP {status}" if status else None,
                                     f"request {self.request_id}" if self.request_id else None) if x)
        super().__init__(redact(f"{where}: {message}" if where else message), response=response)


def clamp_retry_after(seconds: float | None) -> float | None:
    """A usable wait: NaN (or not a number) is no hint, below 0 is 0, above MAX_RETRY_AFTER is MAX_RETRY_AFTER."""
    try:
        seconds = None if seconds is None else float(seconds)
    except (TypeError, ValueError):
        return None
    if seconds is None or math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class TestFileError(PromptFileError):
    """A test file that cannot be read; names the file, the line and the case.

    `errors` holds every problem found in the file (this one first): the error's own fields are the
    first problem's, and its text lists them all, one per line."""

    __test__ = False  # not a pytest test class

    def __init__(self, message: str, **where: Any) -> None:
        super().__init__(message, **where)
        self.errors: list[TestFileError] = [self]

    @classmethod
    def every(cls, problems: list[TestFileError]) -> TestFileError:
        """One error standing for all of `problems` (at least one)."""
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        combined = cls(first.message, path=first.path, line=first.line, column=first.column, hint=first.hint)
        combined.errors = list(problems)
        combined.args = ("\n".join(p.format() for p in problems),)
        return combined


_PREVIEW_CHARS = 80


class OutputParseError(DotpromptError, ValueError):
    """No output value could be found. `.text` is the whole text, never lost; `.format_name` the format."""

    def __init__(self, message: str, *, text: str, format_name: str) -> None:
        self.text = text
        self.format_name = format_name
        preview = text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "..."
        super().__init__(f"{format_name} output: {message} (text: {preview!r}, {len(text)} characters)")


class UnknownFormatError(UsageError, KeyError):
    """No format by that name; the message lists the known names and the closest one."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = sorted(known)
        hint = f"did you mean {close[0]!r}? " if (close := close_matches(name, self.known)) else ""
        self.message = f"unknown output format {name!r}: {hint}known formats: {', '.join(self.known)}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would print the message inside quotes
        return self.message


class BatchInputError(DotpromptError, ValueError):
    """A line of the input file is not JSON (or not UTF-8), or two rows share an id: names the file and line."""


class BatchOutputError(DotpromptError, ValueError):
    """The output file cannot be used: it is the input file, or another run is writing it."""


class DatasetError(DotpromptError, ValueError):
    """A gold dataset or an eval baseline cannot be used: a bad line, a duplicate id, a wrong type; names file and line."""


class BatchJobError(DotpromptError):
    """A provider batch job (`--batch-api`) cannot be built, submitted or resumed: a prompt that needs
    tools, a job already pending or none to resume, a provider that has no batch API."""


class RecordingMissingError(DotpromptError):
    """Replay found no recording for a request; says which case and how to re-record."""


class CaseFailedError(DotpromptError, AssertionError):
    """A prompt test case failed under pytest; `.result` is the case's full result."""

    def __init__(self, result: Any) -> None:
        super().__init__("\n".join(result.failures))
        self.result = result


class LocalSetupError(DotpromptError):
    """`dotprompt local setup` failed; `log_path` holds the captured download and build output."""

    def __init__(self, message: str, *, log_path: Path | None = None) -> None:
        self.log_path = log_path
        super().__init__(message)


class RunLogError(DotpromptError):
    """The run log (`dotprompt logs`) cannot be read. Writing to it never raises: runs go on unlogged."""


class McpServerError(DotpromptError):
    """An MCP server could not start, stopped mid-run, did not answer in time, or answered out of shape.
    Raised while a run resolves its tools; during a tool call it goes back to the model as that tool's
    error, as any tool's does (or raises as ToolExecutionError with tool_errors="raise")."""


class Interrupt(Exception):  # noqa: N818 - it is a signal, not an error
    """Raised by a tool to stop the loop and hand the decision to a human (exit C)."""

    def __init__(self, metadata: Any = None) -> None:
        super().__init__("tool interrupted")
        self.metadata = metadata


class ToolInputError(ValueError):
    """The model called a tool with input that fails the tool's input schema."""
