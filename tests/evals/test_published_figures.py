"""The figures docs/testing.md publishes for the invoice eval are the ones its recordings replay to:
re-recording the model, or changing a variant, fails here until the tables are updated."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_inprocess import cli
from tests.conftest import ROOT
from tests.evals.test_invoice_eval import EVAL, offline

DOC = ROOT / "docs" / "testing.md"
ARMS = ["-", "tight", "ordered", "fewshot", "tight_fewshot", "worse"]


def table(heading: str) -> list[list[str]]:
    """The rows of the first Markdown table under `heading`, cells stripped of `*` and backticks."""
    text = DOC.read_text(encoding="utf-8").split(heading, 1)[1]
    lines = [line for line in text.splitlines() if line.startswith("|")]
    end = next((i for i, line in enumerate(lines[1:], 1) if not line.startswith("|")), len(lines))
    rows = [[c.strip().strip("*`").strip() for c in line.strip("|").split("|")] for line in lines[:end]]
    return [r for r in rows[1:] if not set("".join(r)) <= set("-")]


def replay(tmp_path: Path, cli_env: dict[str, str], *args: str) -> dict[str, dict]:
    report = tmp_path / "r.json"
    cli("eval", EVAL, *[a for v in ARMS for a in ("--variant", v)], *args, "--json", str(report), cwd=ROOT,
        env=offline(cli_env, tmp_path))
    return {e["arm"]: e for e in json.loads(report.read_text())["evals"]}


def test_the_per_field_table_is_the_replay(tmp_path, cli_env):
    arms = replay(tmp_path, cli_env)
    rows = {r[0]: r for r in table("### What a 135M model scores")}
    for name, arm in (("plain", "base"), ("tight", "tight")):
        column = 2 if name == "plain" else 3
        scores = arms[arm]["scores"]
        assert rows["overall (micro)"][column] == f"{scores['overall']['f1']:.3f}", name
        for field, figures in scores["fields"].items():
            assert rows[field][column] == f"{figures['f1']:.3f}", (name, field)
            assert rows[field][1] == str(figures["support"]), field


def test_the_variants_table_is_the_replay(tmp_path, cli_env):
    arms = replay(tmp_path, cli_env, "--dataset", "examples/gold/invoices.heldout.jsonl")
    rows = table("### Making the tiny model extract better")
    published = {r[0].split(" ")[0]: r for r in rows}  # "plain (extract.prompt)" -> "plain"
    assert list(published) == ["plain", *ARMS[1:]]
    for label, arm in zip(published, arms.values(), strict=True):
        overall = arm["scores"]["overall"]
        total = arm["scores"]["fields"]["total"]["f1"]
        valid = sum(not r["problems"] for r in arm["rows"])
        expected = [f"{overall['f1']:.3f}", f"{overall['precision']:.3f}", f"{overall['recall']:.3f}", f"{total:.3f}",
                    f"{valid}/18"]
        assert published[label][1:6] == expected, label
