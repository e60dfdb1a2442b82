"""Test-file patterns (`matches:`) run on a model's output in linear time, with Python's meaning.

Python's `re` backtracks: `^(\\w+\\s?)*$` against 35 word characters and `!` runs for hours, and
the pattern comes from a test file while the text comes from a model. RE2 (google-re2) never
backtracks, so a match costs time linear in the text whatever the pattern. A timeout instead
would fail or pass a case by the machine's load, and `re` cannot be stopped from another thread.

RE2 reads nearly the same syntax; every construct Python's `re` accepts is either rewritten so RE2
gives it Python's meaning or refused when the test file loads, naming it. Rewritten: `\\w`, `\\d`,
`\\s` and their negations are Python's Unicode classes (RE2's are ASCII), or its ASCII ones under
`(?a)`; `$` outside multiline mode also matches before a final newline; `\\Z` is the end of the
text; `{,n}` is `{0,n}` and `{,}` is `*` (RE2 reads both as text); `\\uXXXX`, `\\N{NAME}`, octal and
escaped non-ASCII characters are code points; `(?#...)` comments are dropped; a `[` inside brackets
is a literal; under `(?i)`, `I`, `i`, `İ` and `ı` are one letter as in Python; a bracket set holding
`\\W` or `\\S` (which RE2 cannot put in a set) is replaced by the code points Python's set matches.
Refused: `\\b` and `\\B` outside `(?a)` (RE2's word boundary is ASCII only; Python's is Unicode),
`(?a)` with `(?i)` (RE2 folds case by Unicode rules), and what RE2 cannot run at all (backreferences,
lookaround, conditionals, atomic groups, possessive repeats, `(?x)`, repeats over 1000): a pattern
that fails on every run is better found before the first one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from dataclasses import dataclass, replace
from typing import Any, Final

__all__ = ["UnsupportedRegexError", "compile_pattern", "search", "translate"]

# Python's classes in RE2 terms: str.isalnum() + "_", Unicode decimal digits, str.isspace().
_WORD: Final = r"\p{L}\p{N}_"
_DIGIT: Final = r"\p{Nd}"
_SPACE: Final = r"\s\x0b\x1c-\x1f\x85\p{Z}"
_OUTSIDE: Final = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": _DIGIT, "D": r"\P{Nd}", "s": f"[{_SPACE}]",
                   "S": f"[^{_SPACE}]", "Z": r"\z", "A": r"\A"}
_INSIDE: Final = {"w": _WORD, "d": _DIGIT, "D": r"\P{Nd}", "s": _SPACE}
# Under (?a), Python's ASCII classes (RE2's \s lacks \v, so it is spelled out).
_ASCII_SPACE: Final = r"\t\n\x0b\f\r "
_ASCII_OUTSIDE: Final = {"w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]", "d": "[0-9]", "D": "[^0-9]",
                         "s": f"[{_ASCII_SPACE}]", "S": f"[^{_ASCII_SPACE}]", "b": r"\b", "Z": r"\z",
                         "A": r"\A"}
_ASCII_INSIDE: Final = {"w": "0-9A-Za-z_", "W": r"\W", "d": "0-9", "D": r"\D", "s": _ASCII_SPACE}
_NEGATED_IN_SET: Final = {False: "WS", True: "S"}  # set members RE2 cannot express (by ASCII mode)
# Python's (?i) makes these four one letter; RE2's case folding keeps İ and ı apart from I and i.
_TURKISH_I: Final = "Iiİı"
_NOTHING: Final = r"[^\x00-\x{10ffff}]"  # matches no character
_CONTROL_ESCAPES: Final = "afnrtv"  # \a \f \n \r \t \v: the same in both
_LOOKAROUND: Final = ("(?=", "(?!", "(?<=", "(?<!")
_GROUP_FLAGS: Final = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_REPEAT: Final = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_OCTAL: Final = re.compile(r"0[0-7]{0,2}|[0-7]{3}")
_SET_OCTAL: Final = re.compile(r"[0-7]{1,3}")


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


@dataclass(frozen=True)
class _Flags:
    multiline: bool = False
    ignorecase: bool = False
    ascii: bool = False


def translate(pattern: str) -> str:
    """`pattern` (one Python accepts) rewritten so RE2 gives it Python's meaning (see the module docstring)."""
    return _Translator(pattern).run()


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0
        self.out: list[str] = []
        self.flags = [_global_flags(pattern)]  # per open group; the first is the whole pattern's

    def run(self) -> str:
        steps = {"\\": self.escape, "[": self.bracket_set, "(": self.group_open, ")": self.group_close,
                 "{": self.repeat, "$": self.dollar}
        while self.pos < len(self.pattern):
            steps.get(self.pattern[self.pos], self.literal)()
        return "".join(self.out)

    def literal(self) -> None:
        self.out.append(self.char(self.pattern[self.pos]))
        self.pos += 1

    def char(self, char: str) -> str:
        """One literal character of the pattern: Python's one letter for the Turkish i's under (?i)."""
        if self.flags[-1].ignorecase and char in _TURKISH_I:
            return "[" + "".join(_code_point(c) for c in _TURKISH_I) + "]"
        return char

    def dollar(self) -> None:
        if self.flags[-1].multiline:
            self.out.append("$")
        elif _ends_the_match(self.pattern, self.pos + 1):
            self.out.append(r"(?:\n?\z)")  # Python's `$`: the end, or just before a final newline
        else:
            raise UnsupportedRegexError(
                "it has `$` with more of the pattern after it: Python's `$` also holds just before a final newline "
                "without taking it, which RE2 cannot say; end the pattern (or its alternative) with `$`, use \\Z for "
                "the very end, or (?m) for the end of every line")
        self.pos += 1

    def repeat(self) -> None:
        """`{m,n}` as Python reads it: `{,n}` is `{0,n}`, `{,}` is `{0,}`; a brace that is no repeat is text."""
        found = _REPEAT.match(self.pattern, self.pos)
        if found is None or found.group() == "{}":
            self.out.append(r"\{")
            self.pos += 1
            return
        low, comma, high = found.group(1), found.group(2), found.group(3)
        self.out.append("{" + (low or "0") + ((comma + (high or "")) if comma else "") + "}")
        self.pos = found.end()

    def escape(self) -> None:
        letter = self.pattern[self.pos + 1]
        ascii_mode = self.flags[-1].ascii
        table = _ASCII_OUTSIDE if ascii_mode else _OUTSIDE
        if letter == "B":
            raise UnsupportedRegexError(
                "it uses \\B (not a word boundary): RE2's can hold between the bytes of one character (é) and in an "
                "empty text, where Python's does not; write the pattern without it, or check the value in a "
                "`function:` assertion")
        if letter in table:
            self.out.append(table[letter])
            self.pos += 2
        elif letter == "b":
            raise UnsupportedRegexError(
                "it uses \\b, a word boundary: Python's is Unicode (é is a word character), RE2's only "
                "ASCII, so the two disagree next to any other letter; write (?a) at the start of the pattern for "
                "ASCII word boundaries (and ASCII \\w, \\d, \\s), or match the characters around the word")
        elif letter.isdigit() and _OCTAL.match(self.pattern, self.pos + 1) is None:
            raise UnsupportedRegexError(f"it uses a backreference (\\{letter}), which can take exponential time; write "
                                        "it without one, or check the value in a `function:` assertion")
        else:
            char, self.pos = _escaped_char(self.pattern, self.pos)
            if len(char) > 1:  # a control escape (`\n`), the same in both
                self.out.append(char)
            else:  # a code point, never a metacharacter (`\$`, `\.`)
                self.out.append(self.char(char) if char in _TURKISH_I else _code_point(char))

    def bracket_set(self) -> None:
        end = _set_end(self.pattern, self.pos)
        flags = self.flags[-1]
        members = _set_members(self.pattern, self.pos, end, flags.ascii)
        if members is None or (flags.ignorecase and _touches_turkish_i(members)):
            self.out.append(_enumerated_set(self.pattern[self.pos:end + 1], flags))
        else:
            self.out.append(members)
        self.pos = end + 1

    def group_open(self) -> None:
        pattern, pos = self.pattern, self.pos
        _refuse_group(pattern, pos)
        if pattern.startswith("(?#", pos):  # a comment: up to the first `)`, as Python reads it
            self.pos = pattern.index(")", pos) + 1
            return
        found = _GROUP_FLAGS.match(pattern, pos)
        if found is None:
            self.flags.append(self.flags[-1])
            self.out.append("(")
            self.pos += 1
            return
        on, off, end = found.group(1), found.group(2) or "", found.group(3)
        flags = _with_flags(self.flags[0] if end == ")" else self.flags[-1], on, off)
        if end == ")":  # `(?i)`: the whole pattern's flags (Python allows them only at the start)
            self.flags[0] = flags
        else:
            self.flags.append(flags)
        kept_on, kept_off = "".join(f for f in on if f in "ims"), "".join(f for f in off if f in "ims")
        written = "(?" + kept_on + (f"-{kept_off}" if kept_off else "") + end
        self.out.append("(?:" if written == "(?:" else "" if written == "(?)" else written)
        self.pos = found.end()

    def group_close(self) -> None:
        if len(self.flags) > 1:
            self.flags.pop()
        self.out.append(")")
        self.pos += 1


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


def _ends_the_match(pattern: str, pos: int) -> bool:
    """Whether nothing after `pos` can take a character: only group ends, repeats, `$` and `\\Z`, and
    other alternatives (skipped to the end of their group). Then `$` may take the final newline itself."""
    while pos < len(pattern):
        repeat = _REPEAT.match(pattern, pos)
        if repeat is not None:
            pos = repeat.end()
        elif pattern[pos] in ")?*+$":
            pos += 1
        elif pattern.startswith(("\\Z", "\\z"), pos):
            pos += 2
        elif pattern[pos] == "|":
            pos = _group_end(pattern, pos)
        else:
            return False
    return True


def _group_end(pattern: str, pos: int) -> int:
    """The index of the `)` closing the group `pos` is in (the pattern's length at the top level)."""
    depth = 0
    while pos < len(pattern):
        char = pattern[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "[":
            pos = _set_end(pattern, pos)
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return pos
            depth -= 1
        pos += 1
    return pos


def _global_flags(pattern: str) -> _Flags:
    """The flags the pattern's leading `(?aimsux)` groups set for all of it."""
    flags, pos = _Flags(), 0
    while (found := _GROUP_FLAGS.match(pattern, pos)) is not None and found.group(3) == ")":
        flags = _with_flags(flags, found.group(1), found.group(2) or "")
        pos = found.end()
    return flags


def _with_flags(flags: _Flags, on: str, off: str) -> _Flags:
    if "x" in on:
        raise UnsupportedRegexError("it uses (?x) (verbose mode), which RE2, the linear-time engine `matches` runs on, "
                                    "does not read; write the pattern without spaces and comments")
    for letter, name in (("m", "multiline"), ("i", "ignorecase"), ("a", "ascii")):
        if letter in on or letter in off:
            flags = replace(flags, **{name: letter in on})
    if flags.ascii and flags.ignorecase:
        raise UnsupportedRegexError("it uses (?a) with (?i): Python then folds only ASCII letters, RE2 folds by "
                                    "Unicode rules (the Kelvin sign K is k); spell the cases out ([kK]) instead of (?i)")
    return flags


def _code_point(char: str) -> str:
    return f"\\x{{{ord(char):x}}}"


def _escaped_char(pattern: str, pos: int) -> tuple[str, int]:
    """(RE2 text, position after) for an escape that stands for one character: `\\n`, `\\x41`, `\\u00e9`,
    `\\N{EM DASH}`, octal `\\012`, an escaped `.` or `é`; everything is written as the code point."""
    letter = pattern[pos + 1]
    if letter in _CONTROL_ESCAPES:
        return "\\" + letter, pos + 2
    if letter in "xuU":
        digits = {"x": 2, "u": 4, "U": 8}[letter]
        return chr(int(pattern[pos + 2:pos + 2 + digits], 16)), pos + 2 + digits
    if letter == "N":
        name_end = pattern.index("}", pos)
        return unicodedata.lookup(pattern[pos + 3:name_end]), name_end + 1
    octal = _OCTAL.match(pattern, pos + 1) if letter.isdigit() else None
    if octal is not None:
        return chr(int(octal.group(), 8)), octal.end()
    return letter, pos + 2  # an escaped non-letter (`\.`, `\é`): the character itself


def _set_end(pattern: str, start: int) -> int:
    """The index of the `]` closing the set opening at `start`, as Python reads it (a `]` first is a member)."""
    pos = start + 1
    if pattern.startswith("^", pos):
        pos += 1
    if pattern.startswith("]", pos):
        pos += 1
    while pattern[pos] != "]":
        pos += 2 if pattern[pos] == "\\" else 1
    return pos


def _set_members(pattern: str, start: int, end: int, ascii_mode: bool) -> str | None:
    """The set in RE2 syntax, or None when a member is one RE2 cannot put in a set (`\\W`, `\\S`)."""
    out = ["["]
    pos = start + 1
    if pattern.startswith("^", pos):
        out.append("^")
        pos += 1
    first = pos
    table = _ASCII_INSIDE if ascii_mode else _INSIDE
    while pos < end:
        char = pattern[pos]
        if char == "\\":
            letter = pattern[pos + 1]
            if letter in _NEGATED_IN_SET[ascii_mode]:
                return None
            if letter in table:
                out.append(table[letter])
                pos += 2
                continue
            if letter == "b":  # a backspace inside a set
                out.append(r"\x08")
                pos += 2
                continue
            octal = _SET_OCTAL.match(pattern, pos + 1)
            if octal is not None:  # in a set, `\1` is a character (octal), never a backreference
                out.append(_code_point(chr(int(octal.group(), 8))))
                pos = octal.end()
                continue
            member, pos = _escaped_char(pattern, pos)
            out.append(member if _is_escape_text(member) else _code_point(member))
            continue
        out.append(_code_point(char) if char in "[]" or (char == "^" and pos == first) else char)
        pos += 1
    return "".join(out) + "]"


def _is_escape_text(text: str) -> bool:
    return len(text) > 1


def _touches_turkish_i(members: str) -> bool:
    """Whether the RE2 set, folded by RE2, holds one of I, i, İ, ı: Python's (?i) then holds all four."""
    import re2

    positive = members[:1] + members[2:] if members.startswith("[^") else members
    options = re2.Options()
    options.log_errors = False
    folded = re2.compile("(?i)" + positive, options)
    return any(folded.fullmatch(char) is not None for char in _TURKISH_I)


@functools.lru_cache(maxsize=1)
def _every_character() -> str:
    """Every code point but the surrogates (RE2 reads UTF-8), in order."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))


@functools.lru_cache(maxsize=256)
def _enumerated_set(python_set: str, flags: _Flags) -> str:
    """The code points Python's set matches (under its flags), as RE2 ranges: exact whatever RE2 can say.
    One pass of Python's `re` over every code point; the runs it finds are the ranges."""
    prefix = "(?" + ("i" if flags.ignorecase else "") + ("a" if flags.ascii else "") + ")"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "Possible nested set": a `[` in a set is a member
        runs = re.compile(f"{prefix if prefix != '(?)' else ''}{python_set}+")
    every = _every_character()
    ranges = []
    for found in runs.finditer(every):
        first, last = found.group()[0], found.group()[-1]
        ranges.append(_code_point(first) + ("" if first == last else "-" + _code_point(last)))
    # (?-i:...): the set already holds every case Python matches; RE2 must not fold it again.
    return "(?-i:[" + "".join(ranges) + "])" if ranges else _NOTHING
