"""`engine: auto`: a file that names no engine gets one from its template's syntax, and a jinja2 file never switches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jinja2 import TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from dotprompt import PromptLibrary
from dotprompt.document.parse import parse_source
from dotprompt.engines.detect import choose_engine, detect_engine
from dotprompt.errors import DotpromptError, UsageError
from dotprompt.settings import template_engine
from tests.cli_process import run

REPO = Path(__file__).resolve().parents[1]
SPEC_DIR = REPO.parent / "shared" / "conformance" / "dotprompt-spec"

HANDLEBARS_ONLY = [
    '{{role "system"}}', '{{ role "user" }}', "{{#if x}}a{{/if}}", "{{#each xs}}{{this}}{{/each}}", "{{^x}}no{{/x}}",
    "{{> style}}", "{{>style personality=personality}}", "{{! note }}", "{{!-- a }} b --}}", "{{@key}}",
    "{{ @state.name }}", "{{&x}}", "{{{x}}}", "{{~x}}", "{{x~}}", "{{../name}}", "{{media url=photoUrl}}",
    "{{media url=u contentType=t}}", "{{list ingredients}}", "{{json data indent=2}}", '{{section "a"}}',
    "{{lookup xs 0}}", "{{ history }}", "{{history}}",
]
JINJA2 = [
    "Hello {{ name }}", "{{name}}", "{{ a.b }}", "{{ x is defined }}", "{{ not x }}", "{{ x if y else z }}",
    "{{ a and b or c }}", "{{ x in y }}", "{{ x not in y }}", "{{ x (y) }}", "{{ x [0] }}", "{{ x | e }}",
    "{{ x ~ y }}", "{{ x -1 }}", "{{{}}}", '{{{"a": 1}}}', '{{ "}}" }}', '{{ "{{#if x}}" }}',
    "{% raw %}{{#if x}}{{/if}}{% endraw %}", "{# {{> partial}} #}", '{{ role("system") }}', "{{ history() }}",
    "{% if x %}{{#if x}}{{/if}}{% endif %}",  # mixed: jinja2 (its error says how to write it)
    "no tags at all", "{{else}}",
]


@pytest.mark.parametrize("template", HANDLEBARS_ONLY)
def test_handlebars_only_syntax_is_detected(template):
    choice = detect_engine(template)
    assert (choice.engine, choice.source) == ("handlebars", "detected")
    assert "line 1 is Handlebars syntax" in choice.reason


@pytest.mark.parametrize("template", HANDLEBARS_ONLY)
def test_what_counts_as_handlebars_is_what_jinja2_cannot_compile_or_render(template):
    # The guarantee behind "a jinja2 file never switches": every construct read as Handlebars fails in jinja2.
    try:
        ImmutableSandboxedEnvironment().parse(template)
    except TemplateSyntaxError:
        return
    with pytest.raises(DotpromptError):
        PromptLibrary(None, engine="jinja2").from_source(template).render({"x": 1})


@pytest.mark.parametrize("template", JINJA2)
def test_everything_else_stays_jinja2(template):
    assert detect_engine(template).engine == "jinja2"


def test_the_reason_names_the_first_handlebars_tag_and_its_file_line():
    choice = detect_engine("Hello\n\n{{#if x}}yes{{/if}}", first_line=5)
    assert choice.reason == "`{{#if x}}` on line 7 is Handlebars syntax"
    mixed = detect_engine("{{#if x}}\n{% if y %}{% endif %}")
    assert mixed.engine == "jinja2" and "`{% if y %}` on line 2" in mixed.reason


def test_a_declared_engine_and_an_explicit_library_engine_win():
    body = '{{role "system"}}hi'
    assert choose_engine({"dotprompt": {"engine": "jinja2"}}, body, "auto").source == "file"
    assert choose_engine({"dotprompt": {"engine": "jinja2"}}, body, "auto").engine == "jinja2"
    assert choose_engine({}, body, "jinja2").engine == "jinja2"
    assert choose_engine({}, "{{ name }}", "handlebars").engine == "handlebars"
    assert choose_engine({}, body, "auto").engine == "handlebars"


def _repo_prompt_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.prompt"], cwd=REPO, capture_output=True, text=True, check=False)
    if listed.returncode == 0 and listed.stdout.strip():
        return [REPO / line for line in listed.stdout.splitlines()]
    return [p for p in REPO.rglob("*.prompt") if ".venv" not in p.parts]


def test_every_prompt_file_of_the_repository_keeps_its_engine():
    files = _repo_prompt_files()
    assert len(files) >= 10  # prompts/, examples/
    for path in files:
        src = parse_source(path.read_text(encoding="utf-8"), str(path))
        today = choose_engine(src.ext, src.template, "jinja2").engine  # the default before auto
        assert choose_engine(src.ext, src.template, "auto").engine == today, path


@pytest.mark.skipif(not SPEC_DIR.is_dir(), reason="the public Dotprompt spec suite is not checked out")
def test_spec_suite_templates_jinja2_runs_stay_jinja2_the_rest_are_handlebars():
    sys.path.insert(0, str(SPEC_DIR.parent))
    try:
        from run_dotprompt_spec import engine_neutral
    finally:
        sys.path.pop(0)
    counts = {"jinja2": 0, "handlebars": 0}
    for file in sorted(SPEC_DIR.rglob("*.yaml")):
        for suite in yaml.safe_load(file.read_text(encoding="utf-8")) or []:
            src = parse_source(suite["template"])
            engine = detect_engine(src.template).engine
            assert engine == ("jinja2" if engine_neutral(suite) else "handlebars"), (file.name, suite.get("name"))
            counts[engine] += len(suite.get("tests", []))
    assert counts == {"jinja2": 64, "handlebars": 53}


def test_auto_is_the_default_and_each_file_gets_its_engine(folder):
    folder.write("hb.prompt", '---\nmodel: m\n---\n{{role "system"}}Hi {{#if name}}{{name}}{{/if}}')
    folder.write("jj.prompt", '{{ role("system") }}Hi {% if name %}{{ name }}{% endif %}')
    lib = folder.library()
    assert lib.engine == "auto"
    for name in ("hb", "jj"):
        messages = lib.load(name).render({"name": "Ann"}).messages
        assert [(m.role, m.content[0].text) for m in messages] == [("system", "Hi Ann")]
    assert lib.load("hb").compiled.engine.engine == "handlebars"
    assert lib.load("jj").compiled.engine.engine == "jinja2"


def test_an_unknown_engine_setting_is_a_usage_error():
    with pytest.raises(DotpromptError, match="auto, jinja2, handlebars"):
        PromptLibrary(None, engine="mustache")
    with pytest.raises(UsageError, match=r"\[tool.dotprompt\] engine"):
        template_engine(None, project={"engine": "mustache"})
    assert template_engine(None, project={"engine": "handlebars"}) == "handlebars"
    assert template_engine("jinja2", project={"engine": "handlebars"}) == "jinja2"
    assert template_engine() == "auto"


def _project(tmp_path: Path, engine: str | None) -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[tool.dotprompt]\nengine = "{engine}"\n' if engine else "")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "hb.prompt").write_text('---\nmodel: m\n---\n{{role "system"}}Hi {{name}}')
    return prompts


@pytest.mark.slow
def test_check_verbose_and_render_json_say_which_engine_and_why(tmp_path, dotprompt_cmd, cli_env):
    _project(tmp_path, None)
    done = run(dotprompt_cmd, "check", "-v", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("prompts/hb.prompt: note: engine handlebars (detected: `{{role \"system\"}}` on line 4 is Handlebars "
            "syntax)") in done.stdout
    done = run(dotprompt_cmd, "render", "hb", "--dir", "prompts", "--json", "--input", '{"name": "Ann"}',
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["engine"]["name"] == "handlebars" and shown["engine"]["source"] == "detected"
    assert shown["messages"] == [{"role": "system", "content": [{"text": "Hi Ann"}]}]


@pytest.mark.slow
def test_the_project_setting_and_the_flag_choose_the_engine(tmp_path, dotprompt_cmd, cli_env):
    _project(tmp_path, "jinja2")
    done = run(dotprompt_cmd, "check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "template syntax error" in done.stdout
    done = run(dotprompt_cmd, "check", "prompts", "--engine", "auto", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout
    done = run(dotprompt_cmd, "render", "hb", "--dir", "prompts", "--template-engine", "handlebars",
               cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "Hi" in done.stdout
    done = run(dotprompt_cmd, "run", "hb", "--dir", "prompts", "--model", "echo", "--no-log",
               "--template-engine", "auto", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr



@pytest.mark.parametrize(("template", "engine", "guessed"), [
    ("{{ a }} and {{ b }}\n" * 50, "jinja2", True),
    ("{{ a }}\n" * 50 + "{% if a %}x{% endif %}\n", "jinja2", False),
    ("{{#if a}}{{a}}{{/if}}\n", "handlebars", False)])
def test_choosing_the_engine_scans_the_template_once(template, engine, guessed, monkeypatch):
    """`auto` reads the template's tags once for both questions (which engine, and is it ambiguous): the
    scan walks the whole template when it holds no jinja2 tag, and `dotprompt lsp` runs it on every change."""
    import dotprompt.engines.detect as detect
    calls = []
    real = detect.scan
    monkeypatch.setattr(detect, "scan", lambda text: calls.append(text) or real(text))
    choice = choose_engine({}, template, "auto")
    assert calls == [template]
    assert (choice.engine, choice.guessed) == (engine, guessed)
