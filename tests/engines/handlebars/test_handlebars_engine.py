"""The Handlebars engine: @-variables, whitespace, partials, errors, the per-file switch, the spec suite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dotprompt import PromptLibrary
from dotprompt.errors import PromptFileError
from dotprompt.lint.check import check_prompt
from tests.conftest import ROOT
from tests.engines.handlebars.handlebars_support import render, texts

SPEC_RUNNER = ROOT.parent / "shared" / "conformance" / "run_dotprompt_spec.py"

def test_at_state_auth_and_any_context_key():
    src = "{{@state.step}} {{@auth.uid}} {{@tenant}} [{{@missing.x}}] {{@root.name}}"
    out = render(src, {"name": "Ann"}, context={"state": {"step": 2}, "auth": {"uid": "u1"}, "tenant": "acme"})
    assert texts(out) == [("user", "2 u1 acme [] Ann")]


def test_whitespace_control_and_comments():
    src = "{{!-- license\nheader --}}\nA  {{~name~}}  B{{! short }}"
    assert texts(render(src, {"name": "x"})) == [("user", "AxB")]


def test_partials_with_hash_arguments_files_and_resolver(folder):
    folder.write("_greet.prompt", "---\ndescription: a partial\n---\nHello {{who}}{{> tail}}")
    folder.write("main.prompt", '{{> greet who="Ann"}} / {{> greet who=name}}')
    lib = folder.library(engine="handlebars", partial_resolver=lambda n: "!" if n == "tail" else None)
    out = lib.load("main").render({"name": "Bob"}).to_dict()["messages"]
    assert texts(out) == [("user", "Hello Ann! / Hello Bob!")]
    lib.define_partial("greet", "Hi {{who}}")
    assert texts(lib.load("main").render({"name": "Bob"}).to_dict()["messages"]) == [("user", "Hi Ann / Hi Bob")]


def test_partial_cycle_is_an_error_naming_the_chain():
    lib = PromptLibrary(None, engine="handlebars")
    lib.define_partial("a", "A {{> b}}")
    lib.define_partial("b", "B {{> a}}")
    with pytest.raises(PromptFileError) as caught:
        lib.from_source("start\n{{> a}}")
    assert "a -> b -> a" in caught.value.message


def test_missing_partial_and_unknown_helper_name_file_and_line(folder):
    folder.write("p.prompt", "---\nmodel: m\n---\nline one\n{{> nowhere}}")
    with pytest.raises(PromptFileError) as caught:
        folder.library(engine="handlebars").load("p")
    assert caught.value.path.endswith("p.prompt") and caught.value.line == 5 and "nowhere" in caught.value.message
    folder.write("q.prompt", "---\nmodel: m\n---\nok\n\n{{shout name}}")
    prompt = folder.library(engine="handlebars").load("q")  # an application's own helper: defined in code, or not
    with pytest.raises(PromptFileError) as caught:
        prompt.render({"name": "x"})
    assert caught.value.line == 6 and "helper `shout`" in caught.value.message
    assert "[tool.dotprompt] helpers" in caught.value.hint


def test_per_file_engine_switch(folder):
    folder.write("hbs.prompt", '---\ndotprompt.engine: handlebars\n---\n{{role "system"}}{{#if x}}yes{{/if}}')
    folder.write("jin.prompt", '{{ role("system") }}{% if x %}yes{% endif %}')
    lib = folder.library(engine="jinja2")
    for name in ("hbs", "jin"):
        rendered = lib.load(name).render({"x": True})
        assert texts(rendered.to_dict()["messages"]) == [("system", "yes")]
    assert lib.load("hbs").render({}).ext == {"dotprompt": {"engine": "handlebars"}}
    hb_lib = folder.library(engine="handlebars")
    folder.write("back.prompt", '---\ndotprompt.engine: jinja2\n---\n{{ "a" ~ "b" }}')
    assert texts(hb_lib.load("back").render().to_dict()["messages"]) == [("user", "ab")]


def test_unknown_engine_in_frontmatter_is_an_error(folder):
    folder.write("p.prompt", "---\ndotprompt.engine: mustache\n---\nhi")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert "mustache" in caught.value.message and caught.value.line == 2


def test_check_hints_the_switch_for_handlebars_under_jinja2(folder):
    folder.write("p.prompt", "---\nmodel: m\n---\n{{#if x}}y{{/if}}")
    lib = folder.library(engine="jinja2")  # an explicit jinja2 library (the default, auto, reads it as Handlebars)
    with pytest.raises(PromptFileError) as caught:
        lib.load("p")
    assert "dotprompt.engine: handlebars" in caught.value.hint
    folder.write("ok.prompt", "---\ndotprompt.engine: handlebars\n---\n{{#if x}}y{{/if}}")
    assert check_prompt(lib, next(i for i in lib.prompts() if i.name == "ok")) == []


def test_compiled_once_and_recompiled_when_partial_changes():
    lib = PromptLibrary(None, engine="handlebars")
    lib.define_partial("p", "one")
    prompt = lib.from_source("{{> p}}")
    first = prompt.compiled
    assert prompt.compiled is first
    lib.define_partial("p", "two")
    assert texts(prompt.render().to_dict()["messages"]) == [("user", "two")]


@pytest.mark.skipif(not SPEC_RUNNER.exists(), reason="the public Dotprompt spec suite is not checked out")
@pytest.mark.parametrize(("engine", "count"), [("handlebars", 117), ("jinja2", 64)])
def test_public_spec_suite(engine, count):
    run = subprocess.run([sys.executable, str(SPEC_RUNNER), "--engine", engine], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"{count} passed, 0 failed" in run.stdout
