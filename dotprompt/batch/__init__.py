"""Batches: one prompt over the rows of a JSONL file (`run_batch`), the providers' batch APIs (`api/`), Ray.

The names below load on first use (the runner brings the generate loop); type checkers read them from
the `TYPE_CHECKING` block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names
from ..errors import BatchInputError, BatchJobError, BatchOutputError

_LAZY = {"BatchReport": ".runner", "InputFile": ".rows", "Row": ".rows", "read_rows": ".rows", "run_batch": ".runner"}

__all__ = ["BatchInputError", "BatchJobError", "BatchOutputError", "BatchReport", "InputFile", "Row", "read_rows",
           "run_batch"]

if TYPE_CHECKING:
    from .rows import InputFile, Row, read_rows
    from .runner import BatchReport, run_batch


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
