"""Fuzzy grounding: a description the model paraphrased by a word ("Widgets, blue" for "blue widget").

Token alignment over the input's words: the value's words are looked up in the word index, each hit
proposes a window of the value's length there, and a window scores the share of the value's words
it holds (as a multiset, after light stemming) over the longer of the two. Every word of the value
that carries meaning must be in the window: words may be reordered, inflected or dropped from the
input's text, never replaced (`Kranich Handels GmbH` is not `Kranich Software GmbH`; `INV-2026-060` not
`INV-2026`); only the little words of `FUNCTION_WORDS` may differ. Bounded: at most
`MAX_ANCHORS` windows per value, each O(words in the value), and only values of 3 to `MAX_WORDS` words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from .limits import GROUNDING_FUZZY_THRESHOLD
from .text import WORD, NormalisedText

__all__ = [
    "COMMON",
    "FUNCTION_WORDS",
    "MAX_ANCHORS",
    "MAX_WORDS",
    "MIN_WORDS",
    "THRESHOLD",
    "FuzzyMatch",
    "WordSequence",
    "best_window",
    "could_align",
    "stem",
]

THRESHOLD = GROUNDING_FUZZY_THRESHOLD  # one word in three may differ (the default lives in limits.py)
MIN_WORDS = 3
MAX_WORDS = 64
MAX_ANCHORS = 48
COMMON = 2000  # past the rarest word, a word found more often than this proposes no windows
# Words a paraphrase may add or leave out ("Repair of pump" for "pump repair"), in the languages the
# dates module reads; any other word of the value must be in the input.
_FUNCTION_WORDS_BY_LANGUAGE = ("a an the of and or for with to in on at by from",
                               "der die das den dem des und oder für mit von zu im am",
                               "le la les du de des et ou pour avec au aux en",
                               "el los las y o para con del al", "il lo gli e per di da", "het een en van voor met")
FUNCTION_WORDS = frozenset(word for words in _FUNCTION_WORDS_BY_LANGUAGE for word in words.split())


@dataclass(frozen=True)
class FuzzyMatch:
    start: int  # normalised offsets
    end: int
    score: float


def stem(word: str) -> str:
    """Plural and simple verb endings off, so "services" meets "service"."""
    if len(word) > 4 and word.endswith("es"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


class WordSequence:
    """The normalised text's words in order (stemmed) with their offsets, and an index by stem."""

    def __init__(self, text: NormalisedText) -> None:
        words, self.starts = text.word_list
        stems = {word: stem(word) for word in text.words}
        self.stems = [stems[word] for word in words]
        self.ends = [start + len(word) for word, start in zip(words, self.starts, strict=True)]
        self.positions: dict[str, list[int]] = {}
        for number, key in enumerate(self.stems):
            self.positions.setdefault(key, []).append(number)


def could_align(words: Mapping[str, object], value: str, threshold: float = THRESHOLD) -> bool:
    """Whether every word of the value that carries meaning occurs in the text at all (in some form):
    a cheap test on the plain word index that spares most values the fuzzy step. (`threshold` is kept
    for callers; the window's score is checked by `best_window`.)"""
    wanted = WORD.findall(value)
    if not MIN_WORDS <= len(wanted) <= MAX_WORDS:
        return False
    return all(w in FUNCTION_WORDS or any(form in words for form in (w, stem(w), w + "s", w + "es")) for w in wanted)


def best_window(words: WordSequence, value: str, threshold: float = THRESHOLD) -> FuzzyMatch | None:
    """The best-scoring window for the normalised `value`, if it reaches `threshold`."""
    wanted = [stem(m.group()) for m in WORD.finditer(value)]
    if not MIN_WORDS <= len(wanted) <= MAX_WORDS:
        return None
    counts = Counter(wanted)
    if any(key not in words.positions and key not in FUNCTION_WORDS for key in counts):
        return None  # a word of the value the whole input does not hold: no window holds it
    best: tuple[float, int, int] | None = None
    for first in _window_starts(words, wanted):
        for size in (len(wanted) - 1, len(wanted), len(wanted) + 1):
            scored = _score(words, counts, len(wanted), first, size)
            if scored is not None and (best is None or scored[0] > best[0]):
                best = scored
    if best is None or best[0] < threshold:
        return None
    return FuzzyMatch(words.starts[best[1]], words.ends[best[2]], round(best[0], 3))


def _window_starts(words: WordSequence, wanted: list[str]) -> list[int]:
    """Where windows begin: each hit of the value's rarer words, shifted back by the word's place."""
    places: dict[str, list[int]] = {}
    for place, key in enumerate(wanted):
        places.setdefault(key, []).append(place)
    starts: dict[int, None] = {}
    for rank, key in enumerate(sorted(places, key=lambda k: len(words.positions.get(k, ())))):
        hits = words.positions.get(key, ())
        if rank and len(hits) > COMMON:
            break  # the rarest word's first hits are tried even when every word is common
        for hit in hits:
            # The window that keeps the word at its place in the value, and the two that start or end
            # at it (the words reordered: "large blue widget" for "blue widgets, large").
            for first in (*(hit - place for place in places[key]), hit - len(wanted) + 1, hit):
                starts.setdefault(max(first, 0), None)
            if len(starts) >= MAX_ANCHORS:
                return list(starts)
    return list(starts)


def _score(words: WordSequence, counts: Counter[str], size_wanted: int, first: int,
           size: int) -> tuple[float, int, int] | None:
    """(score, first word, last word) of the window, trimmed to the words it shares with the value."""
    left = dict(counts)
    shared, head, tail = 0, -1, -1
    for i, key in enumerate(words.stems[first:first + size]):
        if left.get(key, 0) > 0:
            left[key] -= 1
            shared += 1
            tail = i
            head = i if head < 0 else head
    if not shared or any(n and key not in FUNCTION_WORDS for key, n in left.items()):
        return None  # a word of the value is not in this window
    return shared / max(size_wanted, tail - head + 1), first + head, first + tail
