"""The `eval:` section of a test file: rules per path, thresholds, and every problem at its line."""

from __future__ import annotations

import pytest

from dotprompt.errors import TestFileError
from dotprompt.evals.config import field_name, load_eval
from dotprompt.testing.cases import load_test_file

SECTION = """model: echo
config: {temperature: 0}
cases:
  - name: one
    input: {a: 1}
eval:
  dataset: data/gold.jsonl
  config: {maxOutputTokens: 100}
  fields:
    $.total: {scorer: number, tolerance: 0.5}
    "line_items[*].description": text
    line_items: {match: ordered, min_similarity: 0.3}
    vat: {scorer: "checks:same", threshold: 0.5}
  min: {f1: 0.9, exact_match: 0.5, fields: {total: 0.98, vendor.name: {recall: 0.7}}}
  max_regression: 0.05
"""


def test_section_is_read_with_rules_thresholds_and_defaults(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    path = prompts / "extract.fast.test.yaml"
    path.write_text(SECTION)
    spec = load_eval(path, prompts)
    assert (spec.prompt, spec.variant, spec.model) == ("extract", "fast", "echo")
    assert spec.config == {"temperature": 0, "maxOutputTokens": 100}
    assert spec.dataset == prompts / "data" / "gold.jsonl" and spec.name == "extract on data/gold.jsonl (extract.fast.test.yaml)"
    total = spec.rules["total"]
    assert (total.scorer, dict(total.options), total.threshold, total.line) == ("number", {"tolerance": 0.5}, 1.0, 10)
    assert spec.rules["line_items"].match == "ordered" and spec.rules["line_items"].min_similarity == 0.3
    assert spec.rules["line_items[*].description"].scorer == "text" and spec.rules["vat"].threshold == 0.5
    assert spec.overall_min == {"f1": 0.9, "exact_match": 0.5}
    assert spec.field_min == {"total": {"f1": 0.98}, "vendor.name": {"recall": 0.7}}
    assert spec.max_regression == 0.05
    assert [c.name for c in load_test_file(path, prompts)] == ["one"]  # the cases of the same file still load


def test_files_without_a_section_have_no_eval(tmp_path):
    path = tmp_path / "x.test.yaml"
    path.write_text("prompt: x\ncases: []\n")
    assert load_eval(path) is None


def test_every_problem_is_reported_at_its_line(tmp_path):
    path = tmp_path / "x.test.yaml"
    path.write_text("prompt: x\neval:\n  datset: a.jsonl\n  fields:\n    total: {scorer: numbr}\n"
                    "    items[*].q: {scorer: number, tolerance: lots}\n    items: {match: sorted}\n"
                    "    'a..b': text\n  min: {f1: 1.5, fields: {total: {f3: 1}}}\n")
    with pytest.raises(TestFileError) as caught:
        load_eval(path)
    found = [(e.line, e.message) for e in caught.value.errors]
    assert (3, "unknown key `datset` in eval") in found
    assert any(line == 5 and "unknown scorer 'numbr'" in m for line, m in found)
    assert (6, "eval.fields.items[*].q.tolerance must be a number, got 'lots'") in found
    assert any(line == 7 and "`match` is `best` (order-free) or `ordered`" in m for line, m in found)
    assert any(line == 8 and "cannot read path" in m for line, m in found)
    assert (9, "eval.min.f1 must be a number from 0 to 1, got 1.5") in found
    assert any(line == 9 and "unknown key `f3`" in m for line, m in found)


def test_field_names_have_one_written_form():
    assert field_name("$.line_items[*].qty") == field_name("line_items[*].qty") == "line_items[*].qty"
    assert field_name("$['odd key'].x") == "['odd key'].x"
