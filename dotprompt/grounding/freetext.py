"""Which strings of an output the model writes rather than copies: a summary, an answer, a reason.

A value copied from the input is short or written like a name or an id (`Kranich Software GmbH`,
`INV-2026-060`, `Blue widgets, large`); text the model writes runs on in lower case words. A string is
generated text when it has `GROUNDING_FREE_TEXT_WORDS` words or more (as spaces part them) and at
least half of them are in lower case (or has 16 words or more whatever its case); CJK text, when it is a sentence (ends with
`。`, `！`, `？`) of 15 characters or more. The schema decides over the text: `x-grounded: true` (Picoschema
`(grounded)`) marks a field copied however long, `x-grounded: false` one written.
"""

from __future__ import annotations

import re

from .limits import GROUNDING_FREE_TEXT_WORDS

__all__ = ["generated_text"]

_ALWAYS = 16  # words: past this, text is written, whatever its case
_CJK_SENTENCE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af].*[。！？]\\s*$", re.S)
_CJK_MIN = 15


def generated_text(value: str, min_words: int = GROUNDING_FREE_TEXT_WORDS) -> bool:
    """Whether the string reads as text the model wrote rather than a value it copied."""
    words = value.split()  # as written: `<img src=x onerror=alert(1)>` is three words, not six
    if len(words) >= _ALWAYS:
        return True
    if len(words) >= min_words and 2 * sum(word.islower() for word in words) >= len(words):
        return True
    return len(value.strip()) >= _CJK_MIN and _CJK_SENTENCE.search(value) is not None
