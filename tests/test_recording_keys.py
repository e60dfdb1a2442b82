"""Recordings never collide (issue class 6): prompts `a` and `billing/a`, and two test files with the same
case name for one prompt, each keep their own recordings; `--record` of one never deletes the other's.
Recordings, like prompts, never lead out of the folder through a symlink.

Each scenario runs in a child process with a time and memory limit (`isolation`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.isolation import assert_finishes

PRELUDE = """
import asyncio, json, os, sys
from pathlib import Path
from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import define_model
from dotprompt.testing import TestRun, load_test_file

root = Path("prompts")
replies = [f"reply {i}" for i in range(50)]
define_model(ScriptedModel(list(replies), name="scripted"))

def run(test_file, mode):
    cases = load_test_file(root / test_file, root)
    test_run = TestRun(PromptLibrary(root), mode, concurrency=1)
    summaries = asyncio.run(test_run.run(cases))
    test_run.save()
    return {s.case.id: (s.passed, s.last.failures) for s in summaries}
"""


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def child(tmp_path: Path, code: str) -> dict:
    return assert_finishes(PRELUDE + code, timeout=60, cwd=tmp_path).json()


def case_file(prompt: str | None, name: str, text: str) -> str:
    head = f"prompt: {prompt}\n" if prompt else ""
    return head + f"cases:\n  - name: {name}\n    input: {{text: {text}}}\n    expect: {{text_contains: reply}}\n"


PROMPT = "---\nmodel: scripted\n---\n{{ text }}\n"


def test_prompts_a_and_billing_a_keep_separate_recordings(tmp_path):
    write(tmp_path / "prompts", {
        "a.prompt": PROMPT, "billing/a.prompt": "---\nmodel: scripted\n---\nbilling {{ text }}\n",
        "a.test.yaml": case_file(None, "same", "one"),
        "more.test.yaml": case_file("billing/a", "same", "two"),
    })
    result = child(tmp_path, """
first = run("a.test.yaml", "record")
second = run("more.test.yaml", "record")
replay_a = run("a.test.yaml", "replay")
replay_b = run("more.test.yaml", "replay")
print(json.dumps({"record": [first, second], "replay": [replay_a, replay_b],
                  "files": sorted(str(p.relative_to(root)) for p in root.rglob("*.jsonl"))}))
""")
    for outcome in result["record"] + result["replay"]:
        assert all(passed for passed, _ in outcome.values()), result
    assert len(result["files"]) == 2, result


def test_two_test_files_with_the_same_case_name_keep_each_others_entries(tmp_path):
    write(tmp_path / "prompts", {
        "a.prompt": PROMPT,
        "a.test.yaml": case_file(None, "same", "one"),
        "extra.test.yaml": case_file("a", "same", "two"),
    })
    result = child(tmp_path, """
run("a.test.yaml", "record")
run("extra.test.yaml", "record")
run("extra.test.yaml", "record")          # re-recording one file replaces only its own entries
lines = [json.loads(l) for p in sorted(root.rglob("*.jsonl")) for l in p.read_text().splitlines()]
print(json.dumps({"replay": [run("a.test.yaml", "replay"), run("extra.test.yaml", "replay")],
                  "lines": [(l["case"], l.get("file"), l["request"]["messages"][0]["content"][0]["text"]) for l in lines]}))
""")
    for outcome in result["replay"]:
        assert all(passed for passed, _ in outcome.values()), result
    texts = sorted(text.strip() for _, _, text in result["lines"])
    assert texts == ["one", "two"], result  # one entry each: no stale lines pile up, none deleted
    # The prompt's own test file keeps the format the committed recordings have (no `file` field).
    assert ["same", None, "one"] in result["lines"], result


def test_recordings_never_lead_out_of_the_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "a.jsonl"
    secret.write_text('{"case": "TOP-SECRET", "broken": true}\n', encoding="utf-8")
    write(tmp_path / "prompts", {"a.prompt": PROMPT, "a.test.yaml": case_file(None, "c", "one"),
                                 "billing/b.prompt": PROMPT, "billing/b.test.yaml": case_file(None, "c", "one"),
                                 "evil.test.yaml": case_file("../outside/x", "c", "one")})
    (tmp_path / "prompts" / "__recordings__").mkdir()
    (tmp_path / "prompts" / "__recordings__" / "a.jsonl").symlink_to(secret)
    (tmp_path / "prompts" / "billing" / "__recordings__").symlink_to(outside, target_is_directory=True)
    result = child(tmp_path, """
print(json.dumps({"linked file": run("a.test.yaml", "record"), "linked folder": run("billing/b.test.yaml", "record"),
                  "escaping name": run("evil.test.yaml", "record")}))
""")
    for label, outcome in result.items():
        ((passed, failures),) = outcome.values()
        assert not passed, (label, result)
        assert "TOP-SECRET" not in json.dumps(failures), (label, result)
    assert "outside the" in json.dumps(result["linked file"]) and "a.jsonl" in json.dumps(result["linked file"]), result
    assert "outside the" in json.dumps(result["linked folder"]), result
    assert secret.read_text(encoding="utf-8") == '{"case": "TOP-SECRET", "broken": true}\n'
    assert sorted(p.name for p in outside.iterdir()) == ["a.jsonl"]
    assert not (tmp_path / "outside" / "x.prompt").exists()
