"""JSON Schemas of a prompt file's frontmatter and of a test file, for editors and CI.

Both are built from the tables the readers use (document.KNOWN_KEYS, testing.cases.*_KEYS, the
registered path assertions), so a key the reader learns is a key the schema knows. The built
schemas are shipped as package data (`dotprompt/data/*.schema.json`, printed by `dotprompt schema
--frontmatter` / `--test-file`); a test keeps the shipped files equal to what this module builds:

    python -m dotprompt.lint.editor_schemas --write
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ..document.parse import GROUNDING_MODES, INPUT_KEYS, KNOWN_KEYS, OUTPUT_KEYS, TOOL_CHOICES
from ..testing.assertions import path_assertion_names
from ..testing.cases import CASE_KEYS, EXPECT_KEYS, FILE_KEYS

__all__ = ["SCHEMA_FILES", "SchemaKind", "build_schema", "shipped_schema", "shipped_schema_text"]

SchemaKind = Literal["frontmatter", "test-file"]
SCHEMA_FILES: dict[SchemaKind, str] = {"frontmatter": "frontmatter.schema.json", "test-file": "test-file.schema.json"}
DRAFT = "http://json-schema.org/draft-07/schema#"  # the draft YAML editors support best
JSON_TYPES = {str: "string", int: "integer", float: "number", dict: "object", list: "array", bool: "boolean"}

FRONTMATTER_TEXT = {
    "name": "The prompt's name (default: the file name).",
    "variant": "The variant this file is (default: from `NAME.VARIANT.prompt`).",
    "version": "Your version of the prompt.",
    "description": "What the prompt does.",
    "model": "The model to run it on, e.g. `openai/gpt-4o-mini` or `local/smollm2`.",
    "config": "Generation settings passed to the model (temperature, maxOutputTokens, topP, topK, stopSequences, ...).",
    "input": "The input: `schema` (Picoschema or JSON Schema) and `default` values.",
    "output": "The output: `format` (json, text, ...), `schema`, `constrained`, `instructions`.",
    "tools": "Names of the tools the model may call (registered in code or by `[tool.dotprompt] tools`).",
    "toolDefs": "Tool definitions written inline.",
    "maxTurns": "Model calls one run may make (model <-> tool turns).",
    "maxToolCalls": "Tool calls one model reply may ask for (default 32); a reply asking for more stops the run.",
    "toolChoice": "Whether the model must, may or must not call a tool.",
    "returnToolRequests": "Return tool requests to the caller instead of running them.",
    "metadata": "Anything of yours; passed through untouched.",
    "use": "Middleware to run around the model call.",
}
TEST_TEXT = {
    "prompt": "The prompt under test (default: NAME from NAME.test.yaml).",
    "variant": "The prompt variant to test.",
    "model": "The model for every case (default: the prompt's, else the default model).",
    "config": "Generation settings for every case, merged under the case's own.",
    "cases": "The test cases.",
    "tests": "Another name for `cases`.",
    "name": "The case's name, unique in the file.",
    "input": "The prompt's input for this case.",
    "context": "Render context (state, docs) for this case.",
    "history": "Earlier messages of the conversation.",
    "expect": "What the reply must satisfy (the output schema is always checked).",
    "eval": "Field-level scoring of the prompt on a gold dataset (`dotprompt eval`).",
}
EXPECT_SHAPES: dict[str, dict[str, Any]] = {
    "output": {"description": "The output equals this value."},
    "output_subset": {"description": "The output contains these keys and values."},
    "paths": {"description": "Checks on JSON paths of the output: `{path: $.total, gte: 40}`.",
              "type": "array", "items": {"$ref": "#/definitions/pathCheck"}},
    "text_contains": {"description": "The reply text contains this text (or each of these).",
                      "type": ["string", "array"], "items": {"type": "string"}},
    "tool_called": {"description": "The model called this tool (a name, or {name, input}).",
                    "type": ["string", "array", "object"]},
    "max_turns_used": {"description": "At most this many model calls.", "type": "integer", "minimum": 1},
    "no_repairs": {"description": "The output needed no repair.", "type": "boolean"},
    "latency_ms": {"description": "The run took at most this many milliseconds.", "type": "number", "minimum": 0},
    "max_tokens": {"description": "The run used at most this many tokens.", "type": "integer", "minimum": 0},
    "function": {"description": "A check written in Python, named `module:function`."},
    "judge": {"description": "A rubric judged by a model ({rubric, model, path})."},
    "grounded": {"description": "These output values (`all`, or a list of JSON paths; `[*]` any item) are found "
                                "in the case's input.",
                 "anyOf": [{"const": "all"}, {"type": "string", "pattern": r"^\$"},
                           {"type": "array", "items": {"type": "string", "pattern": r"^\$"}}]},
}


def build_schema(kind: SchemaKind) -> dict[str, Any]:
    return frontmatter_schema() if kind == "frontmatter" else test_file_schema()


def frontmatter_schema() -> dict[str, Any]:
    properties = {key: _typed(types, FRONTMATTER_TEXT.get(key, "")) for key, types in KNOWN_KEYS.items()}
    properties["toolChoice"]["enum"] = list(TOOL_CHOICES)
    properties["maxTurns"]["minimum"] = 1
    properties["maxToolCalls"]["minimum"] = 1
    properties["tools"]["items"] = {"type": "string"}
    properties["input"].update(properties={key: {} for key in INPUT_KEYS}, additionalProperties=False)
    properties["output"].update(properties={key: {} for key in OUTPUT_KEYS}, additionalProperties=False)
    properties["output"]["properties"]["constrained"] = {"type": "boolean"}
    properties["output"]["properties"]["grounding"] = {
        "enum": [*GROUNDING_MODES, False], "description": "Locate each output value in the input: off, report "
        "(the default for JSON output with a schema: `response.grounding`) or require (an ungrounded value fails "
        "validation and is re-asked by validate_and_retry)."}
    return {
        "$schema": DRAFT, "title": "dotprompt .prompt frontmatter",
        "description": "The YAML between the `---` lines of a .prompt file (Dotprompt-compatible).",
        "type": "object", "properties": properties,
        "patternProperties": {r"\.": {"description": "An extension key (`namespace.key`), kept in `ext`."}},
        "additionalProperties": False,
    }


def test_file_schema() -> dict[str, Any]:
    case_props = {key: {"description": TEST_TEXT.get(key, "")} for key in CASE_KEYS}
    case_props["name"]["type"] = case_props["variant"]["type"] = case_props["model"]["type"] = "string"
    case_props["config"]["type"] = "object"
    case_props["history"]["type"] = "array"
    case_props["expect"] = {"$ref": "#/definitions/expect"}
    file_props: dict[str, dict[str, Any]] = {key: {"description": TEST_TEXT.get(key, "")} for key in FILE_KEYS}
    for key in ("prompt", "variant", "model"):
        file_props[key]["type"] = "string"
    file_props["config"]["type"] = "object"
    for key in ("cases", "tests"):
        if key in file_props:
            file_props[key].update(type="array", items={"$ref": "#/definitions/case"})
    return {
        "$schema": DRAFT, "title": "dotprompt test file (NAME.test.yaml)",
        "type": "object", "properties": file_props, "additionalProperties": False,
        "definitions": {
            "case": {"type": "object", "properties": case_props, "additionalProperties": False},
            "expect": {"type": "object", "additionalProperties": False,
                       "properties": {key: EXPECT_SHAPES.get(key, {}) for key in EXPECT_KEYS}},
            "pathCheck": _path_check(),
        },
    }


def _path_check() -> dict[str, Any]:
    names = path_assertion_names()
    return {
        "type": "object", "required": ["path"], "minProperties": 2, "maxProperties": 2,
        "description": f"`path` (a JSON path like $.items[0].name) and one check: {', '.join(names)}.",
        "properties": {"path": {"type": "string", "pattern": r"^\$"}, **{name: {} for name in names}},
        "additionalProperties": False,
    }


def _typed(types: tuple[type, ...], description: str) -> dict[str, Any]:
    names = [JSON_TYPES[t] for t in types]
    return {"type": names[0] if len(names) == 1 else names, "description": description}


def shipped_schema_text(kind: SchemaKind) -> str:
    return (resources.files("dotprompt") / "data" / SCHEMA_FILES[kind]).read_text(encoding="utf-8")


def shipped_schema(kind: SchemaKind) -> dict[str, Any]:
    return json.loads(shipped_schema_text(kind))


def render(kind: SchemaKind) -> str:
    return json.dumps(build_schema(kind), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """`--write`: rewrite the shipped files from the tables (after adding a key to a reader)."""
    if argv != ["--write"]:
        print("usage: python -m dotprompt.lint.editor_schemas --write", file=sys.stderr)
        return 2
    folder = Path(__file__).resolve().parent.parent / "data"  # dotprompt/data, where shipped_schema reads
    folder.mkdir(exist_ok=True)
    for kind, file in SCHEMA_FILES.items():
        (folder / file).write_text(render(kind), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
