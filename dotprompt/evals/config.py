"""The `eval:` section of a test file: the gold dataset, how each field is scored, the thresholds.

    prompt: extract                       # or taken from the file name, as for cases
    eval:
      dataset: ../examples/gold/invoices.jsonl   # relative to this file
      fields:                             # JSON paths; unlisted leaves are compared `exact`
        total: {scorer: number, tolerance: 0.01}
        issue_date: date
        vendor.name: text
        line_items: {match: best, min_similarity: 0}   # lists: order-free best matching (or `ordered`)
        line_items[*].description: text
        notes: ignore
        vendor.vat_id: {scorer: "checks:same_vat", threshold: 0.5}
      ignore: [vendor.address]            # never scored (as `scorer: ignore`)
      strict: false                       # true: a field a gold row does not label counts as absent
      min: {f1: 0.9, exact_match: 0.5, fields: {total: 0.98, vendor.name: {recall: 0.9}}}
      # grounding figures gate the same way, overall and per field:
      #   min: {grounded: 0.9, flag_precision: 0.5, flag_recall: 0.3, fields: {currency: {grounded: 1}}}
      max_regression: 0.02               # --baseline: a drop in F1 or grounded rate larger than this fails
      max_failure_rate: 0.05             # rows whose run failed (HTTP 500, ...) allowed; default 0
      model: local/smollm2               # optional, over the file's `model`; `config` merges over the file's

Every problem of the section is a TestFileError at its line, all of them at once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..document.parse import did_you_mean, yaml_child, yaml_key_node
from ..errors import TestFileError
from ..schema.compiled import key_step
from ..settings import project_root
from ..testing.cases import read_test_yaml, sidecar_prompt
from ..testing.functions import is_function_spec
from ..testing.paths import PathError, parse_path
from .scorers import SCORERS, scorer_names

__all__ = ["GROUNDING_METRICS", "EvalSpec", "FieldRule", "field_name", "line_of", "load_eval",
           "render_steps"]

EVAL_KEYS = ("dataset", "fields", "ignore", "strict", "min", "max_regression", "max_failure_rate", "model", "variant",
             "config")
RULE_KEYS = ("scorer", "threshold", "match", "min_similarity")
# Against the gold data: the grounded rate, and how well "ungrounded" predicts "wrong" (evals/grounding_stats.py).
GROUNDING_METRICS = ("grounded", "flag_precision", "flag_recall")
METRICS = ("f1", "precision", "recall", *GROUNDING_METRICS)
OVERALL_METRICS = (*METRICS, "exact_match")
DEFAULT_MAX_REGRESSION = 0.0


@dataclass(frozen=True)
class FieldRule:
    field: str
    scorer: str | None = None  # None: not a leaf rule (list options only)
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # `field` is this class's first field
    threshold: float = 1.0
    match: str = "best"
    min_similarity: float = 0.0
    line: int | None = None


@dataclass
class EvalSpec:
    file: str
    line: int
    prompt: str
    variant: str | None = None
    model: str | None = None
    config: Mapping[str, Any] | None = None
    dataset: Path | None = None
    rules: dict[str, FieldRule] = field(default_factory=dict)
    overall_min: dict[str, float] = field(default_factory=dict)
    field_min: dict[str, dict[str, float]] = field(default_factory=dict)
    max_regression: float = DEFAULT_MAX_REGRESSION
    max_failure_rate: float = 0.0  # the share of rows whose run may fail (HTTP 500, ...) without failing the eval
    strict: bool = False  # a field a gold row does not label counts as absent (extra when predicted), not unlabelled
    root: Path | None = None  # the project folder the dataset is named from (project_root)
    own_file: bool = True  # the test file is the prompt's own (NAME.test.yaml beside NAME.prompt)

    @property
    def name(self) -> str:
        """How reports and baselines know this eval, unique in a project: the prompt, the dataset's path from
        the project folder and, for a test file other than the prompt's own, that file's
        (`extract on examples/gold/invoices.jsonl`, `extract on b/gold.jsonl (checks/b.test.yaml)`)."""
        where = "" if self.own_file else f" ({_from_root(Path(self.file), self.root)})"
        return f"{self.prompt} on {_from_root(self.dataset, self.root) if self.dataset else '?'}{where}"

    @property
    def legacy_name(self) -> str:
        """The name baselines of format 1 used: the dataset's file name only, which two evals could share."""
        return f"{self.prompt} on {self.dataset.name if self.dataset else '?'}"


def _from_root(path: Path, root: Path | None) -> str:
    if root is None:
        return path.as_posix()
    try:
        return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()
    except ValueError:  # another drive (Windows): no relative path
        return path.resolve().as_posix()


def field_name(path: str) -> str:
    """A field path in its one written form: `$.line_items[*].qty` and `line_items[*].qty` -> `line_items[*].qty`."""
    return render_steps(parse_path(path))


def render_steps(steps: list[Any]) -> str:
    """A field's pattern as the eval names it: `line_items[*].qty` (`None` is any item); keys written
    as grounding's paths write them (schema.compiled.key_step), so the two line up."""
    text = "".join("[*]" if step is None else f"[{step}]" if isinstance(step, int) else key_step(step)
                   for step in steps)
    return text[1:] if text.startswith(".") else text


def load_eval(path: str | Path, prompts_dir: Path | None = None) -> EvalSpec | None:
    """The eval section of a test file, or None when it has none; TestFileError listing every problem."""
    path = Path(path)
    data, node = read_test_yaml(path, prompts_dir)
    if not isinstance(data, Mapping) or "eval" not in data:
        return None
    reader = _EvalReader(path)
    spec = reader.spec(data, node, prompts_dir)
    if reader.problems:
        raise TestFileError.every(reader.problems)
    return spec


class _EvalReader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[TestFileError] = []

    def report(self, message: str, node: Any, hint: str | None = None) -> None:
        mark = getattr(node, "start_mark", None)
        self.problems.append(TestFileError(message, path=str(self.path), line=mark.line + 1 if mark else None,
                                           column=mark.column + 1 if mark else None, hint=hint))

    def spec(self, data: Mapping[str, Any], node: Any, prompts_dir: Path | None) -> EvalSpec:
        raw, section = data["eval"], yaml_child(node, "eval")
        side_name, side_variant = sidecar_prompt(self.path, prompts_dir)
        prompt = data.get("prompt") or side_name
        if not prompt:
            self.report("the test file does not say which prompt it evaluates", node,
                        "add `prompt: NAME`, or name the file NAME.test.yaml beside NAME.prompt")
        spec = EvalSpec(str(self.path), line_of(section), str(prompt or ""), data.get("variant") or side_variant,
                        data.get("model"), data.get("config"),
                        root=project_root(prompts_dir if prompts_dir is not None else self.path.parent),
                        own_file=(side_name, side_variant) == (prompt, None))
        if not isinstance(raw, Mapping):
            self.report("`eval` must be a mapping with `dataset`, `fields` and `min`", section)
            return spec
        self.check_keys(raw, section, EVAL_KEYS, "eval")
        spec.model = raw.get("model") or spec.model
        spec.variant = raw.get("variant") or spec.variant
        config = raw.get("config")
        if config is not None and not isinstance(config, Mapping):
            self.report("`eval.config` must be a mapping of model settings", yaml_child(section, "config"))
        elif config:
            spec.config = {**(spec.config or {}), **config}
        if raw.get("dataset") is not None:
            spec.dataset = self.path.parent / str(raw["dataset"])
        spec.rules = self.rules(raw.get("fields") or {}, yaml_child(section, "fields"))
        self.ignored(raw.get("ignore"), yaml_child(section, "ignore"), spec.rules)
        spec.strict = raw.get("strict", False)
        if not isinstance(spec.strict, bool):
            self.report(f"eval.strict must be true or false, got {spec.strict!r}", yaml_child(section, "strict"),
                        "true: a field a gold row does not label counts as absent; false (default): it is not scored")
            spec.strict = False
        self.thresholds(raw.get("min") or {}, yaml_child(section, "min"), spec)
        spec.max_regression = self.fraction(raw.get("max_regression", DEFAULT_MAX_REGRESSION),
                                            yaml_child(section, "max_regression"), "max_regression")
        spec.max_failure_rate = self.fraction(raw.get("max_failure_rate", 0.0), yaml_child(section, "max_failure_rate"),
                                              "max_failure_rate")
        return spec

    def check_keys(self, raw: Mapping[str, Any], node: Any, allowed: tuple[str, ...], what: str) -> None:
        for key in raw:
            if key not in allowed:
                self.report(f"unknown key `{key}` in {what}", yaml_key_node(node, key),
                            did_you_mean(str(key), allowed) or f"known keys: {', '.join(allowed)}")

    def rules(self, raw: Any, node: Any) -> dict[str, FieldRule]:
        if not isinstance(raw, Mapping):
            self.report("`eval.fields` must map field paths to scorers", node)
            return {}
        out = {}
        for key, value in raw.items():
            rule = self.rule(str(key), value, yaml_child(node, str(key)))
            if rule is not None:
                out[rule.field] = rule
        return out

    def ignored(self, raw: Any, node: Any, rules: dict[str, FieldRule]) -> None:
        """`ignore: [notes, vendor.address]`: fields never scored, as `scorer: ignore` in `fields:`."""
        if raw is None:
            return
        if not isinstance(raw, list):
            self.report("eval.ignore must be a list of field paths, like [notes, vendor.address]", node)
            return
        for index, path in enumerate(raw):
            item = node.value[index] if hasattr(node, "value") and isinstance(node.value, list) else node
            try:
                name = field_name(str(path))
            except PathError as exc:
                self.report(f"eval.ignore: {exc}", item)
                continue
            known = rules.get(name)
            if known is not None and known.scorer not in (None, "ignore"):
                self.report(f"eval.ignore: `{name}` also has the scorer `{known.scorer}` in eval.fields", item,
                            "keep one of the two")
                continue
            rules[name] = FieldRule(name, "ignore", line=line_of(item))

    def rule(self, path: str, raw: Any, node: Any) -> FieldRule | None:
        try:
            name = field_name(path)
        except PathError as exc:
            self.report(f"eval.fields: {exc}", node)
            return None
        if "[" in name and any(part.isdigit() for part in name.replace("]", "[").split("[")):
            self.report(f"eval.fields: {path!r} names one list index; rules apply to every item: write [*]", node)
            return None
        if isinstance(raw, str):
            raw = {"scorer": raw}
        if not isinstance(raw, Mapping):
            self.report(f"eval.fields.{name}: write a scorer name or {{scorer: NAME, ...options}}", node)
            return None
        scorer = raw.get("scorer")
        allowed = RULE_KEYS + (SCORERS[scorer].options if scorer in SCORERS else ())
        if scorer is not None and scorer not in SCORERS and not is_function_spec(scorer):
            self.report(f"eval.fields.{name}: unknown scorer {scorer!r}", node,
                        did_you_mean(str(scorer), scorer_names()) or
                        f"built in: {', '.join(scorer_names())}; or a Python function as `module:function`")
            return None
        before = len(self.problems)
        self.check_keys(raw, node, allowed, f"eval.fields.{name}")
        match = raw.get("match", "best")
        if match not in ("best", "ordered"):
            self.report(f"eval.fields.{name}: `match` is `best` (order-free) or `ordered`, not {match!r}", node)
        threshold = self.fraction(raw.get("threshold", 1.0), node, f"eval.fields.{name}.threshold")
        similarity = self.fraction(raw.get("min_similarity", 0.0), node, f"eval.fields.{name}.min_similarity")
        for option in ("tolerance", "relative"):
            if option in raw and not _is_number(raw[option]):
                self.report(f"eval.fields.{name}.{option} must be a number, got {raw[option]!r}", node)
        if len(self.problems) > before:
            return None
        options = {k: v for k, v in raw.items() if k not in RULE_KEYS}
        return FieldRule(name, scorer, options, threshold, match, similarity, line_of(node))

    def thresholds(self, raw: Any, node: Any, spec: EvalSpec) -> None:
        if not isinstance(raw, Mapping):
            self.report("`eval.min` must be a mapping like {f1: 0.9, grounded: 0.8, fields: {total: 0.98}}", node)
            return
        self.check_keys(raw, node, (*OVERALL_METRICS, "fields"), "eval.min")
        for metric in OVERALL_METRICS:
            if metric in raw:
                spec.overall_min[metric] = self.fraction(raw[metric], yaml_child(node, metric), f"eval.min.{metric}")
        fields, fields_node = raw.get("fields") or {}, yaml_child(node, "fields")
        if not isinstance(fields, Mapping):
            self.report("`eval.min.fields` must map field paths to an F1 or a mapping of "
                        f"{{{', '.join(METRICS)}}}", fields_node)
            return
        for key, value in fields.items():
            spec_node = yaml_child(fields_node, str(key))
            try:
                name = field_name(str(key))
            except PathError as exc:
                self.report(f"eval.min.fields: {exc}", spec_node)
                continue
            wanted = value if isinstance(value, Mapping) else {"f1": value}
            self.check_keys(wanted, spec_node, METRICS, f"eval.min.fields.{name}")
            spec.field_min[name] = {m: self.fraction(v, spec_node, f"eval.min.fields.{name}.{m}")
                                    for m, v in wanted.items() if m in METRICS}

    def fraction(self, value: Any, node: Any, what: str) -> float:
        if not _is_number(value) or not 0 <= value <= 1:
            self.report(f"{what} must be a number from 0 to 1, got {value!r}", node)
            return 0.0
        return float(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value




def line_of(node: Any) -> int:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark else 1
