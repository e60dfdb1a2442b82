"""Gold datasets: JSON lines and CSV read into rows; every bad file a DatasetError naming file and line.

Hostile files (a huge line, deep nesting) run in a child process with time and memory limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotprompt.errors import DatasetError
from dotprompt.evals.datasets import read_dataset
from dotprompt.evals.limits import EVAL_MAX_DEPTH, EVAL_MAX_ROW_BYTES
from tests.isolation import assert_finishes


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def row(ident, expected=None, **extra) -> str:
    return json.dumps({"id": ident, "input": {"text": f"doc {ident}"}, "expected": expected or {"total": 1}, **extra})


def test_jsonl_rows_keep_ids_inputs_expected_and_lines(tmp_path):
    path = write(tmp_path, "gold.jsonl", "\ufeff" + row("a") + "\n\n" + row(7, {"total": 2.5}) + "\n")
    rows = read_dataset(path)
    assert [(r.id, r.input, r.expected, r.line) for r in rows] == [
        ("a", {"text": "doc a"}, {"total": 1}, 1), ("7", {"text": "doc 7"}, {"total": 2.5}, 3)]


@pytest.mark.parametrize(("lines", "message"), [
    ([row("a"), "{not json"], "gold.jsonl:2: not valid JSON"),
    ([row("a"), row("b"), row("a")], "gold.jsonl:3: the id 'a' was already used on line 1"),
    (["[1, 2]"], "gold.jsonl:1: a row must be a JSON object"),
    ([json.dumps({"id": True, "input": {}, "expected": {}})], "gold.jsonl:1: `id` must be a non-empty string"),
    ([json.dumps({"id": "x", "input": "text", "expected": {}})], "gold.jsonl:1: row 'x': `input` must be an object"),
    ([json.dumps({"id": "x", "input": {}})], "gold.jsonl:1: row 'x' has no `expected`"),
    ([json.dumps({"id": "x", "input": {}, "expected": {}, "expect": 1})], "gold.jsonl:1: unknown key(s) 'expect'"),
    ([], "gold.jsonl: the dataset has no rows"),
])
def test_bad_jsonl_names_file_and_line(tmp_path, lines, message):
    path = write(tmp_path, "gold.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_not_utf8_and_missing_file(tmp_path):
    path = write(tmp_path, "gold.jsonl", row("a").encode() + b"\n" + b'{"id": "\xff"}\n')
    with pytest.raises(DatasetError, match=r"gold.jsonl:2: not UTF-8 text \(byte 0xff"):
        read_dataset(path)
    with pytest.raises(DatasetError, match="no such dataset file"):
        read_dataset(tmp_path / "nope.jsonl")


def test_csv_columns_nest_and_type_expected_cells(tmp_path):
    path = write(tmp_path, "gold.csv", 'id,input.text,expected.total,expected.vendor.name,expected.note,expected.items\n'
                                       'a,"42",42.50,ACME,,"[{""d"": ""x""}]"\n'
                                       'b,hello,007,"Bob, Ltd",n/a,[]\n')
    rows = read_dataset(path)
    assert rows[0].input == {"text": "42"}  # input cells stay text
    assert rows[0].expected == {"total": 42.5, "vendor": {"name": "ACME"}, "note": None, "items": [{"d": "x"}]}  # empty: null
    assert rows[1].expected == {"total": "007", "vendor": {"name": "Bob, Ltd"}, "note": "n/a", "items": []}
    assert [r.line for r in rows] == [2, 3]


@pytest.mark.parametrize(("text", "message"), [
    ("input.text,expected.total\nx,1\n", "gold.csv:1: no `id` column"),
    ("id,inputs.text\na,1\n", "gold.csv:1: unknown column 'inputs.text'"),
    ("id,input.text\na,1\nb\n", "gold.csv:3: 1 cells for 2 columns"),
    ("id,input.text\na,1\na,2\n", "gold.csv:3: the id 'a' was already used on line 2"),
    ("id,expected\na,{bad\n", "gold.csv:2: column 'expected': not valid JSON"),
    ("id,expected.a,expected.a.b\nx,1,2\n", "gold.csv:2: column expected.a.b nests inside a column that holds a value"),
])
def test_bad_csv_names_file_and_line(tmp_path, text, message):
    path = write(tmp_path, "gold.csv", text)
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert message in str(caught.value)


@pytest.mark.slow
def test_a_huge_line_is_refused_without_holding_it(tmp_path):
    path = tmp_path / "gold.jsonl"
    with path.open("wb") as out:
        out.write(row("a").encode() + b"\n")
        out.write(b'{"id": "b", "input": {"text": "' + b"x" * (EVAL_MAX_ROW_BYTES * 6) + b'"}}\n')
    outcome = assert_finishes(f"""
        import json
        from dotprompt.errors import DatasetError
        from dotprompt.evals.datasets import read_dataset
        try:
            read_dataset({str(path)!r})
        except DatasetError as exc:
            print(json.dumps(str(exc)))
        """, memory_mb=300, timeout=60)
    assert f"gold.jsonl:2: the line is longer than {EVAL_MAX_ROW_BYTES:,} bytes" in outcome.json()


@pytest.mark.slow
@pytest.mark.parametrize("depth", [EVAL_MAX_DEPTH + 1, 200_000])
def test_deep_nesting_is_refused_in_jsonl_and_csv(tmp_path, depth):
    deep = "[" * depth + "]" * depth
    jsonl = write(tmp_path, "gold.jsonl", row("a") + "\n" + '{"id": "b", "input": {}, "expected": ' + deep + "}\n")
    csv_file = write(tmp_path, "gold.csv", f'id,expected.x\na,"{deep}"\n')
    outcome = assert_finishes(f"""
        import json
        from dotprompt.errors import DatasetError
        from dotprompt.evals.datasets import read_dataset
        found = []
        for path in ({str(jsonl)!r}, {str(csv_file)!r}):
            try:
                read_dataset(path)
                found.append("read")
            except DatasetError as exc:
                found.append(str(exc))
        print(json.dumps(found))
        """, memory_mb=600, timeout=60)
    jsonl_error, csv_error = outcome.json()
    assert f"gold.jsonl:2: nested deeper than {EVAL_MAX_DEPTH} levels" in jsonl_error
    assert f"gold.csv:2: column 'expected.x': nested deeper than {EVAL_MAX_DEPTH} levels" in csv_error


@pytest.mark.slow
def test_many_rows_read_in_a_child_within_limits(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(row(i) + "\n" for i in range(50_000)))
    outcome = assert_finishes(f"""
        import json
        from dotprompt.evals.datasets import read_dataset
        print(json.dumps(len(read_dataset({str(path)!r}))))
        """, memory_mb=600, timeout=60)
    assert outcome.json() == 50_000
