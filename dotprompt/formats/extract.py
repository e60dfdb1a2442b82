"""The old home of `extract_json`, which now lives with the other tolerant JSON readers
(`formats/reading/extract.py`). Import it from `dotprompt.formats`; this path still works."""

from __future__ import annotations

from .reading.extract import extract_json

__all__ = ["extract_json"]
