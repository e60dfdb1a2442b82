"""InputFile: rows read lazily with the same keys, checks and messages as a file read whole."""

from __future__ import annotations

import pytest

from dotprompt.batch.runner import InputFile, read_rows
from dotprompt.errors import BatchInputError


def test_streamed_rows_have_the_keys_of_rows_read_whole(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"n": 1}\n{"n": 2}\n{"n": 1}\n\n{"id": "x", "n": 1}\n{"n": 1}')
    streamed = InputFile(path)
    assert streamed.check() == 5
    rows = list(streamed)
    assert [row.number for row in rows] == [1, 2, 3, 5, 6]
    assert rows[0].key.startswith("sha256:") and rows[2].key == rows[0].key + "#2" and rows[4].key == rows[0].key + "#3"
    assert rows[3].key == 'id:"x"'
    assert [row.key for row in read_rows(path)] == [row.key for row in rows]
    assert [row.key for row in streamed] == [row.key for row in rows]  # iterating again reads the file again


def test_a_repeated_id_is_found_before_any_row_runs(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": 7}\n{"id": 8}\n{"id": 7}\n')
    with pytest.raises(BatchInputError, match=r"in.jsonl:3: the id 7 was already used on line 1"):
        InputFile(path).check()
