"""A project for the workbench's tests: pyproject.toml, a tools module, prompts (one with a tool and
an interrupt, hostile ones), a run log of its own and an eval report, in a temporary folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-workbench-secret-key-0123456789"

ORDER_PROMPT = """---
description: Refund an order; asks a human before refunding.
model: openai/gpt-test
tools: [lookup_order, approve_refund]
maxTurns: 5
input:
  schema:
    order_id: string, the order to refund
    reason?(enum): [damaged, late, other]
    amount?: number
    urgent?: boolean
  default:
    reason: late
output:
  format: json
  schema:
    answer: string
    amount: number
    link?: string
---
{{ role("system") }}
You refund orders.
{{ role("user") }}
Order {{ order_id }}: refund because {{ reason }}{% if amount %} ({{ amount }}){% endif %}.
"""

TOOLS = '''
from dotprompt import ToolContext, tool


@tool
def approve_refund(order_id: str, amount: float, ctx: ToolContext) -> dict:
    """A human approves the refund: the run stops until they answer (or restart it, approved)."""
    if not ctx.resumed:
        ctx.interrupt({"question": f"refund {amount} on order {order_id}?"})
    return {"approved": True, "by": "restart"}


@tool
def lookup_order(order_id: str) -> dict:
    """Look an order up."""
    return {"order_id": order_id, "total": 20, "status": "delivered"}
'''

def counts(correct: int, wrong: int = 0, missing: int = 0, extra: int = 0) -> dict[str, float]:
    predicted, support = correct + wrong + extra, correct + wrong + missing
    precision, recall = correct / predicted, correct / support
    return {"f1": round(2 * precision * recall / (precision + recall), 6), "precision": precision, "recall": recall,
            "support": support, "correct": correct, "wrong": wrong, "missing": missing, "extra": extra}


def arm(label: str, variant: str | None, *, total: dict, passed: bool, failures: list[str], deltas: list[dict],
        rows: list[dict]) -> dict:
    fields = {"total": total, "vendor": counts(2)}
    overall = counts(sum(f["correct"] for f in fields.values()), sum(f["wrong"] for f in fields.values()))
    return {"eval": "extract", "file": "extract.test.yaml", "prompt": "extract", "arm": label, "variant": variant,
            "model": "m", "passed": passed, "fixture_rows": 0, "failures": failures, "deltas": deltas, "rows": rows,
            "scores": {"rows": 2, "exact_match": 0.5 if total["wrong"] else 1.0, "overall": overall, "fields": fields,
                       "lists": {}}}


WRONG_ROW = {"id": "row-2", "exact": False, "problems": [],
             "fields": [{"field": "total", "where": "total", "outcome": "wrong", "expected": 120.5,
                         "predicted": "<img src=x onerror=alert(1)>"}]}
REPORT = {"evals": [
    arm("base", None, total=counts(1, 1), passed=False, failures=["total: F1 0.500 < 0.9"],
        deltas=[{"field": "total", "metric": "f1", "baseline": 0.75, "now": 0.5}], rows=[WRONG_ROW]),
    arm("fast", "fast", total=counts(2), passed=True, failures=[], deltas=[], rows=[])]}


def make_project(root: Path) -> Path:
    """The project folder (its prompts in `prompts/`)."""
    prompts = root / "prompts"
    (prompts / "billing").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["tools.py"]\n'
                                         'log_path = "runs.db"\n')
    (root / "tools.py").write_text(TOOLS)
    (prompts / "order.prompt").write_text(ORDER_PROMPT)
    (prompts / "order.short.prompt").write_text(ORDER_PROMPT.replace("You refund orders.", "Refund. Be brief."))
    (prompts / "_signature.prompt").write_text("Kind regards, the shop\n")
    (prompts / "billing" / "note.prompt").write_text("---\ninput:\n  schema:\n    text: string\n---\n"
                                                     "{{ text }} {% include 'signature' %}\n")
    (prompts / "broken.prompt").write_text("---\ninput:\n  schema:\n    text: string\n---\nHello {{ txt }}\n")
    (prompts / "reports").mkdir()
    (prompts / "reports" / "extract.eval.json").write_text(json.dumps(REPORT, indent=2))
    return root


def environment(base_url: str, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOTPROMPT_")}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY=KEY, XDG_DATA_HOME=str(root / "data"),
               PYTHONIOENCODING="utf-8", DOTPROMPT_LOG="1")
    return env


def ui_command(*extra: str, limits: dict[str, object] | None = None) -> list[str]:
    """`python -m dotprompt.cli ui --port 0 ...`; with `limits`, those values of dotprompt.ui.limits are
    set first (a short grace period, a small table), as if the constants said so."""
    if not limits:
        return [sys.executable, "-m", "dotprompt.cli", "ui", "--port", "0", *extra]
    code = ("import sys, dotprompt.ui.limits as s\n"
            + "".join(f"s.{name} = {value!r}\n" for name, value in limits.items())
            + f"from dotprompt.cli import main\nsys.exit(main({['ui', '--port', '0', *extra]!r}))\n")
    return [sys.executable, "-c", code]


@contextmanager
def running_ui(root: Path, env: dict[str, str], *extra: str, limits: dict[str, object] | None = None,
               process_out: list[subprocess.Popen[str]] | None = None) -> Iterator[str]:
    """`dotprompt ui --port 0` in `root`; its URL while the block runs (its process in `process_out`)."""
    process = subprocess.Popen(ui_command(*extra, limits=limits), cwd=root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if process_out is not None:
        process_out.append(process)
    try:
        line = process.stdout.readline() if process.stdout else ""
        found = re.search(r"http://\S+", line)
        if not found:
            process.kill()
            raise AssertionError(f"no URL printed: {line!r} {process.stderr.read() if process.stderr else ''}")
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
        if process.stdout:
            process.stdout.close()


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(interval)
    raise AssertionError("timed out waiting")


def docs_shot(page, name: str) -> None:
    """A picture of the page for the docs, when DOTPROMPT_UI_SCREENSHOTS names a folder."""
    folder = os.environ.get("DOTPROMPT_UI_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
