"""Model-graded assertions (`judge:`): a rubric judged by a named model, its answer recorded and replayed.

    expect:
      judge:
        rubric: The summary names the customer and the refund amount.
        model: openai/gpt-4o-mini      # optional: the case's model
        path: $.summary                # optional: judge this part of the output

The judge's call is an ordinary model call of the case, recorded under `CASE [judge N]` beside the
case's own calls: CI replays the verdict offline like any other reply, and a changed output (a new
request) needs a new recording, so a stale verdict is never reused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import DotpromptError, RecordingMissingError
from ..generation.api import generate
from ..providers.base import Model
from ..providers.registry import resolve_model
from .cases import JudgeCheck, TestCase
from .paths import evaluate, parse_path
from .recording import Mode, RecordingModel, RecordingStore
from .values import plain

__all__ = ["judge_problems"]

JUDGE_SYSTEM = (
    "You grade the output of another AI model against a rubric. Judge only what the rubric asks; "
    "do not reward length or style. Answer with a JSON object: "
    '{"pass": true or false, "reason": "one sentence on why"}.')
VERDICT_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["pass", "reason"],
                  "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}}}


async def judge_problems(checks: Sequence[JudgeCheck], case: TestCase, output: Any, text: str, store: RecordingStore,
                         file: str | None, mode: Mode, case_model: str) -> tuple[list[str], list[str]]:
    """(failures, recording problems) of the case's judges, in order."""
    failures: list[str] = []
    missing: list[str] = []
    for number, check in enumerate(checks, start=1):
        name = check.model or case_model
        recorder = RecordingModel(name, store, mode, f"{case.name} [judge {number}]", _factory(name), file)
        label = f"judge {number} ({name})"
        try:
            verdict = await _ask(recorder, check, output, text)
        except RecordingMissingError as exc:
            failures.append(f"{label}: {exc}")
            missing.append(str(exc))
            continue
        except DotpromptError as exc:
            failures.append(f"{label} could not judge: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        failures += [f"{label}: {stale}" for stale in recorder.stale]
        missing += recorder.stale
        if not verdict.get("pass"):
            failures.append(f"{label} failed the rubric {check.rubric!r}: {verdict.get('reason', '')}")
    return failures, missing


def _factory(name: str) -> Any:
    def make() -> Model:
        return resolve_model(name)

    return make


async def _ask(recorder: RecordingModel, check: JudgeCheck, output: Any, text: str) -> dict[str, Any]:
    subject = _subject(check, output, text)
    prompt = f"Rubric:\n{check.rubric}\n\nOutput to grade:\n{subject}"
    response = await generate(model=recorder, system=JUDGE_SYSTEM, prompt=prompt, output_schema=VERDICT_SCHEMA,
                              config={"temperature": 0})
    return response.output


def _subject(check: JudgeCheck, output: Any, text: str) -> str:
    value = plain(output)
    if check.path is not None:
        found, value = evaluate(value, parse_path(check.path))
        if not found:
            return "(nothing: the output has no " + check.path + ")"
    if value is None:
        return text
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
