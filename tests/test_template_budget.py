"""Template resource exhaustion: hostile templates meet a render budget, never a hang or a blow-up.

Every hostile attempt runs in a child process with a time and memory limit (`isolation`), so a
hang or a runaway allocation fails its test instead of stalling the run. Each goes through a path
users hit (`PromptLibrary.load(...).render`, `from_source`, the `dotprompt` command) and must end
in a RenderError (or PromptFileError) naming the file and the template line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.isolation import ROOT, assert_finishes

TIMEOUT = float(os.environ.get("DOTPROMPT_HOSTILE_TIMEOUT", "60"))  # seconds a hostile child may take
FRONT = "---\nmodel: echo\n---\n"  # the body starts on line 4

CHILD = """
import json, pathlib, sys, tempfile
from dotprompt import PromptLibrary
from dotprompt.errors import PromptFileError, RenderError

TEXT = {text!r}
folder = pathlib.Path(tempfile.mkdtemp())
(folder / "hostile.prompt").write_text(TEXT, encoding="utf-8")
for name, content in {files!r}.items():
    (folder / name).write_text(content, encoding="utf-8")
stage = "load"
try:
    if {budget!r} is None:
        lib = PromptLibrary(folder, engine={engine!r})
    else:
        from dotprompt.settings import RenderBudget
        lib = PromptLibrary(folder, engine={engine!r}, render_budget=RenderBudget(**{budget!r}))
    if {via!r} == "from_source":
        prompt = lib.from_source(TEXT, "hostile")
    else:
        prompt = lib.load("hostile")
    stage = "render"
    rendered = prompt.render({input})
    text = "".join(part.text or "" for m in rendered.messages for part in m.content)
    print(json.dumps({{"ok": True, "chars": len(text)}}))
except (RenderError, PromptFileError) as exc:
    print(json.dumps({{"ok": False, "type": type(exc).__name__, "stage": stage, "message": str(exc),
                       "path": exc.path, "line": exc.line}}))
"""


def attempt(body: str, input: object = None, *, engine: str = "jinja2", via: str = "load",
            budget: dict | None = None, timeout: float = TIMEOUT, memory_mb: int = 1024,
            files: dict[str, str] | None = None) -> dict:
    # `input` is Python source evaluated in the child (large inputs would not fit on its command line);
    # `files` are more files of the prompt folder (partials), by name
    code = CHILD.format(text=FRONT + body, engine=engine, budget=budget, via=via, files=files or {},
                        input=input if isinstance(input, str) else repr(input))
    return assert_finishes(code, timeout=timeout, memory_mb=memory_mb).json()


def refused(result: dict, line: int, kind: str = "RenderError", *, words: str = "") -> None:
    assert not result["ok"], result
    assert result["type"] == kind, result
    assert result["line"] == line, result
    assert "hostile" in result["message"] and f":{line}:" in result["message"], result
    assert words in result["message"], result


# -- arithmetic: repetition and powers -------------------------------------------------------

def test_string_repetition_by_a_huge_input_number():
    result = attempt("Hello\n{{ x * n }}\n", {"x": "ab", "n": 10 ** 10})
    refused(result, 5, words="render budget")


def test_list_repetition_by_a_huge_number():
    refused(attempt("Hi\n{{ [1, 2] * n }}\n", {"n": 10 ** 10}), 5, words="render budget")


def test_huge_constant_power_neither_hangs_loading_nor_rendering():
    result = attempt("Hi\n{{ 10**(10**10) }}\n")
    assert result["stage"] == "render", result  # loading never evaluates it
    refused(result, 5, words="render budget")


def test_huge_constant_repetition_is_not_evaluated_at_load():
    result = attempt("Hi\n{{ 'ab' * 10000000000 }}\n")
    assert result["stage"] == "render", result
    refused(result, 5, words="render budget")


def test_power_of_input_numbers():
    refused(attempt("{{ b ** e }}\n", {"b": 7, "e": 10 ** 9}), 4, words="render budget")


def test_percent_format_with_a_huge_width():
    refused(attempt("A\n{{ '%01000000000d' % 1 }}\n"), 5, words="render budget")


def test_str_format_with_a_huge_width():
    refused(attempt("A\n{{ '{:>1000000000}'.format(1) }}\n"), 5, words="render budget")


@pytest.mark.parametrize("body", [
    "A\n{{ '{:{w}}'.format('x', w=n) }}\n",             # the width a keyword argument
    "A\n{{ '{1:{0[0]}}'.format([n], 'x') }}\n",         # the width an item of a positional argument
    "A\n{{ '{:.{p}f}'.format(1.5, p=n) }}\n",           # a precision
    "A\n{{ '{x:{w}}'.format_map({'x': 'y', 'w': n}) }}\n",
])
def test_str_format_with_a_nested_huge_width_is_refused_before_it_is_built(body):
    # 400 MB is far below what the billion characters would need: refused before building, not after
    refused(attempt(body, {"n": 10 ** 9}, memory_mb=400), 5, words="render budget")


@pytest.mark.slow
def test_string_methods_with_huge_widths():
    refused(attempt("A\n{{ 'x'.ljust(n) }}\n", {"n": 10 ** 9}), 5, words="render budget")
    refused(attempt("A\n{{ 'x'.center(1000000000) }}\n"), 5, words="render budget")


# -- filters ---------------------------------------------------------------------------------

def test_json_filter_with_a_huge_indent():
    refused(attempt("A\n{{ items|json(indent=10**9) }}\n", {"items": [1, 2]}), 5, words="indent")


def test_json_filter_with_a_huge_literal_indent_at_load():
    refused(attempt("A\n{{ [1, 2]|json(indent=1000000000) }}\n"), 5, words="indent")


@pytest.mark.slow
def test_width_filters_with_huge_widths():
    refused(attempt("A\n{{ 'x'|center(1000000000) }}\n"), 5, words="render budget")
    refused(attempt("A\n{{ 'a\\nb'|indent(1000000000) }}\n"), 5, words="render budget")
    refused(attempt("A\n{{ [1]|batch(1000000000, 'x')|list }}\n"), 5, words="render budget")


@pytest.mark.slow
def test_join_and_lipsum_that_multiply_the_text():
    refused(attempt("A\n{{ (s * 9000)|list|join(s * 9000) }}\n", {"s": "ab"}), 5, words="render budget")
    refused(attempt("A\n{{ (s * 9000).join(s * 9000) }}\n", {"s": "ab"}), 5, words="render budget")
    refused(attempt("A\n{{ lipsum(1000000000) }}\n"), 5, words="render budget")


def test_replace_that_multiplies_the_text():
    body = "A\n{% set s = 'x'|center(5000000) %}{{ s|replace('', s) }}\n"
    refused(attempt(body), 5, words="render budget")


# -- loops, macros, namespaces ---------------------------------------------------------------

@pytest.mark.slow
def test_nested_loops_that_print():
    body = "A\n{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxx{% endfor %}{% endfor %}\n"
    refused(attempt(body), 5, words="render budget")


@pytest.mark.slow
def test_nested_loops_that_print_nothing_meet_the_time_budget():
    body = "A\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n"
    refused(attempt(body, budget={"max_seconds": 1.0}), 5, words="seconds")


@pytest.mark.slow
def test_nested_loops_in_a_set_block_meet_the_time_budget():
    body = ("A\n{% set s %}{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}"
            "{% endfor %}{% endset %}{{ s|length }}\n")
    refused(attempt(body, budget={"max_seconds": 1.0}), 5, words="render budget")


@pytest.mark.slow
def test_macro_fan_out_is_stopped_before_it_is_built():
    macros = "".join(f"{{% macro m{i}() %}}" + f"{{{{ m{i - 1}() }}}}" * 10 + "{% endmacro %}" for i in range(1, 10))
    body = "{% macro m0() %}xxxxxxxxxx{% endmacro %}" + macros + "\n{{ m9() }}\n"
    # The time budget stops it, inside the macros (line 4): the text a macro builds is not counted as output
    # (even max_chars=1,000,000 let it run to the time limit), so a 1 s budget, not the 10 s default, to wait.
    refused(attempt(body, budget={"max_seconds": 1.0}), 4, words="render budget exceeded: the render took more than 1 seconds")


def fan_out_partials(count: int) -> dict[str, str]:
    """`_p0.prompt` ... : each partial includes the next one twice; the last prints nothing."""
    files = {f"_p{i}.prompt": f'{{% include "p{i + 1}" %}}{{% include "p{i + 1}" %}}' for i in range(count)}
    files[f"_p{count}.prompt"] = ""
    return files


@pytest.mark.slow
def test_jinja2_partials_fanning_out_meet_the_time_budget():
    # 2**20 includes printing nothing: no output to count, so the clock must be read at each include
    result = attempt('A\n{% include "p0" %}\n', files=fan_out_partials(20), budget={"max_seconds": 1.0})
    assert not result["ok"] and result["type"] == "RenderError", result
    refused(result, 5, words="render budget exceeded: the render took more than 1 seconds")  # the include's line


@pytest.mark.slow
def test_handlebars_inline_partials_fanning_out_meet_the_time_budget():
    partials = "".join(f'{{{{#*inline "p{i}"}}}}{{{{> p{i + 1}}}}}{{{{> p{i + 1}}}}}{{{{/inline}}}}' for i in range(24))
    body = partials + '{{#*inline "p24"}}{{/inline}}\nA\n{{> p0}}\n'
    result = attempt(body, engine="handlebars", budget={"max_seconds": 1.0})
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "render budget exceeded: the render took more than 1 seconds" in result["message"], result
    # the innermost partial call running: one inside the inline partials, all defined on line 4
    assert "hostile" in result["message"] and result["line"] == 4, result


@pytest.mark.slow
def test_handlebars_partial_files_fanning_out_meet_the_time_budget():
    files = {f"_p{i}.prompt": f"{{{{> p{i + 1}}}}}{{{{> p{i + 1}}}}}" for i in range(22)}
    files["_p22.prompt"] = ""
    result = attempt("A\n{{> p0}}\n", engine="handlebars", files=files, budget={"max_seconds": 1.0})
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "render budget exceeded: the render took more than 1 seconds" in result["message"], result


def test_namespace_doubling():
    body = "A\n{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}\n"
    refused(attempt(body), 5, words="render budget")


def test_recursive_macro_doubling():
    body = "{% macro f(s, n) %}{{ f(s ~ s, n - 1) if n else s }}{% endmacro %}\nA\n{{ f('ab', 200) }}\n"
    refused(attempt(body), 4, words="render budget")  # the macro's line: that call would pass the budget


def test_deep_if_nesting_is_a_file_error_with_a_line():
    body = "A\n" + "{% if x %}" * 5000 + "y" + "{% endif %}" * 5000 + "\n"
    result = attempt(body)
    assert not result["ok"] and result["type"] == "PromptFileError" and result["stage"] == "load", result
    assert result["line"] == 5 and "nest" in result["message"], result


def test_deep_for_nesting_is_a_file_error_with_a_line():
    body = "A\n" + "{% for i in x %}\n" * 300 + "y" + "{% endfor %}" * 300 + "\n"
    result = attempt(body)
    assert not result["ok"] and result["type"] == "PromptFileError" and result["stage"] == "load", result
    assert 5 <= result["line"] <= 305 and "nest" in result["message"], result


def test_from_source_is_guarded_too():
    result = attempt("Hello\n{{ x * n }}\n", {"x": "ab", "n": 10 ** 10}, via="from_source")
    assert not result["ok"] and result["type"] == "RenderError" and result["line"] == 5, result


# -- Handlebars ------------------------------------------------------------------------------

ITEMS = '{"items": list(range(1000))}'


def test_handlebars_each_three_deep_fast_path():
    # A billion characters: the fast path counts what it writes, so a small max_chars stops it at once. With the
    # default 20,000,000 it was the 10 s time limit or the size, whichever this machine's speed made come first.
    body = "A\n{{#each items}}{{#each @root.items}}{{#each @root.items}}x{{/each}}{{/each}}{{/each}}\n"
    result = attempt(body, ITEMS, engine="handlebars", budget={"max_chars": 1_000_000})
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "hostile" in result["message"] and result["line"] == 5, result
    assert "render budget exceeded: the output is over 1,000,000 characters (max_chars)" in result["message"], result


@pytest.mark.slow
def test_handlebars_each_three_deep_reference_renderer():
    # `@key` is not on the fast path: the reference renderer (dotpromptz-handlebars) runs it.
    body = "A\n{{#each items}}{{#each @root.items}}{{#each @root.items}}{{@key}}{{/each}}{{/each}}{{/each}}\n"
    result = attempt(body, ITEMS, engine="handlebars", budget={"max_seconds": 1.0})
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "hostile" in result["message"] and result["line"] == 5 and "render budget" in result["message"], result


def test_handlebars_each_over_objects_reference_renderer_output_budget():
    rows = '{"rows": {str(i): i for i in range(1000)}}'
    body = "A\n{{#each rows}}{{#each @root.rows}}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{/each}}{{/each}}\n"
    result = attempt(body, rows, engine="handlebars", budget={"max_chars": 1_000_000})
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "hostile" in result["message"] and result["line"] == 5 and "render budget" in result["message"], result


BIG = '{"xs": list(range(1000)), "big": "y" * 100_000}'


@pytest.mark.parametrize(("engine", "body"), [
    ("jinja2", "A\n{% for a in xs %}{% for b in xs %}{{ big }}{% endfor %}{% endfor %}\n"),
    ("handlebars", "A\n{{#each xs}}{{#each ../xs}}{{@root.big}}{{/each}}{{/each}}\n"),  # the fast path
    ("handlebars", "A\n{{#each xs}}{{#each ../xs}}{{@key}}{{@root.big}}{{/each}}{{/each}}\n"),  # the reference renderer
    ("handlebars", "A\n{{#each xs}}{{#each ../xs}}{{@key}}{{{json @root.big}}}{{/each}}{{/each}}\n"),
])
def test_printed_values_are_counted_as_the_output_grows(engine, body):
    # 10 GB of output if nothing stopped it; counted as it grows, it stops at max_chars (20,000,000) in a
    # fraction of the memory limit (the reference renderer used to reach ~1 GB before a check)
    result = attempt(body, BIG, engine=engine, memory_mb=500)
    refused(result, 5, words="render budget exceeded: the output is over 20,000,000 characters")


def test_printed_values_in_a_partial_are_counted_as_the_output_grows():
    files = {"_show.prompt": "{{@root.big}}"}  # printed at the partial's top level: it runs as often as it is called
    result = attempt("A\n{{#each xs}}{{#each ../xs}}{{> show}}{{/each}}{{/each}}\n", BIG, engine="handlebars",
                     memory_mb=500, files=files)
    assert not result["ok"] and result["type"] == "RenderError", result
    assert "render budget exceeded: the output is over 20,000,000 characters" in result["message"], result


def test_handlebars_json_with_a_huge_indent():
    result = attempt("A\n{{json items indent=1000000000}}\n", {"items": [1, 2]}, engine="handlebars")
    assert not result["ok"] and result["type"] == "RenderError" and "indent" in result["message"], result
    assert "hostile" in result["message"], result


def test_handlebars_deep_if_nesting():
    body = "A\n" + "{{#if x}}" * 5000 + "y" + "{{/if}}" * 5000 + "\n"
    result = attempt(body, engine="handlebars")
    assert not result["ok"] and result["type"] == "PromptFileError" and result["stage"] == "load", result
    assert result["line"] is not None and "hostile" in result["message"], result


# -- the budget is generous: reasonable large templates still render -------------------------

def test_a_ten_thousand_row_table_renders():
    rows = '{"rows": [{"id": i, "name": f"name {i}", "price": i * 1.5} for i in range(10_000)]}'
    body = "| id | name | price |\n{% for r in rows %}| {{ r.id }} | {{ r.name }} | {{ r.price }} |\n{% endfor %}"
    result = attempt(body, rows)
    assert result["ok"] and result["chars"] > 200_000, result


@pytest.mark.slow
def test_a_ten_thousand_row_table_renders_with_handlebars():
    rows = '{"rows": [{"id": i, "name": f"name {i}"} for i in range(10_000)]}'
    fast = "| id | name |\n{{#each rows}}| {{id}} | {{name}} |\n{{/each}}"
    reference = "| id | name |\n{{#each rows}}| {{@key}} {{id}} | {{name}} |\n{{/each}}"
    for body in (fast, reference):
        result = attempt(body, rows, engine="handlebars")
        assert result["ok"] and result["chars"] > 150_000, result


def test_ordinary_arithmetic_and_formatting_still_work():
    from dotprompt import PromptLibrary

    lib = PromptLibrary()
    text = ("{{ 2 ** 10 }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ 7 * 6 }} {{ '%05d' % 42 }} {{ '{:>4}'.format(1) }} "
            "{{ 'x'|center(5) }}| {{ [1, 2]|json(indent=2)|length }} {{ 1 + 2 }} {{ 'a' + 'b' }} {{ 10 % 3 }}")
    rendered = lib.from_source(text).render()
    assert rendered.messages[0].content[0].text == "1024 ababab [1, 1] 42 00042    1   x  | 12 3 ab 1"


# -- configuration ---------------------------------------------------------------------------

def test_the_budget_is_configurable_per_library():
    from dotprompt import PromptLibrary
    from dotprompt.errors import RenderError
    from dotprompt.settings import RenderBudget

    lib = PromptLibrary(render_budget=RenderBudget(max_chars=100))
    assert lib.from_source("{{ 'x' * 100 }}").render().messages
    with pytest.raises(RenderError, match="render budget"):
        lib.from_source("{{ 'x' * 101 }}").render()
    with pytest.raises(RenderError, match="render budget"):
        lib.from_source("{% for i in range(101) %}x{% endfor %}").render()
    with pytest.raises(RenderError, match="render budget"):
        PromptLibrary(engine="handlebars", render_budget={"max_chars": 100}).from_source(
            "{{#each xs}}x{{/each}}").render({"xs": list(range(101))})


def test_a_bad_budget_is_a_usage_error():
    from dotprompt import PromptLibrary
    from dotprompt.errors import UsageError

    with pytest.raises(UsageError):
        PromptLibrary(render_budget={"max_chars": 0})
    with pytest.raises(UsageError):
        PromptLibrary(render_budget={"max_secs": 1})


def test_the_budget_from_the_environment_and_the_project(tmp_path, monkeypatch):
    from dotprompt.prompts.loader import project_library
    from dotprompt.settings import RENDER_MAX_CHARS, RenderBudget, render_budget

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOTPROMPT_RENDER_MAX_CHARS", raising=False)
    monkeypatch.delenv("DOTPROMPT_RENDER_MAX_SECONDS", raising=False)
    assert render_budget() == RenderBudget() and RenderBudget().max_chars == RENDER_MAX_CHARS
    (tmp_path / "pyproject.toml").write_text("[tool.dotprompt]\nrender_max_chars = 1234\nrender_max_seconds = 2.5\n")
    assert project_library(tmp_path).render_budget == RenderBudget(1234, 2.5)
    monkeypatch.setenv("DOTPROMPT_RENDER_MAX_CHARS", "999")
    assert project_library(tmp_path).render_budget == RenderBudget(999, 2.5)
    assert render_budget({"max_seconds": 3}) == RenderBudget(999, 3)


# -- the command line ------------------------------------------------------------------------

def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = f"import sys; from dotprompt.cli import main; sys.exit(main({list(args)!r}))"
    env_code = textwrap.dedent(code)
    outcome = assert_finishes_cli(env_code, cwd)
    return outcome


def assert_finishes_cli(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1024 ** 3, 1024 ** 3))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env=env, preexec_fn=limit)


@pytest.mark.slow
@pytest.mark.parametrize(("body", "line"), [
    ("A\n{{ 10**(10**10) }}\n", 5),
    ("A\n{{ 'ab' * 10000000000 }}\n", 5),
    ("A\n{{ [1, 2]|json(indent=1000000000) }}\n", 5),
    ("A\n{{ 'x'|center(1000000000) }}\n", 5),
])
def test_cli_check_and_render_finish_with_one_clear_line(tmp_path, body, line):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "hostile.prompt").write_text(FRONT + body, encoding="utf-8")
    checked = cli("check", str(folder), cwd=tmp_path)
    assert "Traceback" not in checked.stderr, checked.stderr
    rendered = cli("render", "hostile", "--dir", str(folder), cwd=tmp_path)
    assert rendered.returncode == 1 and "Traceback" not in rendered.stderr, rendered.stderr
    assert f"hostile.prompt:{line}: error:" in rendered.stderr and "render budget" in rendered.stderr, rendered.stderr


@pytest.mark.slow  # the command line as a child process
def test_cli_check_reports_deep_nesting_with_its_line(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "hostile.prompt").write_text(FRONT + "A\n" + "{% if x %}" * 5000 + "{% endif %}" * 5000, encoding="utf-8")
    checked = cli("check", str(folder), cwd=tmp_path)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert "hostile.prompt:5" in checked.stdout + checked.stderr, checked.stdout + checked.stderr


@pytest.mark.slow
def test_cli_render_reports_nested_loops_with_its_line(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "hostile.prompt").write_text(
        FRONT + "A\n{% for i in range(100000) %}{% for j in range(100000) %}xx{% endfor %}{% endfor %}\n")
    rendered = cli("render", "hostile", "--dir", str(folder), "--input", json.dumps({}), cwd=tmp_path)
    assert rendered.returncode == 1 and "Traceback" not in rendered.stderr, rendered.stderr
    assert "hostile.prompt:5: error:" in rendered.stderr and "render budget" in rendered.stderr, rendered.stderr
