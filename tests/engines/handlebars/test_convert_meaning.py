"""`dotprompt convert --to jinja2` keeps the meaning (issue 29, item 13): the converted file renders
what the Handlebars original renders, `{}` in `{{#if}}`, booleans, lists, floats and objects included;
where the input schema says a value prints alike (a string, an integer), the plain jinja2 form is kept."""

from __future__ import annotations

import pytest

from dotprompt import PromptLibrary
from dotprompt.engines.handlebars import convert_source

NO_SCHEMA = "---\nmodel: echo\n---\n"
TYPED = ("---\nmodel: echo\ninput:\n  schema:\n    name: string\n    visits: integer\n    vip: boolean\n"
         "    tags(array): string\n    prefs(object):\n      tone: string\n    score: number\n---\n")
DATA = {"name": "Ann", "visits": 3, "vip": True, "tags": ["vip", "eu"], "prefs": {"tone": "warm"}, "score": 9.0,
        "customer": {}, "big": 1e21, "nothing": None, "rows": {"a": "x", "b": "y"}, "zero": 0, "empty": []}
TYPED_KEYS = ("name", "visits", "vip", "tags", "prefs", "score")
CASES = [
    (NO_SCHEMA, "{{#if customer}}known{{else}}new{{/if}} {{#unless customer}}none{{/unless}}"),
    (NO_SCHEMA, "vip={{vip}} tags={{tags}} score={{score}} big={{big}} prefs={{prefs}} none={{nothing}}."),
    (NO_SCHEMA, "{{#each rows}}{{this}};{{/each}} {{#each tags}}[{{this}}]{{/each}}"),
    (NO_SCHEMA, "{{#if zero}}z{{/if}}{{#if empty}}e{{/if}}{{#if tags}}t{{/if}}{{#if missing}}m{{/if}}"),
    (NO_SCHEMA, "{{#each tags as |tag|}}{{tag}}{{#unless @last}}, {{/unless}}{{/each}}"),
    (TYPED, "{{name}} {{visits}} {{vip}} {{tags}} {{score}} {{prefs.tone}} {{#if prefs}}p{{/if}} {{#if vip}}v{{/if}}"),
    (TYPED, "{{#each tags}}{{this}}|{{/each}}"),
]


def _render(text: str, engine: str, data: dict) -> str:
    prompt = PromptLibrary(None, engine=engine).from_source(text)
    return "".join(p.text or "" for m in prompt.render(data).messages for p in m.content)


@pytest.mark.parametrize(("head", "body"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_converted_file_renders_what_the_original_renders(head, body):
    original = head + body
    converted = convert_source(original, "p.prompt")
    assert converted.problems == []
    data = {key: DATA[key] for key in TYPED_KEYS} if head == TYPED else DATA
    assert _render(converted.text, "jinja2", data) == _render(original, "handlebars", data)


def test_values_the_schema_types_as_printing_alike_stay_plain():
    text = convert_source(TYPED + "{{name}} {{visits}} {{vip}} {{#if name}}n{{/if}} {{#if prefs}}p{{/if}}").text
    assert "{{ name }} {{ visits }}" in text and "{% if name %}" in text
    assert "{{ vip | js }}" in text and "prefs is mapping or prefs" in text


def test_the_js_filter_prints_as_handlebars_prints():
    expected = "true,false|a,b|9|1.5|1000000000000000000000|[object Object]||x"
    template = "{{ flags | js }}|{{ tags | js }}|{{ n | js }}|{{ f | js }}|{{ big | js }}|{{ o | js }}|{{ none | js }}|x"
    data = {"flags": [True, False], "tags": ["a", "b"], "n": 9.0, "f": 1.5, "big": 1e21, "o": {"a": 1}, "none": None}
    assert _render(template, "jinja2", data) == expected


def test_convert_exits_0_and_the_output_renders_the_same(tmp_path, cli_env):
    from tests.cli_inprocess import cli

    source = tmp_path / "p.prompt"
    source.write_text(NO_SCHEMA + CASES[0][1] + " " + CASES[1][1], encoding="utf-8")
    done = cli("convert", str(source), "--to", "jinja2", "--output", str(tmp_path / "out.prompt"), cwd=tmp_path,
               env=cli_env)
    assert done.returncode == 0, done.stderr
    converted = (tmp_path / "out.prompt").read_text(encoding="utf-8")
    assert _render(converted, "jinja2", DATA) == _render(source.read_text(encoding="utf-8"), "handlebars", DATA)
