"""Batches: one prompt over the rows of a JSONL file (`run_batch`), the providers' batch APIs (`api/`), Ray.

The names below load on first use (the runner brings the generate loop); type checkers read them from
the `TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {"BatchReport": ".runner", "InputFile": ".runner", "Row": ".runner", "read_rows": ".runner",
         "run_batch": ".runner"}

__all__ = ["BatchReport", "InputFile", "Row", "read_rows", "run_batch"]

if TYPE_CHECKING:
    from .runner import BatchReport, InputFile, Row, read_rows, run_batch


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name], __name__), name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
