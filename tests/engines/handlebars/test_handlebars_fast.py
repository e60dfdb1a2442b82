"""The Handlebars fast path: the template converted to jinja2, rendered with Handlebars semantics."""

from __future__ import annotations

import pytest

from dotprompt import PromptLibrary
from dotprompt.engines.markers import Markers
from tests.engines.handlebars.handlebars_support import texts

TYPICAL = ('{{role "system"}}\nYou help {{name}}.\n{{role "user"}}\n{{#each items}}- {{this}} ({{@index}})\n{{/each}}'
           '{{#if note}}Note: {{note}}{{else}}no note{{/if}}')

TRICKY_TEMPLATES = [
    TYPICAL,
    "[{{v}}] [{{v.a}}] [{{v.[0]}}] [{{v.0x}}] [{{missing}}] [{{missing.deep.er}}]",
    "{{#if v}}T{{else}}F{{/if}}{{#unless v}}U{{/unless}}",
    "{{#each v}}<{{this}}|{{@first}}|{{@last}}|{{@index}}>{{else}}empty{{/each}}",
    "{{#each v as |x i|}}{{i}}={{x}};{{/each}}",
    "{{#ifEquals v 1}}one{{else}}not one{{/ifEquals}}{{#unlessEquals v true}}!T{{/unlessEquals}}",
    "{{json v}}|{{json v indent=2}}|{{json missing}}",
    "{{@state}} {{@state.step}} {{@auth.uid}} {{@root.v}} {{#if @state}}S{{/if}}",
    "{{#each rows}}{{#each this}}{{this}}{{#if @last}}.{{else}},{{/if}}{{/each}}|{{../v}}\n{{/each}}",
    "  {{#if v}}\n  indented {{v}}\n  {{/if}}\n{{~v~}}   end {{{v}}} {{&v}}",
    '{{role "system"}}{{section "output"}}{{history}}{{media url=u contentType="image/png"}}{{role "user"}}x',
]
TRICKY_INPUTS = [
    {"v": True}, {"v": False}, {"v": None}, {}, {"v": 1.0}, {"v": 2.5}, {"v": 0}, {"v": 1}, {"v": ""},
    {"v": [1, [2.0, [True, None]], "x"]}, {"v": []}, {"v": {}}, {"v": {"a": "é ✓ 日本", "0": "zero"}},
    {"v": "ünïcödé 🎉"}, {"v": ["a", "b"], "name": "Zoë", "items": ["milk", 3, 1.0, False, None], "note": ""},
    {"rows": [[1, 2], ["a"], []], "v": "outer", "u": "https://x/y.png"}, {"rows": [{"a": 1}], "v": [0]},
]


def _template(source: str):
    return PromptLibrary(None, engine="handlebars").from_source(source).compiled.template


def test_fast_path_is_taken_for_a_typical_prompt():
    template = _template(TYPICAL)
    assert template.fast is not None
    out = PromptLibrary(None, engine="handlebars").from_source(TYPICAL).render({"name": "Ann", "items": ["a", "b"]})
    assert texts(out.to_dict()["messages"]) == [("system", "\nYou help Ann.\n"), ("user", "\n- a (0)\n- b (1)\nno note")]


@pytest.mark.parametrize("source", TRICKY_TEMPLATES)
def test_fast_path_renders_what_the_reference_renderer_renders(source):
    template = _template(source)
    assert template.fast is not None
    context = {"state": {"step": 2, "ok": True}, "auth": {"uid": "ü1"}}
    for data in TRICKY_INPUTS:
        for ctx in (context, None):
            markers = Markers()
            try:
                slow = template.render_reference(data, ctx, markers)
            except Exception as exc:  # the public render gives the reference renderer's error
                with pytest.raises(type(exc)):
                    template.render(data, ctx, markers)
                continue
            assert template.render(data, ctx, markers) == slow, (source, data, ctx)
            try:
                fast = template.render_fast(data, ctx, markers)
            except Exception:  # the fast render declined (an object in #each, ...): the reference renders
                continue
            assert fast == slow, (source, data, ctx)


@pytest.mark.parametrize("source", [
    "{{#with v}}{{a}}{{/with}}",  # #with: not converted in fast mode
    "{{> p}}",  # partials
    "{{#each v}}{{@key}}={{this}}{{/each}}",  # @key
    "{{#if v includeZero=true}}y{{/if}}",  # hash options
    '{{lookup v "a"}}',
    "{{#v}}section{{/v}}",
    "{{#each v}}{{#ifEquals this 1}}{{../x}}{{/ifEquals}}{{/each}}",  # ifEquals pushes a context: ../ differs
    "a\r\nb {{v}}",
    "{{json}}",
])
def test_fast_path_falls_back_for_constructs_it_cannot_render_exactly(source):
    lib = PromptLibrary(None, engine="handlebars")
    lib.define_partial("p", "partial {{v}}")
    assert lib.from_source(source).compiled.template.fast is None


def test_fast_path_hands_each_over_an_object_to_the_reference_renderer():
    template = _template("{{#each v}}{{this}};{{/each}}")
    assert template.fast is not None
    markers = Markers()
    assert template.render({"v": {"a": 1, "b": 2}}, None, markers) == "1;2;"
    assert template.render({"v": {}}, None, markers) == ""
