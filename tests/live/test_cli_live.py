"""`dotprompt run` with no model named anywhere and no key: the local model answers (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import jsonschema
import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.live



def dotprompt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DOTPROMPT_DIR", "DOTPROMPT_MODEL")}
    return subprocess.run([sys.executable, "-m", "dotprompt.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**env, "PYTHONIOENCODING": "utf-8"}, timeout=180)


def test_run_extract_prints_schema_valid_json(local_model, record_property):
    started = time.monotonic()
    done = dotprompt("run", "extract", "--dir", "prompts", "--input", "@examples/inputs/invoice.json")
    record_property("wall_seconds", round(time.monotonic() - started, 2))
    assert done.returncode == 0, done.stderr
    schema = json.loads(dotprompt("schema", "extract", "--dir", "prompts").stdout)
    jsonschema.validate(json.loads(done.stdout), schema)
