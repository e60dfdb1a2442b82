"""A template's Python is compiled on first render only when that compile cannot fail.

Loading defers Python's compile of the generated code (`engines/deferred.py`) only below limits
that keep it far from CPython's own; anything deeper compiles at load, where its error has always
been. These tests build, for every way a template nests, the deepest one still deferred, and
compile it: a limit raised too far makes one of them fail here instead of at a user's first render.
"""

from __future__ import annotations

import pytest

from dotprompt import PromptLibrary

STATEMENTS = {  # (opening, closing) of one level
    "if": ("{% if x %}", "{% endif %}"),
    "for": ("{% for i in x %}", "{% endfor %}"),
    "for with loop and else": ("{% for i in x %}{{ loop.index }}", "{% else %}e{% endfor %}"),
    "macro": ("{% macro m() %}", "{% endmacro %}"),
    "call block": ("{% call m() %}", "{% endcall %}"),
    "with": ("{% with a = 1 %}", "{% endwith %}"),
    "filter block": ("{% filter upper %}", "{% endfilter %}"),
    "set block": ("{% set a %}", "{% endset %}"),
    "include ignore missing": ("{% if x %}{% include 'rules' ignore missing %}", "{% endif %}"),
}
EXPRESSIONS = {  # (opening, closing) of one level around `x`
    "negation": ("-", ""),
    "not": ("not ", ""),
    "list": ("[", "]"),
    "dict": ("{'k': ", "}"),
    "call": ("f(", ")"),
    "keyword call": ("f(a=", ")"),
    "filter": ("(", ")|upper"),
    "attribute": ("(", ").a"),
    "item": ("(", ")[1]"),
    "slice": ("(", ")[1:2]"),
    "condition": ("(y if ", " else z)"),
    "arithmetic": ("(y - ", ")"),
    "repetition": ("(y * ", ")"),
    "concatenation": ("(y ~ ", ")"),
    "and": ("(y and ", ")"),
    "test": ("(", ") is divisibleby(3)"),
}
MACRO = "{% macro m() %}{{ caller() }}{% endmacro %}"


def library() -> PromptLibrary:
    lib = PromptLibrary(None)
    lib.define_partial("rules", "Be brief.")
    return lib


def nested(level: tuple[str, str], times: int, inner: str) -> str:
    return level[0] * times + inner + level[1] * times


def template_of(lib: PromptLibrary, body: str):
    return lib.from_source("---\n---\n" + MACRO + body).compiled.template


def deepest_deferred(build, stop: int) -> int:
    """The largest n below `stop` for which build(n) is still deferred (build(0) is)."""
    lib = library()
    start = 0
    assert template_of(lib, build(start)).deferred
    lo, hi = start, stop  # build(lo) is deferred; find the last deferred before the first not deferred
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            deferred = template_of(lib, build(mid)).deferred
        except Exception:  # too deep to load: certainly not deferred
            deferred = False
        lo, hi = (mid, hi) if deferred else (lo, mid)
    return lo


@pytest.mark.slow  # seconds per statement: each search loads dozens of deep templates
@pytest.mark.parametrize("statement", STATEMENTS)
def test_the_deepest_deferred_statements_compile_with_the_deepest_expression_inside(statement):
    lib = library()
    depth = deepest_deferred(lambda n: nested(STATEMENTS[statement], n, "y"), stop=30)
    assert depth >= 3, "ordinary templates must be deferred"
    for name, level in EXPRESSIONS.items():
        def build(m: int, level: tuple[str, str] = level) -> str:
            return nested(STATEMENTS[statement], depth, "{{ " + nested(level, m, "x") + " }}")

        template = template_of(lib, build(deepest_deferred(build, stop=80)))
        assert template.deferred, (statement, name)
        template.template()  # Python's compile: must not fail (SyntaxError, RecursionError...)


def test_deeper_templates_compile_at_load_as_before():
    lib = PromptLibrary(None)
    template = template_of(lib, nested(STATEMENTS["for"], 12, "y"))
    assert not template.deferred


def test_a_deferred_template_renders_the_same_as_one_compiled_at_load():
    lib = PromptLibrary(None)
    body = "{% for i in items %}{{ loop.index }}. {{ i | upper }}{% endfor %}"
    deferred = lib.from_source("---\n---\n" + body)
    eager = lib.from_source("---\n---\n" + nested(STATEMENTS["if"], 12, body).replace("{% if x %}", "{% if 1 %}"))
    assert deferred.compiled.template.deferred
    assert not eager.compiled.template.deferred
    text = [p.render({"items": ["a", "b"]}).messages[0].content[0].text for p in (deferred, eager)]
    assert text[0] == text[1] == "1. A2. B"
