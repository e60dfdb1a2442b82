"""Numbers as written in documents: `1,234.50`, `1.234,50`, `1 234,50`, `1'234.50`, `€42`, `42.50 EUR`.

A written number can mean more than one value (`1,234` is 1234 in English and 1.234 in German), so
each is read into every value it can mean and the text's numbers are indexed by value. The patterns
are fixed here; nothing written by the model becomes a pattern.

A number is read whole, never a piece of it: 234.5 is not in `1 234,50`, nor 567.89 in `1'234'567.89`.
Numbers side by side are told apart where a space cannot be a thousands separator: a line break, a run
of spaces, or a space not followed by exactly three digits (`-63.87 1,674.69` is two numbers,
`1 234,50` one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from decimal import Decimal

__all__ = ["GROUP_SPACES", "NUMBER", "cuts_a_number", "index_numbers", "readings", "value_readings"]

# A sign, then digit groups joined by one separator each (bounded, so a page of digits and spaces
# becomes many short numbers, not one huge one).
# A number starts where no word does, or right after a quantity's `x` ("x4", "3×").
# It ends where no word goes on, or at a CJK amount suffix (`23,700円`).
NUMBER = re.compile(r"(?:(?<![\w.,])|(?<=\bx)|(?<=×))([-\u2212]?)(\d{1,30}(?:[ .,'\u2019]\d{1,30}){0,8})"
                    r"(?![^\W円元圓원])")
# NUMBER for scanning a whole text: the same matches, written to begin with a character class (the sign
# or the first digit, the place before it checked behind that character), so the regex engine skips
# to the candidates in C instead of trying every position: three times faster on a page of prose.
_SCAN = re.compile(r"[-\u2212\d](?:(?<![\w.,].)|(?<=\bx.)|(?<=×.))(?:(?<=\d)\d{0,29}|(?<=[-\u2212])\d{1,30})"
                   r"(?:[ .,'\u2019]\d{1,30}){0,8}(?![^\W円元圓원])")
_SIGNS = "-\u2212"
_SEPARATOR = re.compile(r"[ .,'\u2019]")
_CODE = re.compile(r"^[A-Z]{3}\s*|\s*[A-Z]{3}$")
_SUFFIXES = "円元圓원"  # amount suffixes that are letters, not currency signs (category Lo, not Sc)
_GROUP_HEAD = re.compile(r"[-\u2212]?\d{1,3}(?: \d{3})*")  # a number so far that a space may continue
_GROUP_TAIL = re.compile(r"\d{3}(?:[.,]\d{1,30})?")  # ... with three digits (and a decimal part)
# What a space inside a number may have been in the input to be a thousands separator: one space, a
# no-break, narrow or thin space. A line break or a run of spaces separates two numbers.
GROUP_SPACES = frozenset(" \u00a0\u202f\u2009\u2007")


def readings(digits: str) -> tuple[Decimal, ...]:
    """Every value the unsigned written number `digits` can mean."""
    if digits.isdigit():
        return (Decimal(digits),)
    groups = _SEPARATOR.split(digits)
    if len(groups) == 2:  # one separator, as most amounts have: the rule below, spelt out (a third faster)
        head, tail = groups
        point = (Decimal(f"{head}.{tail}"),) if digits[len(head)] in ".," else ()
        return (*point, Decimal(head + tail)) if len(head) <= 3 and len(tail) == 3 else point
    separators = _SEPARATOR.findall(digits)
    out: list[Decimal] = []
    if _grouped(groups, separators):
        out.append(Decimal("".join(groups)))
    decimal_mark = separators[-1]
    if decimal_mark in ".," and (len(groups) == 2 or _grouped(groups[:-1], separators[:-1])) \
            and decimal_mark not in separators[:-1]:
        out.append(Decimal(f"{''.join(groups[:-1])}.{groups[-1]}"))
    return tuple(out)  # the two readings differ: one has a decimal point more


def _grouped(groups: list[str], separators: list[str]) -> bool:
    """Thousands grouping: one separator throughout, 1-3 digits first, then threes."""
    return (len(set(separators)) == 1 and 1 <= len(groups[0]) <= 3
            and all(len(g) == 3 for g in groups[1:]))


def value_readings(value: object) -> set[Decimal]:
    """The values an extracted leaf stands for: a JSON number, or a string holding one amount."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {Decimal(value)}
    if isinstance(value, float):
        return {Decimal(repr(value))} if value == value and abs(value) != float("inf") else set()
    if not isinstance(value, str) or len(value) > 64:
        return set()
    kept = "".join(c for c in value.strip() if unicodedata.category(c) != "Sc" and c not in _SUFFIXES)
    text = _CODE.sub("", kept).strip()
    match = NUMBER.fullmatch(text)
    if match is None:
        return set()
    found = readings(match.group(2))
    return {-v for v in found} if match.group(1) else set(found)


def index_numbers(text: str, original: Callable[[int], str] | None = None) -> dict[Decimal, list[tuple[int, int]]]:
    """Every value a number in `text` can mean -> its spans. A signed number is also indexed without
    its sign (a discount printed `-5.00` is extracted as 5). `original(i)` is what the input wrote for
    the (normalised) character at `i`: a space there that stood for a line break or several spaces
    ends a number."""
    index: dict[Decimal, list[tuple[int, int]]] = {}
    read = _memo(readings)
    for match in _SCAN.finditer(text):
        for start, end in _numbers(text, match.start(), match.end(), original):
            signed = text[start] in _SIGNS
            first = start + signed
            for value in read(text[first:end]):
                _put(index, value, first, end)
                if signed:
                    _put(index, -value, start, end)
    return index


def _numbers(text: str, start: int, end: int, original: Callable[[int], str] | None) -> Iterator[tuple[int, int]]:
    """The numbers of one scanned run: split at each space that cannot be a thousands separator."""
    if " " not in text[start:end]:
        yield start, end
        return
    head = start
    at = text.find(" ", start, end)
    while at >= 0:
        after = text.find(" ", at + 1, end)
        tail_end = end if after < 0 else after
        grouping = (_GROUP_HEAD.fullmatch(text, head, at) is not None
                    and _GROUP_TAIL.fullmatch(text, at + 1, tail_end) is not None
                    and (original is None or original(at) in GROUP_SPACES))
        if not grouping:
            yield head, at
            head = at + 1
        at = after
    yield head, end


_IN_A_NUMBER = frozenset("0123456789 .,'\u2019-\u2212")
_LOOK_BACK = 256  # characters walked back to where the numbers around a place begin


def cuts_a_number(text: str, start: int, end: int, original: Callable[[int], str] | None = None) -> bool:
    """Whether `text[start:end]` begins or ends inside a number as `index_numbers` reads it: `234` in
    `1 234 EUR` is a piece of 1234, not a number of its own."""
    lo = start
    while lo > 0 and start - lo < _LOOK_BACK and text[lo - 1] in _IN_A_NUMBER:
        lo -= 1
    for match in _SCAN.finditer(text, lo, min(len(text), end + _LOOK_BACK)):
        if match.start() >= end:
            break
        for first, last in _numbers(text, match.start(), match.end(), original):
            if first + (text[first] in _SIGNS) < start < last or first < end < last:
                return True
    return False


def _memo(read: Callable[[str], tuple[Decimal, ...]]) -> Callable[[str], tuple[Decimal, ...]]:
    """`read` remembering its answers for one text: a document repeats its numbers (quantities, years,
    amounts), and a plain dict costs a tenth of what a bounded cache shared by every text does."""
    memo: dict[str, tuple[Decimal, ...]] = {}

    def remembered(digits: str) -> tuple[Decimal, ...]:
        found = memo.get(digits)
        if found is None:
            found = memo[digits] = read(digits)
        return found

    return remembered


def _put(index: dict[Decimal, list[tuple[int, int]]], value: Decimal, start: int, end: int) -> None:
    spans = index.get(value)  # read from digits, a value is never NaN (which could not be hashed)
    if spans is None:
        index[value] = [(start, end)]
    elif spans[-1] != (start, end):
        spans.append((start, end))
