"""Gates on grounding figures: `min:` thresholds on the grounded rate and flag precision / recall
(overall and per field), the grounded rate against a baseline, and grounding in the JUnit report.

A small project on the echo model: the prompt copies its input, so a gold row's input decides exactly
what the "model" extracts. The worse variant always answers USD, which is right for row b although
its document says GBP (a false alarm), wrong for a (flagged: EUR is written there) and wrong for c
(missed: c's document does say USD). Its currency F1 equals the base's: only grounding tells them apart.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dotprompt.errors import TestFileError
from dotprompt.evals.config import load_eval
from dotprompt.evals.gates import threshold_misses
from dotprompt.evals.grounding_stats import GroundingCounts
from dotprompt.evals.metrics import Counts, Scores
from tests.cli_inprocess import cli
from tests.cli_process import dotprompt

SCHEMA = """input:
  schema:
    number: string
    currency: string
output:
  instructions: false
  schema:
    number: string
    currency: string
"""
BASE = "---\nmodel: echo\n" + SCHEMA + '---\n{{ {"number": number, "currency": currency} | json }}\n'
WORSE = "---\nmodel: echo\n" + SCHEMA + '---\n{{ {"number": number, "currency": "USD"} | json }}\n'
UNGROUNDED = BASE.replace("  instructions: false\n", "  instructions: false\n  grounding: \"off\"\n")
ROWS = [
    {"id": "a", "input": {"number": "A-1", "currency": "EUR"}, "expected": {"number": "A-1", "currency": "EUR"}},
    {"id": "b", "input": {"number": "B-2", "currency": "GBP"}, "expected": {"number": "B-2", "currency": "USD"}},
    {"id": "c", "input": {"number": "C-3", "currency": "USD"}, "expected": {"number": "C-3", "currency": "EUR"}},
]
ENV = {"CI": "true", "GITHUB_STEP_SUMMARY": ""}


def project(tmp_path: Path, gates: str, rows: list[dict] | None = None) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir(exist_ok=True)
    (prompts / "inv.prompt").write_text(BASE)
    (prompts / "inv.worse.prompt").write_text(WORSE)
    (prompts / "inv.off.prompt").write_text(UNGROUNDED)
    (prompts / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows or ROWS))
    gates_test_file(tmp_path, gates)
    done = cli("eval", "--record", "--variant", "-", "--variant", "worse", "--variant", "off", cwd=tmp_path, env=ENV)
    assert "no recording" not in done.stdout, done.stdout
    return prompts


def gates_test_file(tmp_path: Path, gates: str) -> Path:
    path = tmp_path / "prompts" / "inv.test.yaml"
    path.write_text(f"eval:\n  dataset: gold.jsonl\n{gates}")
    return path


def fails(done) -> list[str]:
    return [line.split("]: ", 1)[1] for line in done.stdout.splitlines() if line.startswith("FAIL ")]


PASSING = "  min: {grounded: 0.6, flag_precision: 0.5, flag_recall: 0.5, fields: {currency: {grounded: 0.3}}}\n"
FAILING = "  min: {grounded: 0.9, fields: {currency: {grounded: 1.0, flag_recall: 0.6}, number: 1.0}}\n"


def test_min_gates_on_grounding_pass_and_fail(tmp_path):
    project(tmp_path, PASSING)
    passed = cli("eval", "--variant", "worse", cwd=tmp_path, env=ENV)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "currency (grounding)" in passed.stdout and "0.333 grounded, flag P 0.50 R 0.50" in passed.stdout
    gates_test_file(tmp_path, FAILING)
    failed = cli("eval", "--variant", "worse", cwd=tmp_path, env=ENV)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert fails(failed) == [
        "(overall) (grounding): grounded below threshold: 0.667 < 0.900; rows with an ungrounded value: a, b",
        "currency (grounding): grounded below threshold: 0.333 < 1.000; rows with an ungrounded value: a, b",
        "currency (grounding): flag_recall below threshold: 0.500 < 0.600; rows where a wrong value was found in "
        "the input: c"]
    base = cli("eval", cwd=tmp_path, env=ENV)  # every value grounded, but neither wrong currency flagged
    assert fails(base) == ["currency (grounding): flag_recall below threshold: 0.000 < 0.600; rows where a wrong "
                           "value was found in the input: b, c"]


def test_flag_figures_with_nothing_to_measure_show_a_dash_and_fail_their_gates(tmp_path):
    # The base variant grounds every value: nothing is flagged (no flag precision), and `number` is
    # never wrong (no flag recall). Neither figure is a vacuous 1.0.
    project(tmp_path, "  min: {fields: {number: {flag_precision: 0.9, flag_recall: 0.9}}}\n")
    done = cli("eval", "--json", "r.json", "--junit", "j.xml", cwd=tmp_path, env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr
    assert fails(done) == [
        "number (grounding): flag_precision below threshold: - < 0.900 (no value was flagged: every value was "
        "found in the input)",
        "number (grounding): flag_recall below threshold: - < 0.900 (no value was wrong: there was no mistake "
        "to flag)"]
    row = next(line for line in done.stdout.splitlines() if line.startswith("number (grounding)"))
    assert row.endswith("flag P - R -"), row
    currency = next(line for line in done.stdout.splitlines() if line.startswith("currency (grounding)"))
    assert "flag P - R 0.00" in currency, currency
    figures = json.loads((tmp_path / "r.json").read_text())["evals"][0]["grounding"]["number"]
    assert figures["flag_precision"] is None and figures["flag_recall"] is None
    junit = (tmp_path / "j.xml").read_text()
    assert "flag precision - (0 of 0 ungrounded values wrong)" in junit


def test_undefined_flag_figures_are_none():
    counts = GroundingCounts()
    counts.add(True, False, "r1")
    assert counts.flag_precision is None and counts.flag_recall is None and counts.rate == 1.0
    counts.add(False, True, "r2")
    assert counts.flag_precision == 1.0 and counts.flag_recall == 1.0


def test_a_grounding_gate_on_an_eval_that_was_not_grounded_fails_saying_why(tmp_path):
    project(tmp_path, "  min: {grounded: 0.5, fields: {number: {flag_precision: 0.5}}}\n")
    done = cli("eval", "--variant", "off", cwd=tmp_path, env=ENV)
    assert done.returncode == 1 and "(grounding)" not in done.stdout.split("FAIL")[0]  # no grounding rows
    assert fails(done) == [
        "(overall) (grounding): grounded below threshold: 0.000 < 0.500 (no value was grounded: grounding needs "
        "JSON output with a schema, input text, and output.grounding not `off`)",
        "number (grounding): flag_precision below threshold: 0.000 < 0.500 (grounding looked for no value of this "
        "field: check its path; booleans, nulls, enum labels and derived fields are not looked for)"]


def test_the_grounded_rate_is_held_against_the_baseline_and_old_baselines_still_load(tmp_path):
    project(tmp_path, "  max_regression: 0.1\n")
    saved = cli("eval", "--save-baseline", "base.json", cwd=tmp_path, env=ENV)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    evals = json.loads((tmp_path / "base.json").read_text())["evals"]["inv on gold.jsonl"]
    assert evals["grounding"]["currency"]["grounded_rate"] == 1.0 and evals["grounding"]["(overall)"]["looked"] == 6
    worse = cli("eval", "--variant", "worse", "--baseline", "base.json", "--json", "r.json", cwd=tmp_path, env=ENV)
    assert worse.returncode == 1, worse.stdout + worse.stderr
    # The currency F1 did not move (one right of three either way): only the grounded rate fell.
    assert fails(worse) == [
        "(overall) (grounding): grounded regressed: 0.667, baseline 1.000 (-0.333); rows with an ungrounded value: a, b",
        "currency (grounding): grounded regressed: 0.333, baseline 1.000 (-0.667); rows with an ungrounded value: a, b"]
    assert "0.333 grounded -0.667, flag P 0.50 R 0.50" in worse.stdout
    deltas = json.loads((tmp_path / "r.json").read_text())["evals"][0]["deltas"]
    assert {"field": "currency", "metric": "grounded", "baseline": 1.0, "now": pytest.approx(1 / 3)} in deltas
    lenient = cli("eval", "--variant", "worse", "--baseline", "base.json", "--max-regression", "0.7",
                  cwd=tmp_path, env=ENV)
    assert lenient.returncode == 0, lenient.stdout
    off = cli("eval", "--variant", "off", "--baseline", "base.json", cwd=tmp_path, env=ENV)
    assert "(overall) (grounding): grounded regressed: 0.000, baseline 1.000 (-1.000) (not grounded in this run)" \
        in fails(off)
    del evals["grounding"]  # a baseline saved before grounding was: it still loads, and gates the scores only
    (tmp_path / "old.json").write_text(json.dumps({"dotprompt_eval_baseline": 1, "evals": {"inv on gold.jsonl": evals}}))
    old = cli("eval", "--variant", "worse", "--baseline", "old.json", cwd=tmp_path, env=ENV)
    assert old.returncode == 0 and fails(old) == [], old.stdout + old.stderr


def test_junit_has_a_case_per_fields_grounding_with_its_figures(tmp_path):
    project(tmp_path, FAILING)
    done = cli("eval", "--variant", "worse", "--variant", "-", "--junit", "j.xml", cwd=tmp_path, env=ENV)
    assert done.returncode == 1
    root = ET.parse(tmp_path / "j.xml").getroot()
    worse, base = root.findall("testsuite")
    cases = {case.get("name"): case for case in worse.findall("testcase")}
    assert list(cases) == ["(overall)", "(recordings)", "currency", "number", "(overall) (grounding)",
                           "currency (grounding)", "number (grounding)"]
    currency = cases["currency (grounding)"]
    figures = {p.get("name"): p.get("value") for p in currency.iter("property")}
    assert figures["grounded_rate"] == "0.333333" and figures["flag_precision"] == "0.5" and figures["looked"] == "3"
    failure = currency.find("failure")
    assert failure.get("message").startswith("currency (grounding): grounded below threshold: 0.333 < 1.000")
    assert "flag_recall below threshold: 0.500 < 0.600" in failure.text
    assert "grounded 0.333 (1 of 3 values found in the input)" in currency.find("system-out").text
    assert cases["number (grounding)"].find("failure") is None and cases["currency"].find("failure") is None
    assert (worse.get("failures"), worse.get("tests")) == ("2", "7")  # (overall) and currency grounding
    assert root.get("failures") == str(int(worse.get("failures")) + int(base.get("failures")))


def test_junit_names_a_gated_field_no_row_has(tmp_path):
    project(tmp_path, "  min: {fields: {vendor: 0.5, vendor.name: {grounded: 0.5}}}\n")
    cli("eval", "--junit", "j.xml", cwd=tmp_path, env=ENV)
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert "no row's gold data or output has this field" in cases["vendor"].find("failure").get("message")
    assert "grounding looked for no value" in cases["vendor.name (grounding)"].find("failure").get("message")


@pytest.mark.parametrize(("gates", "line", "message"), [
    ("  min: {grounded_rate: 0.9}\n", 3, "unknown key `grounded_rate` in eval.min (did you mean `grounded`?)"),
    ("  min:\n    flag_precison: 0.5\n", 4, "unknown key `flag_precison` in eval.min (did you mean `flag_precision`?)"),
    ("  min: {fields: {currency: {flag_recal: 0.5}}}\n", 3,
     "unknown key `flag_recal` in eval.min.fields.currency (did you mean `flag_recall`?)"),
    ("  min: {grounded: 1.5}\n", 3, "eval.min.grounded must be a number from 0 to 1, got 1.5"),
    ("  min:\n    flag_recall: -0.1\n", 4, "eval.min.flag_recall must be a number from 0 to 1, got -0.1"),
    ("  min: {flag_precision: yes}\n", 3, "eval.min.flag_precision must be a number from 0 to 1, got True"),
    ("  min: {fields: {currency: {grounded: high}}}\n", 3,
     "eval.min.fields.currency.grounded must be a number from 0 to 1, got 'high'"),
    ("  min: {fields: {currency: {grounded: .nan}}}\n", 3, "'.nan' is not a finite number"),
])
def test_bad_grounding_gates_are_errors_naming_the_file_line_and_key(tmp_path, gates, line, message):
    (tmp_path / "prompts").mkdir()
    path = gates_test_file(tmp_path, gates)
    with pytest.raises(TestFileError) as caught:
        load_eval(path, tmp_path / "prompts")
    assert f"{path}:{line}:" in str(caught.value) and message in str(caught.value), str(caught.value)


def test_a_bad_gate_stops_the_command_with_exit_2(tmp_path):
    project(tmp_path, "")
    gates_test_file(tmp_path, "  min: {fields: {currency: {grounded: 2}}}\n")
    done = cli("eval", cwd=tmp_path, env=ENV)
    assert done.returncode == 2
    assert "inv.test.yaml:3:" in done.stderr and "eval.min.fields.currency.grounded must be a number from 0 to 1, " \
        "got 2" in done.stderr


def test_threshold_misses_count_what_cannot_be_measured_as_zero():
    counts = GroundingCounts()
    for row, grounded, wrong in [("r1", True, False), ("r2", False, True), ("r2", False, False), ("r3", True, True)]:
        counts.add(grounded, wrong, row)
    assert (counts.ungrounded_rows, counts.false_alarm_rows, counts.missed_rows) == (["r2"], ["r2"], ["r3"])
    scores = Scores(rows=3, fields={"total": Counts(correct=2, wrong=1)})
    spec = load_spec({"grounded": 0.6}, {"total": {"flag_precision": 0.6, "flag_recall": 0.5}, "other": {"grounded": 0}})
    found = [(m.field, m.metric, m.got, m.rows) for m in threshold_misses(spec, scores, {"(overall)": counts,
                                                                                          "total": counts})]
    assert found == [("(overall)", "grounded", 0.5, ("r2",)), ("total", "flag_precision", 0.5, ("r2",))]
    assert [m.metric for m in threshold_misses(spec, scores)] == ["grounded", "flag_precision", "flag_recall"]


def test_grounding_figures_line_up_with_fields_whatever_their_keys():
    from dotprompt.evals.compare import Comparer
    from dotprompt.evals.grounding_stats import grounding_counts
    from dotprompt.grounding import ground

    output = {"a.b": "x", "a": {"b": "zz"}, "odd [0] key": [{"q": "y"}, {"q": "y"}]}
    comparison = Comparer({}).compare(output, output)
    counts = grounding_counts([("r1", comparison, ground(output, {"text": "x y"}))])
    assert {name: (c.looked, c.grounded) for name, c in counts.items()} == {
        "['a.b']": (1, 1), "a.b": (1, 0), "['odd [0] key'][*].q": (2, 2), "(overall)": (4, 3)}


def load_spec(overall: dict[str, float], fields: dict[str, dict[str, float]]):
    from dotprompt.evals.config import EvalSpec

    return EvalSpec("x.test.yaml", 1, "x", overall_min=overall, field_min=fields)


@pytest.mark.slow  # the command line as a child process
def test_a_failed_grounding_gate_fails_the_command_run_as_a_process(tmp_path, cli_env):
    project(tmp_path, FAILING)
    done = dotprompt("eval", "--variant", "worse", cwd=tmp_path, env={**cli_env, **ENV})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "currency (grounding): grounded below threshold: 0.333 < 1.000" in done.stdout


def test_arms_that_ground_different_numbers_of_values_each_show_their_own(tmp_path):
    """Row c's reply breaks the schema in the `partial` arm, so that arm grounds 4 values where the base grounds 6."""
    project(tmp_path, "")
    partial = BASE.replace('{{ {"number": number, "currency": currency} | json }}',
                           '{% if number == "C-3" %}{"number": 3}{% else %}'
                           '{{ {"number": number, "currency": currency} | json }}{% endif %}')
    (tmp_path / "prompts" / "inv.partial.prompt").write_text(partial)
    assert cli("eval", "--record", "--variant", "partial", cwd=tmp_path, env=ENV).returncode in (0, 1)
    done = cli("eval", "--variant", "-", "--variant", "partial", cwd=tmp_path, env=ENV)
    row = next(line for line in done.stdout.splitlines() if line.lstrip("| ").startswith("(overall) (grounding)"))
    assert "per arm" in row and "grounded of 6" in row and "grounded of 4" in row, done.stdout
    same = cli("eval", "--variant", "-", "--variant", "worse", cwd=tmp_path, env=ENV)
    row = next(line for line in same.stdout.splitlines() if line.lstrip("| ").startswith("(overall) (grounding)"))
    assert " 6 " in row and "per arm" not in row and "grounded of" not in row, same.stdout
