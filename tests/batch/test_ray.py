"""dotprompt.batch.ray on a local Ray cluster (2 CPUs) against the loopback fake provider: faults become row
errors, Ray Data formats in and out, a worker killed mid-run, and the CLI with --engine ray --resume.

One cluster for the module (starting Ray takes tens of seconds on a busy 2-core machine). Marked slow, and Ray
is imported by the cluster fixture, not at collection: the developer loop (`-m "not slow"`) never loads it."""

from __future__ import annotations

import functools
import json
import os

import pytest

import dotprompt.batch.ray as dray
from tests.batch.fake_server import FakeProviders
from tests.batch.ray_helpers import install_killer
from tests.cli_process import dotprompt
from tests.isolation import ROOT

PROMPT = """---
model: {model}
input:
  schema:
    id: integer
    note?: string
output:
  schema:
    double: integer
---
{{{{ note }}}} Row {{{{ id }}}}
"""
HERE = ROOT / "tests" / "batch"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import ray

    with FakeProviders(delay=0.01) as fake:
        saved = dict(os.environ)
        # The workers inherit this environment: the fake provider's address, and this folder importable.
        os.environ.update(OPENAI_BASE_URL=fake.url + "/v1", OPENAI_API_KEY="test-key",
                          PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT), saved.get("PYTHONPATH", "")]))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield fake, ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()
            os.environ.clear()
            os.environ.update(saved)


def prompts(tmp_path, model: str = "openai/fake-ray"):
    folder = tmp_path / "prompts"
    folder.mkdir(exist_ok=True)
    (folder / "double.prompt").write_text(PROMPT.format(model=model))
    return folder


def test_rows_with_faults_are_rows_with_errors_in_any_format(cluster, tmp_path):
    import ray.data

    rows = [{"id": n, "note": {5: "BADJSON", 7: "FAIL500", 9: "HANGUP"}.get(n, "")} for n in range(1, 25)]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = ray.data.read_json(str(source))
    out = dray.map_prompt(ds, "double", prompts_dir=prompts(tmp_path), workers=2, in_flight=4, batch_size=6)
    out.write_parquet(str(tmp_path / "parquet"))
    result = {r["id"]: r for r in ray.data.read_parquet(str(tmp_path / "parquet")).take_all()}
    assert sorted(result) == list(range(1, 25))
    assert set(dray.COLUMNS) <= set(result[1])
    for n, record in result.items():
        if n in (5, 7, 9):
            assert record["output"] is None and record["error"] is not None
        else:
            assert json.loads(record["output"]) == {"double": 2 * n} and record["error"] is None, record
            assert json.loads(record["usage"])["inputTokens"] == 10 and record["key"] == f"id:{n}"
    assert json.loads(result[5]["error"])["type"] == "OutputValidationError"
    assert json.loads(result[5]["error"])["reply"] == "this is not json"
    assert "server exploded" in json.loads(result[7]["error"])["message"]
    assert json.loads(result[9]["error"])["type"] == "ModelError"
    ray.data.read_parquet(str(tmp_path / "parquet")).write_csv(str(tmp_path / "csv"))
    assert ray.data.read_csv(str(tmp_path / "csv")).count() == 24


def test_a_worker_killed_mid_run_loses_no_row(cluster, tmp_path):
    import ray.data

    marker = tmp_path / "killed"
    ds = ray.data.from_items([{"id": n} for n in range(1, 41)])
    out = dray.map_prompt(ds, "double", prompts_dir=prompts(tmp_path, model="killer"), workers=2, in_flight=4,
                          batch_size=5, setup=functools.partial(install_killer, str(marker), 13))
    result = {r["id"]: r for r in out.take_all()}
    assert marker.exists(), "the worker was never killed: the test proved nothing"
    assert sorted(result) == list(range(1, 41))
    assert all(json.loads(r["output"]) == {"double": 2 * n} for n, r in result.items())


def test_the_command_line_runs_on_the_cluster_and_resumes(cluster, tmp_path, cli_env):
    fake, address = cluster
    prompts(tmp_path)
    source, output = tmp_path / "rows.jsonl", tmp_path / "out"
    source.write_text("".join(json.dumps({"id": n}) + "\n" for n in range(1, 11)))
    env = {**cli_env, "OPENAI_BASE_URL": fake.url + "/v1", "OPENAI_API_KEY": "test-key"}
    argv = ["run", "double", "--dir", "prompts", "--input-file", str(source), "--output", str(output), "--engine", "ray",
            "--address", address, "--workers", "1", "--concurrency", "4"]
    calls = fake.calls
    done = dotprompt(*argv, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "10 succeeded, 0 failed, 0 skipped" in done.stderr and fake.calls - calls == 10
    refused = dotprompt(*argv, cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "--resume" in refused.stderr
    source.write_text("".join(json.dumps({"id": n}) + "\n" for n in range(1, 16)))
    calls = fake.calls
    again = dotprompt(*argv, "--resume", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "5 succeeded, 0 failed, 10 skipped" in again.stderr and fake.calls - calls == 5
    keys = sorted(dray.written_keys(output))
    assert keys == sorted(f"id:{n}" for n in range(1, 16))


def test_the_command_line_hands_the_template_engine_to_the_actors(cluster, tmp_path, cli_env):
    """`{# 7 #}` is a comment to jinja2 (the model reads "Row N") and text to Handlebars (it reads the 7 first)."""
    fake, address = cluster
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "double.prompt").write_text(PROMPT.format(model="openai/fake-ray").replace("{{ note }}", "{# 7 #}"))
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({"id": n}) + "\n" for n in range(1, 4)))
    env = {**cli_env, "OPENAI_BASE_URL": fake.url + "/v1", "OPENAI_API_KEY": "test-key"}
    doubles = {}
    for engine in ("jinja2", "handlebars"):
        output = tmp_path / f"out-{engine}"
        done = dotprompt("run", "double", "--dir", "prompts", "--input-file", str(source), "--output", str(output),
                         "--engine", "ray", "--address", address, "--workers", "1", "--template-engine", engine,
                         cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        rows = [json.loads(line) for part in sorted(output.iterdir()) for line in part.read_text().splitlines()]
        doubles[engine] = sorted(json.loads(row["output"])["double"] for row in rows)
    assert doubles == {"jinja2": [2, 4, 6], "handlebars": [14, 14, 14]}
