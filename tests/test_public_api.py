"""The public surface a newcomer can hold in their head (issue 35): at most 50 top-level names, one
options type, one response type, one way to build a tool and one to register it, sync/async names
that pair the same way on the module and on `Prompt`, and every old name working for one release
with a DeprecationWarning that says what to write instead."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import warnings

import pytest

import dotprompt
import dotprompt.errors as errors
from dotprompt import PromptLibrary, Tool, ToolContext, UsageError, define_tool, generate, generate_sync, tool
from dotprompt.doubles import ScriptedModel, tool_call
from tests.conftest import ROOT

# old top-level name -> (where it lives now, the text the warning must name)
MOVED = {
    "GenerateOptions": ("dotprompt.generation.options", "generate("),
    "ModelResponse": ("dotprompt.types", "dotprompt.types.ModelResponse"),
    "GenerateRequest": ("dotprompt.types", "dotprompt.types.GenerateRequest"),
    "ToolDefinition": ("dotprompt.types", "dotprompt.types.ToolDefinition"),
    "Model": ("dotprompt.providers", "dotprompt.providers.Model"),
    "ModelInfo": ("dotprompt.providers", "dotprompt.providers.ModelInfo"),
    "make_tool": ("dotprompt.tools.define", "dotprompt.tool("),
    "make_interrupt": ("dotprompt.tools.define", "interrupt=True"),
    "define_interrupt": ("dotprompt.prompts.loader", "dotprompt.define_tool("),
    "GenerateStream": ("dotprompt.generation.api", "dotprompt.generation.api.GenerateStream"),
    "TurnEnvelope": ("dotprompt.generation.middleware", "dotprompt.generation.middleware.TurnEnvelope"),
    "generate_middleware": ("dotprompt.generation.middleware", "dotprompt.generation.middleware.generate_middleware"),
    "Attempt": ("dotprompt.generation.response", "dotprompt.generation.response.Attempt"),
    "InputSpec": ("dotprompt.document.rendered", "dotprompt.document.rendered.InputSpec"),
    "OutputSpec": ("dotprompt.document.rendered", "dotprompt.document.rendered.OutputSpec"),
    "PromptInfo": ("dotprompt.prompts.library", "dotprompt.prompts.library.PromptInfo"),
    "PromptIdentity": ("dotprompt.identity", "dotprompt.identity.PromptIdentity"),
    "InputProblem": ("dotprompt.errors", "dotprompt.errors.InputProblem"),
    "BatchInputError": ("dotprompt.batch", "dotprompt.batch.BatchInputError"),
    "BatchOutputError": ("dotprompt.batch", "dotprompt.batch.BatchOutputError"),
    "BatchJobError": ("dotprompt.batch", "dotprompt.batch.BatchJobError"),
    "DatasetError": ("dotprompt.evals", "dotprompt.evals.DatasetError"),
    "TestFileError": ("dotprompt.testing", "dotprompt.testing.TestFileError"),
    "RecordingMissingError": ("dotprompt.testing", "dotprompt.testing.RecordingMissingError"),
    "CaseFailedError": ("dotprompt.testing", "dotprompt.testing.CaseFailedError"),
    "LocalSetupError": ("dotprompt.local", "dotprompt.local.LocalSetupError"),
    "RunLogError": ("dotprompt.observe", "dotprompt.observe.RunLogError"),
}


def test_the_top_level_is_at_most_50_names_one_per_concept():
    names = set(dotprompt.__all__)
    assert len(dotprompt.__all__) <= 50, len(dotprompt.__all__)
    assert len(names) == len(dotprompt.__all__)
    assert not names & set(MOVED), sorted(names & set(MOVED))
    assert "GenerateActionOptions" in names and "GenerateResponse" in names  # one options type, one response type
    assert {"tool", "define_tool"} <= names  # one way to build a tool, one to register it
    assert sorted(dir(dotprompt)) == sorted(dotprompt.__all__)


def test_every_top_level_name_loads_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in dotprompt.__all__:
            assert getattr(dotprompt, name) is not None


@pytest.mark.parametrize("name", sorted(MOVED))
def test_each_old_name_still_works_and_warns_where_it_went(name):
    home, instead = MOVED[name]
    with pytest.warns(DeprecationWarning, match=re.escape(instead)) as caught:
        old = getattr(dotprompt, name)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert old is getattr(importlib.import_module(home), name)


def test_an_old_name_imported_with_from_warns_too():
    with pytest.warns(DeprecationWarning, match="dotprompt.testing.TestFileError"):
        from dotprompt import TestFileError
    assert TestFileError is errors.TestFileError


def test_every_public_exception_is_in_the_tree_and_exported_from_the_top_or_its_subpackage():
    for name in errors.__all__:
        value = getattr(errors, name)
        if not (isinstance(value, type) and issubclass(value, BaseException)):
            continue
        if name in ("Interrupt", "ToolInputError"):  # a signal, and a reply sent back to the model
            assert name in dotprompt.__all__
            continue
        assert issubclass(value, errors.DotpromptError), name
        if name not in dotprompt.__all__:
            home = MOVED[name][0]
            assert getattr(importlib.import_module(home), name) is value, name


def test_sync_async_and_stream_names_pair_the_same_way_on_the_module_and_on_prompt():
    for name in ("generate", "generate_sync", "generate_stream"):
        assert callable(getattr(dotprompt, name)) and callable(getattr(dotprompt.Prompt, name)), name
    assert inspect.iscoroutinefunction(dotprompt.generate) and inspect.iscoroutinefunction(dotprompt.Prompt.generate)
    assert not inspect.iscoroutinefunction(dotprompt.Prompt.generate_sync)


def _prompt():
    lib = PromptLibrary(None)
    return lib.from_source("---\nmodel: scripted\n---\nSay hi to {{ who }}.")


def test_prompt_generate_sync_and_generate_stream_run_the_prompt():
    prompt = _prompt()
    assert prompt.generate_sync({"who": "Ada"}, model=ScriptedModel(["hi Ada"])).text == "hi Ada"

    async def streamed():
        return [item async for item in prompt.generate_stream({"who": "Ada"}, model=ScriptedModel(["hi Ada"], chunk_size=2))]

    *chunks, final = asyncio.run(streamed())
    assert "".join(c.text for c in chunks) == "hi Ada" and final.text == "hi Ada"


def test_prompt_call_and_stream_are_the_short_forms_and_do_not_warn():
    # `load_prompt("extract")({...})` is how the guide runs a prompt: it stays, beside the paired names.
    prompt = _prompt()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert prompt({"who": "Ada"}, model=ScriptedModel(["hi"])).text == "hi"

        async def streamed():
            return [item async for item in prompt.stream({"who": "Ada"}, model=ScriptedModel(["hi"], chunk_size=1))]

        *chunks, final = asyncio.run(streamed())
    assert "".join(c.text for c in chunks) == "hi" and final.text == "hi"


def test_generate_has_no_plumbing_parameters():
    for function in (dotprompt.generate, dotprompt.generate_sync, dotprompt.generate_stream, dotprompt.preview_request):
        parameters = inspect.signature(function).parameters
        assert not {"identity", "grounding_input", "library"} & set(parameters), function.__name__


def test_the_plumbing_parameters_still_work_and_warn():
    from dotprompt.identity import PromptIdentity

    identity = PromptIdentity.of("greet", None, "text", [])
    with pytest.warns(DeprecationWarning, match=r"identity=") as caught:
        response = generate_sync(prompt="x", model=ScriptedModel(["ok"]), identity=identity)
    assert caught[0].filename == __file__
    assert response.identity == identity

    lib = PromptLibrary(None)
    lib.define_tool(tool(lambda a: a * 2, name="double", input_schema={"type": "integer"}))
    model = ScriptedModel([[tool_call("double", 21)], "done"])
    with pytest.warns(DeprecationWarning, match=r"library="):
        response = asyncio.run(generate(prompt="x", model=model, tools=["double"], library=lib))
    assert response.text == "done" and model.requests[1].messages[-1].content[0].tool_response.output == 42

    with pytest.warns(DeprecationWarning, match=r"grounding_input="):
        response = generate_sync(prompt="x", model=ScriptedModel(['{"name": "Ada"}']),
                                 output_schema={"type": "object", "properties": {"name": {"type": "string"}}},
                                 grounding_input={"text": "Ada wrote it"})
    assert response.grounding is not None and response.grounding.all_grounded

    with pytest.warns(DeprecationWarning, match=r"library="):
        dotprompt.preview_request(prompt="x", model=ScriptedModel([]), tools=["double"], library=lib)


def test_tool_builds_every_kind_of_tool():
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    explicit = tool(lambda input, ctx: input["n"] + len(ctx.context), name="count", description="Count.",
                    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    asked = tool(name="ask", description="Ask a human.", input_schema={"type": "object"}, interrupt=True,
                 request_metadata={"why": "money"})
    assert isinstance(add, Tool) and add.description == "Add two numbers."
    assert asyncio.run(explicit.run({"n": 1}, ToolContext(context={"a": 1}))) == 2
    assert explicit.definition.description == "Count."
    with pytest.raises(dotprompt.Interrupt) as stopped:
        asyncio.run(asked.run({}))
    assert stopped.value.metadata == {"why": "money"}

    @tool(name="typed", input_schema={"type": "object"}, output_schema={"type": "string"})
    def typed(input):
        return "x"

    assert typed.name == "typed" and typed.output_schema == {"type": "string"}


class _NotJson:  # a parameter type pydantic cannot describe as JSON Schema
    pass


def test_a_tool_whose_hints_make_no_schema_is_named_when_first_used_not_when_defined(tmp_path):
    # `@tool` reads the hints at once (a name they use that does not exist fails there) and builds the
    # pydantic model and schemas on first use: importing a module of tools builds nothing.
    @tool
    def ship(parcel: _NotJson) -> str:
        """Ship a parcel."""
        return "sent"

    assert ship.name == "ship" and ship.description == "Ship a parcel."
    lib = PromptLibrary(tmp_path)
    lib.define_tool(ship)  # registered by its name: nothing built yet
    assert lib.tool("ship") is ship
    prompt = lib.from_source("---\ntools: [ship]\n---\nShip it.", "shipping")
    where = rf"tool 'ship' \({re.escape(__file__)}:\d+\): its parameters cannot be described as JSON Schema"
    with pytest.raises(UsageError, match=where):
        prompt.render()
    with pytest.raises(UsageError, match=where):
        generate_sync(prompt="x", model=ScriptedModel(["done"]), tools=[ship])
    with pytest.raises(NameError):
        @tool
        def broken(parcel: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
            return "x"


def test_a_tools_schemas_are_built_once_on_first_use():
    @tool
    def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b

    first = add.definition
    assert add.definition is first and add.input_model is add.input_model
    assert first.input_schema["required"] == ["a"] and first.output_schema == {"type": "integer"}
    assert asyncio.run(add.run({"a": 1})) == 3
    with pytest.raises(dotprompt.ToolInputError, match="a"):
        asyncio.run(add.run({"a": "x"}))


def test_tool_misuse_is_a_usage_error_naming_the_fix():
    with pytest.raises(UsageError, match="name="):
        tool(interrupt=True)
    with pytest.raises(UsageError, match="interrupt=True"):
        tool(lambda x: x, name="a", interrupt=True)
    with pytest.raises(UsageError, match="interrupt=True"):
        tool(name="a", request_metadata={"a": 1})


def test_define_tool_registers_a_built_tool_and_the_old_form_warns(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    built = tool(lambda x: x, name="echo_it", input_schema={"type": "object"})
    assert define_tool(built, directory=folder) is built
    assert dotprompt.default_library(folder).tool("echo_it") is built

    def shout(text: str) -> str:
        return text.upper()

    registered = define_tool(shout, directory=folder)  # a plain function is built as `tool` builds it
    assert isinstance(registered, Tool) and dotprompt.default_library(folder).tool("shout") is registered

    with pytest.warns(DeprecationWarning, match=r"define_tool\(tool\("):
        old = define_tool("old", "Old form.", {"type": "object"}, lambda x: x, directory=folder)
    assert dotprompt.default_library(folder).tool("old") is old
    with pytest.raises(UsageError, match="tool"):
        define_tool(42, directory=folder)


def test_no_two_classes_of_the_package_are_named_stream_state():
    found = [str(path.relative_to(ROOT)) for path in (ROOT / "dotprompt").rglob("*.py")
             if re.search(r"^class StreamState\b", path.read_text(encoding="utf-8"), re.M)]
    assert found == [], found
