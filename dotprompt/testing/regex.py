"""Test-file patterns (`matches:`) run on a model's output in linear time, with Python's meaning.

Python's `re` backtracks: `^(\\w+\\s?)*$` against 35 word characters and `!` runs for hours, and
the pattern comes from a test file while the text comes from a model. RE2 (google-re2) never
backtracks, so a match costs time linear in the text whatever the pattern. A timeout instead
would fail or pass a case by the machine's load, and `re` cannot be stopped from another thread.

RE2 reads nearly the same syntax; where its meaning differs, the pattern is rewritten to Python's:
`\\w`, `\\d`, `\\s` (and `\\W`, `\\D`, `\\S` outside brackets) are Unicode classes as in Python (RE2's
are ASCII), `$` outside multiline mode also matches before a final newline, `\\Z` is the end of
the text, `\\uXXXX` a code point, and a `[` inside brackets is a literal. What remains different:
`\\b`, `\\B` and `\\W`/`\\S` inside brackets use ASCII word characters. What RE2 cannot run at all
(backreferences, lookaround, conditionals, atomic groups, possessive repeats, `(?x)`, repeats over
1000) is refused when the test file loads, with the construct named: a pattern that fails on every
run is better found before the first one.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

__all__ = ["UnsupportedRegexError", "compile_pattern", "search"]

# Python's classes in RE2 terms: str.isalnum() + "_", Unicode decimal digits, str.isspace().
_WORD: Final = r"\p{L}\p{N}_"
_DIGIT: Final = r"\p{Nd}"
_SPACE: Final = r"\s\x0b\x1c-\x1f\x85\p{Z}"
_OUTSIDE: Final = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": _DIGIT, "D": r"\P{Nd}", "s": f"[{_SPACE}]",
                   "S": f"[^{_SPACE}]", "Z": r"\z"}
_INSIDE: Final = {"w": _WORD, "d": _DIGIT, "D": r"\P{Nd}", "s": _SPACE, "b": r"\x08"}
_LOOKAROUND: Final = ("(?=", "(?!", "(?<=", "(?<!")
_GROUP_FLAGS: Final = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


class UnsupportedRegexError(ValueError):
    """A valid Python pattern that the linear-time engine cannot run; the message names the construct."""


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` (Python syntax) is found in `text`; linear in len(text)."""
    compiled = compile_pattern(pattern)
    try:
        return compiled.search(text) is not None
    except UnicodeEncodeError:  # a lone surrogate (from JSON `\ud800`): RE2 reads UTF-8 only
        return compiled.search(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")) is not None


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Any:
    """The RE2 program for a Python pattern; re.error when Python rejects it, UnsupportedRegexError when RE2 cannot run it."""
    re.compile(pattern)  # Python's own verdict first: its syntax is the one test files are written in
    import re2  # the engine loads with the first `matches` assertion, not with the package

    options = re2.Options()
    options.log_errors = False  # RE2 would print each refused pattern to stderr
    try:
        return re2.compile(translate(pattern), options)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise UnsupportedRegexError(f"RE2, the linear-time engine `matches` runs on, cannot run it ({detail}); write "
                                "it without that construct, or check the value in a `function:` assertion") from None


def translate(pattern: str) -> str:
    """`pattern` rewritten so RE2 gives it Python's meaning (see the module docstring)."""
    out: list[str] = []
    multiline = [False]  # per open group: whether `$` is multiline there
    pos, size, in_class = 0, len(pattern), False
    while pos < size:
        char = pattern[pos]
        if char == "\\" and pos + 1 < size:
            out.append(_escape(pattern, pos, in_class))
            pos += 2 + _escape_length(pattern, pos)
            continue
        if in_class:
            if char == "]":
                in_class = False
            out.append("\\[" if char == "[" else char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern.startswith("[^", pos):
                out.append("^")
                pos += 1
            if pattern.startswith("]", pos + 1):  # a `]` first in a set is a literal
                out.append("\\]")
                pos += 1
        elif char == "(":
            _refuse_group(pattern, pos)
            multiline.append(_group_multiline(pattern, pos, multiline))
            out.append(char)
        elif char == ")":
            if len(multiline) > 1:
                multiline.pop()
            out.append(char)
        elif char == "$" and not multiline[-1]:
            out.append(r"(?:\n?\z)")  # Python's `$`: the end, or just before a final newline
        else:
            out.append(char)
        pos += 1
    return "".join(out)


def _escape(pattern: str, pos: int, in_class: bool) -> str:
    letter = pattern[pos + 1]
    table = _INSIDE if in_class else _OUTSIDE
    if letter in table:
        return table[letter]
    if letter in "uU":
        digits = 4 if letter == "u" else 8
        return f"\\x{{{pattern[pos + 2:pos + 2 + digits]}}}"
    if letter.isdigit() and letter != "0" and not in_class:
        raise UnsupportedRegexError(f"it uses a backreference (\\{letter}), which can take exponential time; write it "
                                "without one, or check the value in a `function:` assertion")
    return pattern[pos:pos + 2]


def _escape_length(pattern: str, pos: int) -> int:
    """Characters after the escape's letter that belong to it (the hex digits of `\\uXXXX`)."""
    letter = pattern[pos + 1]
    return 4 if letter == "u" else 8 if letter == "U" else 0


def _refuse_group(pattern: str, pos: int) -> None:
    if pattern.startswith(_LOOKAROUND, pos):
        raise UnsupportedRegexError("it uses lookaround ((?=...), (?!...), (?<=...) or (?<!...)), which the linear-time "
                                "engine cannot run; match the text itself, or check the value in a `function:` "
                                "assertion")
    if pattern.startswith("(?P=", pos):
        raise UnsupportedRegexError("it uses a backreference ((?P=name)), which can take exponential time; write it "
                                "without one, or check the value in a `function:` assertion")
    if pattern.startswith("(?(", pos):
        raise UnsupportedRegexError("it uses a conditional group ((?(...)...)), which the linear-time engine cannot run")


def _group_multiline(pattern: str, pos: int, multiline: list[bool]) -> bool:
    """Whether `$` is multiline inside the group opening at `pos`; `(?m)` at the start sets it for all."""
    current = multiline[-1]
    match = _GROUP_FLAGS.match(pattern, pos)
    if match is None:
        return current
    on, off, end = match.group(1), match.group(2) or "", match.group(3)
    value = True if "m" in on else False if "m" in off else current
    if end == ")":  # `(?m)`: a global flag (Python allows them only at the start), not a group
        multiline[0] = value
    return value
