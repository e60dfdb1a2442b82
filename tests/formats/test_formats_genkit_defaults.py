"""The built-in formats' settings against Genkit's (issue 29, item 18): each one that differs is a
documented difference (docs/genkit.md), and the json format's instructions go where the docs say."""

from __future__ import annotations

import re

from dotprompt.doubles import ScriptedModel
from dotprompt.formats import get_format
from dotprompt.generation.api import generate_sync
from dotprompt.providers.base import ModelInfo
from tests.conftest import ROOT

# Genkit's formatters (js/ai/src/formats): json sets defaultInstructions: false; the others leave it
# unset, which Genkit reads as true; text has no instructions to inject either way.
GENKIT_DEFAULT_INSTRUCTIONS = {"json": False, "jsonl": True, "array": True, "enum": True}
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def _documented_differences() -> str:
    text = (ROOT / "docs" / "genkit.md").read_text(encoding="utf-8")
    return text[text.index("# Differences from Genkit"):]


def test_every_default_instructions_unlike_genkits_is_a_documented_difference():
    differences = _documented_differences()
    for name, genkit in GENKIT_DEFAULT_INSTRUCTIONS.items():
        if get_format(name).default_instructions != genkit:
            assert re.search(rf"`get_format\(\"{name}\"\)\.default_instructions`", differences), name


def _sent_instructions(constrained: str, **output) -> bool:
    model = ScriptedModel(['{"a": "x"}'], info=ModelInfo(label="m", constrained=constrained))
    generate_sync(model=model, prompt="hi", output_schema=SCHEMA, **output)
    return any("Output should be in JSON format" in (p.text or "") for m in model.requests[0].messages
               for p in m.content)


def test_json_instructions_are_sent_only_when_the_model_cannot_be_constrained_as_documented():
    assert _sent_instructions("none")  # Genkit's constrained-generation simulation sends the same text
    assert not _sent_instructions("all")  # natively constrained: the schema goes to the model instead
    assert _sent_instructions("all", output_constrained=False)  # documented: Genkit sends none here
