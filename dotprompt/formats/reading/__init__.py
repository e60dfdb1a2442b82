"""The tolerant JSON readers the JSON formats share: one family, held equal by the tests.

- `incremental.py`: the streaming parser, linear in the new text (its tokenizer and state);
- `snapshots.py`: its snapshots as chunks arrive, each extending the last copy nobody holds;
- `extract.py`: the JSON value of a final reply (strict first, then located, then the lenient
  rewrite, a truncated value completed by partial-json-parser), with every repair;
- `lenient.py`: almost-JSON rewritten to strict JSON, each change a Repair;
- `flatline.py`: the commonest JSONL line, a flat object of plain members, read in one match;
- `jsonl_lines.py`: the `jsonl` format's reply, streamed and whole, one object per line;
- `locate.py`, `textpos.py`, `limits.py`: where the value is, where an offset is, what untrusted
  text may ask for.

For a text all of them read, they give one value: the final parse of a streamed reply is the
stream's own value when the stream read strict JSON (`whole_output` of the json, array and jsonl
streams), and the readers
agree on everything else (tests/formats/ holds them to it).

Nothing here loads until a reply is read (`dotprompt check` asks a format only for its schema check
and instructions): each name below loads its module on first use, and the format modules import the
readers where a stream starts or a reply is parsed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers (and readers of this file) see; at run time, __getattr__ below
    from .extract import extract_json, parse_json_at
    from .flatline import read_flat_object
    from .incremental import IncrementalJsonParser, LazySnapshot
    from .lenient import rewrite_json

__all__ = ["IncrementalJsonParser", "LazySnapshot", "extract_json", "parse_json_at", "read_flat_object", "rewrite_json"]

_HOMES = {"IncrementalJsonParser": "incremental", "LazySnapshot": "incremental", "extract_json": "extract",
          "parse_json_at": "extract", "read_flat_object": "flatline", "rewrite_json": "lenient"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
