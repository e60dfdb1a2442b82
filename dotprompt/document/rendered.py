"""RenderedPrompt: exactly what would be sent to the model, and its Dotprompt JSON shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..identity import PromptIdentity
from ..types import Message, ToolDefinition, construct

__all__ = ["InputSpec", "OutputSpec", "RenderedPrompt", "ToolChoice"]

ToolChoice = Literal["auto", "required", "none"]


class _Spec(BaseModel):
    # Frozen, so one empty spec can be shared by every render that has none.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True, frozen=True)


class OutputSpec(_Spec):
    format: str | None = None
    json_schema: Any = Field(default=None, alias="schema")
    constrained: bool | None = None
    instructions: bool | str | None = None
    grounding: Literal["off", "report", "require"] | None = None  # ours; None: report for JSON with a schema

    @property
    def schema(self) -> Any:  # `rendered.output.schema`, as in Dotprompt
        return self.json_schema


class InputSpec(_Spec):
    json_schema: Any = Field(default=None, alias="schema")
    default: dict[str, Any] | None = None

    @property
    def schema(self) -> Any:
        return self.json_schema


_NO_OUTPUT = construct(OutputSpec)
_NO_INPUT = construct(InputSpec)


class RenderedPrompt(BaseModel):
    """Messages plus the merged metadata. Build with `Prompt.render`."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)

    messages: list[Message]
    name: str | None = None
    variant: str | None = None
    version: str | int | float | None = None
    description: str | None = None
    model: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    tools: list[str] = Field(default_factory=list)
    tool_defs: list[ToolDefinition] = Field(default_factory=list)
    output: OutputSpec = Field(default_factory=lambda: _NO_OUTPUT)
    input: InputSpec = Field(default_factory=lambda: _NO_INPUT)
    max_turns: int | None = None
    max_tool_calls: int | None = None
    tool_choice: ToolChoice | None = None
    return_tool_requests: bool | None = None
    use: list[Any] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    ext: dict[str, dict[str, Any]] = Field(default_factory=dict)
    raw: dict[str, Any] = Field(default_factory=dict)
    # Not part of the Dotprompt shape: which prompt text this came from (name, variant, content hash).
    identity: PromptIdentity | None = Field(default=None, exclude=True)

    def to_dict(self) -> dict[str, Any]:
        """The camelCase Dotprompt JSON shape: the keys that were set, plus config, ext and metadata."""
        out = self.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True,
                              exclude={"messages"})
        out.update(config=self.config, ext=self.ext, metadata=self.metadata)
        out["messages"] = [m.to_dict() for m in self.messages]
        return out
