"""Shapes of `.prompt` files found in public Genkit folders (issue 29, item 15), each read as a Genkit
user expects: `use:` in Genkit's `{name, config}` shape, an empty file, an invalid role, frontmatter
missing its opening `---`, and `output.format: media`."""

from __future__ import annotations

import pytest

from dotprompt import PromptFileError, PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.formats import get_format, list_formats
from dotprompt.generation.api import generate_sync
from dotprompt.generation.policies import retry
from dotprompt.generation.use import resolve_use
from dotprompt.lint.check import check_library
from dotprompt.types import Part


def _check(folder) -> list:
    return check_library(folder.library(), jobs=1)


# -- use: [{name, config}] ---------------------------------------------------------------------

def test_use_entries_in_genkits_name_config_shape_load_and_configure_the_middleware(folder):
    folder.write("p.prompt", "---\nmodel: echo\nuse:\n  - name: retry\n    config:\n      max_retries: 1\n"
                             "  - name: audit\n---\nhi")
    prompt = folder.library().load("p")
    assert prompt.compiled.fields["use"] == [{"retry": {"max_retries": 1}}, "audit"]
    assert prompt.to_options().use == [{"retry": {"max_retries": 1}}, "audit"]  # plain, in order, to the run
    (layer,) = resolve_use(prompt.to_options().use[:1], prompt.library)  # `audit` is registered by no one here
    assert isinstance(layer, retry) and layer.max_retries == 1
    assert [d for d in _check(folder) if d.level == "error"] == []


def test_a_bad_config_in_genkits_shape_is_still_an_error_naming_the_entry(folder):
    folder.write("p.prompt", "---\nmodel: echo\nuse:\n  - name: retry\n    config:\n      max_retries: -1\n---\nhi")
    with pytest.raises(PromptFileError, match="`use` entry 'retry'"):
        folder.library().load("p")
    folder.write("p.prompt", "---\nmodel: echo\nuse:\n  - name: retry\n    config: 3\n---\nhi")
    with pytest.raises(PromptFileError, match="`config` of `use` entry 'retry' must be a mapping") as failed:
        folder.library().load("p")
    assert failed.value.line == 5


# -- an empty file --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_file_loads_renders_no_messages_and_check_warns(folder, text):
    path = folder.write("empty.prompt", text)
    assert folder.library().load("empty").render({}).messages == []
    found = _check(folder)
    assert [(d.path, d.level) for d in found] == [(str(path), "warning")]
    assert "empty" in found[0].message and "renders no messages" in found[0].message


def test_frontmatter_without_a_body_is_not_warned_about(folder):
    folder.write("settings.prompt", "---\nmodel: echo\n---\n")
    assert _check(folder) == []


# -- an invalid role --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "line"), [
    ('---\nmodel: echo\n---\nhello\n{{role "system_instruction"}}\nBe brief.', 5),
    ('---\nmodel: echo\n---\n{% if x %}\n{{ role("assistant") }}\n{% endif %}', 5),
    ('hello\n\n{{#if x}}{{ role \'bot\' }}{{/if}}', 3),
])
def test_an_invalid_role_is_a_check_error_at_its_line(folder, text, line):
    path = folder.write("p.prompt", text)
    errors = [d for d in _check(folder) if d.level == "error"]
    assert [(d.path, d.line) for d in errors] == [(str(path), line)]
    assert "system, user, model, tool" in errors[0].message
    with pytest.raises(PromptFileError):
        folder.library().load("p")


def test_a_role_from_input_is_checked_at_render_only(folder):
    folder.write("p.prompt", "{{role who}}hi")
    assert _check(folder) == []
    assert folder.library().load("p").render({"who": "system"}).messages[0].role == "system"


# -- frontmatter without its opening --- ---------------------------------------------------------

def test_frontmatter_missing_its_opening_dashes_is_a_check_warning(folder):
    path = folder.write("p.prompt", "model: googleai/gemini-2.5-flash\nconfig:\n  temperature: 0.2\n---\nHello {{name}}")
    found = _check(folder)
    assert [(d.path, d.line, d.level) for d in found] == [(str(path), 1, "warning")]
    assert "no opening `---`" in found[0].message and "add a `---` line" in found[0].message
    # It still renders as it always did (the text as the prompt), as dotpromptz does.
    text = folder.library().load("p").render({"name": "Ann"}).messages[0].content[0].text
    assert text.startswith("model: googleai")


@pytest.mark.parametrize("text", ["Note: be brief.\n---\nHello", "Hello: {{name}}\n\n---\n", "just text"])
def test_ordinary_text_with_a_colon_is_not_mistaken_for_frontmatter(folder, text):
    folder.write("p.prompt", text)
    assert _check(folder) == []


# -- output.format: media ---------------------------------------------------------------------

def test_the_media_format_is_known_and_its_output_is_the_replys_media(folder):
    assert "media" in list_formats()
    folder.write("p.prompt", "---\nmodel: echo\noutput:\n  format: media\n---\nDraw a cat")
    assert _check(folder) == []
    fmt = get_format("media")
    assert fmt.handler(None).instructions is None and not fmt.default_instructions and not fmt.constrained
    picture = {"url": "data:image/png;base64,AAA", "contentType": "image/png"}
    model = ScriptedModel([[Part(text="here it is"), Part(media=picture)]])
    response = generate_sync(model=model, prompt="Draw a cat", output_format="media")
    assert response.output == picture
    assert "Output should" not in model.requests[0].messages[-1].content[-1].text


def test_the_media_format_without_media_in_the_reply_is_an_output_error():
    from dotprompt import OutputValidationError

    with pytest.raises(OutputValidationError, match="no media"):
        generate_sync(model=ScriptedModel(["I cannot draw"]), prompt="Draw", output_format="media")


def test_from_source_library_knows_media_too():
    prompt = PromptLibrary(None).from_source("---\noutput:\n  format: media\n---\nDraw")
    assert prompt.compiled.meta["output"]["format"] == "media"
