"""The language server's parts without a client (fast): ranges, the analysis worker, completion, hover,
edits, and `dotprompt lsp` without the extra."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from dotprompt.lint.check import Diagnostic
from dotprompt.lsp.analysis import Analyser, Job
from dotprompt.lsp.completion import complete
from dotprompt.lsp.edits import code_actions, rename
from dotprompt.lsp.hover import fenced, hover
from dotprompt.lsp.project import Project, included_partials
from dotprompt.lsp.ranges import Span, span_of
from tests.conftest import ROOT

TEXT = """---
input:
  schema:
    customer:
      name: string, the name
      email: string
    count?: integer
  default:
    count: 3
---
Hi {{ customer.name }}, {{ count }}
"""


def test_a_range_covers_the_word_at_checks_column_else_the_quoted_name_else_the_line():
    lines = ["  modle: x", "😀 {{ nmae }}", "  plain text  "]
    assert span_of(Diagnostic("p", 1, 3, "warning", "unknown key `modle`", code="unknown-key"), lines) == Span(0, 2, 7)
    undeclared = Diagnostic("p", 2, None, "error", "variable `nmae` is not declared", code="undeclared-variable")
    assert span_of(undeclared, lines) == Span(1, 5, 9)
    assert span_of(Diagnostic("p", 3, None, "error", "no name here", code="invalid-prompt-file"), lines) == Span(2, 2, 12)
    assert span_of(Diagnostic("p", None, None, "error", "whole file", code="invalid-prompt-file"), lines) == Span(0, 0, 10)
    assert span_of(Diagnostic("p", 99, None, "error", "past the end", code="invalid-prompt-file"), lines) == Span(0, 0, 10)


def _analyser(analyse, timeout=5.0, debounce=0.0):
    published, reported, done = [], [], threading.Event()

    def publish(job, result):
        published.append((job.key, job.version, result))
        done.set()

    def report(job, seconds):
        reported.append((job.key, job.version))
        done.set()
    return Analyser(analyse, publish, report, timeout=timeout, debounce=debounce), published, reported, done


def test_a_lone_edit_is_analysed_at_once_and_only_a_close_follower_waits_for_the_debounce():
    analyser, published, _, done = _analyser(lambda job: job.version, debounce=600.0)
    analyser.submit(Job("a", 1, "first"))  # nothing before it: no reason to wait
    assert done.wait(20) and published == [("a", 1, 1)]
    done.clear()
    analyser.submit(Job("a", 2, "second"))  # right behind the first: held for the (here endless) debounce
    analyser.submit(Job("b", 1, "other file"))  # another file's first edit is not held by it
    assert done.wait(20) and published[1:] == [("b", 1, 1)]
    assert not analyser.idle()  # "a" 2 still waits
    analyser.close()


def test_a_slow_analysis_is_stopped_and_reported_and_the_next_one_runs():
    def analyse(job):
        while job.text == "forever":  # pure Python: the stop lands here
            pass
        return job.text

    analyser, published, reported, done = _analyser(analyse, timeout=0.2)
    analyser.submit(Job("a", 1, "forever"))
    assert done.wait(20) and reported == [("a", 1)]
    done.clear()
    analyser.submit(Job("a", 2, "quick"))
    assert done.wait(20) and published == [("a", 2, "quick")]
    analyser.close()


def test_a_newer_text_stops_the_running_analysis_of_its_file():
    started = threading.Event()

    def analyse(job):
        started.set()
        deadline = time.monotonic() + 30
        while job.version == 1 and time.monotonic() < deadline:
            pass
        return job.version

    analyser, published, reported, done = _analyser(analyse)
    analyser.submit(Job("a", 1, "old"))
    assert started.wait(20)
    analyser.submit(Job("a", 2, "new"))
    assert done.wait(20)
    assert published == [("a", 2, 2)] and reported == []  # version 1 never published: it was stopped
    analyser.close()


def test_includes_are_read_in_both_engines():
    assert included_partials("{{> header}} {{#> layout}} {% include 'a/b' %} {%- include \"c\" %}") == {
        "header", "layout", "a/b", "c"}


def test_completion_of_nested_fields_and_variables_without_a_client():
    body = TEXT.split("\n").index("Hi {{ customer.name }}, {{ count }}")
    fields = complete(None, "x.prompt", TEXT, body, len("Hi {{ customer."))
    variables = complete(None, "x.prompt", TEXT, body, len("Hi {{ "))
    assert [i.label for i in fields] == ["name", "email"] and fields[0].documentation == "the name"
    assert [i.label for i in variables][:2] == ["customer", "count"]
    assert complete(None, "x.prompt", TEXT, body, len("Hi ")) == []  # plain text: nothing to offer


def test_hover_shows_the_default_and_fences_hold_any_backticks():
    body = TEXT.split("\n").index("Hi {{ customer.name }}, {{ count }}")
    shown = hover(None, "x.prompt", TEXT, body, len("Hi {{ customer.name }}, {{ c"))
    assert shown is not None and "default: 3" in shown
    assert fenced("a ```` b").startswith("`````\n") and fenced("a ```` b").endswith("\n`````")


def test_hover_escapes_markdown_from_the_file():
    text = "---\ninput:\n  schema:\n    x: string, <img src=1> **bold** [link](http://e)\n---\n{{ x }}\n"
    shown = hover(None, "x.prompt", text, 5, 3)
    assert shown is not None
    prose = shown.split("```")[0]  # the JSON Schema below is in a code fence: shown as text
    assert "<img" not in prose and "\\*\\*bold\\*\\*" in prose and "\\[link\\]" in prose


def test_rename_refuses_a_bad_name_and_code_actions_fix_the_typo(tmp_path):
    project = Project(tmp_path, tmp_path)
    body = TEXT.split("\n").index("Hi {{ customer.name }}, {{ count }}")
    assert "no variable name" in (rename(project, "x.prompt", TEXT, body, 8, "9x").error or "")
    actions = code_actions("x.prompt", TEXT, [("unknown key `modle` (did you mean `model`?)", 1, 0, 5)])
    assert [a.title for a in actions] == ["Change to `model`"] and actions[0].edits[0].new_text == "model"


def test_lsp_without_the_extra_says_what_to_install(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "pygls.py").write_text("raise ModuleNotFoundError('No module named pygls', name='pygls')\n")
    # a real process: this one has pygls loaded already (pytest-lsp's plugin)
    done = subprocess.run([sys.executable, "-m", "dotprompt", "lsp"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}"},
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "dotprompt: error: the language server needs the lsp extra: pip install " \
                                  "'dotprompt-toolkit[lsp]'"


def test_a_test_files_paths_are_completed_from_its_prompts_output_schema(tmp_path):
    (tmp_path / "order.prompt").write_text(
        "---\noutput:\n  schema:\n    title: string\n    items(array):\n      sku: string\n---\nGo\n", encoding="utf-8")
    test_file = tmp_path / "order.test.yaml"
    text = "cases:\n  - name: a\n    expect:\n      paths:\n        - path: $.\n"
    test_file.write_text(text, encoding="utf-8")
    found = complete(None, str(test_file), text, 4, len("        - path: $."))
    assert [i.label for i in found] == ["$.title", "$.items", "$.items[*]", "$.items[*].sku"]
    assignments = complete(None, str(test_file), "paths:\n  - \n", 1, 4)
    assert {"equals", "contains", "matches"} <= {i.label for i in assignments}


def test_schema_names_are_completed_from_the_projects_modules_read_unrun(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nschemas = ["shapes"]\n', encoding="utf-8")
    (tmp_path / "shapes.py").write_text("raise SystemExit('never run')\nclass Order:\n    pass\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project.open(tmp_path)
    text = "---\noutput:\n  schema: \n---\nGo\n"
    assert [i.label for i in complete(project, str(tmp_path / "a.prompt"), text, 2, len("  schema: "))] == ["Order"]


def test_hover_on_a_model_shows_what_its_provider_declares_it_can_do():
    def shown(model: str) -> str:
        found = hover(None, "x.prompt", f"---\nmodel: {model}\n---\nhi\n", 1, len("model: ") + 3)
        assert found is not None
        return found

    flash, three = shown("googleai/gemini-2.5-flash"), shown("googleai/gemini-3-pro-preview")
    assert "- tool calls: yes" in flash and "- media input: yes" in flash
    assert "- constrained output: native JSON schema, except with tools (then instructions)" in flash
    assert "- constrained output: native JSON schema, with tools too" in three  # Gemini 3's own info
    assert "Ollama" in shown("ollama/llama3.2")
    assert "constrained output" not in shown("mystery/x")  # no such provider: nothing invented


def test_hover_on_a_code_defined_tool_shows_its_description_read_unrun(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["shop"]\n', encoding="utf-8")
    (tmp_path / "shop.py").write_text(
        "raise SystemExit('never run')\n"
        "@tool\ndef lookup_order(order_id: str) -> dict:\n    \"\"\"Find an order by id.\n\n    Returns <b>it</b>.\"\"\"\n"
        "@tool(name='refund', description='Refund **an** order.')\ndef do_refund(order_id: str) -> None:\n"
        "    \"\"\"Not this one.\"\"\"\n"
        "def cancel(order_id: str) -> None:\n    \"\"\"Cancel an order.\"\"\"\n"
        "CANCEL = define_tool(cancel, input_schema={})\n"
        "@tool\ndef undocumented() -> None:\n    pass\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project.open(tmp_path)
    text = "---\ntools:\n  - lookup_order\n  - refund\n  - cancel\n  - undocumented\n---\nGo\n"

    def shown(line: int) -> str:
        found = hover(project, str(tmp_path / "a.prompt"), text, line, 5)
        assert found is not None
        return found

    assert shown(2).endswith("\n\nFind an order by id.<br><br>Returns &lt;b&gt;it&lt;/b&gt;.")  # escaped as Markdown
    assert "Refund \\*\\*an\\*\\* order." in shown(3) and "Not this one" not in shown(3)
    assert "Cancel an order." in shown(4)
    assert "defined in the project's code" in shown(5) and "no description" in shown(5)
