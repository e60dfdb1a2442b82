"""Numbers as written in documents: `1,234.50`, `1.234,50`, `1 234,50`, `1'234.50`, `€42`, `42.50 EUR`.

A written number can mean more than one value (`1,234` is 1234 in English and 1.234 in German), so
each is read into every value it can mean and the text's numbers are indexed by value. The patterns
are fixed here; nothing written by the model becomes a pattern.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal

__all__ = ["NUMBER", "index_numbers", "readings", "value_readings"]

# A sign, then digit groups joined by one separator each (bounded, so a page of digits and spaces
# becomes many short numbers, not one huge one).
# A number starts where no word does, or right after a quantity's `x` ("x4", "3×").
NUMBER = re.compile(r"(?:(?<![\w.,])|(?<=\bx)|(?<=×))([-\u2212]?)(\d{1,30}(?:[ .,'\u2019]\d{1,30}){0,8})(?![\w])")
# NUMBER for scanning a whole text: the same matches, written to begin with a character class (the sign
# or the first digit, the place before it checked behind that character), so the regex engine skips
# to the candidates in C instead of trying every position: three times faster on a page of prose.
_SCAN = re.compile(r"[-\u2212\d](?:(?<![\w.,].)|(?<=\bx.)|(?<=×.))(?:(?<=\d)\d{0,29}|(?<=[-\u2212])\d{1,30})"
                   r"(?:[ .,'\u2019]\d{1,30}){0,8}(?![\w])")
_SIGNS = "-\u2212"
_SEPARATOR = re.compile(r"[ .,'\u2019]")
_PIECE = re.compile(r"[^ '\u2019]+")
_CODE = re.compile(r"^[A-Z]{3}\s*|\s*[A-Z]{3}$")


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
    text = _CODE.sub("", "".join(c for c in value.strip() if unicodedata.category(c) != "Sc")).strip()
    match = NUMBER.fullmatch(text)
    if match is None:
        return set()
    found = readings(match.group(2))
    return {-v for v in found} if match.group(1) else set(found)


def index_numbers(text: str) -> dict[Decimal, list[tuple[int, int]]]:
    """Every value a number in `text` can mean -> its spans. A signed number is also indexed without
    its sign (a discount printed `-5.00` is extracted as 5); numbers joined by spaces also count one by one."""
    index: dict[Decimal, list[tuple[int, int]]] = {}
    read = _memo(readings)
    for match in _SCAN.finditer(text):
        start, end = match.span()
        signed = text[start] in _SIGNS
        digits = match.group()[1:] if signed else match.group()
        first = start + signed
        for value in read(digits):
            _put(index, value, first, end)
            if signed:
                _put(index, -value, start, end)
        if " " in digits or "'" in digits or "\u2019" in digits:
            _pieces(index, digits, first, read)
    return index


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


def _pieces(index: dict[Decimal, list[tuple[int, int]]], digits: str, offset: int,
            read: Callable[[str], tuple[Decimal, ...]]) -> None:
    """Numbers joined by spaces: each run of up to four of them read on its own too, so a column
    "1   1 200,00" (a quantity, then an amount) yields 1 and 1200.00."""
    pieces = [m.span() for m in _PIECE.finditer(digits)]
    for first in range(len(pieces)):
        for last in range(first, min(first + 4, len(pieces))):
            start, end = pieces[first][0], pieces[last][1]
            text = digits[start:end]
            if (first, last) != (0, len(pieces) - 1) and text[0].isdigit() and text[-1].isdigit():
                for value in read(text):
                    _put(index, value, offset + start, offset + end)


def _put(index: dict[Decimal, list[tuple[int, int]]], value: Decimal, start: int, end: int) -> None:
    spans = index.get(value)  # read from digits, a value is never NaN (which could not be hashed)
    if spans is None:
        index[value] = [(start, end)]
    elif spans[-1] != (start, end):
        spans.append((start, end))
