"""The one message model of the product. Wire shape is camelCase JSON (Dotprompt/Genkit)."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = ["FinishReason", "GenerateRequest", "Media", "Message", "ModelChunk", "ModelResponse", "OutputConfig", "Part", "Role",
           "ToolDefinition", "ToolRequest", "ToolResponse", "Usage", "WireModel", "construct"]

Role = Literal["system", "user", "model", "tool"]
_M = TypeVar("_M", bound=BaseModel)


def construct(cls: type[_M], **values: Any) -> _M:
    """Build a model from values that are already valid, without validation.

    pydantic's `model_construct` recomputes every default on each call (tens of µs for a
    render result); rendering builds several small objects per call, so we copy the defaults
    from a per-class table instead. Only the given fields count as set.
    """
    table = _TABLES.get(cls)
    if table is None:
        table = _TABLES[cls] = _defaults_table(cls)
    defaults, factories = table
    data = {**defaults, **values}
    for name, factory in factories:
        if name not in values:
            data[name] = factory()
    obj = _new(cls)
    _set(obj, "__dict__", data)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def _defaults_table(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    fields = cls.model_fields
    defaults = {name: f.default for name, f in fields.items() if f.default_factory is None}
    factories = tuple((name, f.default_factory) for name, f in fields.items() if f.default_factory is not None)
    return defaults, factories


# A plain dict, not an LRU: one entry per model class, a set fixed by the code (never by input), and
# read on every construct() where a lock would cost more than the table saves.
_TABLES: dict[type, tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}
_set = object.__setattr__
_new = object.__new__


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python; both accepted on input."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Media(WireModel):
    url: str
    content_type: str | None = None


class ToolRequest(WireModel):
    name: str
    ref: str | None = None
    input: Any = None
    partial: bool | None = None


class ToolResponse(WireModel):
    """A tool's answer: `output` (JSON), and for a multipart tool also `content` parts (media, text)."""

    name: str
    ref: str | None = None
    output: Any = None
    content: list[Part] | None = None


class Part(WireModel):
    """Exactly one content field is set (text, media, tool_request, ...); metadata is optional."""

    text: str | None = None
    media: Media | None = None
    tool_request: ToolRequest | None = None
    tool_response: ToolResponse | None = None
    data: Any = None
    reasoning: str | None = None
    custom: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class Message(WireModel):
    role: Role
    content: list[Part]
    metadata: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if p.text is not None)


class ToolDefinition(WireModel):
    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


FinishReason = Literal["stop", "length", "blocked", "interrupted", "aborted", "other", "unknown"]


class Usage(WireModel):
    """Token counts of one model call, or of a whole run when summed (`Usage.total`).

    Field names follow Genkit's `GenerationUsage`: `cachedContentTokens` counts input tokens
    read from a provider cache (already inside `inputTokens`), `thoughtsTokens` reasoning tokens
    (already inside `outputTokens`). `cacheCreationTokens` (ours; Genkit has none) counts input
    tokens written to a cache, which Anthropic bills apart.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_content_tokens: int | None = None
    cache_creation_tokens: int | None = None
    thoughts_tokens: int | None = None
    custom: dict[str, Any] | None = None

    @classmethod
    def total(cls, usages: list[Usage | None]) -> Usage | None:
        """The sum over calls; a count stays None only when no call reported it. None if no usage at all."""
        reported = [u for u in usages if u is not None]
        if not reported:
            return None
        sums: dict[str, Any] = {}  # counts by field name (Any: Usage has fields of other types too)
        for usage in reported:
            for name in _COUNTED:
                value = getattr(usage, name)
                if value is not None:
                    sums[name] = sums.get(name, 0) + value
        return cls(**sums)


_COUNTED = ("input_tokens", "output_tokens", "total_tokens", "cached_content_tokens", "cache_creation_tokens", "thoughts_tokens")


class OutputConfig(WireModel):
    """What the request tells the model about the output: format, schema, native constraint."""

    format: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    constrained: bool | None = None
    content_type: str | None = None


class GenerateRequest(WireModel):
    """One model call, built fresh for every turn."""

    messages: list[Message]
    config: dict[str, Any] = Field(default_factory=dict)
    tools: list[ToolDefinition] = Field(default_factory=list)
    tool_choice: Literal["auto", "required", "none"] | None = None
    output: OutputConfig | None = None


class ModelChunk(WireModel):
    """A piece of a streamed model reply, as a model hands it to the loop."""

    role: Role = "model"
    content: list[Part]


class ModelResponse(WireModel):
    """What a model returns for one request."""

    message: Message
    finish_reason: FinishReason | None = None  # None: the model gave none
    finish_message: str | None = None
    usage: Usage | None = None
    custom: Any = None
    raw: Any = None
