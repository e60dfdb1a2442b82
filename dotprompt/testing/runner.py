"""Running prompt test cases: replayed or live, concurrently (bounded), each failure on its case."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import settings
from ..document.files import lexically_inside
from ..errors import DotpromptError, OutputValidationError, RecordingMissingError
from ..observe.cost import Cost, price_run
from ..observe.runrecord import log_source
from ..prompts.library import PromptLibrary, check_name
from ..providers.registry import resolve_model
from .cases import TestCase
from .expect import Observed, check, function_problems
from .judge import judge_problems
from .recording import Mode, RecordingModel, RecordingStore

__all__ = ["CaseResult", "CaseSummary", "TestRun"]


@dataclass
class CaseResult:
    case: TestCase
    passed: bool
    failures: list[str]
    turns: int = 0
    repairs: int = 0
    tokens: int = 0
    latency_ms: float = 0.0
    replayed: bool = False
    fixtures: int = 0  # replayed replies that were written by hand, not recorded from a model
    output: Any = None
    cost: Cost | None = None  # what its model calls cost (replayed ones priced as if made live)
    recording_problems: list[str] = field(default_factory=list)  # missing, stale or corrupt recordings
    grounding: Any = None  # where the output's values are in the input (a Grounding), when grounded
    error: str | None = None  # the error that ended the run before there was an output (provider, render, ...)


@dataclass
class CaseSummary:
    """A case over all its runs (`--repeat`): passes when the pass rate reaches the threshold."""

    case: TestCase
    runs: list[CaseResult]
    min_pass_rate: float = 1.0

    @property
    def pass_rate(self) -> float:
        return sum(r.passed for r in self.runs) / len(self.runs)

    @property
    def passed(self) -> bool:
        return self.pass_rate >= self.min_pass_rate

    @property
    def last(self) -> CaseResult:
        return self.runs[-1]


@dataclass
class TestRun:
    __test__ = False  # not a pytest test class
    library: PromptLibrary
    mode: Mode = "replay"
    model: str | None = None
    concurrency: int = 4
    on_result: Callable[[CaseResult], Any] | None = None
    stores: dict[Path, RecordingStore] = field(default_factory=dict)

    async def run(self, cases: Sequence[TestCase], *, repeat: int = 1, min_pass_rate: float = 1.0) -> list[CaseSummary]:
        limit = asyncio.Semaphore(max(1, self.concurrency))
        runs = repeat if self.mode in ("live", "auto", "record") else 1  # a replay gives the same answer every time

        async def one(case: TestCase) -> CaseResult:
            async with limit:
                result = await self.run_case(case)
            if self.on_result is not None:
                self.on_result(result)
            return result

        results = await asyncio.gather(*(one(case) for case in cases for _ in range(runs)))
        by_case: dict[int, list[CaseResult]] = {}
        for result in results:
            by_case.setdefault(id(result.case), []).append(result)
        return [CaseSummary(case, by_case[id(case)], min_pass_rate) for case in cases]

    def save(self) -> None:
        for store in self.stores.values():
            store.save()

    def store_for(self, case: TestCase) -> RecordingStore:
        """The recordings of the case's prompt: `__recordings__/NAME[.VARIANT].jsonl` beside the test file,
        NAME relative to the test file's folder (a prompt of another namespace: beside the prompt folder's
        root, by its full name), so two prompts never share a file. Raises InvalidPromptNameError."""
        folder, rel = self._recordings_place(case)
        path = folder / "__recordings__" / f"{rel}{f'.{case.variant}' if case.variant else ''}.jsonl"
        if path not in self.stores:
            self.stores[path] = RecordingStore.load(path, folder)
        return self.stores[path]

    def _recordings_place(self, case: TestCase) -> tuple[Path, str]:
        check_name(case.prompt)
        if case.variant is not None:
            check_name(str(case.variant))
        here = Path(case.file).parent
        parts = case.prompt.split("/")
        root = self.library.directory
        if root is not None and lexically_inside(here, root):
            namespace = Path(os.path.relpath(os.path.abspath(here), os.path.abspath(root))).parts
            namespace = () if namespace == (".",) else namespace
            if tuple(parts[: len(namespace)]) == namespace and len(parts) > len(namespace):
                return here, "/".join(parts[len(namespace):])
            return root, case.prompt
        return here, case.prompt

    def case_file(self, case: TestCase) -> str | None:
        """How recordings name the case's test file: None for the prompt's own (NAME[.VARIANT].test.yaml)."""
        folder, rel = self._recordings_place(case)
        test_file = Path(case.file)
        if test_file.parent == folder and "/" not in rel and test_file.name.partition(".")[0] == rel:
            return None
        if lexically_inside(test_file, folder):
            return Path(os.path.relpath(os.path.abspath(test_file), os.path.abspath(folder))).as_posix()
        return test_file.as_posix()

    async def run_case(self, case: TestCase) -> CaseResult:
        try:
            store = self.store_for(case)
            file = self.case_file(case)
        except DotpromptError as exc:
            return CaseResult(case, False, [str(exc)], error=str(exc))
        if store.error is not None:
            return CaseResult(case, False, [store.error], recording_problems=[store.error], error=store.error)
        corrupt = [f"{store.path}:{c.line}: {c.message}" for c in store.corrupt if c.case in (case.name, None)]
        try:
            prompt = self.library.load(case.prompt, case.variant)
            name = self.model_name(case, prompt.metadata.get("model"))
            recorder = RecordingModel(name, store, self.mode, case.name, lambda: resolve_model(name), file,
                                      prompt=prompt.identity, record_hint=case.record_hint)
        except DotpromptError as exc:
            return CaseResult(case, False, [*corrupt, str(exc)], error=str(exc))
        started = time.perf_counter()
        try:
            with log_source("test", case=case.name, file=case.file, mode=self.mode):
                response = await prompt.generate(case.input, context=case.context, history=case.history,
                                                 options={"config": case.config} if case.config else None,
                                                 model=recorder)
        except OutputValidationError as exc:
            reasons = [f"output does not match the output schema at {p.path}: {p.message}" for p in exc.problems]
            return self._result(case, False, [*corrupt, *recorder.stale, *reasons], recorder, exc.text,
                                [*corrupt, *recorder.stale])
        except RecordingMissingError as exc:
            # No recording, and (auto) the live call failed too: a run that failed, as with --live; the
            # message names both. Without a live try it is a recording problem (fails an eval outright).
            tried_live = [] if exc.__cause__ is not None else [str(exc)]
            result = self._result(case, False, [*corrupt, str(exc)], recorder, problems=[*corrupt, *tried_live])
            result.error = str(exc)
            return result
        except DotpromptError as exc:
            error = f"{type(exc).__name__}: {exc}"
            result = self._result(case, False, [*corrupt, *recorder.stale, error], recorder)
            result.error = error
            return result
        seen = Observed(output=response.output, text=response.text, tool_calls=_tool_calls(response.messages),
                        turns=recorder.stats.calls, repairs=[getattr(r, "detail", str(r)) for r in response.output_repairs],
                        latency_ms=recorder.stats.latency_ms or (time.perf_counter() - started) * 1000,
                        tokens=recorder.stats.tokens, cost=price_run(recorder.name, recorder.stats.usages),
                        grounding=response.grounding)
        failures = [*corrupt, *recorder.stale, *check(case.expect, seen, timed=True)]
        failures += function_problems(case.expect.functions, response.output, case.input)
        problems = [*corrupt, *recorder.stale]
        if case.expect.judges:
            judged, missing = await judge_problems(case.expect.judges, case, response.output, response.text, store, file,
                                                   self.mode, name)
            failures += judged
            problems += missing
        result = self._result(case, not failures, failures, recorder, response.output, problems, seen.cost)
        result.grounding = response.grounding
        result.repairs = len(seen.repairs)
        return result

    def model_name(self, case: TestCase, prompt_model: str | None) -> str:
        """The model a case runs on: --model, the case's, the prompt's, else the default (by name)."""
        # Not the run-time default (which needs the local model set up): replays must key their
        # recordings by the same name on every machine, so the fallback is the local model's name.
        default = self.library.default_model or settings.env_model() or settings.LOCAL_MODEL
        return self.model or case.model or prompt_model or default

    @staticmethod
    def _result(case: TestCase, passed: bool, failures: list[str], recorder: RecordingModel, output: Any = None,
                problems: list[str] | None = None, cost: Cost | None = None) -> CaseResult:
        stats = recorder.stats
        if cost is None and stats.usages:
            cost = price_run(recorder.name, stats.usages)
        return CaseResult(case, passed, failures, turns=stats.calls, tokens=stats.tokens, latency_ms=stats.latency_ms,
                          replayed=stats.replayed == stats.calls and stats.calls > 0, fixtures=stats.fixtures, output=output,
                          recording_problems=problems or [], cost=cost)


def _tool_calls(messages: Sequence[Any]) -> list[tuple[str, Any]]:
    return [(p.tool_request.name, p.tool_request.input) for m in messages for p in m.content if p.tool_request is not None]
