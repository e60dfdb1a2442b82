"""The test-file loader reports every bad case and assertion of a file, each at its own line."""

from __future__ import annotations

import pytest

from dotprompt.lint.check import check_test_file
from dotprompt.testing import TestFileError, load_test_file

PROMPT = "---\ninput:\n  schema:\n    text: string\n---\n{{ text }}"
MANY = """cases:
  - name: a
    inptu: {text: x}
  - name: b
    expect:
      outptu: {}
  - name: c
    expect:
      paths:
        - {path: $.a, bigger: 3}
        - {path: $.b, equals: 1}
        - {path: 'a..b', equals: 1}
  - name: c
  - name: fine
    input: {text: y}
"""


def test_every_bad_case_is_reported(folder):
    folder.write("p.prompt", PROMPT)
    path = folder.write("p.test.yaml", MANY)
    with pytest.raises(TestFileError) as caught:
        load_test_file(path, folder.path)
    errors = caught.value.errors
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [
        (3, "unknown key `inptu` in test case"),
        (6, "case 'b'"),
        (10, "case 'c'"),
        (12, "case 'c'"),
        (13, "two cases are named 'c'; case names must be unique"),
    ], [e.format() for e in errors]
    assert "unknown assertion `outptu`" in errors[1].message and "exactly one of" in errors[2].message
    # The exception itself is the first problem, and its text lists them all, one per line.
    assert (caught.value.line, caught.value.path) == (3, str(path))
    assert str(caught.value).splitlines() == [e.format() for e in errors]


def test_one_problem_reads_as_before(folder):
    path = folder.write("p.test.yaml", "cases:\n  - name: a\n    inptu: {}\n")
    with pytest.raises(TestFileError) as caught:
        load_test_file(path, folder.path)
    assert str(caught.value) == (f"{path}:3:5: error: unknown key `inptu` in test case "
                                 "(did you mean `input`?)")
    assert len(caught.value.errors) == 1


def test_an_unclosed_bracket_is_reported_where_it_opens(folder):
    path = folder.write("p.test.yaml", "cases:\n  - [oops\n")
    with pytest.raises(TestFileError) as caught:
        load_test_file(path, folder.path)
    assert caught.value.line == 2 and "never closed" in caught.value.message


def test_check_reports_every_problem_of_a_test_file(folder):
    folder.write("p.prompt", PROMPT)
    path = folder.write("p.test.yaml", MANY)
    found = check_test_file(folder.library(), path)
    assert [d.line for d in found] == [3, 6, 10, 12, 13]
    assert all(d.level == "error" and d.path == str(path) for d in found)
