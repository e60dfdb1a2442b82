"""Batch output files under crashes, torn writes, bad replies and concurrent runs.

Every run is the real CLI (`dotprompt.cli.main`) in a child process with a scripted model, time and
memory limits. The invariant checked throughout: each input row has exactly one final record.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.isolation import ROOT, run_limited

PROMPT = "---\nmodel: scripted-hostile\noutput:\n  schema:\n    double: integer\n---\n{{ n }}"

# The child: a scripted model whose behaviour the environment chooses, then the CLI.
DRIVER = '''
import json, os, sys, time
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import define_model
from dotprompt.cli import main

def reply(request):
    n = int(request.messages[0].content[0].text)
    with open(os.environ["CALLS"], "a") as calls:
        calls.write(f"{n}\\n")
    time.sleep(float(os.environ.get("SLOW", "0")))
    if str(n) in os.environ.get("FAIL", "").split(","):
        return "not json"
    if str(n) in os.environ.get("BAD", "").split(","):
        return {"message": 5}  # not a reply at all: the model wrapper raises pydantic's ValidationError
    return json.dumps({"double": n * 2})

define_model(ScriptedModel(reply, name="scripted-hostile"))
sys.exit(main(sys.argv[1:]))
'''


class Batch:
    """A prompt folder, an input file, an output file, and ways to run the CLI over them."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        (tmp_path / "prompts").mkdir()
        (tmp_path / "prompts" / "double.prompt").write_text(PROMPT)
        self.driver = tmp_path / "driver.py"
        self.driver.write_text(DRIVER)
        self.input = tmp_path / "in.jsonl"
        self.output = tmp_path / "out.jsonl"
        self.calls = tmp_path / "calls.txt"

    def rows(self, numbers, text: str = "") -> None:
        lines = [json.dumps({"n": n, "t": text} if text else {"n": n}, ensure_ascii=False) for n in numbers]
        self.input.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def argv(self, *extra: str) -> list[str]:
        return [str(self.driver), "run", "double", "--dir", str(self.tmp / "prompts"), "--input-file", str(self.input),
                "--output", str(self.output), "--concurrency", "3", *extra]

    def env(self, **settings: str) -> dict[str, str]:
        return {"CALLS": str(self.calls), "PYTHONPATH": str(ROOT), **settings}

    def run(self, *extra: str, **settings: str):
        code = f"import runpy, sys; sys.argv = {self.argv(*extra)!r}; runpy.run_path(sys.argv[0], run_name='__main__')"
        outcome = run_limited(code, timeout=60, env=self.env(**settings))
        assert not outcome.timed_out, outcome.stderr[-2000:]
        assert "Traceback" not in outcome.stderr, outcome.stderr[-3000:]
        return outcome

    def start(self, **settings: str) -> subprocess.Popen:
        def limit() -> None:
            cap = 1024 * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

        return subprocess.Popen([sys.executable, *self.argv()], env={**os.environ, **self.env(**settings)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.output.read_text(encoding="utf-8").splitlines()]

    def call_count(self) -> int:
        return len(self.calls.read_text().split()) if self.calls.exists() else 0

    def assert_exactly_once(self, numbers, *, succeeded: bool = True) -> list[dict]:
        records = self.records()
        seen = sorted(r["input"]["n"] for r in records)
        assert seen == sorted(numbers), seen
        if succeeded:
            assert all("output" in r and "error" not in r for r in records), [r for r in records if "error" in r]
        return records


@pytest.fixture
def batch(tmp_path):
    return Batch(tmp_path)


def wait_for(predicate, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_later_success_replaces_the_stale_error(batch):
    batch.rows(range(1, 11))
    first = batch.run(FAIL="3,7")
    assert first.returncode == 1
    batch.run()
    batch.assert_exactly_once(range(1, 11))


@pytest.mark.slow
def test_inserting_a_row_at_the_top_runs_only_that_row(batch):
    batch.rows(range(1, 6))
    batch.run()
    before = batch.call_count()
    batch.rows([99, *range(1, 6)])
    batch.run()
    assert batch.call_count() == before + 1
    batch.assert_exactly_once([99, *range(1, 6)])


@pytest.mark.slow
@pytest.mark.parametrize("cut", ["mid_line", "mid_character"])
def test_a_torn_last_line_is_repaired_on_resume(batch, cut):
    batch.rows(range(1, 9), text="héllo wörld ✓")
    batch.run()
    data = batch.output.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    # mid_character: one byte into the three bytes of the check mark
    end = last + (len(data) - last) // 2 if cut == "mid_line" else data.index("✓".encode(), last) + 1
    batch.output.write_bytes(data[:end])
    batch.run()
    batch.assert_exactly_once(range(1, 9))


@pytest.mark.slow
def test_a_torn_line_with_a_record_appended_after_it_loses_neither(batch):
    # What an older version left behind: a torn line, then the next run's record glued onto it.
    batch.rows(range(1, 6))
    batch.run()
    lines = batch.output.read_bytes().splitlines(keepends=True)
    glued = lines[-2][: len(lines[-2]) // 2] + lines[-1]
    batch.output.write_bytes(b"".join([*lines[:-2], glued]))
    batch.run()
    batch.assert_exactly_once(range(1, 6))


@pytest.mark.slow
def test_a_wrongly_shaped_reply_is_one_error_record_and_the_batch_goes_on(batch):
    batch.rows(range(1, 7))
    outcome = batch.run(BAD="2")
    assert outcome.returncode == 1
    records = batch.assert_exactly_once(range(1, 7), succeeded=False)
    failed = [r for r in records if "error" in r]
    assert [r["input"]["n"] for r in failed] == [2] and failed[0]["error"]["type"] == "ValidationError"
    again = batch.run()
    assert again.returncode == 0
    batch.assert_exactly_once(range(1, 7))


@pytest.mark.slow
def test_killed_mid_run_then_resumed_gives_every_row_once(batch):
    batch.rows(range(1, 21))
    runner = batch.start(SLOW="0.1")
    try:
        wait_for(lambda: batch.output.exists() and batch.output.read_bytes().count(b"\n") >= 4)
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.communicate(timeout=30)
    batch.run()
    batch.assert_exactly_once(range(1, 21))


@pytest.mark.slow
def test_a_second_run_on_the_same_output_is_refused(batch):
    batch.rows(range(1, 41))
    runner = batch.start(SLOW="0.3")
    try:
        wait_for(lambda: batch.output.exists() and batch.output.read_bytes().count(b"\n") >= 1)
        second = batch.run()
        assert second.returncode != 0
        assert "out.jsonl" in second.stderr and "already" in second.stderr
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.communicate(timeout=30)
    batch.run()
    batch.assert_exactly_once(range(1, 41))


@pytest.mark.slow
def test_output_equal_to_input_is_refused_and_the_input_kept(batch):
    batch.rows(range(1, 4))
    before = batch.input.read_bytes()
    batch.output = batch.input
    outcome = batch.run()
    assert outcome.returncode != 0 and "--output" in outcome.stderr
    assert batch.input.read_bytes() == before and batch.call_count() == 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_output_that_is_not_a_regular_file_is_a_clear_error(batch, kind):
    batch.rows(range(1, 3))
    target = batch.input.parent / "out-target"
    target.mkdir() if kind == "folder" else os.mkfifo(target)
    batch.output = target
    outcome = batch.run()
    assert outcome.returncode == 1 and "Traceback" not in outcome.stderr
    assert f"--output {target} is " in outcome.stderr and batch.call_count() == 0


@pytest.mark.slow
def test_input_that_is_not_utf8_names_file_and_line(batch):
    batch.input.write_bytes(b'{"n": 1}\n{"n": 2, "t": "\xff"}\n')
    outcome = batch.run()
    assert outcome.returncode != 0 and "in.jsonl:2" in outcome.stderr and "UTF-8" in outcome.stderr


@pytest.mark.slow
def test_rows_with_an_id_are_matched_by_id(batch):
    batch.input.write_text('{"id": "a", "n": 1}\n{"id": "b", "n": 2}\n')
    batch.run()
    batch.input.write_text('{"id": "b", "n": 2}\n{"id": "a", "n": 5}\n')  # reordered, and a's content changed
    batch.run()
    records = {r["input"]["id"]: r for r in batch.records()}
    assert len(batch.records()) == 2 and records["a"]["output"] == {"double": 10}
    assert batch.call_count() == 3
