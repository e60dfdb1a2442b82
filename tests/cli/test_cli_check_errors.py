"""`dotprompt check` reports every problem of a file at the line that causes it; undeclared template
variables and input fields named like a template helper are errors. Run in-process (tests/cli_inprocess.py)."""

from __future__ import annotations

import pytest

from dotprompt import PromptFileError, PromptLibrary, RenderError
from tests.cli_inprocess import cli


def check(tmp_path, cli_env, files: dict[str, str], *flags: str):
    prompts = tmp_path / "prompts"
    prompts.mkdir(exist_ok=True)
    for name, text in files.items():
        (prompts / name).write_text(text)
    done = cli("check", str(prompts), *flags, env=cli_env)
    assert "Traceback" not in done.stdout + done.stderr
    return done, prompts


def test_an_undeclared_variable_is_an_error_at_its_first_use(tmp_path, cli_env):
    done, prompts = check(tmp_path, cli_env, {
        "vars.prompt": "---\ninput:\n  schema:\n    name: string\n---\nHi {{ name }}\nand {{ nmae }}"})
    assert done.returncode == 1
    assert done.stdout == (f"{prompts}/vars.prompt:7: error: template variable `nmae` is not declared in "
                           "input.schema (did you mean `name`?)  [undeclared-variable]\n")


def test_without_an_input_schema_any_variable_is_fine(tmp_path, cli_env):
    done, _ = check(tmp_path, cli_env, {"free.prompt": "Hi {{ name }} {{ ctx.user }}"})
    assert done.returncode == 0 and done.stdout == "", done.stdout


@pytest.mark.parametrize(("schema", "line", "field"), [
    ("    name: string\n    role: string\n", 5, "role"),
    ("    name: string\n    ctx?: string\n", 5, "ctx"),  # Picoschema optional key: its own line
    ("    name: string\n    history(array): string\n", 5, "history"),
    ("    type: object\n    properties:\n      media: {type: string}\n", 6, "media"),  # JSON Schema form
])
def test_an_input_field_named_like_a_helper_is_an_error_at_its_line(tmp_path, cli_env, schema, line,
                                                                    field):
    done, prompts = check(tmp_path, cli_env, {
        "shadow.prompt": f"---\ninput:\n  schema:\n{schema}---\n{{{{ role('user') }}}}{{{{ name }}}}"})
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{prompts}/shadow.prompt:{line}:"), done.stdout
    assert f"error: input field `{field}` has the name of a template helper" in first
    assert "rename the field" in first


def test_handlebars_helper_names_follow_the_handlebars_engine(tmp_path, cli_env):
    done, prompts = check(tmp_path, cli_env, {
        # `ctx` is no helper in Handlebars (the context is @auth, @state...): a field may have that name.
        "ok.prompt": "---\ndotprompt.engine: handlebars\ninput:\n  schema:\n    ctx: string\n---\n{{ctx}}",
        # `{{log}}` calls the log helper: the field would never reach the prompt.
        "bad.prompt": "---\ndotprompt.engine: handlebars\ninput:\n  schema:\n    log: string\n---\n{{log}}"})
    assert done.returncode == 1
    assert "ok.prompt" not in done.stdout
    assert f"{prompts}/bad.prompt:5:5: error: input field `log` has the name of a template helper" in done.stdout


def test_an_unclosed_bracket_is_reported_where_it_opens(tmp_path, cli_env):
    done, prompts = check(tmp_path, cli_env, {
        "a.prompt": "---\nmodel: [abc\n---\nhello",
        "b.prompt": "---\nmodel: m\ndescription: \"abc\nconfig:\n  x: 1\n---\nhello"})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{prompts}/a.prompt:2:8: error: invalid YAML in frontmatter: the `[` "), lines
    assert "never closed" in lines[0]
    assert lines[1].startswith(f"{prompts}/b.prompt:3:14: error: invalid YAML in frontmatter: the quote "), lines


def test_every_independent_problem_of_a_file_is_reported(tmp_path, cli_env):
    text = ("---\nfoo: 1\ntoolChoice: sometimes\nmaxTurns: 0\ninput:\n  schema:\n    name: string\n"
            "output:\n  format: jsn\n---\nHi {{ nmae }}")
    done, prompts = check(tmp_path, cli_env, {"many.prompt": text})
    assert done.returncode == 1
    where = f"{prompts}/many.prompt"
    assert done.stdout.splitlines() == [
        f"{where}:2:1: warning: unknown key `foo` (extensions use a dotted key such as `myapp.key`)  [unknown-key]",
        f"{where}:3:1: error: `toolChoice` must be one of auto, required, none  [invalid-prompt-file]",
        f"{where}:4:1: error: `maxTurns` must be at least 1  [invalid-prompt-file]",
        f"{where}:9:3: warning: unknown output format 'jsn' (did you mean `json`?)  [unknown-output-format]",
        f"{where}:11: error: template variable `nmae` is not declared in input.schema (did you mean `name`?)  "
        "[undeclared-variable]",
    ]
    assert "4 error(s)" not in done.stderr and "3 error(s), 2 warning(s)" in done.stderr


def test_a_schema_error_and_a_template_error_are_both_reported(tmp_path, cli_env):
    text = "---\ntools: [1]\ninput:\n  schema:\n    name: strng\n---\n{% if %}"
    done, prompts = check(tmp_path, cli_env, {"two.prompt": text})
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert [line.split(": error: ")[0] for line in out] == [f"{prompts}/two.prompt:2:9", f"{prompts}/two.prompt:5:5",
                                                            f"{prompts}/two.prompt:7"], out
    assert "each entry of `tools` must be a tool name" in out[0]
    assert "unknown type 'strng'" in out[1] and "template syntax error" in out[2]


def test_the_example_prompts_still_pass(cli_env):
    done = cli("check", "prompts", "--strict", env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_render_refuses_a_schema_field_named_like_a_helper(tmp_path, cli_env):
    (tmp_path / "p.prompt").write_text("---\ninput:\n  schema:\n    role: string\n---\n{{ role('user') }}{{ role }}")
    done = cli("render", "p", "--dir", str(tmp_path), "--input", '{"role": "admin"}', env=cli_env)
    assert done.returncode == 1 and "bound method" not in done.stdout + done.stderr
    assert f"{tmp_path}/p.prompt:4:5: error: input field `role` has the name of a template helper" in done.stderr
    assert "rename the field" in done.stderr and "Traceback" not in done.stderr


def test_the_library_refuses_it_too(folder):
    folder.write("p.prompt", "---\ninput:\n  schema:\n    name: string\n    section?: string\n---\n{{ name }}")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert (caught.value.line, caught.value.column) == (5, 5) and "`section`" in caught.value.message


def test_a_helper_printed_without_a_call_is_a_render_error_not_a_bound_method():
    lib = PromptLibrary()
    prompt = lib.from_source("{{ role('system') }}You are {{ role }}.")
    with pytest.raises(RenderError) as caught:
        prompt.render({"role": "a pirate"})  # no schema: the helper wins, and says so
    assert "bound method" not in str(caught.value)
    assert "`role` is the template helper role()" in str(caught.value) and "rename" in str(caught.value)
    # The helper keeps working, with an input of that name or without.
    rendered = lib.from_source("{{ role('system') }}Be brief.{{ history() }}").render({"role": "x", "history": 1})
    assert [m.role for m in rendered.messages] == ["system"]
