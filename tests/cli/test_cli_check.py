"""`dotprompt check`, in-process (tests/cli_inprocess.py); the examples' check also as a real subprocess."""

from __future__ import annotations

from tests.cli_inprocess import cli
from tests.cli_process import run


def test_check_passes_on_the_examples(dotprompt_cmd, cli_env):
    done = run(dotprompt_cmd, "check", "prompts", "--strict", env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 error(s), 0 warning(s)" in done.stderr


def test_check_reports_every_problem_with_locations(tmp_path, cli_env):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "typo.prompt").write_text("---\nmodel: m\nmax_turns: 3\noutput:\n  format: jsn\n---\nx")
    (prompts / "pico.prompt").write_text("---\noutput:\n  schema:\n    name: strng\n---\nx")
    (prompts / "vars.prompt").write_text("---\ninput:\n  schema:\n    name: string\n---\nHi {{ name }}\nand {{ nmae }}")
    (prompts / "hbs.prompt").write_text('{{role "system"}}hi{% if x %}{% endif %}')  # mixed: read as jinja2
    (prompts / "_broken.prompt").write_text("{% if %}")
    (prompts / "cycle.prompt").write_text("{% include 'loop' %}")
    (prompts / "_loop.prompt").write_text("{% include 'loop' %}")
    (prompts / "shadow.prompt").write_text("---\ninput:\n  schema:\n    role: string\n---\n{{ role('user') }}")
    (prompts / "default.prompt").write_text("---\ninput:\n  schema:\n    n: integer\n  default:\n    n: x\n---\n{{ n }}")
    done = cli("check", str(prompts), env=cli_env)
    out = done.stdout
    assert done.returncode == 1
    assert f"{prompts}/typo.prompt:3:1: warning: unknown key `max_turns` (did you mean `maxTurns`?)" in out
    assert f"{prompts}/typo.prompt:5:3: warning: unknown output format 'jsn'" in out
    assert f"{prompts}/pico.prompt:4:5: error: unknown type 'strng' in output.schema.name" in out
    assert f"{prompts}/vars.prompt:7: error: template variable `nmae` is not declared" in out
    assert "did you mean `name`" in out
    assert f"{prompts}/hbs.prompt:1:" in out and "Handlebars" in out
    assert f"{prompts}/_broken.prompt:1: error: template syntax error" in out
    assert "partial cycle: loop -> loop" in out
    assert f"{prompts}/default.prompt:5:3: error: input.default $.n: 'x' is not of type 'integer'" in out
    assert f"{prompts}/shadow.prompt:4:5: error: input field `role` has the name of a template helper" in out
    assert "Traceback" not in out + done.stderr


def test_check_github_format(tmp_path, cli_env):
    (tmp_path / "p.prompt").write_text("---\nmaxTurns: 0\n---\nx")
    done = cli("check", str(tmp_path), "--format", "github", env=cli_env)
    assert done.returncode == 1
    assert done.stdout.strip() == (f"::error file={tmp_path}/p.prompt,line=2,col=1,title=invalid-prompt-file::"
                                   "`maxTurns` must be at least 1")


def test_check_missing_folder_is_a_usage_error(tmp_path, cli_env):
    done = cli("check", str(tmp_path / "nope"), env=cli_env)
    assert done.returncode == 2 and "does not exist" in done.stderr


USER_FORMAT = """from dotprompt.formats import Format, ParsedOutput, define_format


class Shout:
    def __init__(self, schema):
        self.instructions = "Answer in capitals."

    def parse_text(self, text):
        return ParsedOutput(text.upper(), [])


define_format(Format(name="shout", content_type="text/plain", constrained=False, default_instructions=True,
                     handler=Shout))
"""


def test_check_knows_a_format_defined_by_the_project(tmp_path, cli_env):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["shout_format.py"]\n')
    (tmp_path / "shout_format.py").write_text(USER_FORMAT)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "loud.prompt").write_text("---\noutput:\n  format: shout\n---\nsay hi")
    (prompts / "image.prompt").write_text("---\noutput:\n  format: image\n---\nsay hi")
    done = cli("check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "loud.prompt" not in done.stdout
    assert done.stdout == ("prompts/image.prompt:3:3: warning: unknown output format 'image' "  # there is no such format
                           "(known formats: array, enum, json, jsonl, media, shout, text)  [unknown-output-format]\n")
