"""What loads when: `import dotprompt` brings only the errors, `dotprompt check` none of the running side.

Each case runs in a fresh interpreter and asserts on `sys.modules` (never on time, which the machine's
load decides): a module that loads too early shows up here whatever the timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

# The running side and the heavy libraries: none is needed to import the package or to check prompts.
RUNNING_SIDE = ("httpx", "aiohttp", "asyncio", "sqlite3", "dotprompt.providers", "dotprompt.generation",
                "dotprompt.batch", "dotprompt.ui", "dotprompt.testing", "dotprompt.evals", "dotprompt.observe.runlog",
                "dotprompt.observe.runrecord", "dotprompt.tools.define", "dotpromptz_handlebars",
                "dotprompt.engines.handlebars.engine", "pygls", "lsprotocol", "dotprompt.lsp")


def loaded_after(code: str, *watched: str, cwd: Path = ROOT) -> list[str]:
    """The `watched` modules (or any of their submodules) loaded once `code` ran in a fresh interpreter."""
    script = (f"import sys\n{code}\n"
              f"watched = {watched!r}\n"
              "print(__import__('json').dumps(sorted({w for w in watched for m in sys.modules "
              "if m == w or m.startswith(w + '.')})))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_dotprompt_loads_only_the_errors():
    heavy = ("pydantic", "jinja2", "yaml", "jsonschema", "referencing", "dotprompt.types", "dotprompt.prompts",
             "dotprompt.document", "dotprompt.schema", "dotprompt.engines", "dotprompt.settings", *RUNNING_SIDE)
    assert loaded_after("import dotprompt\nassert issubclass(dotprompt.PromptFileError, dotprompt.DotpromptError)",
                        *heavy) == []


def test_a_name_loads_its_module_on_first_use():
    code = "import dotprompt\nassert dotprompt.PromptLibrary.__module__ == 'dotprompt.prompts.library'"
    assert loaded_after(code, "dotprompt.prompts.library", "dotprompt.generation") == ["dotprompt.prompts.library"]


def test_rendering_a_jinja2_prompt_loads_no_handlebars_and_nothing_of_the_running_side(tmp_path):
    (tmp_path / "hello.prompt").write_text("---\ninput:\n  schema:\n    name: string\n---\nHi {{ name }}")
    code = ("from dotprompt import PromptLibrary\n"
            f"text = PromptLibrary({str(tmp_path)!r}).load('hello').render({{'name': 'Ann'}}).messages[0].content[0].text\n"
            "assert text == 'Hi Ann', text")
    assert loaded_after(code, *RUNNING_SIDE) == []


def test_dotprompt_check_loads_nothing_of_the_running_side(tmp_path):
    for index in range(3):  # a folder below the parallel threshold, with a shared partial
        (tmp_path / f"p{index}.prompt").write_text("---\ninput:\n  schema:\n    name: string\n---\n"
                                                   "{% include 'rules' %} {{ name }}")
    (tmp_path / "_rules.prompt").write_text("Be brief.")
    code = f"from dotprompt.cli import main\nassert main(['check', {str(tmp_path)!r}]) == 0"
    # (run outside this repository, whose pyproject.toml names tool modules for `check` to import)
    assert loaded_after(code, *RUNNING_SIDE, cwd=tmp_path) == []


def test_building_the_command_line_loads_nothing_of_the_running_side():
    # `main` builds the parser from every command module first: their own imports must stay light.
    assert loaded_after("from dotprompt.cli import build_parser\nbuild_parser()", *RUNNING_SIDE) == []


# What `check` of a real project may not load: the generate loop, the providers and HTTP, the eval and
# test runners, the batch runner, the run log. (A project's tool modules do load: they are user code.)
NOT_FOR_CHECK = ("httpx", "aiohttp", "asyncio", "sqlite3", "dotprompt.generation", "dotprompt.providers",
                 "dotprompt._http", "dotprompt.local.model", "dotprompt.local.server", "dotprompt.evals.run",
                 "dotprompt.evals.compare", "dotprompt.testing.runner", "dotprompt.testing.recording",
                 "dotprompt.testing.judge", "dotprompt.batch", "dotprompt.observe", "dotprompt.ui")
COMMAND_MODULES = tuple(f"dotprompt.cli.{name}" for name in (
    "render", "check", "schema", "run", "test", "evaluate", "logs", "convert", "listing", "local", "ui", "progress",
    "grounding_view", "run_batchapi", "run_ray", "lsp"))


def test_dotprompt_check_of_the_example_project_loads_no_runner():
    # The repository's own prompts: test files with recordings, `eval:` sections, tools from pyproject.toml.
    code = "from dotprompt.cli import main\nassert main(['check']) == 0"
    assert loaded_after(code, *NOT_FOR_CHECK) == []


# The formats' readers of a reply (streamed or whole: `formats/reading/`, partial-json-parser): `check` asks
# a format only for its name, its schema check and its instructions (`reading/limits.py`, constants only, loads).
REPLY_READERS = (*(f"dotprompt.formats.reading.{name}" for name in (
    "extract", "flatline", "incremental", "jsonl_lines", "lenient", "locate", "snapshots", "textpos")),
    "partial_json_parser", "dotprompt._util.finite", "dotprompt.formats.finite")


def test_dotprompt_check_of_the_example_project_loads_no_reply_reader():
    code = ("from dotprompt.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['check']) == 0")
    assert loaded_after(code, *REPLY_READERS) == []


def test_every_builtin_format_still_reads_a_reply_once_its_readers_load():
    code = ("from dotprompt.formats import get_format\n"
            "for name, text in [('json', '{\"a\": 1}'), ('array', '[1]'), ('jsonl', '{\"a\": 1}'),"
            " ('enum', 'x'), ('text', 'x')]:\n"
            "    schema = {'type': 'string', 'enum': ['x']} if name == 'enum' else None\n"
            "    handler = get_format(name).handler(schema)\n"
            "    assert handler.parse_text(text).value is not None, name\n"
            "    handler.new_stream().feed(text)")
    assert loaded_after(code, "dotprompt.formats.reading.extract", "dotprompt.formats.reading.incremental",
                        "dotprompt.formats.reading.jsonl_lines") == [
        "dotprompt.formats.reading.extract", "dotprompt.formats.reading.incremental",
        "dotprompt.formats.reading.jsonl_lines"]


def test_reading_a_test_file_or_an_eval_section_loads_no_runner():
    code = "import dotprompt.testing.cases, dotprompt.evals.config"
    assert loaded_after(code, *NOT_FOR_CHECK) == []


def _main(*argv: str) -> str:
    return f"from dotprompt.cli import main\ntry:\n    main({list(argv)!r})\nexcept SystemExit:\n    pass"


def test_version_and_help_load_no_command():
    assert loaded_after(_main("--version"), *COMMAND_MODULES, "pydantic", "jinja2", "yaml") == []
    assert loaded_after(_main("--help"), *COMMAND_MODULES, "pydantic", "jinja2", "yaml") == []


def test_a_command_loads_its_own_module_only():
    assert loaded_after(_main("check", "--help"), *COMMAND_MODULES) == ["dotprompt.cli.check"]
    assert loaded_after(_main("render", "--help"), *COMMAND_MODULES) == ["dotprompt.cli.render"]
    assert loaded_after(_main("eval", "--help"), *COMMAND_MODULES) == ["dotprompt.cli.evaluate"]


# What `check` and `render` of the example project leave out: jsonschema's meta-schema check runs only for a
# hand-written schema the quick check cannot vouch for (`dotprompt.schema.metacheck`), and the example
# prompts' schemas are all of the common kind.
NOT_FOR_EXAMPLES = ("jsonschema", "referencing", "jsonschema_specifications", "rpds", "attrs",
                    "multiprocessing", "concurrent")  # the workers of a large folder only


def test_check_and_render_of_the_example_project_load_no_jsonschema_and_no_workers():
    code = ("from dotprompt.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['check']) == 0\n"
            "    assert main(['render', 'classify', '--input', '{\"subject\": \"s\", \"body\": \"b\"}']) == 0\n"
            "    assert main(['render', 'extract', '--input', '{\"text\": \"x\"}']) == 0")
    assert loaded_after(code, *NOT_FOR_EXAMPLES) == []


# `--version` answers from the package's own version constant: no settings, no pyproject.toml, nothing of
# the prompt side (which is what keeps it within the interpreter's start-up + 60 ms).
NOT_FOR_VERSION = ("dotprompt.settings", "tomllib", "dotprompt.document", "dotprompt.prompts", "dotprompt.types",
                   "dotprompt.formats", "dotprompt.lint", "importlib.metadata", "pydantic", "jinja2", "yaml")


def test_version_loads_the_command_line_and_the_errors_only():
    assert loaded_after(_main("--version"), *NOT_FOR_VERSION) == []


# What `render` of the example project may not load: what `check` may not (the loop, the providers, the
# runners, the run log), nor `check`'s own side (the linter, the formats and their streaming readers, test
# files and eval sections), nor jsonschema for its common schemas.
NOT_FOR_RENDER = (*NOT_FOR_CHECK, "dotprompt.lint", "dotprompt.formats", "dotprompt.testing", "dotprompt.evals",
                  "dotprompt.cli.check", "partial_json_parser", *NOT_FOR_EXAMPLES)


def test_render_of_the_example_project_loads_no_runner_and_no_linter():
    code = ("from dotprompt.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['render', 'summarize']) == 0\n"
            "    assert main(['render', 'extract', '--json', '--input', '{\"text\": \"x\"}']) == 0\n"
            "    assert main(['render', 'assistant', '--json', '--input',\n"
            "                 '{\"question\": \"q\", \"customer_id\": \"c-7\"}']) == 0")
    assert loaded_after(code, *NOT_FOR_RENDER) == []


def test_render_builds_no_pydantic_validator(tmp_path):
    # Rendering builds its messages without validating them again (`types.construct`), so pydantic builds no
    # validator and never scans every installed distribution for its plugins (importlib.metadata: ~200M
    # instructions, ~60 ms of a start-up). A project's `@tool` functions build one (their input model) when
    # a prompt listing them renders, and so does `render --json` (`RenderedPrompt.to_dict` is a `model_dump`).
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hello.prompt").write_text("---\ninput:\n  schema:\n    name: string\noutput:\n"
                                                       "  format: json\n  schema:\n    greeting: string\n---\n"
                                                       "{{ role('system') }}Be brief.{{ role('user') }}Hi {{ name }}")
    code = ("from dotprompt.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['render', 'hello', '--input', '{\"name\": \"Ann\"}']) == 0")
    assert loaded_after(code, "importlib.metadata", "pydantic.plugin._loader", "jsonschema", cwd=tmp_path) == []


# pydantic is most of a start-up (~60-90 ms of the ~140-180 ms `check` and `render` take over the interpreter):
# `check` compiles every prompt and renders none, so nothing builds a render type; `render`'s printout is the
# same render as plain classes (document/view.py); the project's `@tool` module is imported, but a tool's
# schemas (its pydantic input model) are built only when a prompt that lists it is rendered or run.
def test_check_and_the_render_printout_of_the_example_project_load_no_pydantic():
    check = ("from dotprompt.cli import main\nimport contextlib, io\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    assert main(['check']) == 0")
    render = ("from dotprompt.cli import main\nimport contextlib, io, sys\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['render', 'summarize']) == 0\n"
              "    assert main(['render', 'extract', '--input', '{\"text\": \"x\"}']) == 0\n"
              "assert 'dotprompt.tools.define' in sys.modules  # the project's tool module was imported")
    assert loaded_after(check, "pydantic", "pydantic_core", "dotprompt.types") == []
    assert loaded_after(render, "pydantic", "pydantic_core", "dotprompt.types") == []


def test_code_tools_build_their_schemas_only_for_the_json_shape_that_shows_them():
    # The printout names a prompt's tools; `render --json` shows their definitions (toolDefs), so builds them.
    render = ("from dotprompt.cli import main\nimport contextlib, io\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['render', 'assistant', '--input', '{\"question\": \"q\", \"customer_id\": \"c-7\"}'"
              "FLAGS]) == 0")
    assert loaded_after(render.replace("FLAGS", ""), "pydantic.main", "dotprompt.types") == []
    assert loaded_after(render.replace("FLAGS", ", '--json'"), "pydantic.main", "dotprompt.types") == [
        "dotprompt.types", "pydantic.main"]
