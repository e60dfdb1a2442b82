"""The batch output journal on its own (`dotprompt/batch/journal.py`): whole-line appends, grouped fsyncs,
a torn last line repaired, finished rows read back after a crash. `test_batch_hostile.py` checks the same
through the CLI."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from dotprompt.batch.journal import GroupSync, Survey, append_line, output_lock, unfinished
from dotprompt.batch.rows import row_of
from dotprompt.errors import BatchOutputError
from tests.isolation import run_limited


def record(n: int, *, error: bool = False) -> dict:
    row = row_of({"id": n, "n": n}, n)
    out = {"key": row.key, "row": n, "digest": row.digest, "input": row.input}
    out.update({"error": {"type": "X", "message": "failed"}} if error else {"output": {"double": 2 * n}})
    return out


def line(n: int, **kwargs) -> bytes:
    return json.dumps(record(n, **kwargs)).encode() + b"\n"


def test_a_torn_last_line_is_set_aside_and_its_row_runs_again(tmp_path):
    output = tmp_path / "out.jsonl"
    whole = b"".join(line(n) for n in range(1, 5))
    torn = line(5)[:30]
    output.write_bytes(whole + torn)
    survey = Survey(output)
    assert survey.torn_tail and survey.needs_rewrite() and survey.damaged == [torn]
    rows = [row_of({"id": n, "n": n}, n) for n in range(1, 6)]
    survey.rewrite(rows)
    assert output.read_bytes() == whole
    assert (tmp_path / "out.jsonl.damaged").read_bytes() == torn + b"\n"
    assert [row.number for row in unfinished(rows, output)] == [5]
    assert not Survey(output).needs_rewrite()


def test_a_key_written_twice_keeps_the_success(tmp_path):
    output = tmp_path / "out.jsonl"
    output.write_bytes(line(1) + line(2, error=True) + line(3) + line(2))
    survey = Survey(output)
    assert survey.needs_rewrite() and not survey.damaged
    survey.rewrite([row_of({"id": n, "n": n}, n) for n in (1, 2, 3)])
    kept = [json.loads(raw) for raw in output.read_bytes().splitlines()]
    assert [(r["row"], "output" in r) for r in kept] == [(1, True), (3, True), (2, True)]


def test_a_crash_mid_run_leaves_whole_lines_and_resume_runs_only_the_rest(tmp_path):
    # A child appends as the runner does, the last line in two writes, and dies between them (no close,
    # no last fsync): what it wrote is the OS's; the next run reads back exactly the finished rows.
    output = tmp_path / "out.jsonl"
    code = f"""
import asyncio, json, os
from dotprompt.batch.journal import GroupSync, append_line
from tests.batch.test_journal import line

async def main():
    fd = os.open({str(output)!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sync = GroupSync(fd)
    for n in range(1, 8):
        append_line(fd, line(n, error=n == 4))
        sync.written()
        await asyncio.sleep(0)
    os.write(fd, line(8)[:25])
    os._exit(9)

asyncio.run(main())
"""
    outcome = run_limited(code, timeout=30, cwd=tmp_path)
    assert not outcome.timed_out and outcome.returncode == 9, outcome.stderr[-2000:]
    rows = [row_of({"id": n, "n": n}, n) for n in range(1, 11)]
    with output_lock(output):
        survey = Survey(output)
        assert survey.torn_tail and survey.records == 7
        survey.rewrite(rows)
    assert [row.number for row in unfinished(rows, output)] == [4, 8, 9, 10]


def counting_fsync(monkeypatch, events: list) -> None:
    real = os.fsync

    def fsync(fd: int) -> None:
        events.append(("fsync", os.fstat(fd).st_size))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)  # the OS call, counted: nothing of ours is replaced


def test_lines_written_together_share_one_fsync_and_close_covers_the_last(tmp_path, monkeypatch):
    events: list = []
    counting_fsync(monkeypatch, events)
    output = tmp_path / "out.jsonl"

    async def main() -> None:
        fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        sync = GroupSync(fd)
        for n in range(1, 101):  # one burst: no await between the lines
            append_line(fd, line(n))
            sync.written()
        await sync.close()
        os.close(fd)

    asyncio.run(main())
    size = output.stat().st_size
    assert events == [("fsync", size), ("fsync", size)]  # the burst's one, then the run's last


def test_lines_written_while_an_fsync_runs_share_the_next_one(tmp_path, monkeypatch):
    events: list = []
    counting_fsync(monkeypatch, events)
    output = tmp_path / "out.jsonl"

    async def main() -> None:
        fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        sync = GroupSync(fd)
        for burst in range(3):
            for n in range(10):
                append_line(fd, line(burst * 10 + n + 1))
                sync.written()
            events.append(("written", os.fstat(fd).st_size))
            await asyncio.sleep(0.001)  # the drain's fsync may start now; the next burst waits for the next
        await sync.close()
        os.close(fd)

    asyncio.run(main())
    fsyncs = [size for kind, size in events if kind == "fsync"]
    written = [size for kind, size in events if kind == "written"]
    assert len(fsyncs) <= len(written) + 1  # never one per line
    assert fsyncs[-1] == written[-1]  # the last fsync covers every line
    assert fsyncs == sorted(fsyncs)


def test_a_second_holder_of_the_lock_is_refused_with_the_file_named(tmp_path):
    output = tmp_path / "out.jsonl"
    with output_lock(output), pytest.raises(BatchOutputError) as refused, output_lock(output):
        pass
    assert "out.jsonl" in str(refused.value) and "another --output" in str(refused.value)
    with output_lock(output):  # released: the next run takes it
        pass


def test_append_line_writes_the_whole_line_in_one_go(tmp_path):
    output = tmp_path / "out.jsonl"
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        big = json.dumps({"input": {"n": 1}, "output": "x" * 300_000}).encode() + b"\n"
        append_line(fd, big)
    finally:
        os.close(fd)
    assert output.read_bytes() == big
