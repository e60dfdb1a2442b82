"""Ground an output in its input: each leaf value located exact, then normalised, then fuzzy.

Per leaf: the value's text looked up in the normalised input through its word index (exact when
the original text there is the value itself, normalised otherwise); a number through every value the
input's written numbers can mean; a date through every date written there; a description of three
or more words by token alignment. Each step is an index lookup or a bounded scan, so the cost is
linear in the input (one normalisation, indexes built on first need) plus a bounded amount per value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .currency import glued_to_letters, rivals, signs_for
from .dates import Day, Month, index_dates, index_months, value_dates, value_months
from .freetext import generated_text
from .fuzzy import WordSequence, best_window, could_align
from .leaves import Leaf, walk
from .limits import (
    GROUNDING_FUZZY_THRESHOLD,
    GROUNDING_MAX_DEPTH,
    GROUNDING_MAX_FUZZY,
    GROUNDING_MAX_INPUT_CHARS,
    GROUNDING_MAX_SPANS,
    GROUNDING_MAX_TRIES,
    GROUNDING_MAX_VALUE_CHARS,
    GROUNDING_MAX_VALUES,
)
from .numbers import cuts_a_number, index_numbers, value_readings
from .pages import documents_in, with_pages
from .result import FieldGrounding, Grounding, Span, Status
from .sources import Joined
from .text import WORD, NormalisedText, normalise

__all__ = ["Inputs", "Limits", "ground"]

_MAX_SPACED = 64  # the longest value (spaces dropped) looked for with its spaces dropped or added


@dataclass(frozen=True)
class Limits:
    """Bounds on one grounding run; past them the result says what it left out (`Grounding.skipped`).
    The defaults, and what each bounds, are in grounding/limits.py."""

    max_input_chars: int = GROUNDING_MAX_INPUT_CHARS
    max_values: int = GROUNDING_MAX_VALUES
    max_depth: int = GROUNDING_MAX_DEPTH
    max_spans: int = GROUNDING_MAX_SPANS  # spans reported per value found several times
    max_tries: int = GROUNDING_MAX_TRIES  # candidate places checked per value
    max_fuzzy: int = GROUNDING_MAX_FUZZY  # values that may go on to the fuzzy step in one run
    max_value_chars: int = GROUNDING_MAX_VALUE_CHARS
    fuzzy_threshold: float = GROUNDING_FUZZY_THRESHOLD


class Inputs:
    """The input of one run, normalised once; its indexes built when a value first needs them."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.joined = Joined(sources)
        self.documents = documents_in(sources)  # PDF inputs: their spans get pages and boxes (pages.py)
        self.size = len(self.joined.text)
        self._text: NormalisedText | None = None
        self._numbers: dict[Decimal, list[tuple[int, int]]] | None = None
        self._dates: dict[Day, list[tuple[int, int]]] | None = None
        self._months: dict[Month, list[tuple[int, int]]] | None = None
        self._words: WordSequence | None = None

    @property
    def text(self) -> NormalisedText:
        if self._text is None:
            self._text = NormalisedText(self.joined.text)
        return self._text

    @property
    def numbers(self) -> dict[Decimal, list[tuple[int, int]]]:
        if self._numbers is None:
            self._numbers = index_numbers(self.text.text, self.text.original_at)
        return self._numbers

    @property
    def dates(self) -> dict[Day, list[tuple[int, int]]]:
        if self._dates is None:
            self._dates = index_dates(self.text.text)
        return self._dates

    @property
    def months(self) -> dict[Month, list[tuple[int, int]]]:
        if self._months is None:
            self._months = index_months(self.text.text)
        return self._months

    @property
    def words(self) -> WordSequence:
        if self._words is None:
            self._words = WordSequence(self.text)
        return self._words

    def written_as(self, norm_start: int, norm_end: int, value: str) -> bool:
        """Whether the input writes the normalised span exactly as `value`."""
        start, end = self.text.to_original(norm_start, norm_end)
        return self.joined.text[start:end] == value

    def span(self, norm_start: int, norm_end: int) -> Span | None:
        """The normalised span as a Span of one variable, or None when it crosses two."""
        start, end = self.text.to_original(norm_start, norm_end)
        located = self.joined.locate(start, end)
        if located is None:
            return None
        return Span(located[0], located[1], located[2], self.joined.text[start:end])


def ground(output: Any, sources: Mapping[str, str] | Inputs, schema: Any = None,
           limits: Limits = Limits()) -> Grounding:
    """Where each leaf of `output` (JSON data) is in the named input texts `sources`."""
    inputs = sources if isinstance(sources, Inputs) else Inputs(sources)
    if inputs.size > limits.max_input_chars:
        return Grounding({}, f"the input is {inputs.size:,} characters; grounding reads at most "
                             f"{limits.max_input_chars:,}")
    walked = walk(output, schema, max_depth=limits.max_depth, max_leaves=limits.max_values)
    run = _Run(inputs, limits)
    return with_pages(Grounding({leaf.path: run.leaf(leaf) for leaf in walked.leaves}, walked.skipped), inputs.documents)


class _Run:
    def __init__(self, inputs: Inputs, limits: Limits) -> None:
        self.inputs = inputs
        self.limits = limits
        self.fuzzy_left = limits.max_fuzzy
        # What each value was found as, by value: outputs repeat theirs (a currency on every line, a
        # date in two fields), and a repeat costs a lookup. Keyed by type too: 1 and 1.0 and True differ.
        self.seen: dict[tuple[type, Any, bool], FieldGrounding] = {}

    def leaf(self, leaf: Leaf) -> FieldGrounding:
        value = leaf.value
        if leaf.exempt is not None:
            return FieldGrounding(leaf.path, "not_applicable", value, reason=leaf.exempt)
        key = (type(value), value, leaf.copied)
        try:
            found = self.seen.get(key)
        except TypeError:  # not JSON data: an unhashable value is looked for each time
            return self.look_for(leaf.path, value, leaf.copied)
        if found is None:
            found = self.seen[key] = self.look_for(leaf.path, value, leaf.copied)
        return found if found.path == leaf.path else dataclasses.replace(found, path=leaf.path)

    def look_for(self, path: str, value: Any, copied: bool = False) -> FieldGrounding:
        if isinstance(value, str) and len(value) > self.limits.max_value_chars:
            if not copied and generated_text(value):
                return FieldGrounding(path, "not_applicable", value, reason="generated text")
            return FieldGrounding(path, "ungrounded", value,
                                  reason=f"longer than {self.limits.max_value_chars:,} characters; not looked for")
        written = value if isinstance(value, str) else _number_text(value)
        if isinstance(value, str):
            found = self._text(path, value) or self._spaced(path, value)
            if found is not None:
                return found
        amounts = value_readings(value)
        found = self._indexed(path, value, written, self.inputs.numbers, amounts) if amounts else None
        days = value_dates(value) if found is None and isinstance(value, str) else set()
        if days:
            found = self._indexed(path, value, written, self.inputs.dates, days)
        months = value_months(value) if found is None and not days and isinstance(value, str) else set()
        if months:
            found = self._indexed(path, value, written, self.inputs.months, months)
        if found is None and isinstance(value, str):
            found = self._currency(path, value)
        if found is None and isinstance(value, str) and not amounts and not days and not months:
            found = self._fuzzy(path, value)  # a description; an amount or a date means exactly what it says
        if found is not None:
            return found
        if isinstance(value, str) and not copied and generated_text(value):
            return FieldGrounding(path, "not_applicable", value, reason="generated text")
        return FieldGrounding(path, "ungrounded", value, reason=self._why_not(value))

    def _text(self, path: str, value: str) -> FieldGrounding | None:
        needle = normalise(value)
        exact: list[Span] = []
        close: list[Span] = []
        limit = self.limits.max_spans
        text = self.inputs.text
        amount = bool(value_readings(value))
        for start in text.occurrences(needle, self.limits.max_tries):
            if amount and cuts_a_number(text.text, start, start + len(needle), text.original_at):
                continue  # `234` in `1 234 EUR`: a piece of another number
            if len(close) >= limit and not self.inputs.written_as(start, start + len(needle), value):
                continue  # one more normalised match: only an exact one can still change the result
            span = self.inputs.span(start, start + len(needle))
            if span is None:
                continue
            (exact if span.text == value else close).append(span)
            if len(exact) >= limit:
                break
        if exact:
            return FieldGrounding(path, "exact", value, tuple((exact + close)[:limit]))
        if close:
            return FieldGrounding(path, "normalised", value, tuple(close[:limit]))
        return None

    def _spaced(self, path: str, value: str) -> FieldGrounding | None:
        """A value written with its spaces dropped or added (`GB815286599` for `GB 815 2865 99`)."""
        compact = "".join(normalise(value).split())
        if len(compact) > _MAX_SPACED or not WORD.fullmatch(compact):
            return None
        spans = [s for s in (self.inputs.span(a, b) for a, b in self.inputs.text.spaced(compact, self.limits.max_tries))
                 if s is not None and s.text != value]
        return FieldGrounding(path, "normalised", value, tuple(spans[:self.limits.max_spans])) if spans else None

    def _indexed(self, path: str, value: Any, written: str, index: Mapping[Any, list[tuple[int, int]]],
                 keys: set[Any]) -> FieldGrounding | None:
        """A number or a date, by every value it can mean; exact when the input wrote it the same way."""
        if not keys:
            return None
        places = sorted({place for key in keys for place in index.get(key, ())[:self.limits.max_tries]})
        spans = [s for s in (self.inputs.span(a, b) for a, b in places[:self.limits.max_tries]) if s is not None]
        if not spans:
            return None
        exact = [s for s in spans if s.text == written]
        status: Status = "exact" if exact else "normalised"
        ordered = exact + [s for s in spans if s.text != written]
        return FieldGrounding(path, status, value, tuple(ordered[:self.limits.max_spans]))

    def _currency(self, path: str, value: str) -> FieldGrounding | None:
        """A currency code printed as its sign (`EUR` as `€`)."""
        spans: list[Span] = []
        text = self.inputs.text
        for sign in signs_for(value):
            if any(word in text.words for word in rivals(value, sign)):
                continue  # another currency printing this sign is named in the input
            needle = normalise(sign)
            for start in text.occurrences(needle, self.limits.max_tries):
                if not glued_to_letters(text.text, start):
                    span = self.inputs.span(start, start + len(needle))
                    if span is not None:
                        spans.append(span)
                if len(spans) >= self.limits.max_spans:
                    break
            if spans:
                return FieldGrounding(path, "normalised", value, tuple(spans))
        return None

    def _fuzzy(self, path: str, value: str) -> FieldGrounding | None:
        if self.fuzzy_left <= 0:
            return None
        needle = normalise(value)
        if not could_align(self.inputs.text.words, needle, self.limits.fuzzy_threshold):
            return None  # decided on the word index the text search built, before the fuzzy one is built
        self.fuzzy_left -= 1
        match = best_window(self.inputs.words, needle, self.limits.fuzzy_threshold)
        if match is None:
            return None
        span = self.inputs.span(match.start, match.end)
        if span is None:
            return None
        return FieldGrounding(path, "fuzzy", value, (span,), score=match.score)

    def _why_not(self, value: Any) -> str | None:
        if isinstance(value, str) and self.fuzzy_left <= 0:
            return f"the fuzzy step is limited to {self.limits.max_fuzzy:,} values a run; not tried"
        return None


def _number_text(value: Any) -> str:
    return str(value) if isinstance(value, int) else repr(value) if isinstance(value, float) else str(value)
