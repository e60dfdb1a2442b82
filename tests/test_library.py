"""PromptLibrary: discovery, variants, namespaces, partials, hot reload, names, threads, load_prompt."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from dotprompt import (
    InvalidPromptNameError,
    PromptFileError,
    PromptLibrary,
    PromptNotFoundError,
    RenderError,
    load_prompt,
)
from dotprompt.types import ToolDefinition


def text_of(rendered, index: int = 0) -> str:
    return "".join(p.text or "" for p in rendered.messages[index].content)


def test_discovers_prompts_variants_namespaces_and_partials(folder):
    folder.write("extract.prompt", "a")
    folder.write("extract.fast.prompt", "b")
    folder.write("_header.prompt", "h")
    folder.write("billing/refund.prompt", "c")
    folder.write("billing/_footer.prompt", "f")
    lib = folder.library()
    assert [(i.name, i.variant) for i in lib.prompts()] == [
        ("billing/refund", None), ("extract", None), ("extract", "fast")]
    assert lib.partials() == ["billing/footer", "header"]
    assert text_of(lib.load("extract", variant="fast").render()) == "b"
    assert text_of(lib.load("billing/refund").render()) == "c"


def test_load_is_cached(folder):
    folder.write("a.prompt", "x")
    lib = folder.library()
    assert lib.load("a") is lib.load("a")


def test_unknown_name_suggests_the_closest(folder):
    folder.write("extract.prompt", "x")
    folder.write("classify.prompt", "x")
    with pytest.raises(PromptNotFoundError) as caught:
        folder.library().load("extrct")
    assert caught.value.suggestions == ["extract"]
    assert "did you mean 'extract'" in str(caught.value)


@pytest.mark.parametrize("name", ["../secret", "a/../../b", "/etc/passwd", "a//b", "..", "a\\b", ""])
def test_names_that_leave_the_folder_are_refused(folder, name):
    with pytest.raises(InvalidPromptNameError):
        folder.library().load(name)


def test_refused_variant_too(folder):
    with pytest.raises(InvalidPromptNameError):
        folder.library().load("a", variant="../x")


def test_file_partial_with_include_and_with_arguments(folder):
    folder.write("_greet.prompt", "Hello {{ who }}{{ suffix }}")
    folder.write("p.prompt", '{% with who="Ann" %}{% include "greet" %}{% endwith %} / {% include "greet" %}')
    out = folder.library().load("p").render({"who": "Bo", "suffix": "!"})
    assert text_of(out) == "Hello Ann! / Hello Bo!"


def test_partial_can_use_helpers(folder):
    folder.write("_sys.prompt", '{{ role("system") }}Be brief.')
    folder.write("p.prompt", '{% include "sys" %}{{ role("user") }}{{ q }}')
    out = folder.library().load("p").render({"q": "why?"})
    assert [(m.role, text_of(out, i)) for i, m in enumerate(out.messages)] == [("system", "Be brief."), ("user", "why?")]


def test_defined_partials_and_resolver():
    lib = PromptLibrary(None, partial_resolver={"outer": 'from {% include "inner" %}', "inner": "resolver"}.get)
    lib.define_partial("defined", "defined partial")
    out = lib.from_source('{% include "defined" %} / {% include "outer" %}').render()
    assert text_of(out) == "defined partial / from resolver"


def test_namespaced_partial(folder):
    folder.write("billing/_footer.prompt", "Billing footer")
    folder.write("billing/x.prompt", '{% include "billing/footer" %}')
    assert text_of(folder.library().load("billing/x").render()) == "Billing footer"


def test_missing_partial_is_a_file_error_with_line(folder):
    folder.write("p.prompt", "---\nmodel: m\n---\nline\n{% include 'nope' %}")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert caught.value.line == 5 and "partial 'nope' not found" in caught.value.message
    assert "_nope.prompt" in caught.value.hint


def test_partial_cycle_names_the_chain(folder):
    folder.write("_a.prompt", "{% include 'b' %}")
    folder.write("_b.prompt", "x\n{% include 'a' %}")
    folder.write("p.prompt", "{% include 'a' %}")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert "partial cycle: a -> b -> a" in caught.value.message
    assert caught.value.path.endswith("_b.prompt") and caught.value.line == 2


def test_self_including_partial_is_a_cycle():
    lib = PromptLibrary(None)
    lib.define_partial("loop", "{% include 'loop' %}")
    with pytest.raises(PromptFileError) as caught:
        lib.from_source("{% include 'loop' %}")
    assert "loop -> loop" in caught.value.message


def test_dynamic_include_cycle_is_a_render_error():
    lib = PromptLibrary(None)
    lib.define_partial("loop", "{% include name %}")
    with pytest.raises(RenderError):
        lib.from_source("{% include name %}").render({"name": "loop"})


def test_syntax_error_line_counts_from_the_first_line_of_the_file(folder):
    folder.write("p.prompt", "---\nmodel: m\nconfig:\n  temperature: 0\n---\n{{ name }\n")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert caught.value.line == 6 and caught.value.path.endswith("p.prompt")
    assert str(caught.value).startswith(f"{caught.value.path}:6: error: template syntax error")


def test_syntax_error_in_a_partial_names_the_partial(folder):
    folder.write("_bad.prompt", "---\ndescription: x\n---\nok\n{% if %}")
    folder.write("p.prompt", "{% include 'bad' %}")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert caught.value.path.endswith("_bad.prompt") and caught.value.line == 5


def test_handlebars_syntax_gets_a_hint(folder):
    folder.write("p.prompt", "{{#if x}}y{{/if}}")
    with pytest.raises(PromptFileError) as caught:
        folder.library(engine="jinja2").load("p")
    assert "Handlebars" in caught.value.hint
    folder.write("mixed.prompt", "{% if x %}{{#if x}}y{{/if}}{% endif %}")  # auto reads a mixed file as jinja2
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("mixed")
    assert "Handlebars" in caught.value.hint


def test_non_utf8_file_names_file_and_line(folder):
    folder.write("p.prompt", b"line one\nline \xff two\n")
    with pytest.raises(PromptFileError) as caught:
        folder.library().load("p")
    assert caught.value.line == 2 and "not UTF-8" in caught.value.message


def test_empty_file_loads_as_no_messages(folder):
    folder.write("p.prompt", "")
    assert folder.library().load("p").render({}).messages == []


def _touch_later(path: Path, text: str) -> None:
    """Save as editors do: write a new file, then rename it over the old one."""
    before = path.stat().st_mtime_ns
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    if path.stat().st_mtime_ns == before:  # coarse file system clock: force a visible change
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_hot_reload_after_an_edit_without_reloading(folder):
    path = folder.write("p.prompt", "---\nconfig: {t: 1}\n---\nversion one")
    prompt = folder.library().load("p")
    assert text_of(prompt.render()) == "version one"
    _touch_later(path, "---\nconfig: {t: 2}\n---\nversion two")
    rendered = prompt.render()
    assert text_of(rendered) == "version two" and rendered.config == {"t": 2}


def test_hot_reload_of_a_partial(folder):
    partial = folder.write("_p.prompt", "old")
    folder.write("x.prompt", "{% include 'p' %}")
    prompt = folder.library().load("x")
    assert text_of(prompt.render()) == "old"
    _touch_later(partial, "new")
    assert text_of(prompt.render()) == "new"


def test_edit_that_breaks_the_file_raises_then_recovers(folder):
    path = folder.write("p.prompt", "fine")
    prompt = folder.library().load("p")
    _touch_later(path, "{% if %}")
    with pytest.raises(PromptFileError):
        prompt.render()
    _touch_later(path, "fine again")
    assert text_of(prompt.render()) == "fine again"


def test_define_partial_after_load_is_seen():
    lib = PromptLibrary(None)
    lib.define_partial("p", "one")
    prompt = lib.from_source("{% include 'p' %}")
    lib.define_partial("p", "two")
    assert text_of(prompt.render()) == "two"


def test_concurrent_renders_and_reloads_from_threads(folder):
    path = folder.write("p.prompt", "---\ninput:\n  schema:\n    n: integer\n---\nn={{ n }}")
    lib = folder.library()
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for i in range(200):
                out = lib.load("p").render({"n": i})
                assert text_of(out).endswith(f"={i}")
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for version in range(5):
        _touch_later(path, f"---\ninput:\n  schema:\n    n: integer\n---\nv{version} n={{{{ n }}}}")
        time.sleep(0.005)
    for t in threads:
        t.join()
    assert errors == []


def test_define_tool_is_stored_and_resolved_into_tool_defs():
    lib = PromptLibrary(None)
    lib.define_tool({"name": "lookup", "description": "find", "inputSchema": {"type": "object"}})
    out = lib.from_source("---\ntools: [lookup, unknown]\n---\nx").render()
    assert out.tools == ["lookup", "unknown"]
    assert out.tool_defs == [ToolDefinition(name="lookup", description="find", input_schema={"type": "object"})]


def test_load_prompt_uses_dotprompt_dir(folder, monkeypatch):
    folder.write("hello.prompt", "hi from env dir")
    monkeypatch.setenv("DOTPROMPT_DIR", str(folder.path))
    assert text_of(load_prompt("hello").render()) == "hi from env dir"


def test_load_prompt_reads_pyproject_setting(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "my_prompts"\n')
    (tmp_path / "my_prompts").mkdir()
    (tmp_path / "my_prompts" / "a.prompt").write_text("from pyproject")
    (tmp_path / "sub").mkdir()
    monkeypatch.delenv("DOTPROMPT_DIR", raising=False)
    monkeypatch.chdir(tmp_path / "sub")
    assert text_of(load_prompt("a").render()) == "from pyproject"


def test_load_prompt_defaults_to_prompts_in_cwd(tmp_path, monkeypatch):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.prompt").write_text("default dir")
    monkeypatch.delenv("DOTPROMPT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert text_of(load_prompt("a").render()) == "default dir"
    assert text_of(load_prompt("a", directory=tmp_path / "prompts").render()) == "default dir"


def test_top_level_define_tool_registers_for_prompt_files_loaded_by_load_prompt(tmp_path, monkeypatch):
    import dotprompt
    from dotprompt.doubles import ScriptedModel, tool_call

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "ask.prompt").write_text("---\ntools: [shout]\n---\n{{ q }}")
    monkeypatch.delenv("DOTPROMPT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    calls = []
    model = ScriptedModel([[tool_call("shout", {"q": "hi"})], "done"])
    with pytest.raises(dotprompt.UsageError, match="unknown tool 'shout'"):
        load_prompt("ask").generate_sync({"q": "hi"}, model=ScriptedModel([[tool_call("shout", {"q": "hi"})], "done"]))
    made = dotprompt.define_tool(dotprompt.tool(lambda x: calls.append(x) or x["q"].upper(), name="shout",
                                                description="upper-cases", input_schema={"type": "object"}))
    assert isinstance(made, dotprompt.Tool) and dotprompt.default_library().tool("shout") is made
    response = load_prompt("ask").generate_sync({"q": "hi"}, model=model)
    assert response.text == "done" and calls == [{"q": "hi"}]
    assert model.requests[0].tools[0].name == "shout"
    assert model.requests[1].messages[-1].content[0].tool_response.output == "HI"
    asked = dotprompt.define_tool(dotprompt.tool(name="confirm", description="asks a human", interrupt=True),
                                  directory=tmp_path / "other")
    assert dotprompt.default_library(tmp_path / "other").tool("confirm") is asked
    assert dotprompt.default_library().tool("confirm") is None


def test_unknown_engine_is_refused():
    from dotprompt import DotpromptError

    with pytest.raises(DotpromptError):
        PromptLibrary(None, engine="mustache")


def test_project_settings_register_tools_and_default_model(tmp_path, monkeypatch):
    from dotprompt.prompts.loader import project_library

    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ndefault_model = "echo"\ntools = ["lib/my_tools.py"]\n')
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "my_tools.py").write_text(
        "from dotprompt import tool\n\n@tool\ndef shout(text: str) -> str:\n"
        "    '''Upper-case text.'''\n    return text.upper()\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text("---\ntools: [shout]\n---\nhi")
    monkeypatch.chdir(tmp_path)
    lib = project_library(tmp_path / "prompts")
    rendered = lib.load("p").render()
    assert rendered.model == "echo" and rendered.tool_defs[0].description == "Upper-case text."
    assert lib.load("p").generate_sync().text == "user: hi"


def test_project_settings_naming_a_missing_tools_file(tmp_path, monkeypatch):
    from dotprompt import UsageError
    from dotprompt.prompts.loader import project_library

    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["nope.py"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"cannot load 'nope\.py'"):
        project_library(tmp_path)
