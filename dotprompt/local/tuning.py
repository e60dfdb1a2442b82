"""What the local model adds to a request so a tiny model that loops fails in seconds, not minutes.

A 135M-270M model asked for `line_items` tends to repeat the last item until the token cap. Three
defaults bound that, each applied only where the prompt did not decide itself:
- arrays in the grammar get a `maxItems` and strings a `maxLength` (the schema sent to llama-server,
  not the one we validate with), so a loop ends as a closed, valid array or string;
- the reply gets a token cap estimated from the output schema (or a flat one for text);
- `cache_prompt: false`, so a reply depends on its request alone: llama-server's reuse of an earlier
  request's cached prompt changes the arithmetic enough to flip a tiny model's greedy answer (a test
  passed alone and failed after other tests); the prompt is short, evaluating it again costs little;
- decoding settings from `LOCAL_SAMPLING` (none by default: llama.cpp's DRY penalty, tried,
  turned the example invoice's VAT id into an endless run of numbers).
They are applied below the recording layer: recordings keep the request the prompt made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..types import GenerateRequest

__all__ = ["LOCAL_MAX_CHARS", "LOCAL_MAX_ITEMS", "LOCAL_MAX_TOKENS", "LOCAL_MIN_TOKENS", "LOCAL_SAMPLING",
           "LOCAL_TEXT_TOKENS", "LocalTuning", "bounded_arrays", "token_estimate"]

LOCAL_MAX_ITEMS: Final = 12
"""The local model's grammar holds an array without `maxItems` to this many items (a looping model
ends with a closed array instead of running to the token cap)."""

LOCAL_MIN_TOKENS: Final = 128
LOCAL_MAX_TOKENS: Final = 2048
LOCAL_TEXT_TOKENS: Final = 1024
"""The local model's reply cap when the prompt sets no `maxOutputTokens`: estimated from the output
schema and kept between LOCAL_MIN_TOKENS and LOCAL_MAX_TOKENS, LOCAL_TEXT_TOKENS for text."""

LOCAL_MAX_CHARS: Final = 256
"""The local model's grammar holds a string without `maxLength` to this many characters (a model that
loops inside a value, e.g. a VAT id growing digit by digit, must close it)."""

LOCAL_SAMPLING: Final[Mapping[str, float]] = {}
"""llama-server decoding settings the local model sends unless the prompt's config sets them. Empty:
DRY (`dry_multiplier: 0.8`) was tried and made SmolLM2 loop inside the example invoice's VAT id."""

# Rough token counts of a JSON value, enough to size a cap a sane reply never reaches.
KEY_TOKENS = 6
MAX_DEPTH = 64  # schema levels looked at; deeper ones are left alone
LEAF_TOKENS = {"string": 24, "number": 10, "integer": 8, "boolean": 3, "null": 2}


@dataclass(frozen=True)
class LocalTuning:
    """The local model's defaults; `LocalTuning.off()` sends requests as they are (for measuring)."""

    max_items: int | None = LOCAL_MAX_ITEMS
    max_chars: int | None = LOCAL_MAX_CHARS
    cap_tokens: bool = True
    fresh_prompt: bool = True
    sampling: Mapping[str, Any] = field(default_factory=lambda: dict(LOCAL_SAMPLING))

    @classmethod
    def off(cls) -> LocalTuning:
        return cls(max_items=None, max_chars=None, cap_tokens=False, fresh_prompt=False, sampling={})

    def apply(self, request: GenerateRequest) -> GenerateRequest:
        config = {**({"cache_prompt": False} if self.fresh_prompt else {}), **self.sampling, **request.config}
        output = request.output
        schema = output.json_schema if output is not None and output.constrained else None
        if schema is not None and (self.max_items is not None or self.max_chars is not None):
            schema = bounded_arrays(schema, self.max_items, self.max_chars)
            output = output.model_copy(update={"json_schema": schema}) if output is not None else None
        if self.cap_tokens and "maxOutputTokens" not in config:
            wanted = token_estimate(schema, self.max_items) if schema is not None else LOCAL_TEXT_TOKENS
            config["maxOutputTokens"] = max(LOCAL_MIN_TOKENS, min(wanted, LOCAL_MAX_TOKENS))
        return request.model_copy(update={"config": config, "output": output})


def bounded_arrays(schema: Any, max_items: int | None, max_chars: int | None = None, depth: int = 0) -> Any:
    """A copy of `schema` whose arrays hold at most `max_items` and whose strings at most `max_chars`
    (a smaller bound the schema sets is kept). Past MAX_DEPTH levels (a hostile schema) the rest is
    kept as it is: a bound is a help, not a rule."""
    if depth > MAX_DEPTH:
        return schema
    if isinstance(schema, list):
        return [bounded_arrays(item, max_items, max_chars, depth + 1) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: bounded_arrays(value, max_items, max_chars, depth + 1) for key, value in schema.items()}
    types = _types(schema)
    if max_chars is not None and "string" in types and "enum" not in schema and "const" not in schema:
        copy["maxLength"] = min(schema.get("maxLength", max_chars), max_chars)
        if copy.get("minLength", 0) > copy["maxLength"]:
            copy["minLength"] = copy["maxLength"]
    if max_items is not None and "array" in types:
        copy["maxItems"] = min(schema.get("maxItems", max_items), max_items)
        if copy.get("minItems", 0) > copy["maxItems"]:
            copy["minItems"] = copy["maxItems"]
    return copy


def token_estimate(schema: Any, max_items: int | None, depth: int = 0) -> int:
    """About how many tokens the longest sensible JSON value of `schema` takes (arrays at `max_items`)."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return LEAF_TOKENS["string"]
    variants = [v for key in ("anyOf", "oneOf") for v in schema.get(key, [])]
    if variants:
        return max(token_estimate(v, max_items, depth + 1) for v in variants)
    types = _types(schema)
    if "object" in types or "properties" in schema:
        fields = schema.get("properties", {})
        return 2 + sum(KEY_TOKENS + token_estimate(sub, max_items, depth + 1) for sub in fields.values())
    if "array" in types:
        count = min(n for n in (schema.get("maxItems"), max_items, LOCAL_MAX_ITEMS) if n is not None)
        return 2 + count * (1 + token_estimate(schema.get("items", {}), max_items, depth + 1))
    return max((LEAF_TOKENS.get(t, LEAF_TOKENS["string"]) for t in types), default=LEAF_TOKENS["string"])


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    return {t for t in declared if isinstance(t, str)} if isinstance(declared, list) else set()
