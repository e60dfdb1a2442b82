"""The tolerant JSON readers live in one subpackage (`dotprompt/formats/reading/`); the import paths
users and other packages had keep working, and give the very same objects."""

from __future__ import annotations

import importlib

import dotprompt.formats as formats
import dotprompt.formats.reading as reading


def test_the_public_names_are_the_readers_own():
    assert formats.extract_json is reading.extract_json
    assert formats.IncrementalJsonParser is reading.IncrementalJsonParser


def test_extract_json_still_imports_from_its_old_module():
    old = importlib.import_module("dotprompt.formats.extract")
    assert old.extract_json is reading.extract_json
    assert old.extract_json('```json\n{"a": 1,}\n```').value == {"a": 1}
