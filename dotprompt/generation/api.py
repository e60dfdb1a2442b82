"""The entry points: `generate` (async), `generate_stream`, `generate_sync`, `preview_request`.

Each runs one core (`generate_run`, `preview`), which `Prompt` calls with what a prompt adds to a run
(a `RunSource`: its library, identity and grounding input); the public functions take no such plumbing."""

from __future__ import annotations

import asyncio
import copy
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from .._util.sync_runner import run_sync
from ..errors import UsageError
from ..identity import PromptIdentity
from ..observe.spans import tracing
from ..providers.base import Model
from ..providers.registry import resolve_model
from ..settings import check_max_turns
from ..tools.define import Tool, tool_from_definition
from ..types import GenerateRequest, ToolDefinition
from .formatting import plan_output
from .grounded import GroundingCheck
from .lookup import ToolLookup
from .loop import Loop, Runtime
from .middleware import added_tools, generate_hook, model_hook, tool_hook
from .options import GenerateActionOptions, GenerateOptions, output_type_of, to_action_options
from .response import Chunk, ChunkCallback, GenerateResponse, OutputT, PartialT
from .use import resolve_use

__all__ = ["GenerateStream", "RunSource", "generate", "generate_run", "generate_stream", "generate_sync", "prepare", "preview",
           "preview_request", "run_sync"]

def prepare(options: GenerateActionOptions | GenerateOptions, *, library: ToolLookup | None = None,
            tools: Sequence[Any] = (), use: Sequence[Any] = (), output_type: Any = None, model: Any = None,
            on_chunk: ChunkCallback | None = None, partial_type: Any = None,
            context: Mapping[str, Any] | None = None,
            identity: PromptIdentity | None = None,
            grounding_input: Any = None) -> tuple[GenerateActionOptions, Runtime]:
    """Plain options plus the live objects they name; every misuse raises here, before any model call.

    `grounding_input` is the input the output is grounded in (a prompt's input variables); without it
    nothing is grounded."""
    live_tools: list[Any] = [t for t in tools if not isinstance(t, str)]
    named_tools = [t for t in tools if isinstance(t, str)]
    entries = [*options.use, *use]  # the options' (a prompt's `use:`, as written), then the call's
    if isinstance(options, GenerateOptions):
        live_tools += [t for t in options.tools if not isinstance(t, str)]
        output_type = output_type or output_type_of(options.output_schema)
        on_chunk = on_chunk or options.on_chunk
        context = context if context is not None else options.context
        model = model or (options.model if not isinstance(options.model, str) else None)
        options = to_action_options(options)
    check_max_turns(options.max_turns)
    resolved_model = resolve_model(model if model is not None else options.model)
    layers = resolve_use(entries, library)
    live_tools = [_as_tool(t) for t in [*live_tools, *(t for layer in layers for t in added_tools(layer))]]
    listed = [*options.tools, *named_tools]
    names = [*listed, *dict.fromkeys(t.name for t in live_tools if t.name not in listed)]
    tool_map = _resolve_tools(names, live_tools, library)
    plan = plan_output(options.output, resolved_model.info, bool(tool_map))
    runtime = Runtime(model=resolved_model, tools=tool_map, plan=plan, output_type=output_type_of(output_type),
                      partial_type=output_type_of(partial_type),
                      generate_hooks=[h for h in map(generate_hook, layers) if h is not None],
                      model_hooks=[h for h in map(model_hook, layers) if h is not None],
                      tool_hooks=[h for h in map(tool_hook, layers) if h is not None], on_chunk=on_chunk,
                      context=dict(context or {}),
                      trace=tracing(identity, resolved_model.name, stream=on_chunk is not None,
                                    output_format=plan.format_name),
                      grounding=GroundingCheck.for_run(options.output, grounding_input))
    return options.model_copy(update={"tools": list(tool_map), "model": resolved_model.name}), runtime


def _as_tool(tool: Any) -> Any:
    """A ToolDefinition (or its dict form) given as a tool is a definition only: it interrupts when called."""
    if isinstance(tool, Mapping):
        tool = ToolDefinition.model_validate(tool)
    return tool_from_definition(tool) if isinstance(tool, ToolDefinition) else tool


def _resolve_tools(names: list[str], live: list[Any], library: ToolLookup | None) -> dict[str, Tool]:
    given: dict[str, Tool] = {}
    for tool in live:
        if tool.name in given and given[tool.name] is not tool:
            raise UsageError(f"two different tools are named {tool.name!r}; tool names must be unique")
        given[tool.name] = tool
    names = [n for name in names for n in _expanded(name, given, library)]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"tool {duplicate!r} is listed twice; tool names must be unique")
    out: dict[str, Tool] = {}
    for name in names:
        found = given.get(name) or _as_tool(library.tool(name) if library is not None else None)
        if found is None:
            known = sorted({*given, *(library.tool_names() if library is not None else [])})
            raise UsageError(f"unknown tool {name!r}; define it with lib.define_tool(...) or pass it in tools=[...], "
                             "or, for the dotprompt command, list the module that defines it in `[tool.dotprompt] "
                             f"tools` in pyproject.toml (known: {', '.join(known) or 'none'})")
        out[name] = found
    return out


def _expanded(name: str, given: dict[str, Tool], library: ToolLookup | None) -> list[str]:
    """A `tools:` entry as tool names: a library may let one entry stand for several (an MCP server's
    `SERVER/*`); `expand_tool_name` is optional, so any ToolLookup still works."""
    expand = getattr(library, "expand_tool_name", None)
    return [name] if name in given or expand is None else list(expand(name))


def _options_and_model(options: GenerateActionOptions | GenerateOptions | None,
                       kwargs: dict[str, Any]) -> tuple[GenerateActionOptions | GenerateOptions, Any]:
    """The options (built from the keywords when none are given) and the `model=` given beside an options object."""
    if options is None:
        return GenerateOptions(**kwargs), None
    model = kwargs.pop("model", None)
    if kwargs:
        raise UsageError(f"pass either an options object or keywords, not both ({', '.join(kwargs)})")
    return options, model


@dataclass(frozen=True)
class RunSource:
    """What running a prompt adds to its options (`Prompt.generate` passes it; `generate()` has no
    parameters for it): where the tools and middleware it names are looked up, which prompt text ran
    (for its spans and `response.identity`), and the input its output is grounded in (see
    dotprompt/grounding; without it nothing is grounded)."""

    library: ToolLookup | None = None
    identity: PromptIdentity | None = None
    grounding_input: Any = None


# generate()'s old plumbing keywords, and what to do instead: they warn for one release, then go.
_PLUMBING = {
    "library": "pass the Tool objects in tools=[...] (build them with dotprompt.tool), or run the prompt: "
               "Prompt.generate looks up the tools and middleware its file names in its library",
    "identity": "run the prompt with Prompt.generate, which sets response.identity (and names its spans)",
    "grounding_input": "run the prompt with Prompt.generate, which grounds its output in its input, or ground "
                       "any value with dotprompt.grounding.ground(output, sources, schema)",
}


def _source(kwargs: dict[str, Any], function: str) -> RunSource:
    """The deprecated plumbing keywords taken out of `kwargs`, each with a warning pointing at the caller
    of `function` (the public entry point two frames up)."""
    given = {key: kwargs.pop(key) for key in _PLUMBING if key in kwargs}
    for key in given:
        warnings.warn(f"{function}(..., {key}=...) is deprecated and goes in the next release; {_PLUMBING[key]}",
                      DeprecationWarning, stacklevel=3)
    return RunSource(**given)


async def generate(options: GenerateActionOptions | GenerateOptions | None = None, /, *,
                   tools: Sequence[Any] = (), use: Sequence[Any] = (), output_type: Any = None,
                   on_chunk: ChunkCallback | None = None, context: Mapping[str, Any] | None = None,
                   **kwargs: Any) -> GenerateResponse:
    """Run the model <-> tool loop to a validated result. Pass one `GenerateActionOptions` (what
    `Prompt.to_options` returns), or keywords: `model=`, `system=`, `prompt=`, `messages=`, `tools=`,
    `output_schema=`, `output_format=`, `config=`, `max_turns=`, ... (the fields of
    `dotprompt.generation.options.GenerateOptions`).

    With an options object, `model=` may still name or give the model to use instead of the options' one.
    `context` (auth and the like) reaches every tool through its ToolContext; it is never sent to the model.
    To run a prompt file, use `Prompt.generate`: it adds the prompt's identity, library and grounding."""
    source = _source(kwargs, "generate")
    return await generate_run(options, source, tools=tools, use=use, output_type=output_type, on_chunk=on_chunk,
                              context=context, **kwargs)


async def generate_run(options: GenerateActionOptions | GenerateOptions | None, source: RunSource, /, *,
                       tools: Sequence[Any] = (), use: Sequence[Any] = (), output_type: Any = None,
                       on_chunk: ChunkCallback | None = None, context: Mapping[str, Any] | None = None,
                       partial_type: Any = None, **kwargs: Any) -> GenerateResponse:
    """`generate` with what a prompt adds (`source`): the one core every entry point runs. `partial_type`
    is what streamed chunks' object outputs are read into (a typed prompt's partial twin)."""
    options, model = _options_and_model(options, kwargs)
    action, runtime = prepare(options, library=source.library, tools=tools, use=use, output_type=output_type,
                              model=model, on_chunk=on_chunk, context=context, identity=source.identity,
                              partial_type=partial_type,
                              grounding_input=source.grounding_input)
    response = await Loop(runtime).run(action)
    response.identity = source.identity
    return response


def preview_request(options: GenerateActionOptions | GenerateOptions | None = None, /, *,
                    tools: Sequence[Any] = (), wire: bool = False, **kwargs: Any) -> GenerateRequest | dict[str, Any]:
    """The first turn's request exactly as the model would get it, without running anything.

    With `wire=True`, the JSON body the model's provider would POST instead (strict schema,
    media parts, cache markers and all); only HTTP provider models have one. With an options object,
    `model=` may still name or give the model, as for `generate`."""
    return preview(options, _source(kwargs, "preview_request"), tools=tools, wire=wire, **kwargs)


def preview(options: GenerateActionOptions | GenerateOptions | None, source: RunSource, /, *,
            tools: Sequence[Any] = (), wire: bool = False, **kwargs: Any) -> GenerateRequest | dict[str, Any]:
    """`preview_request` with what a prompt adds (`source`: its library, for the tools its file names)."""
    options, model = _options_and_model(options, kwargs)
    action, runtime = prepare(options, library=source.library, tools=tools, model=model)
    loop = Loop(runtime)
    request = loop.request(action, runtime.plan.inject(action.messages))
    if not wire:
        return request
    # A model written before Model had wire_request (or not following Model at all) has no wire format either.
    body = runtime.model.wire_request(request) if isinstance(runtime.model, Model) else None
    if body is None:
        raise UsageError(f"model {action.model!r} has no wire format to preview (only HTTP provider models have one)")
    return copy.deepcopy(body)  # the caller's to change: it shares parts (the strict schema) with later calls


class GenerateStream(Generic[OutputT, PartialT]):
    """A streamed run, in two shapes.

    Genkit's: `stream.stream` is an async iterator of the chunks of every turn, `await stream.response`
    the final GenerateResponse (both raise the run's error). Or iterate the object itself:
    `async for item in stream` yields every chunk, then the final response. The run starts on first use.
    Leaving `async for item in stream` early cancels the run; leaving `.stream` early does not (the
    response may still be awaited).
    """

    def __init__(self, run: Callable[[ChunkCallback], Awaitable[GenerateResponse[OutputT]]]) -> None:
        self._run = run
        self._queue: asyncio.Queue[Chunk[PartialT]] = asyncio.Queue()
        self._task: asyncio.Future[GenerateResponse[OutputT]] | None = None

    def _start(self) -> asyncio.Future[GenerateResponse[OutputT]]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run(self._queue.put_nowait))
        return self._task

    @property
    def response(self) -> Awaitable[GenerateResponse[OutputT]]:
        """The final response, to await (Genkit's `response` promise)."""
        return self._start()

    @property
    def stream(self) -> AsyncIterator[Chunk[PartialT]]:
        """The chunks of every turn (Genkit's `stream`); raises the run's error after the last chunk."""
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[Chunk[PartialT]]:
        task, queue = self._start(), self._queue
        while True:
            while not queue.empty():  # take what is already there without waiting
                yield queue.get_nowait()
            if task.done():
                task.result()  # the run's error, if it failed
                return
            getter = asyncio.ensure_future(queue.get())
            waiting: set[asyncio.Future[Any]] = {getter, task}
            try:
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            finally:  # the consumer cancelled while waiting: a getter left pending is "Task was destroyed" at exit
                if not getter.done():
                    getter.cancel()
            if getter in done:
                chunk = getter.result()
                del getter, waiting, done  # the chunk is the caller's now: kept here, it and its output would outlive their use
                yield chunk
                del chunk

    async def __aiter__(self) -> AsyncIterator[Chunk[PartialT] | GenerateResponse[OutputT]]:
        task = self._start()
        reason: tuple[Any, ...] = ()
        try:
            async for chunk in self._chunks():
                yield chunk
            yield task.result()
        except asyncio.CancelledError as exc:
            reason = exc.args  # the consumer's cancel(msg): the run's own cancel says why (the run log keeps it)
            raise
        finally:
            if not task.done():
                task.cancel(*reason[:1])


def generate_stream(options: GenerateActionOptions | GenerateOptions | None = None, /, **kwargs: Any) -> GenerateStream:
    """The run as a stream: `.stream` (chunks) and `await .response`, or `async for` chunks then the response."""
    source = _source(kwargs, "generate_stream")
    on_chunk = kwargs.pop("on_chunk", None)

    def run(push: ChunkCallback) -> Awaitable[GenerateResponse]:
        def both(chunk: Chunk) -> None:
            push(chunk)
            if on_chunk is not None:
                on_chunk(chunk)

        return generate_run(options, source, on_chunk=both, **kwargs)

    return GenerateStream(run)


def generate_sync(options: GenerateActionOptions | GenerateOptions | None = None, /, **kwargs: Any) -> GenerateResponse:
    """`generate` for sync code; the same loop, run to completion on this thread's kept event loop
    (its connections stay open for the next call)."""
    source = _source(kwargs, "generate_sync")
    return run_sync(generate_run(options, source, **kwargs))
