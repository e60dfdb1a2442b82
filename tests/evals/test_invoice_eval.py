"""The invoice example's eval as CI runs it: the real CLI, replaying the committed recordings of the
local model on `examples/gold/invoices.jsonl`, against the committed baseline. No model is started
(the local model's folder is pointed at an empty one) and nothing is written but the reports.
The planted fixture arm (tests/evals/planted/) is the only place hand-made replies are replayed."""

from __future__ import annotations

import json
from pathlib import Path

from dotprompt import PromptLibrary
from tests.cli_inprocess import cli
from tests.conftest import ROOT

BASELINE = "examples/gold/extract.baseline.json"
EVAL = "prompts/extract.test.yaml"
PLANTED = "tests/evals/planted/extract.test.yaml"
RECORDINGS = ROOT / "prompts" / "__recordings__"


def offline(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in cli_env.items() if k not in ("GITHUB_STEP_SUMMARY", "DOTPROMPT_MODEL")}
    return {**env, "CI": "true", "DOTPROMPT_LOCAL_DIR": str(tmp_path / "no-local-model")}


def test_invoice_eval_replays_the_model_and_holds_the_committed_baseline(tmp_path, cli_env):
    before = (RECORDINGS / "extract.tight.jsonl").read_bytes()
    done = cli("eval", EVAL, "--baseline", BASELINE, "--json", str(tmp_path / "r.json"),
               "--markdown", str(tmp_path / "m.md"), cwd=ROOT, env=offline(cli_env, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "extract on examples/gold/invoices.jsonl: 20 rows" in done.stdout and "1 eval(s) passed, 0 failed" in done.stdout
    report = json.loads((tmp_path / "r.json").read_text())["evals"][0]
    assert len(report["rows"]) == 20 and report["passed"] is True and report["variant"] == "tight"
    assert all(abs(d["now"] - d["baseline"]) < 1e-6 for d in report["deltas"] if d["baseline"] is not None)
    baseline = json.loads((ROOT / BASELINE).read_text())["evals"]["extract on examples/gold/invoices.jsonl"]
    # Replay is deterministic: the very scores (and grounding figures, once the baseline has them) committed.
    assert report["scores"] == {k: v for k, v in baseline.items() if k != "grounding"}
    assert report["grounding"] == baseline.get("grounding", report["grounding"])
    assert (RECORDINGS / "extract.tight.jsonl").read_bytes() == before
    assert "### extract on examples/gold/invoices.jsonl: passed" in (tmp_path / "m.md").read_text()
    # The scores name the exact prompt text they came from.
    identity = PromptLibrary(ROOT / "prompts").load("extract", "tight").identity
    assert report["prompt_identity"] == identity.to_dict() and report["prompt_identity"]["hash"] == identity.hash
    # The replies are the model's, and no report calls them fixtures.
    assert report["fixture_rows"] == 0 and "fixture" not in done.stdout


def test_the_example_replays_only_what_the_model_answered():
    # Hand-made replies live in the planted arm, labelled; every eval row of the example is a recording
    # of the local model, with its latency, the prompt it answered and what the model said about itself.
    files = sorted(RECORDINGS.glob("extract*.jsonl"))
    assert {f.name for f in files} >= {"extract.jsonl", "extract.tight.jsonl", "extract.worse.jsonl"}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            assert entry["source"] == "recorded", (path.name, entry["case"])
            if entry["case"].startswith("eval:"):
                assert entry["model"] == "local/smollm2" and entry["latency_ms"] > 0, (path.name, entry["case"])
                assert entry["info"]["label"].startswith("SmolLM2-135M-Instruct"), (path.name, entry["case"])
                assert entry["response"]["usage"]["outputTokens"] > 0, (path.name, entry["case"])


def test_the_worse_variant_fails_against_the_baseline_naming_the_regressed_fields(tmp_path, cli_env):
    done = cli("eval", EVAL, "--variant", "worse", "--baseline", BASELINE, "--junit", str(tmp_path / "j.xml"),
               cwd=ROOT, env=offline(cli_env, tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    regressed = {line.split(": ")[1] for line in done.stdout.splitlines()
                 if line.startswith("FAIL extract on examples/gold/invoices.jsonl [worse]") and " regressed: " in line}
    # The worse variant's schema has no vendor and no issue date: every one of them is now missing.
    assert {"(overall)", "issue_date", "vendor.name", "vendor.vat_id"} <= regressed, done.stdout
    assert "vendor.name: f1 regressed: 0.000, baseline 0.600" in done.stdout
    assert "no recording" not in done.stdout and "no longer matches" not in done.stdout


def test_the_planted_arm_says_its_replies_are_fixtures(tmp_path, cli_env):
    done = cli("eval", PLANTED, "--variant", "-", "--variant", "worse", "--json", str(tmp_path / "r.json"),
               cwd=ROOT, env=offline(cli_env, tmp_path))
    reports = json.loads((tmp_path / "r.json").read_text())["evals"]
    assert [(r["arm"], r["fixture_rows"]) for r in reports] == [("base", 20), ("worse", 20)], done.stdout
    assert ("NOTE extract on examples/gold/invoices.jsonl [base]: 20 of 20 rows replayed hand-written fixture replies"
            in done.stdout)
    assert "no recording" not in done.stdout and "no longer matches" not in done.stdout
    for path in (ROOT / "tests" / "evals" / "planted" / "__recordings__").glob("*.jsonl"):
        assert {json.loads(line)["source"] for line in path.read_text(encoding="utf-8").splitlines()} == {"fixture"}
