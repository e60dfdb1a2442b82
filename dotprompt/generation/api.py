"""The entry points: `generate` (async core), `generate_stream`, `generate_sync`, `preview_request`."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Awaitable, Coroutine, Sequence
from typing import Any, TypeVar

from ..errors import UsageError
from ..models.registry import resolve_model
from ..settings import check_max_turns
from ..tools import Tool
from ..types import GenerateRequest
from .formatting import plan_output
from .lookup import ToolLookup
from .loop import Loop, Runtime
from .middleware import generate_hook, model_hook
from .options import GenerateActionOptions, GenerateOptions, output_type_of, to_action_options
from .policies import BUILT_IN
from .response import Chunk, ChunkCallback, GenerateResponse

T = TypeVar("T")


def prepare(options: GenerateActionOptions | GenerateOptions, *, library: ToolLookup | None = None,
            tools: Sequence[Any] = (), use: Sequence[Any] = (), output_type: Any = None, model: Any = None,
            on_chunk: ChunkCallback | None = None) -> tuple[GenerateActionOptions, Runtime]:
    """Plain options plus the live objects they name; every misuse raises here, before any model call."""
    live_tools: list[Any] = [t for t in tools if not isinstance(t, str)]
    named_tools = [t for t in tools if isinstance(t, str)]
    live_use: list[Any] = [u for u in use if not isinstance(u, str)]
    named_use = [u for u in use if isinstance(u, str)]
    if isinstance(options, GenerateOptions):
        live_tools += [t for t in options.tools if not isinstance(t, str)]
        live_use += [u for u in options.use if not isinstance(u, str)]
        output_type = output_type or output_type_of(options.output_schema)
        on_chunk = on_chunk or options.on_chunk
        model = model or (options.model if not isinstance(options.model, str) else None)
        options = to_action_options(options)
    check_max_turns(options.max_turns)
    resolved_model = resolve_model(model if model is not None else options.model)
    listed = [*options.tools, *named_tools]
    names = [*listed, *(t.name for t in live_tools if t.name not in listed)]
    tool_map = _resolve_tools(names, live_tools, library)
    plan = plan_output(options.output, resolved_model.info, bool(tool_map))
    layers = [*live_use, *(_named_middleware(n, library) for n in [*options.use, *named_use])]
    runtime = Runtime(model=resolved_model, tools=tool_map, plan=plan, output_type=output_type_of(output_type),
                      generate_hooks=[h for h in map(generate_hook, layers) if h is not None],
                      model_hooks=[h for h in map(model_hook, layers) if h is not None], on_chunk=on_chunk)
    return options.model_copy(update={"tools": list(tool_map), "model": resolved_model.name}), runtime


def _resolve_tools(names: list[str], live: list[Any], library: ToolLookup | None) -> dict[str, Tool]:
    given = {}
    for tool in live:
        if tool.name in given and given[tool.name] is not tool:
            raise UsageError(f"two different tools are named {tool.name!r}; tool names must be unique")
        given[tool.name] = tool
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"tool {duplicate!r} is listed twice; tool names must be unique")
    out: dict[str, Tool] = {}
    for name in names:
        found = given.get(name) or (library.tool(name) if library is not None else None)
        if found is None:
            known = sorted({*given, *(library.tool_names() if library is not None else [])})
            raise UsageError(f"unknown tool {name!r}; define it with lib.define_tool(...) or pass it in tools=[...], "
                             "or, for the dotprompt command, list the module that defines it in `[tool.dotprompt] "
                             f"tools` in pyproject.toml (known: {', '.join(known) or 'none'})")
        out[name] = found
    return out


def _named_middleware(entry: str, library: ToolLookup | None) -> Any:
    found = library.middleware(entry) if library is not None else None
    if found is not None:
        return found
    if entry in BUILT_IN:
        return BUILT_IN[entry]()
    raise UsageError(f"unknown middleware {entry!r}; register it with lib.define_middleware or use one of "
                     f"{', '.join(sorted(BUILT_IN))}")


async def generate(options: GenerateActionOptions | GenerateOptions | None = None, /, *,
                   library: ToolLookup | None = None, tools: Sequence[Any] = (), use: Sequence[Any] = (),
                   output_type: Any = None, on_chunk: ChunkCallback | None = None, **kwargs: Any) -> GenerateResponse:
    """Run the model <-> tool loop to a validated result. Pass options, or GenerateOptions fields as keywords.

    With an options object, `model=` may still name or give the model to use instead of the options' one."""
    model = None
    if options is None:
        options = GenerateOptions(**kwargs)
    else:
        model = kwargs.pop("model", None)
        if kwargs:
            raise UsageError(f"pass either an options object or keywords, not both ({', '.join(kwargs)})")
    action, runtime = prepare(options, library=library, tools=tools, use=use, output_type=output_type, model=model,
                              on_chunk=on_chunk)
    return await Loop(runtime).run(action)


def preview_request(options: GenerateActionOptions | GenerateOptions | None = None, /, *,
                    library: ToolLookup | None = None, tools: Sequence[Any] = (), **kwargs: Any) -> GenerateRequest:
    """The first turn's request exactly as the model would get it, without running anything."""
    if options is None:
        options = GenerateOptions(**kwargs)
    action, runtime = prepare(options, library=library, tools=tools)
    loop = Loop(runtime)
    return loop.request(action, runtime.plan.inject(action.messages))


class GenerateStream:
    """`async for chunk in stream` yields every chunk of every turn, then the final GenerateResponse."""

    def __init__(self, run: Any) -> None:
        self._run = run  # a function of the on_chunk callback returning the generate coroutine
        self.response: GenerateResponse | None = None

    async def __aiter__(self) -> AsyncIterator[Chunk | GenerateResponse]:
        queue: asyncio.Queue[Chunk] = asyncio.Queue()
        task = asyncio.ensure_future(self._run(queue.put_nowait))
        try:
            while True:
                while not queue.empty():  # take what is already there without waiting
                    yield queue.get_nowait()
                if task.done():
                    self.response = task.result()
                    yield self.response
                    return
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                else:
                    getter.cancel()
        finally:
            if not task.done():
                task.cancel()


def generate_stream(options: GenerateActionOptions | GenerateOptions | None = None, /, **kwargs: Any) -> GenerateStream:
    on_chunk = kwargs.pop("on_chunk", None)

    def run(push: ChunkCallback) -> Awaitable[GenerateResponse]:
        def both(chunk: Chunk) -> None:
            push(chunk)
            if on_chunk is not None:
                on_chunk(chunk)

        return generate(options, on_chunk=both, **kwargs)

    return GenerateStream(run)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even inside a running event loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="dotprompt-sync") as pool:
        return pool.submit(asyncio.run, coro).result()


def generate_sync(options: GenerateActionOptions | GenerateOptions | None = None, /, **kwargs: Any) -> GenerateResponse:
    """`generate` for sync code; the same loop, run to completion."""
    return run_sync(generate(options, **kwargs))
