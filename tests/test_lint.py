"""The linter behind `dotprompt check`, called as a library."""

from __future__ import annotations

from dotprompt.lint import PARALLEL_FROM, check_library


def test_parallel_check_reports_exactly_what_the_serial_check_does(folder):
    for i in range(PARALLEL_FROM + 6):
        declared = "---\ninput:\n  schema:\n    a: string\n---\n{{ a }} {{ b" + str(i) + " }}"
        body = declared if i % 7 == 0 else f"plain {i}"
        folder.write(f"ns{i % 3}/p{i:03}.prompt", body)
    folder.write("broken.prompt", "---\nmaxTurns: zero\n---\nx")
    folder.write("_part.prompt", "{% if %}")
    lib = folder.library()
    serial = check_library(lib, jobs=1)
    parallel = check_library(folder.library(), jobs=2)
    assert parallel == serial
    assert sum(d.level == "warning" for d in serial) == len(range(0, PARALLEL_FROM + 6, 7))
    assert sum(d.level == "error" for d in serial) == 2


def test_library_with_definitions_in_code_is_checked_in_process(folder):
    for i in range(PARALLEL_FROM):
        folder.write(f"p{i}.prompt", "{% include 'shared' %}")
    lib = folder.library()
    lib.define_partial("shared", "defined in code")
    assert check_library(lib, jobs=2) == []
