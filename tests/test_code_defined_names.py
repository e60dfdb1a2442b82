"""Schemas, helpers and tools defined in the application's code: one rule for the three kinds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from dotprompt import PromptLibrary
from dotprompt.errors import PromptFileError, UsageError
from dotprompt.lint.check import check_prompt
from tests.cli_process import run

RECIPE = ("---\nmodel: m\ninput:\n  schema:\n    food: string\n    ingredients?(array): string\noutput:\n"
          "  schema: Recipe\n---\nA recipe for {{food}}.\n{{#if ingredients}}\n{{list ingredients}}\n{{/if}}\n")


class Recipe(BaseModel):
    title: str


def _bullets(items, marker="*"):
    return "\n".join(f"{marker} {item}" for item in items)


def test_undefined_names_load_warn_in_check_and_fail_the_render_with_file_line_and_setting(folder):
    folder.write("recipe.prompt", RECIPE)
    lib = folder.library()
    prompt = lib.load("recipe")  # loads: the names may be defined later, in code
    found = check_prompt(lib, lib.prompts()[0])
    assert [(d.level, d.line, d.message.split(" (")[0]) for d in found] == [
        ("warning", 8, "no registered module defines schema `Recipe`"),
        ("warning", 12, "no registered module defines helper `list`"),
    ]
    assert "`[tool.dotprompt] schemas`" in found[0].message and "`[tool.dotprompt] helpers`" in found[1].message
    with pytest.raises(PromptFileError) as caught:
        prompt.render({"food": "soup"})
    assert caught.value.path.endswith("recipe.prompt") and caught.value.line == 8
    assert "schema `Recipe`" in caught.value.message and "[tool.dotprompt] schemas" in caught.value.hint


def test_defining_them_in_code_makes_the_prompt_render(folder):
    folder.write("recipe.prompt", RECIPE)
    lib = folder.library()
    prompt = lib.load("recipe")
    lib.define_schema("Recipe", Recipe)
    lib.define_helper("list", _bullets)
    rendered = prompt.render({"food": "soup", "ingredients": ["leek", "salt"]})
    assert rendered.output.schema["properties"] == {"title": {"title": "Title", "type": "string"}}
    assert rendered.messages[0].content[0].text == "A recipe for soup.\n* leek\n* salt\n"
    assert check_prompt(lib, lib.prompts()[0]) == []


def test_a_helper_works_in_both_engines_with_arguments_and_hash():
    lib = PromptLibrary(None)
    lib.define_helper("list", _bullets)
    hb = lib.from_source('{{list xs marker="-"}}')
    jj = lib.from_source('{{ list(xs, marker="-") }}')
    for prompt in (hb, jj):
        assert prompt.render({"xs": ["a", "b"]}).messages[0].content[0].text == "- a\n- b"
    assert hb.compiled.engine.engine == "handlebars" and jj.compiled.engine.engine == "jinja2"


def test_a_jinja2_call_to_an_undefined_function_is_the_same_undefined_helper():
    prompt = PromptLibrary(None).from_source("{{ shout(name) }}")
    with pytest.raises(PromptFileError, match="helper `shout`") as caught:
        prompt.render({"name": "x"})
    assert "[tool.dotprompt] helpers" in caught.value.hint


@pytest.mark.parametrize(("source", "typo"), [
    ("---\noutput:\n  schema:\n    name: strng\n---\nx", "did you mean `string`?"),
    ("{{jsno data}}", "did you mean `json`?"),
    ("{{ rolee('system') }}", "did you mean `role`?"),
])
def test_a_near_miss_of_a_known_name_is_a_typo_and_an_error_at_once(source, typo):
    with pytest.raises(PromptFileError) as caught:
        PromptLibrary(None).from_source(source)
    assert typo in str(caught.value)


def test_built_in_helper_names_cannot_be_replaced():
    lib = PromptLibrary(None)
    for name in ("role", "media", "if", "json", "ctx"):
        with pytest.raises(UsageError, match="built-in"):
            lib.define_helper(name, _bullets)
    with pytest.raises(UsageError):
        lib.define_helper("not a name", _bullets)


MODULE = '''
from pydantic import BaseModel

from dotprompt import tool


class Recipe(BaseModel):
    title: str


Analysis = {"type": "object", "properties": {"issues": {"type": "array"}}}


def list(items):
    return ", ".join(items)


@tool
def get_weather(city: str) -> str:
    """The weather."""
    return "rain"
'''


@pytest.mark.slow
def test_check_with_the_settings_is_clean_and_strict_fails_without_them(tmp_path, dotprompt_cmd, cli_env):
    (tmp_path / "app.py").write_text(MODULE)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "recipe.prompt").write_text(RECIPE)
    (prompts / "bugs.prompt").write_text("---\ntools: [get_weather]\noutput:\n  schema: Analysis\n---\nLook.")
    done = run(dotprompt_cmd, "check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "0 error(s), 4 warning(s)" in done.stderr, done.stdout + done.stderr
    assert "prompts/bugs.prompt:2:9: warning: no registered module defines tool `get_weather`" in done.stdout
    done = run(dotprompt_cmd, "check", "prompts", "--strict", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    done = run(dotprompt_cmd, "render", "recipe", "--dir", "prompts", "--input", '{"food": "x"}', cwd=tmp_path,
               env=cli_env)
    assert done.returncode == 1 and "recipe.prompt:8:3: error: no registered module defines schema `Recipe`" \
        in done.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["app.py"]\nschemas = ["app.py"]\n'
                                             'helpers = ["app.py"]\n')
    done = run(dotprompt_cmd, "check", "prompts", "--strict", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "0 error(s), 0 warning(s)" in done.stderr, done.stdout
    done = run(dotprompt_cmd, "render", "recipe", "--dir", "prompts", "--input",
               '{"food": "soup", "ingredients": ["leek", "salt"]}', cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "leek, salt" in done.stdout, done.stderr


def test_a_settings_module_that_does_not_import_names_the_setting(tmp_path, dotprompt_cmd, cli_env):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nhelpers = ["no_such_module_here"]\n')
    (tmp_path / "prompts").mkdir()
    done = run(dotprompt_cmd, "check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode != 0 and "[tool.dotprompt] helpers: cannot import 'no_such_module_here'" in done.stderr
