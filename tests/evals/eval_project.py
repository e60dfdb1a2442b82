"""A small invoice project on the echo model: the prompt copies fields of its input into its output,
so a gold row's `input` decides exactly what the "model" extracts (a worse variant drops and changes fields)."""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA = """input:
  schema:
    number: string
    total: number
    currency: string
    date: string
    items(array):
      d: string
      q: number
output:
  instructions: false
  schema:
    number: string
    total: number
    currency?: string
    date?: string
    items(array):
      d: string
      q: number
"""
PROMPT = "---\nmodel: echo\n" + SCHEMA + """---
{{ {"number": number, "total": total, "currency": currency, "date": date, "items": items} | json }}
"""
WORSE = "---\nmodel: echo\n" + SCHEMA + """---
{{ {"number": number, "total": total, "currency": "USD", "items": items} | json }}
"""
TESTS = """eval:
  dataset: gold.jsonl
  fields:
    total: {scorer: number, tolerance: 0.01}
    date: date
    items[*].d: text
  min: {f1: 0.8, fields: {currency: 0.5}}
  max_regression: 0.01
"""
ROWS = [
    {"id": "a", "input": {"number": "A-1", "total": 10.0, "currency": "EUR", "date": "2026-01-02",
                          "items": [{"d": "Widget", "q": 2}, {"d": "Ship", "q": 1}]},
     "expected": {"number": "A-1", "total": 10.004, "currency": "EUR", "date": "2026-01-02T00:00:00",
                  "items": [{"d": "ship", "q": 1}, {"d": "widget", "q": 2}]}},
    {"id": "b", "input": {"number": "B-2", "total": 5, "currency": "GBP", "date": "2026-02-03", "items": []},
     "expected": {"number": "B-2", "total": 5, "currency": "GBP", "date": "2026-02-03", "items": []}},
    {"id": "c", "input": {"number": "C-3", "total": 7, "currency": "USD", "date": "2026-03-04",
                          "items": [{"d": "Bell", "q": 3}]},
     "expected": {"number": "C-3", "total": 7, "currency": "USD", "date": "2026-03-04", "items": [{"d": "Bell", "q": 3}]}},
]


def project(tmp_path: Path) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "inv.prompt").write_text(PROMPT)
    (prompts / "inv.worse.prompt").write_text(WORSE)
    (prompts / "inv.test.yaml").write_text(TESTS)
    (prompts / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return prompts
