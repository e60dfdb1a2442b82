"""`engine: auto` for a file either engine reads alike (plain `{{name}}` tags): its folder and project
decide (issue 29, item 12). In a Genkit-style folder it renders as Handlebars and dotpromptz do
(`true`, `vip,eu`, `9`, `1000000000000000000000`); a jinja2 file that works today keeps its engine
and output; where nothing decides, `dotprompt check` warns at each value that would print otherwise."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dotprompt import PromptLibrary
from dotprompt.engines.detect import is_ambiguous
from dotprompt.lint.check import check_library

VIP = ("---\nmodel: googleai/gemini-2.5-flash\ninput:\n  schema:\n    name: string\n    vip: boolean\n"
       "    tags(array): string\n    score: number\n    big: number\n    visits: integer\n---\n"
       "{{name}}: vip={{vip}} tags={{ tags }} score={{score}} big={{big}} visits={{visits}}")
DATA = {"name": "Ann", "vip": True, "tags": ["vip", "eu"], "score": 9.0, "big": 1e21, "visits": 3}
GENKIT_TEXT = "Ann: vip=true tags=vip,eu score=9 big=1000000000000000000000 visits=3"
PYTHON_TEXT = "Ann: vip=True tags=['vip', 'eu'] score=9.0 big=1e+21 visits=3"
HANDLEBARS_FILE = '{{role "system"}}\nYou help {{#if vip}}a VIP{{else}}a customer{{/if}}.'
JINJA_FILE = "{% if vip %}VIP{% endif %} {{ name | upper }}"


def _project(tmp_path: Path, files: dict[str, str], manifests: dict[str, str] | None = None) -> Path:
    (tmp_path / ".git").mkdir()  # the project ends here: nothing above the test folder counts
    for name, text in (manifests or {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for name, text in files.items():
        (prompts / name).write_text(text, encoding="utf-8")
    return prompts


def _text(lib: PromptLibrary, name: str) -> str:
    return lib.load(name).render(DATA).messages[-1].content[0].text


def test_plain_tags_are_ambiguous_and_expressions_are_not():
    assert is_ambiguous(VIP.split("---\n")[-1]) and is_ambiguous("no tags") and is_ambiguous("{{ a.b.0 }}")
    for template in ["{{ x | upper }}", "{{ a + 1 }}", "{{ f(x) }}", "{% if x %}{% endif %}", "{{#if x}}{{/if}}",
                     "{{ a['b'] }}", "{{{ x }}}", "{{ x }"]:
        assert not is_ambiguous(template), template


def test_in_a_handlebars_folder_values_print_as_genkit_and_dotpromptz_print_them(tmp_path):
    root = _project(tmp_path, {"vip.prompt": VIP, "welcome.prompt": HANDLEBARS_FILE, "_tone.prompt": "{{> x}}"})
    lib = PromptLibrary(root)
    assert _text(lib, "vip") == GENKIT_TEXT
    choice = lib.load("vip").compiled.engine
    assert (choice.engine, choice.source) == ("handlebars", "detected")
    assert "other prompt files of its folder are Handlebars" in choice.reason
    dotpromptz = pytest.importorskip("dotpromptz")
    theirs = asyncio.run(dotpromptz.Dotprompt().render(VIP, dotpromptz.DataArgument(input=DATA)))
    assert theirs.messages[-1].content[0].text == GENKIT_TEXT


def test_in_a_jinja2_folder_the_file_keeps_its_engine_and_its_output(tmp_path):
    root = _project(tmp_path, {"vip.prompt": VIP, "other.prompt": JINJA_FILE})
    lib = PromptLibrary(root)
    assert _text(lib, "vip") == PYTHON_TEXT
    assert lib.load("vip").compiled.engine.engine == "jinja2" and not lib.load("vip").compiled.engine.guessed
    assert check_library(lib, jobs=1) == []  # the folder says jinja2: nothing to warn about


@pytest.mark.parametrize(("manifests", "engine"), [
    ({"package.json": '{"name": "shop", "dependencies": {"express": "4"}}'}, "handlebars"),
    ({"go.mod": "module example.com/shop\n"}, "handlebars"),
    ({"pubspec.yaml": "name: shop\n"}, "handlebars"),
    ({"pyproject.toml": '[project]\nname = "shop"\ndependencies = ["genkit>=0.5"]\n'}, "handlebars"),
    ({"requirements.txt": "genkit\nflask\n"}, "handlebars"),
    ({"package.json": '{"dependencies": {"@genkit-ai/googleai": "1"}}', "pyproject.toml": "[project]\n"},
     "handlebars"),
    ({"package.json": '{"devDependencies": {"vite": "5"}}', "pyproject.toml": "[project]\nname = 'shop'\n"}, "jinja2"),
    ({"pyproject.toml": "[project]\nname = 'shop'\n"}, "jinja2"),
    ({}, "jinja2"),
])
def test_a_lone_file_takes_the_engine_of_the_project_around_its_folder(tmp_path, manifests, engine):
    root = _project(tmp_path, {"vip.prompt": VIP}, manifests)
    lib = PromptLibrary(root)
    assert lib.load("vip").compiled.engine.engine == engine
    assert _text(lib, "vip") == (GENKIT_TEXT if engine == "handlebars" else PYTHON_TEXT)


def test_where_nothing_decides_check_warns_at_each_value_that_would_print_otherwise(tmp_path):
    root = _project(tmp_path, {"vip.prompt": VIP, "plain.prompt": "---\ninput:\n  schema:\n    q: string\n---\n{{q}}"})
    lib = PromptLibrary(root)
    assert _text(lib, "vip") == PYTHON_TEXT  # as before: a jinja2 file that works today keeps its output
    assert lib.load("vip").compiled.engine.guessed
    found = check_library(lib, jobs=1)
    assert {(Path(d.path).name, d.line, d.level) for d in found} == {("vip.prompt", 12, "warning")}
    messages = " ".join(d.message for d in found)
    for field in ("{{vip}}", "{{ tags }}", "{{score}}", "{{big}}"):
        assert field in messages, field
    assert "{{visits}}" not in messages and "{{name}}" not in messages
    assert "dotprompt.engine: handlebars" in messages and "dotprompt.engine: jinja2" in messages


def test_a_declared_engine_and_a_library_setting_still_win(tmp_path):
    root = _project(tmp_path, {"vip.prompt": "---\ndotprompt.engine: jinja2\n" + VIP[4:], "w.prompt": HANDLEBARS_FILE})
    assert _text(PromptLibrary(root), "vip") == PYTHON_TEXT
    (root / "vip.prompt").write_text(VIP, encoding="utf-8")
    assert _text(PromptLibrary(root, engine="jinja2"), "vip") == PYTHON_TEXT
    assert [d for d in check_library(PromptLibrary(root, engine="jinja2"), jobs=1) if "vip" in d.path] == []


def test_render_json_names_the_reason(tmp_path, cli_env):
    from tests.cli_inprocess import cli

    _project(tmp_path, {"vip.prompt": VIP, "welcome.prompt": HANDLEBARS_FILE})
    done = cli("render", "vip", "--dir", "prompts", "--input", json.dumps(DATA), "--json", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    engine = json.loads(done.stdout)["engine"]
    assert engine["name"] == "handlebars" and "folder" in engine["reason"]
