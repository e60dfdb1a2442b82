"""The tool loop, one turn at a time, as the Genkit generate loop defines it.

Per turn: apply the output format -> build the request -> model middleware -> model -> collect
tool requests -> exit A (nothing to run, or the caller runs tools) / exit B (too many turns) /
run tools -> exit C (a tool interrupted) / next turn. Each turn is wrapped by the generate
middleware, and the next turn runs inside the current one, so an outer layer sees the final result.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import (
    GenerationResponseError,
    InputProblem,
    Interrupt,
    OutputValidationError,
    ToolExecutionError,
    UsageError,
)
from ..models.base import Model
from ..schemas import CompiledSchema, json_path
from ..telemetry import NO_TRACING
from ..tools import Tool, to_jsonable
from ..types import GenerateRequest, Message, ModelChunk, ModelResponse, OutputConfig, Part, ToolRequest, ToolResponse
from .formatting import OutputPlan
from .middleware import TurnEnvelope, chain, model_override
from .options import GenerateActionOptions
from .response import Chunk, ChunkCallback, GenerateResponse, StreamState

log = logging.getLogger("dotprompt.generate")


@dataclass
class Runtime:
    """Everything resolved for one run: live objects the plain options only name."""

    model: Model
    tools: dict[str, Tool]
    plan: OutputPlan
    output_type: type[BaseModel] | None = None
    generate_hooks: list[Any] = field(default_factory=list)
    model_hooks: list[Any] = field(default_factory=list)
    on_chunk: ChunkCallback | None = None
    trace: Any = NO_TRACING  # spans of this run (telemetry.tracing); NO_TRACING records nothing


@dataclass
class _ToolResult:
    request: ToolRequest
    output: Any = None
    error: str | None = None
    interrupt: Any = None
    interrupted: bool = False


class Loop:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.stream = StreamState()
        self._index = 0
        self._role: str | None = None
        self._parser: Any = None
        self._parser_index = -1
        self._turn_chain = chain(runtime.generate_hooks, self._turn)

    async def run(self, options: GenerateActionOptions) -> GenerateResponse:
        with self.rt.trace.run(options) as span:
            if options.resume is not None:
                options = await self._resume(options)
            return span.ended(await self._turn_chain(TurnEnvelope(options, 0, self._index)))

    # -- one turn ------------------------------------------------------------------------------

    async def _turn(self, envelope: TurnEnvelope) -> GenerateResponse:
        opts = envelope.request
        self.rt.trace.turn = envelope.current_turn
        messages = self.rt.plan.inject(opts.messages)
        request = self.request(opts, messages)
        reply = await self._call_model(request)
        requests = [p.tool_request for p in reply.message.content if p.tool_request is not None]
        if opts.return_tool_requests or not requests:  # exit A
            return self._finish(reply, request, parse=not requests)
        if envelope.current_turn + 1 > opts.max_turns:  # exit B, before any further tool runs
            response = self._response(reply, request)
            raise GenerationResponseError(f"Exceeded maximum tool call iterations ({opts.max_turns})", "ABORTED",
                                          response=response, messages=response.messages)
        results = await self._run_tools(requests, opts, [*messages, reply.message])
        if any(r.interrupted for r in results):  # exit C
            revised = _mark_interrupts(reply.message, results)
            return self._response(reply.model_copy(update={"message": revised}), request, finish="interrupted")
        tool_message = _tool_message(results)
        if self.rt.on_chunk is not None:  # a turn's tool results stream as one `tool` chunk
            self._emit("tool", tool_message.content)
        # "required" forces a tool call on the turn it is asked for; kept on later turns it would force
        # another call every turn until max_turns, so once tools have answered it relaxes to "auto".
        choice = "auto" if opts.tool_choice == "required" else opts.tool_choice
        following = opts.model_copy(update={"messages": [*messages, reply.message, tool_message], "tool_choice": choice})
        return await self._turn_chain(TurnEnvelope(following, envelope.current_turn + 1, self._index))

    def request(self, opts: GenerateActionOptions, messages: list[Message]) -> GenerateRequest:
        plan = self.rt.plan
        output = None
        if plan.format_name is not None:
            output = OutputConfig(format=plan.format_name, schema=plan.schema, constrained=plan.native or None,
                                  content_type=plan.content_type)
        return GenerateRequest(messages=messages, config=opts.config, tools=[t.definition for t in self.rt.tools.values()],
                               tool_choice=opts.tool_choice, output=output)

    async def _call_model(self, request: GenerateRequest) -> ModelResponse:
        on_chunk = self._on_model_chunk if self.rt.on_chunk is not None else None

        async def end(req: GenerateRequest) -> ModelResponse:
            model = model_override.get() or self.rt.model
            if req.tools and not model.info.tools:
                log.warning("model %s does not support tools; sending %d tool definitions anyway", model.name, len(req.tools))
            with self.rt.trace.chat(req, model) as span:
                return span.ended(await model.generate(req, on_chunk))

        if not self.rt.model_hooks:
            return await end(request)
        return await chain(self.rt.model_hooks, end)(request)

    # -- exits -------------------------------------------------------------------------------

    def _response(self, reply: ModelResponse, request: GenerateRequest, finish: str | None = None) -> GenerateResponse:
        return GenerateResponse(message=reply.message, finish_reason=finish or reply.finish_reason,
                                finish_message=reply.finish_message, usage=reply.usage, request=request,
                                custom=reply.custom, raw=reply.raw)

    def _finish(self, reply: ModelResponse, request: GenerateRequest, parse: bool) -> GenerateResponse:
        response = self._response(reply, request)
        if parse:
            response.parsed, response.output_repairs = self._output(response)
        return response

    def _output(self, response: GenerateResponse) -> tuple[Any, list[Any]]:
        """Parse the final text with the format, then validate: schema first, then the output type."""
        plan, text = self.rt.plan, response.text
        if plan.handler is None:
            return text, []
        parsed = plan.parse(text, response)
        validator: CompiledSchema | None = plan.validator
        if validator is not None:
            problems = validator.problems(parsed.value)
            if problems:
                raise OutputValidationError("the model's output does not match the output schema", problems,
                                            text=text, response=response, messages=response.messages)
        if self.rt.output_type is not None and isinstance(parsed.value, dict):
            try:
                return self.rt.output_type.model_validate(parsed.value), parsed.repairs
            except ValidationError as exc:
                problems = [InputProblem(json_path(e["loc"]), e["msg"]) for e in exc.errors()]
                raise OutputValidationError(f"the model's output does not fit {self.rt.output_type.__name__}", problems,
                                            text=text, response=response, messages=response.messages) from None
        return parsed.value, parsed.repairs

    # -- tools -------------------------------------------------------------------------------

    async def _run_tools(self, requests: list[ToolRequest], opts: GenerateActionOptions,
                         conversation: list[Message]) -> list[_ToolResult]:
        if len(requests) == 1:
            return [await self._run_tool(requests[0], opts, conversation)]
        return list(await asyncio.gather(*(self._run_tool(r, opts, conversation) for r in requests)))

    async def _run_tool(self, request: ToolRequest, opts: GenerateActionOptions, conversation: list[Message],
                        restarting: bool = False) -> _ToolResult:
        tool = self.rt.tools.get(request.name)
        try:
            with self.rt.trace.tool(request, tool) as span:
                if tool is None:
                    raise LookupError(f"unknown tool {request.name!r}; available: {', '.join(self.rt.tools) or 'none'}")
                return _ToolResult(request, output=span.ended(to_jsonable(await tool.run(request.input))))
        except Interrupt as interrupt:
            if restarting:
                raise GenerationResponseError(f"tool {request.name!r} interrupted again while being restarted",
                                              "FAILED_PRECONDITION", messages=conversation) from None
            return _ToolResult(request, interrupted=True, interrupt=interrupt.metadata)
        except Exception as exc:
            if opts.tool_errors == "raise":
                raise ToolExecutionError(request.name, request.ref, exc, messages=conversation) from exc
            log.info("tool %s raised %s; the error goes back to the model", request.name, exc)
            return _ToolResult(request, error=f"{type(exc).__name__}: {exc}")

    async def _resume(self, opts: GenerateActionOptions) -> GenerateActionOptions:
        """Answer interrupted tool requests (respond) or run them again (restart), then continue."""
        assert opts.resume is not None
        if not opts.messages or opts.messages[-1].role != "model" or not any(
                p.tool_request for p in opts.messages[-1].content):
            raise UsageError("resume needs the conversation that ended in the interrupt: pass messages=response.messages")
        last = opts.messages[-1]
        respond = {(r.name, r.ref): r for r in opts.resume.respond}
        restart = {(r.name, r.ref): r for r in opts.resume.restart}
        results = []
        for part in last.content:
            if part.tool_request is not None:
                results.append(await self._resolve(part, respond, restart, opts))
        unmatched = [*respond, *restart]
        if unmatched:
            raise UsageError(f"resume names tool request {_label(*unmatched[0])}, which the last model message does not hold")
        revised = Message(role="model", content=[_resolved(p) for p in last.content], metadata=last.metadata)
        messages = [*opts.messages[:-1], revised, _tool_message(results)]
        return opts.model_copy(update={"messages": messages, "resume": None})

    async def _resolve(self, part: Part, respond: dict[Any, ToolResponse], restart: dict[Any, ToolRequest],
                       opts: GenerateActionOptions) -> _ToolResult:
        request = part.tool_request
        assert request is not None
        key = (request.name, request.ref)
        metadata = part.metadata or {}
        if key in respond:
            return _ToolResult(request, output=to_jsonable(respond.pop(key).output))
        if key in restart:
            restart.pop(key)
            return await self._run_tool(request, opts, opts.messages, restarting=True)
        if "pendingOutput" in metadata:
            return _ToolResult(request, output=metadata["pendingOutput"])
        raise UsageError(f"tool request {_label(*key)} is unresolved: answer it with Resume(respond=[...]) "
                         "or run it again with Resume(restart=[...])")

    # -- streaming ---------------------------------------------------------------------------

    def _on_model_chunk(self, data: ModelChunk) -> None:
        chunk = self._emit(data.role, data.content)
        plan = self.rt.plan
        if plan.handler is None or data.role != "model":
            return
        if self._parser_index != chunk.index:
            self._parser, self._parser_index = plan.handler.new_stream(), chunk.index
            self.stream.reparse[chunk.index] = self._reparse  # earlier chunks' outputs, rebuilt on request
        chunk.output = plan.chunk_output(self._parser, chunk.text, self.rt.output_type)

    def _reparse(self, text: str) -> Any:
        """The output a chunk ending at this text had: its message's text so far, parsed afresh."""
        plan = self.rt.plan
        assert plan.handler is not None  # only registered for parsed messages
        return plan.chunk_output(plan.handler.new_stream(), text, self.rt.output_type)

    def _emit(self, role: str, content: list[Part]) -> Chunk:
        assert self.rt.on_chunk is not None  # only called while streaming
        if self._role is not None and role != self._role:
            self._index += 1
        self._role = role
        chunk = Chunk(self._index, role, content, self.stream)
        self.rt.on_chunk(chunk)
        return chunk


def _label(name: str, ref: str | None) -> str:
    return f"{name}({ref})" if ref else name


def _tool_message(results: list[_ToolResult]) -> Message:
    parts = []
    for r in results:
        output = {"error": r.error} if r.error is not None else r.output
        parts.append(Part(tool_response=ToolResponse(name=r.request.name, ref=r.request.ref, output=output),
                          metadata={"toolError": True} if r.error is not None else None))
    return Message(role="tool", content=parts)


def _mark_interrupts(message: Message, results: list[_ToolResult]) -> Message:
    """Interrupted requests carry `interrupt`; finished ones keep their output as `pendingOutput`."""
    by_request = {id(r.request): r for r in results}
    parts = []
    for part in message.content:
        result = by_request.get(id(part.tool_request)) if part.tool_request is not None else None
        if result is None:
            parts.append(part)
            continue
        extra = {"interrupt": result.interrupt if result.interrupt is not None else True} if result.interrupted else {
            "pendingOutput": {"error": result.error} if result.error is not None else result.output}
        parts.append(part.model_copy(update={"metadata": {**(part.metadata or {}), **extra}}))
    return message.model_copy(update={"content": parts})


def _resolved(part: Part) -> Part:
    if not part.metadata or not ({"interrupt", "pendingOutput"} & part.metadata.keys()):
        return part
    metadata = {k: v for k, v in part.metadata.items() if k not in ("interrupt", "pendingOutput")}
    if "interrupt" in part.metadata:
        metadata["resolvedInterrupt"] = part.metadata["interrupt"]
    return part.model_copy(update={"metadata": metadata or None})
