"""One input text, normalised once (NFKC, case folded, whitespace collapsed) with a map back to the
original offsets, and a word index over it, so each extracted value is looked up, not scanned for.

The map stores only the stretches where the normalised text differs in length from the original (a
run of whitespace, a word that NFKC or case folding changes); everything between them is offset by a
constant, so typical ASCII text costs a handful of entries. Inside a changed stretch a span snaps to
the stretch's ends: the reported text is always `original[start:end]`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate

__all__ = ["WORD", "NormalisedText", "normalise"]

# Runs that may change under normalisation: anything but printable ASCII and lone spaces (a run of
# whitespace, a non-ASCII word). Written to begin with one character class (the run's first character,
# what it continues with decided behind it), which the regex engine skips to in C: `[^\x21-\x7e ]+| {2,}`.
_CHANGED = re.compile(r"[^\x21-\x7e](?:(?<=[^\x21-\x7e ])[^\x21-\x7e ]*|(?<= ) +)")
_SPACES = re.compile(r"(\s+)")
WORD = re.compile(r"\w+")
_WORD_PIECES = re.compile(r"(\w+)")  # WORD, kept by `split`
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# What may be glued to a Japanese name without being part of it: honorifics, company forms.
_CJK_SUFFIXES = ("様", "殿", "御中", "さん", "氏", "君", "先生", "宛", "株式会社", "有限会社", "合同会社")
_CJK_PREFIXES = ("株式会社", "有限会社", "合同会社", "(株)", "(有)")
_NARROW_MAX = 8  # a needle's second word narrows its places when it is found at most this many times as often


def normalise(value: str) -> str:
    """What a value is compared as: NFKC, case folded, whitespace runs as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


class NormalisedText:
    """`text` normalised, `to_original` mapping its offsets back; `words` built on first use."""

    def __init__(self, text: str) -> None:
        self.original = text
        self._norm_starts: list[int] = []
        self._norm_ends: list[int] = []
        self._orig_starts: list[int] = []
        self._orig_ends: list[int] = []
        pieces: list[str] = []
        at = length = 0
        for match in _CHANGED.finditer(text):
            start, end = _widened(text, match.start(), match.end(), at)
            if start < at:
                continue  # taken in by the previous run already
            kept = text[at:start].lower()  # printable ASCII and lone spaces: same length
            pieces.append(kept)
            length = self._changed(text[start:end], start, length + len(kept), pieces)
            at = end
        pieces.append(text[at:].lower())
        self.text = "".join(pieces)
        self._words: dict[str, list[int]] | None = None
        self._word_list: tuple[list[str], list[int]] | None = None

    def _changed(self, run: str, start: int, length: int, pieces: list[str]) -> int:
        """Normalise one run (whitespace to one space, the rest NFKC and case folded); the new length."""
        for piece in _SPACES.split(run):
            if not piece:
                continue
            new = " " if piece.isspace() else unicodedata.normalize("NFKC", piece).casefold()
            if len(new) != len(piece):
                self._add(length, length + len(new), start, start + len(piece))
            pieces.append(new)
            length += len(new)
            start += len(piece)
        return length

    def _add(self, norm_start: int, norm_end: int, orig_start: int, orig_end: int) -> None:
        self._norm_starts.append(norm_start)
        self._norm_ends.append(norm_end)
        self._orig_starts.append(orig_start)
        self._orig_ends.append(orig_end)

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of normalised `[start, end)`; widened to whole changed stretches."""
        return self._map(start, inside_end=False), self._map(end, inside_end=True)

    def original_at(self, position: int) -> str:
        """What the original text wrote for the normalised character at `position` (a run of
        whitespace collapsed to one space comes back whole)."""
        start, end = self.to_original(position, position + 1)
        return self.original[start:end]

    def _map(self, position: int, *, inside_end: bool) -> int:
        probe = position - 1 if inside_end else position
        i = bisect_right(self._norm_starts, probe) - 1
        if i < 0:
            return position
        if probe < self._norm_ends[i]:
            return self._orig_ends[i] if inside_end else self._orig_starts[i]
        return self._orig_ends[i] + position - self._norm_ends[i]

    @property
    def words(self) -> dict[str, list[int]]:
        """Each word of the normalised text -> where it starts (normalised offsets), in order."""
        if self._words is None:
            index: dict[str, list[int]] = {}
            found = index.get
            for word, start in zip(*self.word_list, strict=True):
                starts = found(word)
                if starts is None:
                    index[word] = [start]
                else:
                    starts.append(start)
            self._words = index
        return self._words

    @property
    def word_list(self) -> tuple[list[str], list[int]]:
        """The words of the normalised text in order, and their start offsets."""
        if self._word_list is None:
            # One split gives the words and what lies between them; the running length of the pieces
            # gives each word's offset (all in C: no match object per word).
            pieces = _WORD_PIECES.split(self.text)
            words = pieces[1::2]
            self._word_list = words, list(accumulate(map(len, pieces)))[0:2 * len(words):2]
        return self._word_list

    def occurrences(self, needle: str, limit: int) -> Iterator[int]:
        """Normalised offsets where `needle` (already normalised) starts on word boundaries.

        Looked up through the needle's rarest word, so the cost is that word's occurrences, not the
        text's length; at most `limit` candidates are tried. A needle without a word is found with
        `str.find`, again at most `limit` times."""
        if _CJK.search(needle):  # CJK writes no spaces between words: found anywhere, its ends checked
            yield from (start for start in self._found(needle, limit) if self._cjk_bounded(start, start + len(needle)))
            return
        words = [(m.group(), m.start()) for m in WORD.finditer(needle)]
        if not words:
            yield from self._found(needle, limit)
            return
        index = self.words
        ranked = sorted(words, key=lambda w: len(index.get(w[0], ())))
        word, offset = ranked[0]
        positions = index.get(word, [])[:limit]
        if len(ranked) > 1:
            positions = self._narrowed(positions, offset, *ranked[1])
        text, size = self.text, len(needle)
        for position in positions:
            start = position - offset
            if start >= 0 and text.startswith(needle, start) and self._bounded(start, start + size):
                yield start

    def spaced(self, compact: str, limit: int) -> Iterator[tuple[int, int]]:
        """Normalised spans of runs of whole words, one space apart, that are `compact` with its spaces
        dropped: `gb815286599` is written `gb 815 2865 99`, `500mg` is `500 mg`. Found through the
        word index by the run's first word (a prefix of `compact`); at most `limit` places tried."""
        words, starts = self.word_list
        index = self.words
        for size in range(1, len(compact) + 1):
            for start in index.get(compact[:size], ())[:limit]:
                limit -= 1
                end = self._spaced_end(words, starts, bisect_right(starts, start) - 1, compact)
                if end is not None and self._bounded(start, end):
                    yield start, end
                if limit <= 0:
                    return

    def _spaced_end(self, words: list[str], starts: list[int], i: int, compact: str) -> int | None:
        at, end = 0, starts[i]
        while i < len(words) and compact.startswith(words[i], at):
            if starts[i] != end and not (starts[i] == end + 1 and self.text[end] == " "):
                return None  # the next word is not one space on
            at, end = at + len(words[i]), starts[i] + len(words[i])
            if at == len(compact):
                return end
            i += 1
        return None

    def _narrowed(self, positions: list[int], offset: int, other: str, other_offset: int) -> list[int]:
        """Of the places of a needle's rarest word, those where its next rarest word is where the
        needle has it too: an intersection of two sets (in C) rather than a comparison per place. Only
        when that word is not too common (the work stays bounded by the places tried)."""
        others = self.words.get(other, [])
        if len(others) > _NARROW_MAX * max(len(positions), 1):
            return positions
        shift = other_offset - offset
        both = set(map(shift.__add__, positions)).intersection(others)
        return sorted(map((-shift).__add__, both))

    def _found(self, needle: str, limit: int) -> Iterator[int]:
        if not needle:
            return
        start = self.text.find(needle)
        for _ in range(limit):
            if start < 0:
                return
            yield start
            start = self.text.find(needle, start + 1)

    def _bounded(self, start: int, end: int) -> bool:
        """Neither end of the match cuts a word or a token of the text in two: `INV-2026` is not in
        `INV-2026-060`, `567.89` not in `1'234'567.89`."""
        text = self.text
        if start > 0 and ((_wordy(text[start]) and _wordy(text[start - 1])) or _joins(text, start - 1)):
            return False
        return not (end < len(text) and ((_wordy(text[end - 1]) and _wordy(text[end])) or _joins(text, end)))

    def _cjk_bounded(self, start: int, end: int) -> bool:
        """A CJK match is bounded by a character that is no part of a word, or by an honorific or a
        company form glued to it (`鈴木一郎様`, `株式会社山田商事`): a name cut short is not found."""
        text = self.text
        head = start == 0 or not _wordy(text[start - 1]) or text.endswith(_CJK_PREFIXES, 0, start)
        return head and (end == len(text) or not _wordy(text[end]) or text.startswith(_CJK_SUFFIXES, end))


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


def _joins(text: str, at: int) -> bool:
    """`text[at]` joins the characters around it into one token: a hyphen or slash inside an id
    (`INV-2026-060`), a separator inside a number (`1'234'567.89`, `1.234,50`)."""
    if at <= 0 or at + 1 >= len(text):
        return False
    mark, left, right = text[at], text[at - 1], text[at + 1]
    if mark in "-/_":
        return left.isalnum() and right.isalnum()
    return mark in ".,'\u2019" and left.isdigit() and right.isdigit()


def _widened(text: str, start: int, end: int, floor: int) -> tuple[int, int]:
    """A run grown over the spaces touching it (so " \n " collapses to one space) and over the
    character a combining mark belongs to (so NFKC composes them together)."""
    if text[start].isspace():
        while start > floor and text[start - 1] == " ":
            start -= 1
    elif start > floor and unicodedata.combining(text[start]):
        start -= 1
    if text[end - 1].isspace():
        while end < len(text) and text[end] == " ":
            end += 1
    return start, end
