"""`{{> (lookup . 'section')}}`: a partial named at render time (issue 29, item 14) finds the folder's
`_name.prompt` files, as dotpromptz finds its partials; a name with no partial is a RenderError naming
it, and a folder with no partial to choose from is a `check` error at the line."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from dotprompt import PromptFileError, RenderError
from dotprompt.lint.check import check_library

TEMPLATE = "Hello.\n{{> (lookup . 'section')}}\nBye."


def _text(prompt, data) -> str:
    return "".join(p.text or "" for m in prompt.render(data).messages for p in m.content)


def test_a_dynamic_partial_renders_the_named_partial_file(folder):
    folder.write("_intro.prompt", "Welcome, {{name}}.")
    folder.write("_outro.prompt", "---\ndescription: the end\n---\nSee you, {{name}}.")
    folder.write("p.prompt", TEMPLATE)
    prompt = folder.library().load("p")
    assert _text(prompt, {"section": "intro", "name": "Ann"}) == "Hello.\nWelcome, Ann.Bye."  # standalone: takes its line
    assert _text(prompt, {"section": "outro", "name": "Ann"}) == "Hello.\nSee you, Ann.Bye."
    assert check_library(folder.library(), jobs=1) == []


def test_the_same_text_as_dotpromptz(folder):
    dotpromptz = pytest.importorskip("dotpromptz")
    folder.write("_intro.prompt", "Welcome, {{name}}.")
    folder.write("p.prompt", TEMPLATE)
    data = {"section": "intro", "name": "Ann"}
    dp = dotpromptz.Dotprompt(partials={"intro": "Welcome, {{name}}."})
    theirs = asyncio.run(dp.render(TEMPLATE, dotpromptz.DataArgument(input=data)))
    assert _text(folder.library().load("p"), data) == "".join(p.text for m in theirs.messages for p in m.content)


def test_a_name_with_no_partial_is_a_render_error_naming_it(folder):
    folder.write("_intro.prompt", "Welcome.")
    folder.write("p.prompt", TEMPLATE)
    with pytest.raises(RenderError, match="nowhere"):
        folder.library().load("p").render({"section": "nowhere"})


def test_a_defined_partial_is_found_too(folder):
    folder.write("p.prompt", TEMPLATE)
    lib = folder.library()
    lib.define_partial("intro", "Defined in code.")
    assert _text(lib.load("p"), {"section": "intro"}) == "Hello.\nDefined in code.Bye."


def test_no_partial_to_choose_from_is_a_check_error_at_the_line(folder):
    path = folder.write("p.prompt", "---\nmodel: echo\n---\n" + TEMPLATE)
    errors = [d for d in check_library(folder.library(), jobs=1) if d.level == "error"]
    assert [(d.path, d.line) for d in errors] == [(str(path), 5)]
    assert "no partial" in errors[0].message and "_name.prompt" in errors[0].message
    with pytest.raises(PromptFileError):
        folder.library().load("p")


def test_an_edited_partial_is_seen_by_the_dynamic_include(folder):
    part = folder.write("_intro.prompt", "Old.")
    folder.write("p.prompt", TEMPLATE)
    prompt = folder.library().load("p")
    assert "Old." in _text(prompt, {"section": "intro"})
    part.write_text("New.", encoding="utf-8")
    later = time.time() + 5
    os.utime(part, (later, later))
    deadline = time.monotonic() + 10
    while "New." not in _text(prompt, {"section": "intro"}):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_partial_that_includes_itself_by_name_stops_with_an_error(folder):
    folder.write("_loop.prompt", "x{{> (lookup . 'section')}}")
    folder.write("p.prompt", TEMPLATE)
    with pytest.raises(RenderError):
        folder.library().load("p").render({"section": "loop"})
