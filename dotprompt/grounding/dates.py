"""Dates as written in documents: `2026-11-02`, `02.11.2026`, `11/02/26`, `2 November 2026`,
`Nov. 2nd, 2026`, `2. November 2026`, `12-Aug-2026`, `2026年11月2日`, in English, German, French,
Spanish, Italian and Dutch month names.

Read from normalised (case-folded) text. `02/11/2026` is both 2 November and 11 February: both are
indexed, so either reading grounds. A dotted date is day first wherever it is written (`01.03.2026` is
1 March, never 3 January). A month of a year (`2019-03`) is found where the input writes a month and
its year with no day (`Mar 2019`, `March 2019`, `03/2019`, `2019年3月`). The patterns are fixed here;
nothing the model wrote becomes one.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Iterator

from .text import normalise

__all__ = ["Day", "Month", "index_dates", "index_months", "value_dates", "value_months"]

Day = tuple[int, int, int]  # (year, month, day)
Month = tuple[int, int]  # (year, month)

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate([
    "january jan januar janvier enero gennaio januari jänner", "february feb februar février fevrier febrero febbraio februari",
    "march mar märz maerz mars marzo maart", "april apr avril abril aprile", "may mai mayo maggio mei",
    "june jun juni juin junio giugno", "july jul juli juillet julio luglio",
    "august aug août aout agosto augustus", "september sep sept septembre septiembre settembre",
    "october oct oktober octobre octubre ottobre okt", "november nov novembre noviembre",
    "december dec dezember décembre decembre diciembre dicembre dez",
], start=1):
    for _name in _names.split():
        _MONTHS[_name] = _number


def _month_alternatives(names: list[str]) -> str:
    """The month names as one regex, longest first, grouped by first letter: the regex engine checks
    a dozen first letters at a place instead of ninety names (the same matches, in the same order)."""
    groups: dict[str, list[str]] = {}
    for name in sorted(names, key=len, reverse=True):
        groups.setdefault(name[0], []).append(re.escape(name[1:]))
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in groups.items())


_MONTH = _month_alternatives(list(_MONTHS))
_ORD = r"(?:st|nd|rd|th|er|º)?"

_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_NUMERIC = re.compile(r"(?<![\d.])(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})(?![\d])")
_DAY_MONTH = re.compile(rf"(?<!\w)(\d{{1,2}}){_ORD}\.?\s?(?:of |de )?({_MONTH})\.?,?\s?(?:de )?(\d{{4}})(?!\d)")
_DAY_MONTH_DASHED = re.compile(rf"(?<!\w)(\d{{1,2}})([-/])({_MONTH})\2(\d{{4}}|\d{{2}})(?!\w)")  # 12-Aug-2026
_CJK = re.compile(r"(?<!\d)(\d{4})\s?年\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日")
_MONTH_DAY = re.compile(rf"(?<!\w)({_MONTH})\.?\s?(\d{{1,2}}){_ORD},?\s?(\d{{4}})(?!\d)")
# The first digit of every run of digits a date may begin at (a superset of the runs `_candidates`
# offers a pattern that can match): one a numeric or CJK date continues, a short one after a letter
# (a month name: "Nov 2"), a short one before a month name ("2 Nov", "2nd of November"). Found in one
# pass of the regex engine, so the runs of digits that start no date cost no Python at all.
_MAY_START = re.compile(rf"\d(?<!\d\d)(?:\d*(?:[-/.]\d|\s?年)"
                        rf"|(?:(?<=[^\W\d_]\d)|(?<=[^\W\d_][ .]\d)|(?<=[^\W\d_]\. \d))\d?(?!\d)"
                        rf"|\d?(?!\d)(?:{_ORD}\.?\s?(?:of |de )?|[-/])(?:{_MONTH}))")


def _day(year: int, month: int, day: int) -> Day | None:
    if year < 100:
        year += 2000 if year < 70 else 1900
    if not (1 <= month <= 12 and 1 <= year <= 9999) or not 1 <= day <= _days_in(year, month):
        return None
    return year, month, day


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in(year: int, month: int) -> int:
    return 29 if month == 2 and calendar.isleap(year) else _DAYS[month - 1]


_DIGITS = re.compile(r"\d+")


def _read(match: re.Match[str], order: str) -> Day | None:
    """The date `match` holds, its groups read in `order` (`-` marks a group that is no part of it)."""
    fields = dict(zip(order.lower(), match.groups(), strict=True))
    month = _MONTHS[fields["m"]] if "M" in order else int(fields["m"])
    return _day(int(fields["y"]), month, int(fields["d"]))


_Try = tuple[re.Pattern[str], tuple[str, ...], int]  # a pattern, the orders its match is read in, where to try it
_WHOLE: tuple[_Try, ...] = ((_ISO, ("ymd",), 0), (_CJK, ("ymd",), 0), (_NUMERIC, ("dmy", "mdy"), 0),
                            (_DAY_MONTH, ("dMy",), 0), (_DAY_MONTH_DASHED, ("d-My",), 0), (_MONTH_DAY, ("Mdy",), 0))


def _candidates(text: str, start: int, end: int) -> list[_Try]:
    """The patterns worth trying at the run of digits `text[start:end]`, by the characters around it
    (most runs are no date). Each test is one a match needs: a separator and a digit after the run
    (numeric dates), 年 (CJK), a letter, `.` or space after a short run (`2 Nov`), a month name just before it."""
    after = text[end:end + 2]
    out: list[_Try] = []
    if len(after) == 2 and after[0] in "-/." and after[1].isdigit():
        out += [(_ISO, ("ymd",), start), (_NUMERIC, ("dmy", "mdy"), start)]
    if after.lstrip()[:1] == "年":
        out.append((_CJK, ("ymd",), start))
    if end - start > 2:
        return out
    if after[:1].isalpha() or after[:1] == "." or after[:1].isspace():  # an ordinal, `.`, a space or the month
        out.append((_DAY_MONTH, ("dMy",), start))
    elif after[:1] in ("-", "/") and after[1:].isalpha():
        out.append((_DAY_MONTH_DASHED, ("d-My",), start))
    before = text[start - 1:start] if start else ""
    if before.isalpha() or before in (" ", "."):  # month names end in a letter, then `.` and a space at most
        head = text[max(start - 12, 0):start]
        trimmed = head.rstrip(" .")
        word = trimmed.rpartition(" ")[2]
        if word in _MONTHS:
            out.append((_MONTH_DAY, ("Mdy",), start - len(head) + len(trimmed) - len(word)))
    return out


def _readings(text: str, *, whole: bool) -> Iterator[tuple[Day, int, int]]:
    """(date, start, end) for every date written in `text`; with `whole`, only one covering all of it
    (an ISO date may carry a time after it). Every date holds a run of digits, so patterns are tried
    only at those (or, for "Nov 2", at the month name just before one)."""
    if whole:
        tries: Iterable[_Try] = _WHOLE
    else:
        tries = (t for start in _run_starts(text) for t in _candidates(text, start, _run_end(text, start)))
    for pattern, orders, start in tries:
        match = pattern.match(text, start)
        if match is None or (whole and match.end() != len(text) and not (orders[0] == "ymd" and text[match.end()] == "t")):
            continue
        if pattern is _NUMERIC and text[match.end(1)] == ".":
            orders = ("dmy",)  # dotted dates are day first (German, French, Russian, ...), never month first
        for order in orders:
            found = _read(match, order)
            if found is not None:
                yield found, match.start(), match.end()


def _run_starts(text: str) -> Iterator[int]:
    at = 0
    while (found := _MAY_START.search(text, at)) is not None:
        yield found.start()
        at = found.start() + 1  # the next run: this one's other digits start none (`(?<!\d\d)`)


def _run_end(text: str, start: int) -> int:
    run = _DIGITS.match(text, start)
    return run.end() if run is not None else start


def value_dates(value: object) -> set[Day]:
    """The dates an extracted string stands for (empty when it is not a date)."""
    if not isinstance(value, str) or len(value) > 64:
        return set()
    return {day for day, _, _ in _readings(normalise(value), whole=True)}


def index_dates(normalised_text: str) -> dict[Day, list[tuple[int, int]]]:
    """Every date written in the (normalised) text -> its spans there."""
    index: dict[Day, list[tuple[int, int]]] = {}
    for day, start, end in _readings(normalised_text, whole=False):
        index.setdefault(day, []).append((start, end))
    for spans in index.values():
        spans.sort()  # several patterns add to one date: report its spans in reading order
    return index


# -- a month of a year ----------------------------------------------------------------------------

_MONTH_YEAR = re.compile(rf"(?<![\w.])({_MONTH})\.?,?\s?(\d{{4}})(?!\d)")
_NUMERIC_MONTH = re.compile(r"(?<![\d./-])(\d{1,2})[/.-](\d{4})(?![\d/.-]\d|\d)")
_ISO_MONTH = re.compile(r"(?<![\d./-])(\d{4})[/.-](\d{1,2})(?![\d/.-]\d|\d)")
_CJK_MONTH = re.compile(r"(?<!\d)(\d{4})\s?年\s?(\d{1,2})\s?月(?!\s?\d{1,2}\s?日)")
_DAY_BEFORE = re.compile(rf"\d{_ORD}\.?\s?(?:of |de )?$")  # "12 mar 2019", "1. märz 2019": a date, not a month
_MONTH_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_MONTH_YEAR, "My"), (_NUMERIC_MONTH, "my"), (_ISO_MONTH, "ym"), (_CJK_MONTH, "ym"))


def _month_readings(text: str, *, whole: bool) -> Iterator[tuple[Month, int, int]]:
    for pattern, order in _MONTH_PATTERNS:
        found = (pattern.fullmatch(text),) if whole else pattern.finditer(text)
        for match in found:
            if match is None or (pattern is _MONTH_YEAR and _DAY_BEFORE.search(text, max(match.start() - 12, 0),
                                                                              match.start())):
                continue
            fields = dict(zip(order.lower(), match.groups(), strict=True))
            month = _MONTHS[fields["m"]] if "M" in order else int(fields["m"])
            if 1 <= month <= 12 and 1 <= int(fields["y"]) <= 9999:
                yield (int(fields["y"]), month), match.start(), match.end()


def value_months(value: object) -> set[Month]:
    """The month of a year an extracted string stands for (`2019-03`, `Mar 2019`; empty when not one)."""
    if not isinstance(value, str) or len(value) > 32:
        return set()
    return {month for month, _, _ in _month_readings(normalise(value), whole=True)}


def index_months(normalised_text: str) -> dict[Month, list[tuple[int, int]]]:
    """Every month written with its year and no day in the (normalised) text -> its spans there."""
    index: dict[Month, list[tuple[int, int]]] = {}
    for month, start, end in _month_readings(normalised_text, whole=False):
        index.setdefault(month, []).append((start, end))
    for spans in index.values():
        spans.sort()
    return index
