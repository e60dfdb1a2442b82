"""The tool loop, one turn at a time, as the Genkit generate loop defines it.

Per turn: apply the output format -> build the request -> model middleware -> model -> collect
tool requests -> exit A (nothing to run, or the caller runs tools) / exit B (too many turns) /
run tools -> exit C (a tool interrupted) / next turn. Each turn is wrapped by the generate
middleware, and the next turn runs inside the current one, so an outer layer sees the final result.
One place per model call (`_call_model`) and per tool execution (`_execute_tool`, inside the tool
middleware). A `resume` is resolved before the first turn: answers, reused outputs and restarts
become the tool message (the parts and their markers are written by toolparts.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from pydantic import BaseModel, ValidationError

from ..errors import (
    GenerationResponseError,
    InputProblem,
    Interrupt,
    OutputValidationError,
    ToolExecutionError,
    UsageError,
)
from ..formats import ParsedOutput
from ..observe.spans import NO_TRACING
from ..providers.base import Model
from ..schema.compiled import CompiledSchema, json_path
from ..settings import DEFAULT_MAX_TOOL_CALLS
from ..tools.define import Tool, ToolContext
from ..types import (
    FinishReason,
    GenerateRequest,
    Message,
    ModelChunk,
    ModelResponse,
    OutputConfig,
    Part,
    ToolResponse,
    Usage,
)
from .formatting import OutputPlan
from .grounded import GroundingCheck
from .middleware import TurnEnvelope, chain, model_override
from .options import GenerateActionOptions
from .response import Chunk, ChunkCallback, ChunkHistory, GenerateResponse
from .toolparts import (
    ToolOutcome,
    answer_part,
    error_part,
    interrupt_part,
    label,
    mark_interrupts,
    part_key,
    resolved,
    response_part,
    restart_part,
)

__all__ = ["TOOL_CONCURRENCY", "Loop", "Runtime"]

TOOL_CONCURRENCY: Final = 8
"""Tool calls of one reply that run at once; the rest wait their turn."""

log = logging.getLogger("dotprompt.generate")


@dataclass
class Runtime:
    """Everything resolved for one run: live objects the plain options only name."""

    model: Model
    tools: dict[str, Tool]
    plan: OutputPlan
    output_type: type[BaseModel] | None = None
    partial_type: type[BaseModel] | None = None  # streamed object outputs are read into it (a typed prompt's twin)
    generate_hooks: list[Any] = field(default_factory=list)
    model_hooks: list[Any] = field(default_factory=list)
    tool_hooks: list[Any] = field(default_factory=list)
    on_chunk: ChunkCallback | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    trace: Any = NO_TRACING  # spans of this run (observe/spans.py: `tracing`); NO_TRACING records nothing
    grounding: GroundingCheck | None = None  # locate the output's values in the input (output.grounding)


INTERRUPTED = "One or more tool calls resulted in interrupts."
SHOWN_NAME = 80  # characters of an unknown tool's name quoted back to the model
INTERRUPTED_ON_RESUME = "One or more tools triggered interrupts while resuming generation. The model was not called."


class Loop:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.stream = ChunkHistory()
        self.usages: list[Usage | None] = []  # every model call of the run, in order
        self._index = 0
        self._role: str | None = None
        self._parser: Any = None
        self._parser_index = -1
        self._turn_chain = chain(runtime.generate_hooks, self._turn)
        self._tool_chain = chain(runtime.tool_hooks, self._execute_tool)
        self._tool_slots = asyncio.Semaphore(TOOL_CONCURRENCY)
        self._tools_listed = False  # the available tools are named once per turn, not per unknown name

    async def run(self, options: GenerateActionOptions) -> GenerateResponse:
        with self.rt.trace.run(options) as span:
            if options.resume is not None:
                resumed = await self._resume(options)
                if isinstance(resumed, GenerateResponse):  # a restarted tool interrupted again: exit C
                    return span.ended(resumed)
                options = resumed
            return span.ended(await self._turn_chain(TurnEnvelope(options, 0, self._index)))

    # -- one turn ------------------------------------------------------------------------------

    async def _turn(self, envelope: TurnEnvelope) -> GenerateResponse:
        opts = envelope.request
        self.rt.trace.turn = envelope.current_turn
        messages = self.rt.plan.inject(opts.messages)
        request = self.request(opts, messages)
        reply = await self._call_model(request)
        requests = [p for p in reply.message.content if p.tool_request is not None]
        if opts.return_tool_requests or not requests:  # exit A
            return self._finish(reply, request, parse=not requests)
        if envelope.current_turn + 1 > opts.max_turns:  # exit B, before any further tool runs
            response = self._response(reply, request)
            raise GenerationResponseError(f"Exceeded maximum tool call iterations ({opts.max_turns})", "ABORTED",
                                          response=response, messages=response.messages)
        limit = opts.max_tool_calls or DEFAULT_MAX_TOOL_CALLS
        if len(requests) > limit:  # before any of them runs: a reply of 10,000 refunds runs none
            response = self._response(reply, request)
            raise GenerationResponseError(f"The model asked for {len(requests)} tool calls in one reply; the limit is "
                                          f"{limit} (maxToolCalls)", "ABORTED", response=response,
                                          messages=response.messages)
        outcomes = await self._run_tools(requests, opts, [*messages, reply.message])
        if any(o.interrupted for o in outcomes):  # exit C
            revised = mark_interrupts(reply.message, outcomes)
            return self._response(reply.model_copy(update={"message": revised}), request, "interrupted", INTERRUPTED)
        tool_message = Message(role="tool", content=[o.response for o in outcomes if o.response is not None])
        if self.rt.on_chunk is not None:  # a turn's tool results stream as one `tool` chunk
            self._emit("tool", tool_message.content)
        # "required" forces a tool call on the turn it is asked for; kept on later turns it would force
        # another call every turn until max_turns, so once tools have answered it relaxes to "auto".
        choice = "auto" if opts.tool_choice == "required" else opts.tool_choice
        following = opts.model_copy(update={"messages": [*messages, reply.message, tool_message], "tool_choice": choice})
        return await self._turn_chain(TurnEnvelope(following, envelope.current_turn + 1, self._index))

    def request(self, opts: GenerateActionOptions, messages: list[Message]) -> GenerateRequest:
        plan = self.rt.plan
        output = OutputConfig()  # sent as `{}` without a format, as Genkit sends it
        if plan.format_name is not None:
            output = OutputConfig(format=plan.format_name, schema=plan.schema, constrained=plan.native or None,
                                  content_type=plan.content_type)
        return GenerateRequest(messages=messages, config=opts.config, tools=[t.definition for t in self.rt.tools.values()],
                               tool_choice=opts.tool_choice, output=output)

    async def _call_model(self, request: GenerateRequest) -> ModelResponse:
        """One model call, through the model middleware; its usage joins the run's."""
        on_chunk = self._on_model_chunk if self.rt.on_chunk is not None else None

        async def end(req: GenerateRequest) -> ModelResponse:
            model = model_override.get() or self.rt.model
            if req.tools and not model.info.tools:
                log.warning("model %s does not support tools; sending %d tool definitions anyway", model.name, len(req.tools))
            with self.rt.trace.chat(req, model) as span:
                reply = span.ended(await model.generate(req, on_chunk))
            self.usages.append(reply.usage)
            return reply

        if not self.rt.model_hooks:
            return await end(request)
        return await chain(self.rt.model_hooks, end)(request)

    # -- exits -------------------------------------------------------------------------------

    def _response(self, reply: ModelResponse, request: GenerateRequest, finish: FinishReason | None = None,
                  finish_message: str | None = None) -> GenerateResponse:
        """The response of the run so far: usage summed over its model calls; `custom` and `usage`
        are `{}` when the model gave none, as Genkit writes them."""
        return GenerateResponse(message=reply.message, finish_reason=finish or reply.finish_reason,
                                finish_message=finish_message or reply.finish_message,
                                usage=Usage.total(self.usages) or Usage(), request=request,
                                custom=reply.custom if reply.custom is not None else {}, raw=reply.raw,
                                usage_per_call=list(self.usages))

    def _finish(self, reply: ModelResponse, request: GenerateRequest, parse: bool) -> GenerateResponse:
        response = self._response(reply, request)
        streamed = self._streamed_parse(response.text) if parse else None
        # The last message has streamed: its parser (the live value and the last output it built, each
        # as big as the reply's value) is let go before any final parse builds the value once more.
        # A chunk still held keeps what its own output needs.
        self._parser, self._parser_index = None, -1
        if parse:
            response.parsed, response.output_repairs = self._output(response, streamed)
        return response

    def _streamed_parse(self, text: str) -> ParsedOutput | None:
        """The final parse as the stream already has it, when the text it read is exactly `text` (a
        middleware may have changed the reply after it streamed): a megabyte value not built twice."""
        whole = getattr(self._parser, "whole_output", None)
        streamed = self.stream.texts.get(self._parser_index)
        if whole is None or streamed is None or streamed.length != len(text) or streamed.upto(streamed.length) != text:
            return None
        return cast("ParsedOutput | None", whole())

    def _output(self, response: GenerateResponse, streamed: ParsedOutput | None = None) -> tuple[Any, list[Any]]:
        """Parse the final text with the format (unless `streamed` is its parse), then validate:
        schema first, then the output type."""
        plan, text = self.rt.plan, response.text
        if plan.handler is None:
            return text, []
        parsed = plan.parse(text, response, streamed)
        validator: CompiledSchema | None = plan.validator
        if validator is not None:
            problems = validator.problems(parsed.value)
            if problems:
                raise OutputValidationError("the model's output does not match the output schema", problems,
                                            text=text, response=response, messages=response.messages)
        if self.rt.grounding is not None:
            self.rt.grounding.apply(parsed.value, response, text)
        if self.rt.output_type is not None and isinstance(parsed.value, dict):
            try:
                return self.rt.output_type.model_validate(parsed.value), parsed.repairs
            except ValidationError as exc:
                problems = [InputProblem(json_path(e["loc"]), e["msg"]) for e in exc.errors()]
                raise OutputValidationError(f"the model's output does not fit {self.rt.output_type.__name__}", problems,
                                            text=text, response=response, messages=response.messages) from None
        return parsed.value, parsed.repairs

    # -- tools -------------------------------------------------------------------------------

    async def _run_tools(self, requests: list[Part], opts: GenerateActionOptions,
                         conversation: list[Message]) -> list[ToolOutcome]:
        self._tools_listed = False
        if len(requests) == 1:
            return [await self._run_tool(requests[0], opts, conversation)]

        async def bounded(part: Part) -> ToolOutcome:
            async with self._tool_slots:
                return await self._run_tool(part, opts, conversation)

        return list(await asyncio.gather(*(bounded(r) for r in requests)))

    async def _run_tool(self, part: Part, opts: GenerateActionOptions, conversation: list[Message],
                        restart: bool = False) -> ToolOutcome:
        """One tool request through the tool middleware: its response, its interrupt, or its error
        (sent back to the model, or raised with tool_errors="raise")."""
        request = part.tool_request
        assert request is not None
        # `resumed` is the caller's word on a restart; on a part the model wrote it is the model's, so
        # it never reaches the tool (a reply could otherwise forge an approval).
        sent = part if restart or "resumed" not in (part.metadata or {}) else part.model_copy(
            update={"metadata": {k: v for k, v in (part.metadata or {}).items() if k != "resumed"}})
        try:
            response = await self._tool_chain(sent)
            if not isinstance(response, Part) or response.tool_response is None:
                raise TypeError(f"tool middleware returned {type(response).__name__}, not a tool-response part")
            return ToolOutcome(part, response=response)
        except Interrupt as interrupt:
            return ToolOutcome(part, interrupted=True, interrupt=interrupt.metadata)
        except Exception as exc:
            if opts.tool_errors == "raise":
                raise ToolExecutionError(request.name, request.ref, exc, messages=conversation) from exc
            response = error_part(request, exc)  # redacted
            log.info("tool %s raised %s; the error goes back to the model", request.name,
                     response.tool_response.output["error"] if response.tool_response else "")
            return ToolOutcome(part, response=response)

    async def _execute_tool(self, part: Part) -> Part:
        """The end of the tool middleware chain: run the tool with its context."""
        request = part.tool_request
        assert request is not None
        tool = self.rt.tools.get(request.name)
        with self.rt.trace.tool(request, tool) as span:
            if tool is None:
                raise LookupError(self._unknown_tool(request.name))
            metadata = part.metadata or {}
            context = ToolContext(context=self.rt.context, resumed=metadata.get("resumed"), metadata=part.metadata)
            result = span.ended(await tool.run(request.input, context))
        return response_part(tool, request, result)

    def _unknown_tool(self, name: str) -> str:
        """The error for a name no tool has: the available tools the first time in a turn, then only the name."""
        shown = repr(name if len(name) <= SHOWN_NAME else name[:SHOWN_NAME] + "...")
        if self._tools_listed:
            return f"unknown tool {shown} (the available tools are listed in the first unknown-tool error)"
        self._tools_listed = True
        return f"unknown tool {shown}; available: {', '.join(self.rt.tools) or 'none'}"

    async def _resume(self, opts: GenerateActionOptions) -> GenerateActionOptions | GenerateResponse:
        """Answer interrupted tool requests (respond) or run them again (restart), then continue; a
        restarted tool that interrupts again ends the run here (exit C, the model not called)."""
        assert opts.resume is not None
        last = opts.messages[-1] if opts.messages else None
        if last is None or last.role != "model" or not any(p.tool_request for p in last.content):
            raise UsageError("resume needs the conversation that ended in the interrupt: pass messages=response.messages")
        respond = {part_key(p): p for p in map(answer_part, opts.resume.respond)}
        restart = {part_key(p): p for p in (restart_part(r, last) for r in opts.resume.restart)}
        asked = {part_key(p) for p in last.content if p.tool_request is not None}
        unmatched = [k for k in [*respond, *restart] if k not in asked]
        if unmatched:
            raise UsageError(f"resume names tool request {label(*unmatched[0])}, which the last model message does not hold")
        resolved = await asyncio.gather(*(self._resolve(p, respond, restart, opts) for p in last.content))
        if any(r.interrupted for r in resolved):
            return self._interrupted_on_resume(opts, last, resolved)
        revised = last.model_copy(update={"content": [r.request for r in resolved]})
        tool_message = Message(role="tool", content=[r.response for r in resolved if r.response is not None],
                               metadata={"resumed": opts.resume.metadata or True})
        if self.rt.on_chunk is not None:  # streamed like any other turn's tool results
            self._emit("tool", tool_message.content)
        messages = [*opts.messages[:-1], revised, tool_message]
        return opts.model_copy(update={"messages": messages, "resume": None})

    async def _resolve(self, part: Part, respond: dict[Any, Part], restart: dict[Any, Part],
                       opts: GenerateActionOptions) -> ToolOutcome:
        """One part of the interrupted message, resolved: the revised request part and its response."""
        if part.tool_request is None:
            return ToolOutcome(part)
        key, metadata = part_key(part), dict(part.metadata or {})
        if "pendingOutput" in metadata:  # finished before the interrupt: its output is reused
            output = metadata.pop("pendingOutput")
            response = Part(tool_response=ToolResponse(name=key[0], ref=key[1], output=output),
                            metadata={**metadata, "source": "pending"})
            return ToolOutcome(part.model_copy(update={"metadata": metadata}), response=response)
        if key in respond:
            return ToolOutcome(resolved(part), response=respond[key])
        if key in restart:
            outcome = await self._run_tool(restart[key], opts, opts.messages, restart=True)
            if outcome.interrupted:
                return outcome
            return ToolOutcome(resolved(part), response=outcome.response)
        raise UsageError(f"tool request {label(*key)} is unresolved: answer it with Resume(respond=[...]) "
                         "or run it again with Resume(restart=[...])")

    def _interrupted_on_resume(self, opts: GenerateActionOptions, last: Message,
                               resolved: list[ToolOutcome]) -> GenerateResponse:
        """Exit C while resuming: the interrupted message again, with the new interrupts marked and
        every answer found so far kept as `pendingOutput`, ready for the next resume."""
        parts = []
        for outcome in resolved:
            if outcome.interrupted:
                parts.append(interrupt_part(outcome))
            elif outcome.response is not None and outcome.response.tool_response is not None:
                metadata = {k: v for k, v in (outcome.request.metadata or {}).items() if k != "resolvedInterrupt"}
                metadata["pendingOutput"] = outcome.response.tool_response.output
                parts.append(outcome.request.model_copy(update={"metadata": metadata}))
            else:
                parts.append(outcome.request)
        request = self.request(opts, self.rt.plan.inject(opts.messages[:-1]))
        return GenerateResponse(message=last.model_copy(update={"content": parts}), finish_reason="interrupted",
                                finish_message=INTERRUPTED_ON_RESUME, usage=Usage(), request=request, custom={},
                                usage_per_call=[])

    # -- streaming ---------------------------------------------------------------------------

    def _on_model_chunk(self, data: ModelChunk) -> None:
        chunk = self._emit(data.role, data.content)
        plan = self.rt.plan
        if plan.handler is None or data.role != "model":
            return
        if self._parser_index != chunk.index:
            self._parser, self._parser_index = plan.handler.new_stream(), chunk.index
            self.stream.reparse[chunk.index] = self._reparse  # earlier chunks' outputs, rebuilt on request
        chunk.output = plan.chunk_output(self._parser, chunk.text, self.rt.output_type, self.rt.partial_type)

    def _reparse(self, before: str, text: str) -> Any:
        """The output an earlier chunk had: a fresh stream fed its message's text before it, then its own text."""
        plan = self.rt.plan
        assert plan.handler is not None  # only registered for parsed messages
        parser = plan.handler.new_stream()
        if before:
            parser.feed(before)
        return plan.chunk_output(parser, text, self.rt.output_type, self.rt.partial_type)

    def _emit(self, role: str, content: list[Part]) -> Chunk:
        assert self.rt.on_chunk is not None  # only called while streaming
        if self._role is not None and role != self._role:
            self._index += 1
        self._role = role
        chunk = Chunk(self._index, role, content, self.stream)
        self.rt.on_chunk(chunk)
        return chunk
