"""Writes the planted fixture arm of the invoice eval: hand-made replies (`"source": "fixture"`), not model output.

The example's eval (`prompts/extract.test.yaml`) replays the local model's recorded replies; its figures
are what SmolLM2-135M really does. Tests that must know exactly which values are wrong use this arm
instead, `tests/evals/planted/extract.test.yaml`, whose recordings (`tests/evals/planted/__recordings__/`)
this script writes: the fixture "model" answers each invoice with its gold labels plus the kinds of
mistakes a small model makes (currency taken from the wrong place, a quantity of 1, the vendor line as
invoice number, the date as printed, a VAT id left out, a total line read as an item), chosen by row so
each field has some errors. Every report of that arm says its rows are fixtures. Run from the project
root after changing prompts/extract.prompt or extract.worse.prompt: `python -m tests.evals.invoice_fixtures`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from dotprompt.cli import main
from dotprompt.local.model import LOCAL_INFO
from dotprompt.providers.registry import define_model
from dotprompt.types import GenerateRequest, Message, ModelResponse, Part, Usage
from tests.conftest import ROOT

GOLD = ROOT / "examples" / "gold" / "invoices.jsonl"
PLANTED = ROOT / "tests" / "evals" / "planted"
TEST_FILE = PLANTED / "extract.test.yaml"
RECORDINGS = PLANTED / "__recordings__"


def mistakes(index: int, row: dict[str, Any]) -> dict[str, Any]:
    reply = copy.deepcopy(row["expected"])
    text = row["input"]["text"]
    if index % 5 == 1:
        reply["currency"] = "USD" if reply.get("currency") != "USD" else "EUR"
    if index % 4 == 2 and reply.get("line_items"):
        reply["line_items"][0]["quantity"] = 1
    if index % 6 == 3:
        reply["invoice_number"] = text.splitlines()[0].strip()
    if index % 7 == 4 and reply.get("issue_date"):
        reply["issue_date"] = "/".join(reversed(reply["issue_date"].split("-")))
    if index % 3 == 0 and isinstance(reply.get("vendor"), dict):
        reply["vendor"].pop("vat_id", None)
    if index % 8 == 5:
        reply.setdefault("line_items", []).append({"description": "Total", "quantity": 1, "unit_price": reply["total"]})
    return reply


class FixtureModel:
    """Stands in for local/smollm2 while fixtures are written: the same name and info, answers from the gold set."""

    name = "local/smollm2"
    info = LOCAL_INFO

    def __init__(self) -> None:
        self.rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]

    async def generate(self, request: GenerateRequest, on_chunk: Any = None) -> ModelResponse:
        asked = request.messages[-1].content[0].text or ""
        index, row = next((i, r) for i, r in enumerate(self.rows) if r["input"]["text"].strip() in asked)
        reply = mistakes(index, row)
        wanted = set(((request.output.json_schema if request.output else None) or {}).get("properties", reply))
        reply = {k: v for k, v in reply.items() if k in wanted}  # the worse variant's schema asks for less
        text = json.dumps(reply, ensure_ascii=False)
        return ModelResponse(message=Message(role="model", content=[Part(text=text)]),
                             usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0))


def mark_fixtures(path: Path) -> None:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["case"].startswith("eval:"):
            entry["source"], entry["latency_ms"] = "fixture", 0.0
        lines.append(json.dumps(entry, ensure_ascii=False, sort_keys=True))
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


if __name__ == "__main__":
    define_model(FixtureModel())
    main(["eval", str(TEST_FILE.relative_to(ROOT)), "--record", "--variant", "-", "--variant", "worse"])
    for name in ("extract.jsonl", "extract.worse.jsonl"):
        mark_fixtures(RECORDINGS / name)
