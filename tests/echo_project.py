"""A one-prompt project on the echo model, with its test file: shared by the CLI and pytest-plugin tests."""

from __future__ import annotations

from pathlib import Path

PROMPT = """---
model: echo
input:
  schema:
    answer: string
output:
  instructions: false
  schema:
    answer: string
---
{"answer": "{{ answer }}"}
"""
TESTS = """cases:
  - name: says yes
    input: {answer: "yes"}
    expect:
      output: {answer: "yes"}
      text_contains: "user:"
  - name: says no
    input: {answer: "no"}
    expect:
      paths:
        - {path: $.answer, one_of: ["no", "nope"]}
"""


def project(tmp_path: Path) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "yesno.prompt").write_text(PROMPT)
    (prompts / "yesno.test.yaml").write_text(TESTS)
    return prompts
