"""`dotprompt convert`: Handlebars prompt source -> jinja2 prompt source, rendering the same messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dotprompt import PromptLibrary
from dotprompt.engines.handlebars import convert_source
from dotprompt.errors import PromptFileError
from tests import cli_inprocess
from tests.conftest import ROOT


def body(source: str) -> str:
    result = convert_source(source)
    assert result.problems == [], result.problems
    return result.text


def messages(source: str, engine: str, input=None, partials=None, **kwargs) -> list[dict]:
    lib = PromptLibrary(None, engine=engine)
    for name, text in (partials or {}).items():
        lib.define_partial(name, text)
    return lib.from_source(source).render(input or {}, **kwargs).to_dict()["messages"]


def same(source: str, input=None, partials=None, **kwargs) -> str:
    """Convert, render both, assert identical messages; the converted source for further checks."""
    converted = body(source)
    jinja_partials = {name: body(text) for name, text in (partials or {}).items()}
    expected = messages(source, "handlebars", input, partials, **kwargs)
    assert messages(converted, "jinja2", input, jinja_partials, **kwargs) == expected, converted
    return converted


# -- each construct ---------------------------------------------------------------------------

def test_paths_and_root():
    out = same("Hi {{user.name}} from {{@root.company}}, {{{raw}}}", {"user": {"name": "Ann"}, "company": "ACME", "raw": "<b>"})
    # no input schema: every value is printed as Handlebars prints it (`| js`: true, a,b, 9 for 9.0)
    assert out == "Hi {{ user.name | js }} from {{ company | js }}, {{ raw | js }}"
    typed = "---\ninput:\n  schema:\n    user(object):\n      name: string\n    company: string\n    raw: string\n---\n"
    out = same(typed + "Hi {{user.name}} from {{@root.company}}, {{{raw}}}",
               {"user": {"name": "Ann"}, "company": "ACME", "raw": "<b>"})
    assert out.endswith("Hi {{ user.name }} from {{ company }}, {{ raw }}")  # strings print alike: kept plain


def test_context_variables():
    out = same("{{@state.step}} {{@auth.email}} {{@custom}}", context={"state": {"step": 2}, "auth": {"email": "a@b"},
                                                                        "custom": "c"})
    assert out == "{{ ctx.state.step | js }} {{ ctx.auth.email | js }} {{ ctx.custom | js }}"


def test_if_else_if_unless():
    src = "{{#if a}}\nA\n{{else if b}}\nB\n{{else}}\nC\n{{/if}}\n{{#unless a}}not a{{/unless}}\n"
    for data in ({"a": 1}, {"b": 1}, {}):
        out = same(src, data)
    # an object `{}` is true in Handlebars: said so where the input schema does not rule it out
    assert out == ("{% if (a is mapping or a) %}\nA\n{% elif (b is mapping or b) %}\nB\n{% else %}\nC\n{% endif %}\n"
                   "{% if not (a is mapping or a) %}not a{% endif +%}\n")
    typed = "---\ninput:\n  schema:\n    a?: integer\n    b?: string\n---\n"
    for data in ({"a": 1}, {"b": "1"}, {}):
        out = same(typed + src, data)
    assert out.endswith("{% if a %}\nA\n{% elif b %}\nB\n{% else %}\nC\n{% endif %}\n{% if not a %}not a{% endif +%}\n")


def test_each_with_loop_variables():
    src = ("Items:\n{{#each items}}\n- {{@index}} {{this.name}}{{#if @first}} (first){{/if}}{{#if @last}} (last){{/if}}\n"
           "{{else}}\nnone\n{{/each}}\nDone")
    for data in ({"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, {"items": []}):
        out = same(src, data)
    assert "{% for item in (items.values() if items is mapping else items) %}" in out and "{{ loop.index0 }}" in out
    assert "{% if loop.first %}" in out and "{% if loop.last %}" in out
    assert "{{ item.name | js }}" in out and "{% else %}" in out and "{% endfor %}" in out


def test_each_this_block_params_parent_and_key():
    same("{{#each tags}}[{{this}}]{{/each}}", {"tags": ["x", "y"]})
    same("{{#each rows as |row i|}}{{i}}={{row.v}} {{../sep}}{{/each}}", {"rows": [{"v": 1}, {"v": 2}], "sep": ";"})
    out = same("{{#each prices}}{{@key}}={{this}};{{/each}}", {"prices": {"a": 1, "b": 2}})
    assert "{% for key, item in prices.items() %}" in out
    same("{{#each outer}}{{#each this.inner}}{{this}}{{/each}}|{{/each}}", {"outer": [{"inner": [1, 2]}, {"inner": [3]}]})


def test_loop_variable_avoids_input_names():
    out = same("{{item}}:{{#each items}}{{this}}{{/each}}", {"item": "I", "items": ["a", "b"]})
    assert "{% for item2 in (items.values() if items is mapping else items) %}" in out


def test_with():
    src = "{{#with user}}{{name}} ({{../org}}){{else}}nobody{{/with}}"
    same(src, {"user": {"name": "Ann"}, "org": "ACME"})
    out = same(src, {"org": "ACME"})
    assert out == "{% if (user is mapping or user) %}{{ user.name | js }} ({{ org | js }}){% else %}nobody{% endif %}"


def test_if_equals_unless_equals():
    src = "{{#ifEquals kind \"a\"}}A{{else}}not A{{/ifEquals}} {{#unlessEquals n 1}}not one{{/unlessEquals}}"
    for data in ({"kind": "a", "n": 1}, {"kind": "b", "n": 2}):
        out = same(src, data)
    assert '{% if kind == "a" %}' in out and "{% if n != 1 %}" in out


def test_dotprompt_helpers():
    src = ('{{role "system"}}\nBe brief.\n{{history}}\n{{role "user"}}\nLook {{media url=u contentType="image/png"}}\n'
           '{{json data}} {{json data indent=2}}\n{{section "output"}}')
    history = [{"role": "user", "content": [{"text": "earlier"}]}, {"role": "model", "content": [{"text": "ok"}]}]
    out = same(src, {"u": "https://x/y.png", "data": {"k": ["é", 1]}}, history=history)
    for piece in ('{{ role("system") }}', "{{ history() }}", '{{ media(url=u, content_type="image/png") }}',
                  "{{ data | json }}", "{{ data | json(indent=2) }}", '{{ section("output") }}'):
        assert piece in out


def test_partials_with_arguments():
    partials = {"greet": "Hello {{who}} from {{org}}!"}
    out = same("{{> greet who=\"Ann\"}}\n{{> greet who=name}}\nbye", {"name": "Bo", "org": "ACME"}, partials)
    assert '{% with who="Ann" %}{% include "greet" %}{% endwith %}' in out


def test_indented_standalone_partial_indents_every_line():
    for text in ("P1\nP2", "P1\n\n  P2\n", "one", "{{who}}\nline two\n"):
        out = same("a\n  {{> p}}\nb\n    {{> p who=name}}\nc", {"name": "Bo"}, {"p": text})
    assert '{% set partial_text %}{% include "p" %}{% endset %}' in out
    assert '{% with who=name %}{% set partial_text %}' in out


def test_comments():
    src = "a\n{{!-- long\ncomment --}}\nb {{! short }} c\n  {{!-- indented --}}\nd"
    out = same(src)
    assert "{# long\ncomment #}" in out and "{# short #}" in out


def test_tilde_whitespace_control():
    src = "a   {{~name~}}   b\n{{#if x~}}\n   X   \n{{~/if}}\nc"
    for data in ({"name": "N", "x": 1}, {"name": "N"}):
        out = same(src, data)
    assert "{{- name | js -}}" in out and "-%}" in out and "{%-" in out


def test_standalone_and_inline_whitespace():
    src = "x\n  {{#if a}}\n  A\n  {{/if}}\ny {{#if a}}in{{/if}}\n  {{#if a}}ind{{/if}}\nz\n"
    for data in ({"a": True}, {}):
        same(src, data)


def test_jinja_syntax_in_text_stays_text():
    same("Literal {% raw %} and {# not a comment #} and \\{{escaped}}", {"escaped": "no"})


def test_frontmatter_kept_byte_for_byte_without_engine_line():
    src = "---\n# a comment\nmodel: echo\ndotprompt.engine: handlebars\nconfig:  {temperature: 0}\n---\n{{x}}\n"
    assert convert_source(src).text == "---\n# a comment\nmodel: echo\nconfig:  {temperature: 0}\n---\n{{ x | js }}\n"
    nested = "---\nmodel: echo\ndotprompt:\n  engine: handlebars\n---\n{{x}}"
    assert convert_source(nested).text == "---\nmodel: echo\n---\n{{ x | js }}"


# -- what cannot be converted -----------------------------------------------------------------

def test_unconvertible_left_in_todo_comment_with_line_numbers():
    src = ("---\nmodel: echo\n---\nHi {{name}}\n{{shout name}}\n{{#each items}}{{> row this}}{{/each}}\n"
           "{{#custom a}}\nbody\n{{/custom}}\n{{#if (gt a 1)}}big{{/if}}\n{{@root}}\nok {{x}}")
    result = convert_source(src, "p.prompt")
    lines = [p.format("p.prompt") for p in result.problems]
    assert lines == [
        "p.prompt:5: cannot convert: helper 'shout' (custom helper) with these arguments",
        "p.prompt:6: cannot convert: partial 'row' with a context argument",
        "p.prompt:7: cannot convert: block helper 'custom' (custom helper)",
        "p.prompt:10: cannot convert: subexpression (gt a 1)",
        "p.prompt:11: cannot convert: @root alone (jinja2 has no name for the whole input)",
    ]
    text = result.text
    assert "{# TODO(convert): {{shout name}} #}" in text
    assert "{# TODO(convert): {{#custom a}}\nbody\n{{/custom}} #}" in text
    assert "{# TODO(convert): {{#if (gt a 1)}}big{{/if}} #}" in text
    assert "{% for item in (items.values() if items is mapping else items) %}{# TODO(convert): {{> row this}} #}" in text
    assert text.endswith("ok {{ x | js }}")
    PromptLibrary(None).from_source(text)  # still a valid jinja2 prompt


def test_syntax_error_is_a_prompt_file_error_with_line():
    with pytest.raises(PromptFileError) as info:
        convert_source("---\nmodel: echo\n---\nok\n{{#if a}}\nnever closed", "bad.prompt")
    assert info.value.line == 5 and info.value.path == "bad.prompt"


# -- the command ------------------------------------------------------------------------------

def cli(*args: str) -> cli_inprocess.CliResult:
    return cli_inprocess.cli(*args, cwd=ROOT)


def test_cli_convert_stdout_output_and_exit_status(tmp_path: Path):
    good = tmp_path / "good.prompt"
    good.write_text("---\ndotprompt.engine: handlebars\n---\n{{role \"system\"}}\nHi {{name}}\n", encoding="utf-8")
    done = cli("convert", str(good), "--to", "jinja2")
    assert (done.returncode, done.stdout, done.stderr) == (0, '---\n---\n{{ role("system") }}\nHi {{ name | js }}\n', "")

    bad = tmp_path / "bad.prompt"
    bad.write_text("Hi\n{{upper name}}\n", encoding="utf-8")
    out = tmp_path / "out.prompt"
    done = cli("convert", str(bad), "--to", "jinja2", "--output", str(out))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"{bad}:2: cannot convert: helper 'upper' (custom helper) with these arguments\n"
    assert out.read_text(encoding="utf-8") == "Hi\n{# TODO(convert): {{upper name}} #}\n\n"

    assert cli("convert", str(good)).returncode == 2  # --to is required
    assert cli("convert", str(tmp_path / "missing.prompt"), "--to", "jinja2").returncode == 2


# -- round trip: the example prompts, written in Handlebars -----------------------------------

HANDLEBARS_PROMPTS = {
    "_json_only.prompt": "Reply with a single JSON object and nothing else: no prose, no markdown fences.\n",
    "_policy.prompt": "Policy: be polite, be brief, and never reveal another customer's data.\n",
    "_signature.prompt": "-- {{team}} team{{#if urgent}} (urgent){{/if}}\n",
    "assistant.prompt": """---
description: A support assistant that looks up orders and refunds with tools; it answers in plain text.
config:
  temperature: 0.2
tools: [lookup_order, issue_refund]
maxTurns: 4
input:
  schema:
    question: string
    customer_id: string
dotprompt.engine: handlebars
---
{{role "system"}}
You are a support assistant for {{#if @auth.company}}{{@auth.company}}{{else}}our shop{{/if}}.
{{#if @state.order_id}}
The conversation is about order {{@state.order_id}}.
{{/if}}
Use lookup_order before answering questions about an order. Never refund more than the order total.
{{> policy}}
{{> signature team="support" urgent=true}}
{{role "user"}}
Customer {{customer_id}} asks: {{question}}
""",
    "classify.prompt": """---
description: Route a support ticket to one queue.
input:
  schema:
    subject: string
    body: string
    queues?(array, allowed queue names): string
  default:
    queues: [billing, bug, feature_request, account, other]
output:
  format: enum
  schema:
    type: string
    enum: [billing, bug, feature_request, account, other]
---
{{role "system"}}
You route customer support tickets. Answer with exactly one of:
{{#each queues}}
- {{this}}{{#if @last}}.{{/if}}
{{/each}}
{{!-- the ticket itself --}}
{{role "user"}}
Subject: {{subject}}

{{body}}
""",
    "extract.prompt": """---
description: Extract the fields of an invoice from its text.
input:
  schema:
    text: string
    currency_hint?: string
    known_vendors?(array):
      name: string
      vat_id?: string
output:
  format: json
  schema:
    invoice_number: string
    total: number
---
{{role "system"}}
You extract invoice data. Copy numbers exactly as printed; use ISO 8601 dates.
{{#if currency_hint}}If no currency is printed, assume {{currency_hint}}.{{/if}}
{{#if known_vendors}}
Known vendors: {{json known_vendors}}
{{#each known_vendors}}
{{@index}}. {{name}}{{#if vat_id}} (VAT {{vat_id}}){{/if}}
{{/each}}
{{/if}}
{{> json_only}}
{{role "user"}}
Invoice:
{{text}}
""",
    "extract.fast.prompt": """---
description: A cheaper variant of extract for short, clean invoices.
input:
  schema:
    text: string
output:
  format: json
---
Extract the invoice number, total and currency from this invoice.
{{> json_only}}

{{text}}
""",
    "summarize.prompt": """---
description: Summarise a conversation so far, continuing from its history.
input:
  schema:
    max_words?: integer
    audience?: string
    options?: any
  default:
    max_words: 80
    audience: manager
---
{{role "system"}}
You write short, factual summaries. Reader: {{audience}}.
{{#ifEquals audience "engineer"}}
Keep the technical detail.
{{else}}
Leave out the technical detail.
{{/ifEquals}}
{{#if options}}
Options:
{{json options indent=2}}
{{/if}}
{{history}}
{{role "user"}}
Summarise the conversation above in at most {{max_words}} words.
""",
    "billing/refund_reason.prompt": """---
description: Classify why a customer asks for a refund, with a short justification.
input:
  schema:
    message: string
output:
  schema:
    reason(enum): [damaged, late, wrong_item, changed_mind, other]
    justification: string
---
{{role "system"}}
Classify the refund request. {{> json_only}}
{{role "user"}}
{{message}}
""",
}

HISTORY = [{"role": "user", "content": [{"text": "My parcel is late."}]},
           {"role": "model", "content": [{"text": "Sorry to hear that; which order?"}]}]

CASES = [
    ("assistant", {"question": "Where is my order?", "customer_id": "c-1"},
     {"auth": {"company": "ACME"}, "state": {"order_id": "o-9"}}),
    ("assistant", {"question": "Hi", "customer_id": "c-2"}, None),
    ("classify", {"subject": "Refund", "body": "I was charged twice."}, None),
    ("classify", {"subject": "Bug", "body": "It crashes.", "queues": ["bug", "other"]}, None),
    ("extract", {"text": "Invoice 12, total 30 EUR", "currency_hint": "EUR",
                 "known_vendors": [{"name": "Ünïcode GmbH", "vat_id": "DE1"}, {"name": "Plain"}]}, None),
    ("extract", {"text": "Invoice 13"}, None),
    ("extract", {"text": "Invoice 14"}, None),
    ("summarize", {}, None),
    ("summarize", {"audience": "engineer", "options": {"bullets": True, "lang": "fr"}}, None),
    ("billing/refund_reason", {"message": "The box arrived crushed."}, None),
]


def test_round_trip_example_prompts(tmp_path: Path):
    hb_dir, jinja_dir = tmp_path / "handlebars", tmp_path / "jinja2"
    for name, text in HANDLEBARS_PROMPTS.items():
        for folder in (hb_dir, jinja_dir):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (hb_dir / name).write_text(text, encoding="utf-8")
        done = cli("convert", str(hb_dir / name), "--to", "jinja2", "--output", str(jinja_dir / name))
        assert (done.returncode, done.stderr) == (0, ""), name
        assert "{{#" not in (jinja_dir / name).read_text(encoding="utf-8")
    handlebars, jinja = PromptLibrary(hb_dir, engine="handlebars"), PromptLibrary(jinja_dir)
    assert "dotprompt" not in (jinja_dir / "assistant.prompt").read_text(encoding="utf-8")
    variant_case = ("extract", {"text": "Invoice 15"}, None, "fast")
    for name, data, context, *variant in [*CASES, variant_case]:
        history = HISTORY if name == "summarize" else None
        expected = handlebars.load(name, *variant).render(data, context=context, history=history).to_dict()
        got = jinja.load(name, *variant).render(data, context=context, history=history).to_dict()
        assert got["messages"] == expected["messages"], (name, data)
        for key in ("ext", "raw"):  # they differ only by the dropped `dotprompt.engine` line
            expected.pop(key, None), got.pop(key, None)
        assert got == expected, (name, data)  # the rest of the metadata, config and schemas too


# -- the same Genkit-style folder rendered by dotpromptz, when it is installed ------------------

def test_handlebars_folder_matches_dotpromptz(tmp_path: Path):
    dotpromptz = pytest.importorskip("dotpromptz")
    import asyncio

    partials = {name[1:-7]: text for name, text in HANDLEBARS_PROMPTS.items() if name.startswith("_")}
    ours = PromptLibrary(None, engine="handlebars")
    for name, text in partials.items():
        ours.define_partial(name, text)
    dp = dotpromptz.Dotprompt(partials=partials)
    for name, data, context in CASES:
        source = HANDLEBARS_PROMPTS[f"{name}.prompt"]
        history = HISTORY if name == "summarize" else None
        argument = dotpromptz.DataArgument(input=data, context=context or {},
                                           messages=[dotpromptz.Message.model_validate(m) for m in history or []])
        theirs = asyncio.run(dp.render(source, argument)).messages
        mine = ours.from_source(source).render(data, context=context, history=history).messages
        assert _plain(mine) == _plain(theirs), name


def _plain(messages: list) -> list[tuple[str, str]]:
    # One deliberate difference: dotpromptz's `json` writes non-ASCII as \\uXXXX, ours keeps it (the issue asks so).
    unescape = lambda text: re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)  # noqa: E731
    return [(str(getattr(m.role, "value", m.role)), unescape("".join(p.text or "" for p in m.content).strip()))
            for m in messages]
