"""Prompt tests: cases beside prompts, recorded model replies, assertions, reports, the pytest plugin."""

from ..errors import CaseFailedError, RecordingMissingError, TestFileError
from .cases import Expectations, TestCase, load_test_file
from .recording import RecordingModel, RecordingStore, request_key
from .runner import CaseResult, CaseSummary, TestRun

__all__ = ["CaseFailedError", "CaseResult", "CaseSummary", "Expectations", "RecordingMissingError", "RecordingModel",
           "RecordingStore", "TestCase", "TestFileError", "TestRun", "load_test_file", "request_key"]
