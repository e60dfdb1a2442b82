"""`dotprompt ARGS` in a child process with a time and memory limit (tests/isolation.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.isolation import Outcome, run_limited


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60.0) -> Outcome:
    code = f"import sys\nfrom dotprompt.cli import main\nsys.exit(main({json.dumps(list(args))}))\n"
    outcome = run_limited(code, timeout=timeout, memory_mb=1024, cwd=cwd, env={"PYTHONIOENCODING": "utf-8", **(env or {})})
    assert not outcome.timed_out, outcome.stderr[-3000:]
    assert "Traceback" not in outcome.stderr, outcome.stderr[-3000:]
    return outcome
