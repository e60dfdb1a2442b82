"""Provider batch APIs against a loopback fake of the three providers: submit -> poll -> download ->
resume, expired and failed jobs, per-row errors, tool prompts refused, and the CLI end to end."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from dotprompt import PromptLibrary
from dotprompt.batch.api.jobs import job_folder, resume, state_path, submit
from dotprompt.batch.runner import InputFile
from dotprompt.errors import BatchJobError
from tests.batch.fake_server import FakeProviders
from tests.cli_inprocess import cli

PROVIDERS = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1"),
             "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "/v1"),
             "googleai": ("GEMINI_BASE_URL", "GEMINI_API_KEY", "/v1beta")}
PROMPT = """---
model: {model}
input:
  schema:
    n: integer
    note?: string
output:
  schema:
    double: integer
{extra}---
Row {{{{ n }}}} {{{{ note }}}}
"""


class Job:
    """A prompt folder, rows and an output, for one provider on a fake server."""

    def __init__(self, tmp: Path, fake: FakeProviders, provider: str, monkeypatch, extra: str = "") -> None:
        base_var, key_var, prefix = PROVIDERS[provider]
        monkeypatch.setenv(base_var, fake.url + prefix)
        monkeypatch.setenv(key_var, "test-key")
        self.model = f"{provider}/fake-{uuid.uuid4().hex[:6]}"  # a fresh name: the registry keeps models by name
        (tmp / "prompts").mkdir(exist_ok=True)
        (tmp / "prompts" / "double.prompt").write_text(PROMPT.format(model=self.model, extra=extra))
        self.prompt = PromptLibrary(tmp / "prompts").load("double")
        self.input, self.output, self.fake = tmp / "in.jsonl", tmp / "out.jsonl", fake

    def rows(self, *rows: dict) -> None:
        self.input.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def submit(self, **kwargs):
        return asyncio.run(submit(self.prompt, InputFile(self.input), self.output, **kwargs))

    def resume(self):
        return asyncio.run(resume(self.prompt, InputFile(self.input), self.output))

    def records(self) -> dict[int, dict]:
        return {r["input"]["n"]: r for r in map(json.loads, self.output.read_text().splitlines())}


@pytest.fixture(params=list(PROVIDERS))
def provider(request):
    return request.param


def test_submit_poll_download_with_per_row_errors(tmp_path, provider, monkeypatch):
    with FakeProviders(polls_before_done=1) as fake:
        job = Job(tmp_path, fake, provider, monkeypatch)
        job.rows({"n": 1}, {"n": 2, "note": "BADJSON"}, {"n": 3, "note": "FAIL500"}, {"n": 4}, {"n": "four"})
        submitted = job.submit()
        assert len(submitted.jobs) == 1 and submitted.rows == 4 and submitted.failed == 1
        state = json.loads(state_path(job.output).read_text())
        assert state["provider"] == provider and [j["id"] for j in state["jobs"]] == submitted.jobs
        assert len(fake.submitted) == 4 and fake.calls == 0  # no live call: everything went in the job
        assert job.records()["four"]["error"]["type"] == "InputValidationError"  # refused before submission

        first = job.resume()  # the job is still running
        assert first.pending == 1 and first.written.total == 0
        second = job.resume()
        assert second.pending == 0 and (second.written.succeeded, second.written.failed) == (2, 2)
        records = job.records()
        assert records[1]["output"] == {"double": 2} and records[4]["output"] == {"double": 8}
        assert records[1]["usage"]["inputTokens"] == 10
        assert records[2]["error"]["type"] == "OutputValidationError" and records[2]["error"]["reply"] == "this is not json"
        assert records[3]["error"]["type"] == "ModelError" and "server exploded" in records[3]["error"]["message"]
        assert len(job.output.read_text().splitlines()) == 5

        third = job.resume()  # nothing left to do: nothing polled, nothing written twice
        assert third.pending == 0 and third.written.total == 0 and len(job.output.read_text().splitlines()) == 5


def test_the_batch_file_holds_what_a_live_call_would_send(tmp_path, monkeypatch):
    with FakeProviders() as fake:
        job = Job(tmp_path, fake, "openai", monkeypatch)
        job.rows({"n": 7, "note": "hello"})
        job.submit()
        line = fake.submitted[0]
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        assert line["body"]["model"] == job.model.split("/", 1)[1]
        assert "Row 7 hello" in json.dumps(line["body"]["messages"])
        assert line["body"]["response_format"]["json_schema"]["schema"]["properties"]["double"]["type"] == "integer"
        assert len(line["custom_id"]) <= 64 and line["custom_id"].isalnum()


def test_rows_keyed_by_id_are_submitted_without_it_and_written_under_it(tmp_path, monkeypatch):
    # The input schema is closed and has no `id`: the id keys the row and is not sent (it would fail the schema).
    with FakeProviders(polls_before_done=0) as fake:
        job = Job(tmp_path, fake, "openai", monkeypatch)
        job.rows({"id": "inv-1", "n": 1}, {"id": "inv-2", "n": 2})
        submitted = job.submit()
        assert (submitted.rows, submitted.failed) == (2, 0) and len(fake.submitted) == 2
        job.resume()
        records = job.records()
        assert records[1]["output"] == {"double": 2} and records[1]["key"] == 'id:"inv-1"'
        assert records[2]["output"] == {"double": 4} and records[2]["input"] == {"id": "inv-2", "n": 2}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_an_expired_job_keeps_its_results_and_the_rest_run_again(tmp_path, provider, monkeypatch):
    with FakeProviders(polls_before_done=0, scenario="expired") as fake:
        job = Job(tmp_path, fake, provider, monkeypatch)
        job.rows(*({"n": n} for n in range(1, 7)))
        job.submit()
        report = job.resume()
        assert (report.written.succeeded, report.written.failed) == (3, 3)
        failed = [r for r in job.records().values() if "error" in r]
        assert len(failed) == 3 and all(r["error"]["type"] == "ModelError" for r in failed)
        fake.scenario = "ok"
        again = job.submit()  # only the rows without a success are sent
        assert again.rows == 3 and again.skipped == 3 and len(fake.submitted) == 9
        job.resume()
        assert {n: r.get("output") for n, r in job.records().items()} == {n: {"double": 2 * n} for n in range(1, 7)}


@pytest.mark.parametrize("provider", ["openai", "googleai"])
def test_a_failed_job_gives_every_row_an_error_record(tmp_path, provider, monkeypatch):
    with FakeProviders(polls_before_done=0, scenario="failed") as fake:
        job = Job(tmp_path, fake, provider, monkeypatch)
        job.rows({"n": 1}, {"n": 2})
        job.submit()
        report = job.resume()
        assert report.written.failed == 2 and all("no result" in r["error"]["message"] for r in job.records().values())


def test_a_job_lost_by_the_provider_is_a_clear_error_and_the_state_is_kept(tmp_path, monkeypatch):
    with FakeProviders(polls_before_done=0, scenario="failed") as fake:
        job = Job(tmp_path, fake, "anthropic", monkeypatch)
        job.rows({"n": 1})
        job.submit()
        with pytest.raises(Exception, match="batch lost"):
            job.resume()
        assert json.loads(state_path(job.output).read_text())["jobs"][0]["written"] is False


def test_pending_jobs_block_a_second_submission(tmp_path, monkeypatch):
    with FakeProviders(polls_before_done=5) as fake:
        job = Job(tmp_path, fake, "anthropic", monkeypatch)
        job.rows({"n": 1})
        job.submit()
        with pytest.raises(BatchJobError, match="not downloaded yet: run with --resume"):
            job.submit()


def test_resume_without_a_submitted_job_says_what_to_do(tmp_path, monkeypatch):
    with FakeProviders() as fake:
        job = Job(tmp_path, fake, "openai", monkeypatch)
        job.rows({"n": 1})
        with pytest.raises(BatchJobError, match="submit one with --batch-api first"):
            job.resume()


def test_rows_are_split_into_jobs_of_the_batch_size(tmp_path, monkeypatch):
    with FakeProviders(polls_before_done=0) as fake:
        job = Job(tmp_path, fake, "googleai", monkeypatch)
        job.rows(*({"n": n} for n in range(5)))
        report = job.submit(batch_size=2)
        assert len(report.jobs) == 3 and sorted(len((job_folder(job.output) / f"{j}.ids").read_text().split())
                                                for j in report.jobs) == [1, 2, 2]
        assert job.resume().written.succeeded == 5


TOOL_PROMPT_EXTRA = "tools: [lookup]\n"


def test_a_prompt_with_tools_is_refused_unless_only_its_first_turn_is_asked_for(tmp_path, monkeypatch):
    from dotprompt import tool

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    with FakeProviders(polls_before_done=0) as fake:
        job = Job(tmp_path, fake, "openai", monkeypatch, extra=TOOL_PROMPT_EXTRA)
        job.prompt.library.define_tool(lookup)
        job.rows({"n": 1})
        with pytest.raises(BatchJobError, match=r"uses tools \(lookup\).*--return-tool-requests"):
            job.submit()
        assert not fake.submitted
        job.submit(first_turn_only=True)
        assert fake.submitted[0]["body"]["tools"][0]["function"]["name"] == "lookup"
        job.resume()
        assert job.records()[1]["output"] == {"double": 2}


def test_the_command_line_submits_then_resumes(tmp_path, cli_env):
    with FakeProviders(polls_before_done=1) as fake:
        (tmp_path / "prompts").mkdir()
        (tmp_path / "prompts" / "double.prompt").write_text(PROMPT.format(model="openai/fake-cli", extra=""))
        (tmp_path / "in.jsonl").write_text('{"n": 1}\n{"n": 2}\n')
        env = {**cli_env, "OPENAI_BASE_URL": fake.url + "/v1", "OPENAI_API_KEY": "test-key"}
        argv = ["run", "double", "--dir", "prompts", "--input-file", "in.jsonl", "--output", "out.jsonl", "--batch-api"]
        done = cli(*argv, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert "submitted job openai-" in done.stderr and "--resume" in done.stderr
        assert (tmp_path / "out.jsonl.batch.json").exists()
        waiting = cli(*argv, "--resume", cwd=tmp_path, env=env)
        assert waiting.returncode == 0 and "1 job(s) still running" in waiting.stderr
        done = cli(*argv, "--resume", cwd=tmp_path, env=env)
        assert done.returncode == 0 and "2 succeeded, 0 failed" in done.stderr, done.stderr
        outputs = sorted(json.loads(line)["output"]["double"] for line in (tmp_path / "out.jsonl").read_text().splitlines())
        assert outputs == [2, 4]
        again = cli(*argv, cwd=tmp_path, env=env)
        assert again.returncode == 0 and "0 rows in 0 job(s), 2 skipped" in again.stderr


def test_batch_api_with_a_model_that_has_none_is_one_clear_line(tmp_path, cli_env):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "double.prompt").write_text(PROMPT.format(model="echo", extra=""))
    (tmp_path / "in.jsonl").write_text('{"n": 1}\n')
    done = cli("run", "double", "--dir", "prompts", "--input-file", "in.jsonl", "--output", "out.jsonl",
               "--batch-api", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "has no batch API" in done.stderr and "Traceback" not in done.stderr
