"""Prompt test files (`extract.test.yaml` beside `extract.prompt`): cases and their expectations.

    prompt: extract          # optional for a sidecar file: taken from the file name
    model: local/smollm2     # optional default for every case
    cases:
      - name: simple invoice
        input: {text: "..."}
        expect:
          output_subset: {currency: EUR}
          paths:
            - {path: $.line_items, length: 2}
            - {path: $.total, gte: 40, lte: 50}
          no_repairs: true

A malformed file is a TestFileError naming the file and line, like a malformed prompt; every bad case and
assertion of the file is in its `errors`, not only the first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..document.files import lexically_inside, read_snapshot
from ..document.parse import compose_yaml, did_you_mean, load_yaml_safely, yaml_child, yaml_key_node, yaml_problem
from ..errors import PromptFileError, TestFileError
from .assertions import PATH_ASSERTIONS, ExpectedValueError, path_assertion_names
from .functions import FunctionSpecError, check_spec
from .grounded import Grounded, read_grounded
from .paths import PathError, parse_path

__all__ = ["CASE_KEYS", "EXPECT_KEYS", "FILE_KEYS", "Expectations", "FunctionCheck", "JudgeCheck", "PathCheck", "TestCase",
           "ToolCheck", "find_test_files", "load_test_file", "read_test_yaml", "sidecar_prompt"]

CASE_KEYS = ("name", "input", "context", "history", "model", "config", "expect", "variant")
FILE_KEYS = ("prompt", "variant", "model", "config", "cases", "tests", "eval")  # `eval`: read by dotprompt.evals
EXPECT_KEYS = ("output", "output_subset", "paths", "text_contains", "tool_called", "max_turns_used", "no_repairs",
               "latency_ms", "max_tokens", "max_cost", "function", "judge", "grounded")
JUDGE_KEYS = ("rubric", "model", "path")
_UNSET = object()


@dataclass(frozen=True)
class PathCheck:
    path: str
    op: str
    value: Any
    line: int | None


@dataclass(frozen=True)
class ToolCheck:
    name: str
    input: Mapping[str, Any] | None
    line: int | None


@dataclass(frozen=True)
class FunctionCheck:
    spec: str  # `module:function`, called as function(output, input)
    line: int | None


@dataclass(frozen=True)
class JudgeCheck:
    rubric: str
    model: str | None  # None: the case's model
    path: str | None  # what to judge: a path in the output; None: the whole output (or text)
    line: int | None


@dataclass
class Expectations:
    output: Any = _UNSET
    output_subset: Any = _UNSET
    paths: list[PathCheck] = field(default_factory=list)
    text_contains: list[str] = field(default_factory=list)
    tool_called: list[ToolCheck] = field(default_factory=list)
    max_turns_used: int | None = None
    no_repairs: bool = False
    latency_ms: float | None = None
    max_tokens: int | None = None
    max_cost: float | None = None  # US dollars for the case's model calls (priced by genai-prices)
    functions: list[FunctionCheck] = field(default_factory=list)
    judges: list[JudgeCheck] = field(default_factory=list)
    grounded: Grounded | None = None  # `all` or paths whose values must be found in the input

    def has_output(self) -> bool:
        return self.output is not _UNSET

    def has_subset(self) -> bool:
        return self.output_subset is not _UNSET


@dataclass
class TestCase:
    __test__ = False  # not a pytest test class
    name: str
    prompt: str
    variant: str | None
    input: Any
    file: str
    line: int
    context: Mapping[str, Any] | None = None
    history: list[Any] | None = None
    model: str | None = None
    config: Mapping[str, Any] | None = None
    expect: Expectations = field(default_factory=Expectations)
    record_hint: str = "re-record with `dotprompt test --record`"  # how a missing or stale recording is made

    @property
    def id(self) -> str:
        return f"{Path(self.file).name}::{self.name}"


def find_test_files(paths: Sequence[str], prompts_dir: Path) -> list[Path]:
    """The test files `paths` name (files, or folders searched for `*.test.yaml` outside `__recordings__`),
    the prompt folder's when none are given; FileNotFoundError for a path that does not exist."""
    found: list[Path] = []
    for raw in paths or [str(prompts_dir)]:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.test.yaml") if "__recordings__" not in p.parts)
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such test file or folder: {raw}")
    return found


def sidecar_prompt(path: Path, prompts_dir: Path | None) -> tuple[str | None, str | None]:
    """`prompts/billing/extract.fast.test.yaml` -> ("billing/extract", "fast")."""
    stem = path.name[: -len(".test.yaml")] if path.name.endswith(".test.yaml") else None
    if stem is None:
        return None, None
    base, _, variant = stem.partition(".")
    try:
        folder = path.parent.resolve().relative_to(prompts_dir.resolve()) if prompts_dir else Path()
    except ValueError:
        folder = Path()
    name = (folder / base).as_posix()
    return (name[2:] if name.startswith("./") else name), (variant or None)


def load_test_file(path: str | Path, prompts_dir: Path | None = None) -> list[TestCase]:
    path = Path(path)
    data, node = read_test_yaml(path, prompts_dir)
    reader = _Reader(path, node, prompts_dir)
    cases = reader.cases(data)
    if reader.problems:
        raise TestFileError.every(reader.problems)
    return cases


def read_test_yaml(path: Path, prompts_dir: Path | None = None) -> tuple[Any, Any]:
    """(the data, the YAML node tree with line marks) of a test file; TestFileError naming the line."""
    # A test file found inside the prompt folder must really be there: a symbolic link out of it is
    # refused. One named outside the folder (on the command line) is the caller's choice.
    root = prompts_dir if prompts_dir is not None and lexically_inside(path, prompts_dir) else None
    try:
        data = read_snapshot(str(path), root, "test file").data
    except PromptFileError as exc:
        raise TestFileError(exc.message, path=exc.path, hint=exc.hint) from None
    except OSError as exc:
        raise TestFileError(f"cannot read this test file: {exc.strerror or exc}", path=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TestFileError("test file is not UTF-8 text", path=str(path), line=1) from None
    try:
        node = compose_yaml(text)
        data = load_yaml_safely(text)
    except yaml.MarkedYAMLError as exc:
        problem, mark = yaml_problem(exc)
        raise TestFileError(f"invalid YAML: {problem}", path=str(path), line=mark.line + 1 if mark else None,
                            column=mark.column + 1 if mark else None) from None
    return data, node


class _Reader:
    """Reads the cases of a file, noting every problem (in `problems`) and going on with the next case."""

    def __init__(self, path: Path, node: Any, prompts_dir: Path | None) -> None:
        self.path = path
        self.root = node
        self.prompts_dir = prompts_dir
        self.problems: list[TestFileError] = []

    def error(self, message: str, node: Any, hint: str | None = None) -> TestFileError:
        mark = getattr(node, "start_mark", None)
        return TestFileError(message, path=str(self.path), line=mark.line + 1 if mark else None,
                             column=mark.column + 1 if mark else None, hint=hint)

    def report(self, message: str, node: Any, hint: str | None = None) -> None:
        self.problems.append(self.error(message, node, hint))

    def cases(self, data: Any) -> list[TestCase]:
        if data is None:
            return []
        defaults: Mapping[str, Any] = {}
        cases_node, raw_cases = self.root, data
        if isinstance(data, Mapping):
            self.check_keys(data, self.root, FILE_KEYS, "test file")
            defaults = data
            key = "cases" if "cases" in data else "tests"
            raw_cases, cases_node = data.get(key) or [], yaml_child(self.root, key)
        if not isinstance(raw_cases, list):
            self.report("`cases` must be a list of test cases", cases_node)
            return []
        found = self.prompt_of(defaults)
        if found is None:
            return []
        prompt, variant = found
        seen: set[str] = set()
        out = []
        for index, raw in enumerate(raw_cases):
            case_node = cases_node.value[index] if isinstance(cases_node, yaml.SequenceNode) else cases_node
            case = self.case(raw, case_node, index, prompt, variant, defaults)
            name = _case_name(raw, index)
            if name in seen:
                self.report(f"two cases are named {name!r}; case names must be unique", case_node)
            elif case is not None:
                out.append(case)
            seen.add(name)
        return out

    def prompt_of(self, defaults: Mapping[str, Any]) -> tuple[str, str | None] | None:
        side_name, side_variant = sidecar_prompt(self.path, self.prompts_dir)
        name = defaults.get("prompt") or side_name
        if not name:
            self.report("the test file does not say which prompt it tests", self.root,
                        "add `prompt: NAME`, or name the file NAME.test.yaml beside NAME.prompt")
            return None
        return str(name), defaults.get("variant") or side_variant

    def case(self, raw: Any, node: Any, index: int, prompt: str, variant: str | None,
             defaults: Mapping[str, Any]) -> TestCase | None:
        """The case, or None when it has a problem (each one noted)."""
        if not isinstance(raw, Mapping):
            self.report(f"case #{index + 1} must be a mapping with `name`, `input` and `expect`", node)
            return None
        before = len(self.problems)
        self.check_keys(raw, node, CASE_KEYS, "test case")
        name = _case_name(raw, index)
        line = node.start_mark.line + 1 if hasattr(node, "start_mark") else 1
        expect = self.expectations(raw.get("expect") or {}, yaml_child(node, "expect"), name)
        if len(self.problems) > before:
            return None
        return TestCase(name=name, prompt=prompt, variant=raw.get("variant", variant), input=raw.get("input"),
                        file=str(self.path), line=line, context=raw.get("context"), history=raw.get("history"),
                        model=raw.get("model") or defaults.get("model"),
                        config={**(defaults.get("config") or {}), **(raw.get("config") or {})} or None, expect=expect)

    def max_cost(self, value: Any, node: Any, case: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            self.report(f"case {case!r}: `max_cost` must be a number of US dollars (0 or more), got {value!r}", node,
                        "e.g. max_cost: 0.01")
            return None
        return float(value)

    def check_keys(self, raw: Mapping[str, Any], node: Any, allowed: tuple[str, ...], what: str) -> None:
        for key in raw:
            if key not in allowed:
                self.report(f"unknown key `{key}` in {what}", yaml_key_node(node, key),
                            did_you_mean(str(key), allowed) or f"known keys: {', '.join(allowed)}")

    def expectations(self, raw: Any, node: Any, case: str) -> Expectations:
        if not isinstance(raw, Mapping):
            self.report(f"case {case!r}: `expect` must be a mapping", node)
            return Expectations()
        for key in raw:
            if key not in EXPECT_KEYS:
                self.report(f"case {case!r}: unknown assertion `{key}`", yaml_key_node(node, key),
                            did_you_mean(str(key), EXPECT_KEYS) or f"known assertions: {', '.join(EXPECT_KEYS)}")
        out = Expectations(max_turns_used=raw.get("max_turns_used"), no_repairs=bool(raw.get("no_repairs", False)),
                           latency_ms=raw.get("latency_ms"), max_tokens=raw.get("max_tokens"),
                           max_cost=self.max_cost(raw.get("max_cost"), yaml_child(node, "max_cost"), case))
        if "output" in raw:
            out.output = raw["output"]
        if "output_subset" in raw:
            out.output_subset = raw["output_subset"]
        texts = raw.get("text_contains", [])
        out.text_contains = [texts] if isinstance(texts, str) else list(texts)
        paths = [self.path_check(item, n, case) for item, n in _items(raw.get("paths", []), yaml_child(node, "paths"))]
        out.paths = [check for check in paths if check is not None]
        tools = [self.tool_check(item, n, case) for item, n in
                 _items(raw.get("tool_called", []), yaml_child(node, "tool_called"))]
        out.tool_called = [check for check in tools if check is not None]
        functions = [self.function_check(item, n, case) for item, n in
                     _items(raw.get("function", []), yaml_child(node, "function"))]
        out.functions = [check for check in functions if check is not None]
        judges = [self.judge_check(item, n, case) for item, n in _items(raw.get("judge", []), yaml_child(node, "judge"))]
        out.judges = [check for check in judges if check is not None]
        if "grounded" in raw:
            try:
                out.grounded = read_grounded(raw["grounded"])
            except ValueError as exc:
                self.report(f"case {case!r}: {exc}", yaml_child(node, "grounded"), "e.g. grounded: all")
        return out

    def function_check(self, raw: Any, node: Any, case: str) -> FunctionCheck | None:
        try:
            check_spec(raw)
        except FunctionSpecError as exc:
            self.report(f"case {case!r}: `function`: {exc}", node)
            return None
        return FunctionCheck(str(raw), _line(node))

    def judge_check(self, raw: Any, node: Any, case: str) -> JudgeCheck | None:
        if isinstance(raw, str):
            raw = {"rubric": raw}
        if not isinstance(raw, Mapping) or not isinstance(raw.get("rubric"), str) or not raw["rubric"].strip():
            self.report(f"case {case!r}: `judge` takes a rubric, or {{rubric, model, path}}", node)
            return None
        self.check_keys(raw, node, JUDGE_KEYS, f"case {case!r} judge")
        path = raw.get("path")
        if path is not None:
            try:
                parse_path(str(path))
            except PathError as exc:
                self.report(f"case {case!r}: judge: {exc}", node)
                return None
        model = raw.get("model")
        return JudgeCheck(raw["rubric"], str(model) if model else None, str(path) if path is not None else None,
                          _line(node))

    def path_check(self, raw: Any, node: Any, case: str) -> PathCheck | None:
        if not isinstance(raw, Mapping) or "path" not in raw:
            self.report(f"case {case!r}: each `paths` entry needs `path` and one check", node)
            return None
        ops = [k for k in raw if k != "path"]
        known = path_assertion_names()
        if len(ops) != 1 or ops[0] not in known:
            wrong = next((k for k in ops if k not in known), None)
            hint = did_you_mean(str(wrong), known) if wrong else None
            self.report(f"case {case!r}: a `paths` entry takes exactly one of {', '.join(known)}", node, hint)
            return None
        try:
            parse_path(str(raw["path"]))
        except PathError as exc:
            self.report(f"case {case!r}: {exc}", node)
            return None
        op, value = ops[0], raw[ops[0]]
        check_expected = PATH_ASSERTIONS[op].check_expected
        try:
            if check_expected is not None:
                check_expected(value)
        except ExpectedValueError as exc:
            self.report(f"case {case!r}: {exc}", node, exc.hint)
            return None
        return PathCheck(str(raw["path"]), op, value, node.start_mark.line + 1 if hasattr(node, "start_mark") else None)

    def tool_check(self, raw: Any, node: Any, case: str) -> ToolCheck | None:
        if isinstance(raw, str):
            return ToolCheck(raw, None, None)
        if not isinstance(raw, Mapping) or "name" not in raw:
            self.report(f"case {case!r}: `tool_called` takes a tool name or {{name, input}}", node)
            return None
        return ToolCheck(str(raw["name"]), raw.get("input"), node.start_mark.line + 1 if hasattr(node, "start_mark") else None)


def _line(node: Any) -> int | None:
    return node.start_mark.line + 1 if hasattr(node, "start_mark") else None


def _case_name(raw: Any, index: int) -> str:
    return str((raw.get("name") if isinstance(raw, Mapping) else None) or f"case {index + 1}")




def _items(raw: Any, node: Any) -> list[tuple[Any, Any]]:
    values = raw if isinstance(raw, list) else [raw]
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node] * len(values)
    return list(zip(values, nodes, strict=False))
