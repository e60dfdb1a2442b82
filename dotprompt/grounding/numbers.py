"""Numbers as written in documents: `1,234.50`, `1.234,50`, `1 234,50`, `1'234.50`, `€42`, `42.50 EUR`.

A written number can mean more than one value (`1,234` is 1234 in English and 1.234 in German), so
each is read into every value it can mean and the text's numbers are indexed by value. The patterns
are fixed here; nothing written by the model becomes a pattern.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from decimal import Decimal, InvalidOperation

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


@functools.lru_cache(maxsize=8192)  # documents repeat their numbers (quantities, years, amounts)
def readings(digits: str) -> frozenset[Decimal]:
    """Every value the unsigned written number `digits` can mean."""
    if digits.isdigit():
        return frozenset({Decimal(digits)})
    groups = _SEPARATOR.split(digits)
    if len(groups) == 2:  # one separator, as most amounts have: the rule below, spelt out (a third faster)
        head, tail = groups
        one = {Decimal(f"{head}.{tail}")} if digits[len(head)] in ".," else set()
        if len(head) <= 3 and len(tail) == 3:
            one.add(Decimal(head + tail))
        return frozenset(one)
    separators = _SEPARATOR.findall(digits)
    out: set[Decimal] = set()
    if _grouped(groups, separators):
        out.add(Decimal("".join(groups)))
    decimal_mark = separators[-1]
    if decimal_mark in ".," and (len(groups) == 2 or _grouped(groups[:-1], separators[:-1])) \
            and decimal_mark not in separators[:-1]:
        out.add(Decimal(f"{''.join(groups[:-1])}.{groups[-1]}"))
    return frozenset(out)


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
    for match in _SCAN.finditer(text):
        start, end = match.span()
        signed = text[start] in _SIGNS
        digits = match.group()[1:] if signed else match.group()
        first = start + signed
        for value in readings(digits):
            _put(index, value, first, end)
            if signed:
                _put(index, -value, start, end)
        if " " in digits or "'" in digits or "\u2019" in digits:
            _pieces(index, digits, first)
    return index


def _pieces(index: dict[Decimal, list[tuple[int, int]]], digits: str, offset: int) -> None:
    """Numbers joined by spaces: each run of up to four of them read on its own too, so a column
    "1   1 200,00" (a quantity, then an amount) yields 1 and 1200.00."""
    pieces = [m.span() for m in _PIECE.finditer(digits)]
    for first in range(len(pieces)):
        for last in range(first, min(first + 4, len(pieces))):
            start, end = pieces[first][0], pieces[last][1]
            text = digits[start:end]
            if (first, last) != (0, len(pieces) - 1) and text[0].isdigit() and text[-1].isdigit():
                for value in readings(text):
                    _put(index, value, offset + start, offset + end)


def _put(index: dict[Decimal, list[tuple[int, int]]], value: Decimal, start: int, end: int) -> None:
    try:
        spans = index.setdefault(value, [])
    except InvalidOperation:  # a signalling NaN cannot be hashed; no written number reads as one
        return
    if (start, end) not in spans[-1:]:
        spans.append((start, end))
