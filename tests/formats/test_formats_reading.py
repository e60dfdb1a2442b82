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


def test_the_tokenizer_holds_no_reference_count_trick():
    """The streaming parser reads; `snapshots.py` alone extends copies by their reference counts."""
    from pathlib import Path

    source = Path(reading.__file__).parent
    assert "getrefcount" not in (source / "incremental.py").read_text(encoding="utf-8")
    assert "getrefcount" in (source / "snapshots.py").read_text(encoding="utf-8")


def test_snapshots_extended_or_fresh_are_equal(monkeypatch):
    """The trick against the plain way: every chunk's snapshot is the same with copies reused or not."""
    import json

    import dotprompt.formats.reading.snapshots as snapshots

    text = json.dumps({"rows": [{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(60)], "end": "x" * 50})

    def outputs() -> list[str]:
        parser = reading.IncrementalJsonParser()
        seen = []
        for i in range(0, len(text), 7):
            parser.advance(text[i : i + 7])
            seen.append(json.dumps(parser.snapshot_copy()))
        return seen

    reused = outputs()
    monkeypatch.setattr(snapshots, "_COUNTS_REFS", False)
    assert outputs() == reused and json.loads(reused[-1]) == json.loads(text)
