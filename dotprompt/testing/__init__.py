"""Prompt tests: cases beside prompts, recorded model replies, assertions, reports, the pytest plugin.

The names below load on first use, so that reading a test file (`dotprompt check` does) brings
none of the runner and the generate loop it needs; type checkers read them from the `TYPE_CHECKING` block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names

_LAZY = {"CaseFailedError": "..errors", "RecordingMissingError": "..errors", "TestFileError": "..errors",
         "Expectations": ".cases", "TestCase": ".cases", "load_test_file": ".cases",
         "RecordingModel": ".recording", "RecordingStore": ".recording", "request_key": ".recording",
         "CaseResult": ".runner", "CaseSummary": ".runner", "TestRun": ".runner"}

__all__ = ["CaseFailedError", "CaseResult", "CaseSummary", "Expectations", "RecordingMissingError", "RecordingModel",
           "RecordingStore", "TestCase", "TestFileError", "TestRun", "load_test_file", "request_key"]

if TYPE_CHECKING:
    from ..errors import CaseFailedError, RecordingMissingError, TestFileError
    from .cases import Expectations, TestCase, load_test_file
    from .recording import RecordingModel, RecordingStore, request_key
    from .runner import CaseResult, CaseSummary, TestRun


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)
