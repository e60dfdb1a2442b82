"""Path assertion types (`paths: [{path: $.total, gte: 40}]`), each registered once, here.

One `@path_assertion("name")` function is the whole of a type: the test-file reader (cases.py)
takes the known names, the did-you-mean hints and the read-time check of the expected value from
`PATH_ASSERTIONS`; the runner (expect.py) takes the test itself; `dotprompt check` lints test files
through the reader. Nothing else lists the types.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..document.parse import did_you_mean
from .regex import UnsupportedRegexError, compile_pattern, search
from .values import JSON_TYPES, json_type, subset_problems

__all__ = ["PATH_ASSERTIONS", "ExpectedValueError", "PathAssertion", "path_assertion", "path_assertion_names"]

Test = Callable[[Any, Any], bool]  # (the value found at the path, the expected value) -> passed
CheckExpected = Callable[[Any], None]  # raises ExpectedValueError when the file's expected value can never work


class ExpectedValueError(ValueError):
    """The expected value written in a test file is unusable for its assertion (a bad regex, an unknown type)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class PathAssertion:
    name: str
    test: Test
    check_expected: CheckExpected | None = None


PATH_ASSERTIONS: dict[str, PathAssertion] = {}


def path_assertion(name: str, *, check_expected: CheckExpected | None = None) -> Callable[[Test], Test]:
    """Register the decorated `test(value, expected) -> bool` as the path assertion `name`."""

    def register(test: Test) -> Test:
        PATH_ASSERTIONS[name] = PathAssertion(name, test, check_expected)
        return test

    return register


def path_assertion_names() -> tuple[str, ...]:
    """The registered names, in registration order (the order error messages list them in)."""
    return tuple(PATH_ASSERTIONS)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _known_type(expected: Any) -> None:
    if expected not in JSON_TYPES:
        raise ExpectedValueError(f"unknown type {expected!r}", did_you_mean(str(expected), JSON_TYPES))


def _valid_regex(expected: Any) -> None:
    try:
        compile_pattern(str(expected))
    except re.error as exc:
        raise ExpectedValueError(f"bad regular expression {expected!r}: {exc}") from None
    except UnsupportedRegexError as exc:
        raise ExpectedValueError(f"the regular expression {expected!r} cannot be used: {exc}") from None


@path_assertion("equals")
def _equals(value: Any, expected: Any) -> bool:
    return value == expected


@path_assertion("contains")
def _contains(value: Any, expected: Any) -> bool:
    if isinstance(value, str):
        return str(expected) in value
    if isinstance(value, list):
        return any(not subset_problems(expected, item, "$") for item in value)
    if isinstance(value, Mapping):
        return expected in value
    return False


@path_assertion("matches", check_expected=_valid_regex)
def _matches(value: Any, expected: Any) -> bool:
    return isinstance(value, str) and search(str(expected), value)  # linear time: the text is a model's


@path_assertion("length")
def _length(value: Any, expected: Any) -> bool:
    return hasattr(value, "__len__") and len(value) == expected


@path_assertion("gte")
def _gte(value: Any, expected: Any) -> bool:
    return _number(value) and value >= expected


@path_assertion("lte")
def _lte(value: Any, expected: Any) -> bool:
    return _number(value) and value <= expected


@path_assertion("type", check_expected=_known_type)
def _is_type(value: Any, expected: Any) -> bool:
    kind = json_type(value)
    return kind == expected or (expected == "number" and kind == "integer")


@path_assertion("one_of")
def _one_of(value: Any, expected: Any) -> bool:
    return value in expected
