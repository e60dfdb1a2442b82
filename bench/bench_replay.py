"""`dotprompt test --replay DIR` over 200 test cases of the example prompts, as a subprocess (best of N).

The example prompts (`prompts/` of this repository) are copied into a temporary folder with their
test files and recordings. Where the cases come from, in order (the output says which):

1. existing: every `*.test.yaml` there replays from the recordings beside it;
2. existing, recorded with echo: test files exist but some case has no recording yet, so all of
   them are recorded first with `dotprompt test --record --model echo` (in the copy only);
3. generated: there is no test file, so the script writes cases for the example prompts and
   records them the same way.

Then each test file is rewritten to repeat its cases (same inputs, names `case-N`) until the
files hold 200 cases together; recordings are keyed by a hash of the request, so a repeated input
replays the same recording. With echo recordings the files say `model: echo`, the model the
recordings were made with. An untimed run with `--json` checks that no case lacks a recording
(a case may still fail its assertions: the echo model's replies rarely satisfy an output
schema, and that is replayed like any other reply). The timed runs are the plain command, from
the copy's parent folder, process start-up included.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _common import BENCH_DIR, Result, arg_parser, report

TARGET_SECONDS = 5.0
MISSING = ("no recording for case", "no longer matches its request")  # RecordingMissingError / a stale recording
# Cases for the example prompts, used only when the folder has no test file at all. assistant.prompt
# is left out: its tools (lookup_order, issue_refund) are defined in code, not on the command line.
GENERATED: dict[str, list[dict[str, Any]]] = {
    "classify.test.yaml": [
        {"input": {"subject": "Refund not received", "body": "I returned the kettle three weeks ago and have no refund."}},
        {"input": {"subject": "Dark mode", "body": "Could you add a dark mode to the mobile app?"}},
    ],
    "extract.test.yaml": [
        {"input": {"text": "Globex Ltd, VAT GB999\nInvoice G-17, 2026-10-01\n2 x Cable @ 4.00 GBP\nTotal: 8.00 GBP"}},
        {"input": {"text": "Invoice 88 from Initech, 1 x Stapler 15.00, total 15.00", "currency_hint": "USD"}},
    ],
    "extract.fast.test.yaml": [{"input": {"text": "INV-12 total 99.90 CHF"}}],
    "summarize.test.yaml": [
        {"input": {"audience": "manager", "max_words": 30},
         "history": [{"role": "user", "content": [{"text": "The export button does nothing on Safari."}]},
                     {"role": "model", "content": [{"text": "Thanks, we reproduced it and a fix ships Friday."}]}]},
    ],
    "billing/refund_reason.test.yaml": [
        {"input": {"message": "The parcel came ten days after the date you promised."}},
        {"input": {"message": "You sent me a blue scarf, I ordered the red one."}},
    ],
}


def test_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.test.yaml") if "__recordings__" not in p.parts)


def read_test_file(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The file-level keys (prompt, variant, model, config) and the cases."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return {}, data
    data = dict(data or {})
    cases = data.pop("cases", None) or data.pop("tests", None) or []
    return data, list(cases)


def write_test_file(path: Path, header: dict[str, Any], cases: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({**header, "cases": cases}, sort_keys=False, allow_unicode=True), encoding="utf-8")


def run_tests(dotprompt: str, cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """`dotprompt test FLAGS prompts` from `cwd`; exit 1 (a case failed) is fine, 2 (a broken file) is not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOTPROMPT_") and k != "CI"}
    done = subprocess.run([dotprompt, "test", *flags, "prompts"], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"dotprompt test {' '.join(flags)} prompts: exit {done.returncode}\n{done.stderr[-2000:]}{done.stdout[-2000:]}")
    return done


def replay_results(dotprompt: str, cwd: Path) -> list[dict[str, Any]]:
    out = cwd / "replay.json"
    run_tests(dotprompt, cwd, "--replay", "--json", str(out))
    return json.loads(out.read_text(encoding="utf-8"))


def unrecorded(results: list[dict[str, Any]]) -> list[str]:
    return [f"{Path(r['file']).name}::{r['case']}" for r in results if any(m in f for f in r["failures"] for m in MISSING)]


def prepare_cases(dotprompt: str, work: Path) -> tuple[str, str]:
    """Make sure every case of the copy has a recording; returns which path was taken, long and short."""
    prompts = work / "prompts"
    files = test_files(prompts)
    if files:
        missing = unrecorded(replay_results(dotprompt, work))
        if not missing:
            return "existing test cases and their recordings", "existing recordings"
        path = (f"existing test cases ({len(missing)} without a recording), recorded with `--model echo`",
                "existing cases, echo recordings")
    else:
        for name, cases in GENERATED.items():
            write_test_file(prompts / name, {}, [{"name": f"generated {i + 1}", **c} for i, c in enumerate(cases)])
        path = ("no test file found: generated cases, recorded with `--model echo`", "generated cases, echo recordings")
    for file in test_files(prompts):  # the cases now run on echo, the model of their recordings
        header, cases = read_test_file(file)
        write_test_file(file, {**header, "model": "echo"}, [{k: v for k, v in c.items() if k != "model"} for c in cases])
    run_tests(dotprompt, work, "--record", "--model", "echo")
    return path


def repeat_cases(prompts: Path, total: int) -> dict[str, int]:
    """Rewrite each test file to repeat its cases, names `case-N`, until all files hold `total`; cases per file."""
    files = [(file, *read_test_file(file)) for file in test_files(prompts)]
    base = [(file, case) for file, _, cases in files for case in cases]
    if not base:
        sys.exit(f"no test case in {prompts}")
    grown: dict[Path, list[dict[str, Any]]] = {file: [] for file, _, _ in files}
    for n in range(total):
        file, case = base[n % len(base)]
        grown[file].append({**case, "name": f"case-{n + 1}"})
    for file, header, _ in files:
        write_test_file(file, header, grown[file])
    return {str(file.relative_to(prompts)): len(cases) for file, cases in grown.items()}


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="test cases in all (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--prompts", type=Path, default=BENCH_DIR.parent / "prompts", help="the example prompt folder")
    parser.add_argument("--dotprompt", default=str(Path(sys.executable).parent / "dotprompt"),
                        help="the dotprompt command (default: the one beside this interpreter)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(args.prompts, work / "prompts")
        path, tag = prepare_cases(args.dotprompt, work)
        per_file = repeat_cases(work / "prompts", args.cases)
        results = replay_results(args.dotprompt, work)
        missing = unrecorded(results)
        if len(results) != args.cases or missing:
            sys.exit(f"the replay ran {len(results)} cases, {len(missing)} without a recording: {', '.join(missing[:5])}")
        passed = sum(r["passed"] for r in results)
        replayed = sum(r["replayed"] for r in results)
        times = []
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            run_tests(args.dotprompt, work, "--replay")
            times.append(time.perf_counter() - start)

    best = min(times)
    print(f"cases: {path}")
    print(f"test files: {', '.join(f'{name} ({n})' for name, n in per_file.items())}")
    print(f"{len(results)} cases: {passed} pass, {len(results) - passed} fail their assertions; {replayed} replayed every "
          f"model call from a recording, {len(results) - replayed} stopped before calling the model")
    print(f"dotprompt test --replay prompts: best {best:.3f} s of {', '.join(f'{t:.3f}' for t in times)} s "
          f"= {len(results) / best:.0f} cases/s (process start-up included)")
    report(Result(f"test --replay {args.cases} cases", f"{best:.2f} s ({len(results) / best:.0f} cases/s; {tag})",
                  f"< {TARGET_SECONDS:g} s", best < TARGET_SECONDS), args.json)


if __name__ == "__main__":
    main()
