"""`dotprompt check DIR` on 500 generated prompt files, as a subprocess (best of N).

The files are spread over five namespaces, every tenth is a variant, and each has a model and
config, Picoschema input and output (optional fields, enums, arrays, nested objects), system
and user roles, an `{% if %}`, a loop, and an include of the shared partial `_house_rules`.
They are valid: the check must pass with no error and no warning, or the timing means nothing.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import PEERS_BIN, Result, arg_parser, report

TARGET_SECONDS = 1.0  # issue 24: 500 prompts in under a second
NAMESPACES = ("billing", "support", "sales", "search", "ops")
TASKS = ("summarize", "classify", "extract", "draft_reply", "translate", "triage", "rank", "explain")
TONES = ("formal", "friendly", "neutral", "concise")
PARTIAL = """---
description: House rules included by every prompt.
---
Follow the house rules: be accurate, never invent facts, and answer in {{ language | default("English") }}.
Reply with a single JSON object and nothing else.
"""
PROMPT = """---
description: {description}
model: openai/gpt-4o-mini
config:
  temperature: {temperature}
  maxOutputTokens: {max_tokens}
input:
  schema:
    text: string, the {noun} to work on
    language?: string, reply language
    tone?(enum, how to sound): [{tones}]
    {list_field}(array, {noun} notes): string
    max_items?: integer
  default:
    tone: {tone}
output:
  format: json
  schema:
    title: string
    label(enum): [{labels}]
    score: number, confidence from 0 to 1
    {result_field}(array, one per finding):
      summary: string
      severity?(enum): [low, medium, high]
      refs?(array): string
    meta(object):
      model_notes?: string
      tokens?: integer
---
{{{{ role("system") }}}}
You are the {namespace} team's assistant for the "{task}" task. Sound {{{{ tone }}}}.
{{% if max_items %}}
Return at most {{{{ max_items }}}} findings.
{{% endif %}}
{{% include "house_rules" %}}

{{{{ role("user") }}}}
{noun_title}:
{{{{ text }}}}

Notes:
{{% for note in {list_field} %}}
- {{{{ loop.index }}}}. {{{{ note }}}}
{{% endfor %}}
"""


def prompt_text(rng: random.Random, namespace: str, task: str, index: int) -> str:
    noun = rng.choice(("ticket", "email", "invoice", "report", "transcript", "review"))
    return PROMPT.format(
        description=f"{task.replace('_', ' ').capitalize()} one {noun} for the {namespace} team (#{index}).",
        temperature=rng.choice((0, 0.2, 0.5, 0.7)), max_tokens=rng.choice((256, 512, 1024)),
        noun=noun, noun_title=noun.capitalize(), tones=", ".join(TONES), tone=rng.choice(TONES),
        list_field=rng.choice(("notes", "hints", "context_lines")),
        labels=", ".join(rng.sample(("urgent", "normal", "spam", "question", "bug", "praise"), 4)),
        result_field=rng.choice(("findings", "items", "issues")), namespace=namespace, task=task)


def placement(index: int) -> tuple[str, str, str]:
    """(namespace, task, file name) of the index-th file; every tenth is a `.fast` variant of an earlier one."""
    variant = index % 10 == 9
    base = index - len(NAMESPACES) if variant else index  # same namespace, never itself a variant
    task = TASKS[base % len(TASKS)]
    suffix = ".fast.prompt" if variant else ".prompt"
    return NAMESPACES[base % len(NAMESPACES)], task, f"{task}_{base:03d}{suffix}"


def generate(root: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    (root / "_house_rules.prompt").write_text(PARTIAL, encoding="utf-8")
    for index in range(count):
        namespace, task, name = placement(index)
        folder = root / namespace
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(prompt_text(rng, namespace, task, index), encoding="utf-8")


def timed_checks(command: list[str], repeat: int) -> tuple[list[float], str]:
    """Wall seconds of each run and the last run's summary line; exits if a run is not clean."""
    times: list[float] = []
    summary = ""
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0 or done.stdout.strip():
            sys.exit(f"dotprompt check did not pass cleanly (exit {done.returncode}):\n{done.stdout}{done.stderr}")
        summary = done.stderr.strip()
    return times, summary


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500, help="prompt files to generate (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--dotprompt", default=str(PEERS_BIN / "dotprompt"), help="the dotprompt command")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), args.files)
        times, summary = timed_checks([args.dotprompt, "check", tmp], args.repeat)
    best = min(times)
    print(summary)
    print(f"dotprompt check, {args.files} files: best {best:.3f} s of {', '.join(f'{t:.3f}' for t in times)} s"
          f" ({best / args.files * 1000:.2f} ms per file, process start-up included)")
    passed = best < TARGET_SECONDS
    report(Result(f"check {args.files} files", f"{best:.2f} s", f"< {TARGET_SECONDS:.1f} s", passed), args.json)


if __name__ == "__main__":
    main()
