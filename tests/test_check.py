"""The checker behind `dotprompt check` (`dotprompt/lint/check.py`), called as a library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dotprompt.formats import Format, define_format, get_format, list_formats
from dotprompt.lint.check import PARALLEL_FROM, check_library


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
    undeclared = len(range(0, PARALLEL_FROM + 6, 7))  # an undeclared variable is an error
    assert sum(d.level == "error" for d in serial) == undeclared + 2


def test_library_with_definitions_in_code_is_checked_in_process(folder):
    for i in range(PARALLEL_FROM):
        folder.write(f"p{i}.prompt", "{% include 'shared' %}")
    lib = folder.library()
    lib.define_partial("shared", "defined in code")
    assert check_library(lib, jobs=2) == []


def test_check_reads_test_files_against_the_prompts_schemas(folder):
    folder.write("inv.prompt", "---\ninput:\n  schema:\n    text: string\n    lang?: string\n  default:\n    lang: en\n"
                 "output:\n  schema:\n    total: number\n    items(array):\n      sku: string\n---\n{{ text }} {{ lang }}")
    folder.write("inv.test.yaml", "cases:\n  - name: good\n    input: {text: a}\n    expect:\n      paths:\n"
                 "        - {path: '$.items[0].sku', equals: x}\n"
                 "  - name: bad input\n    input: {txt: a}\n"
                 "  - name: bad path\n    input: {text: a}\n    expect:\n      paths:\n"
                 "        - {path: $.totl, gte: 1}\n        - {path: '$.total[0]', gte: 1}\n")
    folder.write("ghost.test.yaml", "cases:\n  - name: orphan\n")
    folder.write("broken.test.yaml", "cases:\n  - name: x\n    expect: {outptu: 1}\n")
    found = [d.format() for d in check_library(folder.library(), jobs=1)]
    path = folder.path
    assert f"{path}/inv.test.yaml:7: error: case 'bad input': input $: 'text' is a required property  " \
           "[invalid-test-case]" in found
    assert any(f.startswith(f"{path}/inv.test.yaml:7: error: case 'bad input': input $: Additional properties") for f in found)
    assert f"{path}/inv.test.yaml:13: error: case 'bad path': path $.totl cannot exist in the output schema: " \
           "no field 'totl' (the schema has total, items)  [invalid-test-case]" in found
    assert f"{path}/inv.test.yaml:14: error: case 'bad path': path $.total[0] cannot exist in the output schema: " \
           "[0] asked of a value of type number  [invalid-test-case]" in found
    assert any(f.startswith(f"{path}/ghost.test.yaml:2: error: case 'orphan': prompt 'ghost' not found") for f in found)
    assert any(f.startswith(f"{path}/broken.test.yaml:3:") and "unknown assertion `outptu`" in f for f in found)
    assert not any("'good'" in f for f in found)


def test_a_format_defined_in_code_is_known_to_check(folder):
    folder.write("p.prompt", "---\noutput:\n  format: check-test-format\n---\nx")
    assert [d.message for d in check_library(folder.library(), jobs=1)] == [
        f"unknown output format 'check-test-format' (known formats: {', '.join(list_formats())})"]
    text = get_format("text")
    define_format(Format(name="check-test-format", content_type=text.content_type, constrained=False,
                         default_instructions=True, handler=text.handler))
    assert check_library(folder.library(), jobs=1) == []


def test_an_enum_schema_without_values_is_a_warning_and_a_schema_the_format_refuses_an_error(folder):
    folder.write("mood.prompt", "---\noutput:\n  format: enum\n  schema:\n    type: string\n---\nHow do I feel?")
    folder.write("listed.prompt", "---\noutput:\n  format: enum\n  schema:\n    type: string\n    enum: [up, down]\n---\nx")
    folder.write("lines.prompt", "---\noutput:\n  format: jsonl\n  schema:\n    type: string\n---\nx")
    found = {Path(d.path).name: d for d in check_library(folder.library(), jobs=1)}
    assert sorted(found) == ["lines.prompt", "mood.prompt"]
    assert (found["mood.prompt"].level, found["mood.prompt"].line) == ("warning", 4)
    assert "lists no values" in found["mood.prompt"].message
    assert found["lines.prompt"].level == "error" and "array-of-objects" in found["lines.prompt"].message


@pytest.mark.slow
def test_a_library_with_definitions_in_code_is_checked_in_forked_workers_that_see_them(tmp_path):
    # In a fresh (single-threaded) interpreter: the forked workers check the library itself, so a partial
    # that only a resolver in code provides is found there, and the findings match the serial check's.
    for i in range(PARALLEL_FROM + 4):
        (tmp_path / f"p{i:03}.prompt").write_text("{% include 'shared' %}{{ x }}" if i % 5 else "{% include 'gone' %}")
    script = f"""
import json, os
from dotprompt import PromptLibrary
from dotprompt.lint.check import check_library

pids = {str(tmp_path / "pids")!r}
def resolver(name):
    with open(pids, "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    return "shared text" if name == "shared" else None

def check(jobs):
    lib = PromptLibrary({str(tmp_path)!r}, partial_resolver=resolver)
    return [d.format() for d in check_library(lib, jobs=jobs)]

serial = check(1)
open(pids, "w").close()
parallel = check(2)
print(json.dumps({{"same": parallel == serial, "errors": len(serial),
                   "workers": len(set(open(pids).read().split()) - {{str(os.getpid())}})}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"same": True, "errors": len(range(0, PARALLEL_FROM + 4, 5)), "workers": 2}


@pytest.mark.slow
def test_a_parallel_check_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    # The parent freezes its objects while the forked workers run (their collections skip them): after the
    # check, none stays frozen; and a freeze of the application's own is left alone.
    for i in range(PARALLEL_FROM + 2):
        (tmp_path / f"p{i:03}.prompt").write_text("{{ x }}")
    script = f"""
import gc, json
from dotprompt import PromptLibrary
from dotprompt.lint.check import check_library

def collected(item):  # frozen objects are left out of gc.get_objects()
    return any(tracked is item for tracked in gc.get_objects())

kept = [[]]
check_library(PromptLibrary({str(tmp_path)!r}), jobs=2)
after_ours = [gc.get_freeze_count(), collected(kept)]
gc.freeze()
check_library(PromptLibrary({str(tmp_path)!r}), jobs=2)
print(json.dumps([*after_ours, collected(kept)]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [0, True, False]


def test_an_unknown_filter_or_test_is_an_error_at_its_line_with_the_close_names(folder):
    folder.write("typo.prompt", "---\nmodel: x/y\n---\nfirst line\n{{ x | tojsn }}")
    folder.write("test.prompt", "{{ x is evn }}")  # inside an if, jinja leaves it to render time
    found = {d.path.rsplit("/", 1)[-1]: d for d in check_library(folder.library(), jobs=1)}
    typo, test = found["typo.prompt"], found["test.prompt"]
    assert (typo.level, typo.line) == ("error", 5) and "No filter named 'tojsn'" in typo.message
    assert "'tojson'" in typo.message and "define_helper" in typo.message
    assert test.level == "error" and "No test named 'evn'" in test.message and "'even'" in test.message
