"""A recordings line with the right keys but a wrong value shape is that case's "corrupt recording"
failure: the other cases still run and the reports are still written (never a traceback)."""

from __future__ import annotations

import json

import pytest

from tests.isolation import run_limited

PROMPT = "---\nmodel: echo\ninput:\n  schema:\n    q: string\n---\n{{ q }}\n"
BROKEN = {
    "newer info key": lambda e: e["info"].update(from_the_future=True),
    "response a string": lambda e: e.update(response="hello"),
    "response message a list": lambda e: e["response"].update(message=[1, 2]),
    "latency a string": lambda e: e.update(latency_ms="12 ms"),
    "usage NaN": lambda e: e["response"].update(usage={"inputTokens": float("nan")}),
    "chunks a dict": lambda e: e.update(chunks={"a": 1}),
    "call a string": lambda e: e.update(call="0"),
}


@pytest.mark.slow
def test_each_corrupt_shape_fails_its_own_case_and_the_rest_run(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "echo.prompt").write_text(PROMPT)
    names = ["fine", *BROKEN]
    cases = "".join(f"  - name: {name}\n    input: {{q: {json.dumps(name)}}}\n    expect:\n      text_contains: q\n"
                    for name in names)
    (prompts / "echo.test.yaml").write_text("cases:\n" + cases.replace("text_contains: q", f"text_contains: {names[0]!r}", 1)
                                            .replace("text_contains: q", "text_contains: ''"))
    code = f"""
        import sys
        from dotprompt.cli import main
        sys.exit(main(["test", "--dir", {str(prompts)!r}, "--record"]))
    """
    recorded = run_limited(code, cwd=tmp_path, timeout=60)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    path = prompts / "__recordings__" / "echo.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry["case"] in BROKEN:
            BROKEN[entry["case"]](entry)
        lines.append(json.dumps(entry))
    path.write_text("\n".join(lines) + "\n")
    junit = tmp_path / "j.xml"
    replay = run_limited(code.replace('"--record"', f'"--replay", "--junit", {str(junit)!r}'), cwd=tmp_path, timeout=60)
    assert "Traceback" not in replay.stderr, replay.stderr[-3000:]
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "1 passed, 7 failed" in replay.stdout
    for name in BROKEN:
        assert f"{name}: FAILED" in replay.stdout, name
    assert replay.stdout.count("corrupt recording line") >= len(BROKEN)
    assert junit.read_text().count("<failure") == len(BROKEN)
