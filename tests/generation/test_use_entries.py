"""`use:` entries are resolved in one place, in the order written, and a call reads its prompt's version once.

A prompt's `use:` may mix names and `{name: {arguments}}` entries; the caller's `use=` adds layers after
them. Every entry becomes a layer in the order written (the first is the outermost), whatever its form,
through one resolver: an unknown name is the same error either way. The plain options a prompt compiles
into (`to_options()`) keep every entry, arguments included, so `generate(options)` runs what the prompt runs.
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from dotprompt import PromptLibrary, UsageError
from dotprompt.doubles import ScriptedModel
from dotprompt.generation.api import generate


class Tag:
    """Model middleware that writes its name into the shared list on the way in."""

    def __init__(self, seen: list[str], name: str) -> None:
        self.seen, self.name = seen, name

    async def model(self, request, next_):
        self.seen.append(self.name)
        return await next_(request)


def library_with_tags(tmp_path, use: str) -> tuple[PromptLibrary, list[str]]:
    (tmp_path / "p.prompt").write_text(f"---\nmodel: scripted\nuse:\n{use}---\nhi\n")
    lib = PromptLibrary(tmp_path)
    seen: list[str] = []
    for name in ("a", "b", "c"):
        lib.define_middleware(name, tag_class(seen, name))  # a class: made per run, with the entry's arguments
    return lib, seen


def tag_class(seen: list[str], name: str) -> type[Tag]:
    class Named(Tag):
        def __init__(self, **arguments) -> None:
            super().__init__(seen, f"{name}{arguments or ''}")

    return Named


def test_a_prompts_entries_run_in_the_order_written_whatever_their_form(tmp_path):
    lib, seen = library_with_tags(tmp_path, "  - a\n  - b: {x: 1}\n  - c\n")
    lib.load("p")({}, model=ScriptedModel(["ok"]), use=[Tag(seen, "caller")])
    assert seen == ["a", "b{'x': 1}", "c", "caller"]  # the file's layers first, then the call's


def test_the_streamed_call_runs_the_same_layers(tmp_path):
    lib, seen = library_with_tags(tmp_path, "  - a\n  - b: {x: 2}\n")

    async def consume():
        async for _ in lib.load("p").stream({}, model=ScriptedModel(["ok"])):
            pass

    asyncio.run(consume())
    assert seen == ["a", "b{'x': 2}"]


def test_the_plain_options_keep_every_entry_and_run_them(tmp_path):
    lib, seen = library_with_tags(tmp_path, "  - a\n  - b: {x: 1}\n")
    options = lib.load("p").to_options({})
    assert options.use == ["a", {"b": {"x": 1}}]
    assert json.loads(options.model_dump_json())["use"] == ["a", {"b": {"x": 1}}]  # still plain, serialisable
    # The names are the library's: `generate` finds them through it (a parameter kept for one release).
    with pytest.warns(DeprecationWarning, match="library="):
        asyncio.run(generate(options, library=lib, model=ScriptedModel(["ok"])))
    assert seen == ["a", "b{'x': 1}"]


@pytest.mark.parametrize("entry", ["nope", {"nope": {"x": 1}}])
def test_an_unknown_name_is_one_error_whatever_its_form(entry):
    from dotprompt.generation.use import resolve_use

    with pytest.raises(UsageError) as failed:
        resolve_use([entry], None)
    message = str(failed.value)
    assert "unknown middleware 'nope' in `use`" in message
    assert "lib.define_middleware" in message and "retry" in message and "validate_and_retry" in message


def test_built_ins_take_their_arguments_and_objects_pass_through():
    from dotprompt.generation.use import resolve_use

    layer = object()
    retry, same = resolve_use([{"retry": {"max_retries": 0}}, layer], None)
    assert type(retry).__name__ == "retry" and retry.max_retries == 0 and same is layer


# -- one version per call -----------------------------------------------------------------------------


def test_a_file_saved_during_a_call_does_not_change_that_calls_grounding(tmp_path):
    """The input the output is grounded in is the input as rendered: the defaults of the version the call
    rendered, not those of a version saved before the streamed run started."""
    path = tmp_path / "p.prompt"

    def save(doc: str) -> None:
        path.write_text("---\nmodel: scripted\ninput:\n  schema:\n    doc?: string\n  default:\n"
                        f"    doc: {doc}\noutput:\n  schema:\n    total: number\n---\nRead: {{{{ doc }}}}\n")
        stamp = path.stat().st_mtime_ns - 10**9  # an old mtime: the new version counts as settled at once
        os.utime(path, ns=(stamp, stamp))

    save("nothing here")
    prompt = PromptLibrary(tmp_path).load("p")

    async def call():
        stream = prompt.stream({}, model=ScriptedModel(['{"total": 42}']))  # rendered now, run on first use
        save("the total is 42")
        async for item in stream:
            final = item
        return final

    response = asyncio.run(call())
    assert response.request.messages[-1].content[0].text == "Read: nothing here"  # what was rendered and sent
    assert response.grounding["$.total"].status == "ungrounded"  # grounded in that, not in the new default
    assert prompt.render({}).messages[0].content[0].text == "Read: the total is 42"  # the next call sees it
