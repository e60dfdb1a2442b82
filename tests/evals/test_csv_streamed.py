"""A CSV dataset is read a line at a time, not whole: a 96 MB CSV peaked at 783 MB RSS (the bytes, the
decoded text and a StringIO copy at once), streamed it peaks at 224 MB, under JSON lines of the same
rows (`python bench/bench_dataset_memory.py --mb 96`). What streaming must keep: line numbers,
quoted newlines, `\\r` line ends, the BOM, and errors naming the line."""

from __future__ import annotations

import pytest

from dotprompt.errors import DatasetError
from dotprompt.evals.datasets import read_dataset
from dotprompt.evals.limits import EVAL_MAX_ROW_BYTES
from tests.isolation import assert_finishes


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.slow
def test_a_24_mb_csv_reads_under_a_160_mb_address_space(tmp_path):
    text = ("Invoice from ACME GmbH, Musterstrasse 1, 12345 Berlin. Total due: 42.50 EUR. " * 13)[:1000]
    path = tmp_path / "gold.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write("id,input.text,expected.total\r\n")
        out.writelines(f'r{n},"{text} #{n}",{n}.5\r\n' for n in range(24_000))
    # The whole-file read peaked at ~234 MB of address space here, the streamed one at ~95 MB.
    found = assert_finishes(f"""
        import json
        from dotprompt.evals.datasets import read_dataset
        rows = read_dataset({str(path)!r})
        print(json.dumps([len(rows), rows[-1].id, rows[-1].line, rows[-1].expected]))
        """, timeout=60, memory_mb=160).json()
    assert found == [24_000, "r23999", 24_001, {"total": 23999.5}]


def test_quoted_newlines_cr_line_ends_and_the_bom_read_as_before(tmp_path):
    path = write(tmp_path, "gold.csv", b'\xef\xbb\xbfid,input.text,expected.n\r"a","two\r\nlines",1\r"b",x,2\r\n\r\nc,y,3')
    rows = read_dataset(path)
    assert [(r.id, r.input["text"], r.expected, r.line) for r in rows] == [
        ("a", "two\r\nlines", {"n": 1}, 3), ("b", "x", {"n": 2}, 4), ("c", "y", {"n": 3}, 6)]


def test_a_byte_that_is_not_utf8_names_its_line(tmp_path):
    path = write(tmp_path, "gold.csv", b"id,input.text\na,1\nb,2\nc,\xff\n" + b"d,4\n" * 10_000)
    with pytest.raises(DatasetError, match=r"gold.csv:4: not UTF-8 text \(byte 0xff at column 3\)"):
        read_dataset(path)


@pytest.mark.slow
def test_a_record_longer_than_the_row_limit_is_refused_naming_its_line(tmp_path):
    cells = ",".join(["x"] * (EVAL_MAX_ROW_BYTES // 2 + 10))  # small cells: only the record's length is too much
    path = write(tmp_path, "gold.csv", b"id,input.text\na,1\n" + cells.encode() + b"\n")
    outcome = assert_finishes(f"""
        from dotprompt.errors import DatasetError
        from dotprompt.evals.datasets import read_dataset
        try:
            read_dataset({str(path)!r})
        except DatasetError as exc:
            print(exc)
        """, timeout=60, memory_mb=400)
    assert "gold.csv:3: the record is longer than" in outcome.stdout, outcome.stdout
