"""What observability costs the tool loop: bench_loop's generate (5 model calls, 4 tool runs) under each setting.

Each setting runs in a fresh interpreter (OpenTelemetry's tracer provider is once per process), in
alternating order over `--repeats` passes; each pass times the loop as bench_loop.py does (best of
`--rounds` rounds of ~`--seconds` s, after a warm-up) and the best pass is kept:

  absent      `opentelemetry` cannot be imported (a meta-path finder refuses it)
  api-only    installed but never imported by the application (so no SDK): the default for most users
  sdk-off     an SDK tracer provider installed, DOTPROMPT_TRACING=0
  sdk-on      an SDK tracer provider with a span processor exporting to nowhere: 10 spans per generate
  sdk-content sdk-on, and OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
  log-on      `absent`, through a prompt of a `PromptLibrary(log=...)`: one run-log entry per generate
              (its own baseline `log-off` is the same prompt without a log)

Needs the SDK (`pip install -e '.[test]'`); run with the project's venv: `.venv/bin/python bench/bench_observe.py`.
Figures are µs per generate and the overhead against `absent` (`log-off` for `log-on`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import timeit

from _common import BENCH_DIR, Result, arg_parser, report_all

SETTINGS = ("absent", "api-only", "sdk-off", "sdk-on", "sdk-content", "log-off", "log-on")

CHILD = """
import asyncio, json, os, sys, tempfile
sys.path.insert(0, {bench!r})
setting = {setting!r}
if setting in ("absent", "log-off", "log-on"):
    import importlib.abc

    class NoOpenTelemetry(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "opentelemetry":
                raise ModuleNotFoundError(name)
            return None

    sys.meta_path.insert(0, NoOpenTelemetry())
if setting.startswith("sdk"):
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Nowhere(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Nowhere()))
    trace.set_tracer_provider(provider)
    if setting == "sdk-off":
        os.environ["DOTPROMPT_TRACING"] = "0"
    if setting == "sdk-content":
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"

from bench_loop import LOOP_REPLIES, ours_loop, add, block_of, best_of
from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel

run = ours_loop
if setting.startswith("log"):
    log = os.path.join(tempfile.mkdtemp(), "logs.db") if setting == "log-on" else False
    prompt = PromptLibrary(None, log=log).from_source("---\\nmodel: echo\\n---\\ngo", name="go")

    async def run():
        await prompt.generate(model=ScriptedModel(LOOP_REPLIES), tools=[add])

(best,) = asyncio.run(best_of([block_of(run)], {rounds}, {seconds}))
if setting == "log-on":
    prompt.library.run_log.flush(None)
print(json.dumps(best))
"""


def measure(setting: str, rounds: int, seconds: float) -> float:
    code = textwrap.dedent(CHILD.format(bench=str(BENCH_DIR), setting=setting, rounds=rounds, seconds=seconds))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOTPROMPT_TRAC", "OTEL_"))}
    with tempfile.TemporaryDirectory() as data:
        env["XDG_DATA_HOME"] = data
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{setting}: the child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def noop_hooks() -> float:
    """Seconds the loop's hooks cost one generate (1 run, 5 model calls, 4 tools) when nothing is traced."""
    from dotprompt.observe.spans import NO_TRACING, tracing

    def one_generate() -> None:
        trace = tracing(None, "echo")
        with trace.run(None) as run:
            for turn in range(5):
                trace.turn = turn
                with trace.chat(None, None) as chat:
                    chat.ended(None)
            for _ in range(4):
                with trace.tool(None, None) as call:
                    call.ended(None)
            run.ended(None)

    assert tracing(None, "echo") is NO_TRACING, "run without opentelemetry imported"
    number = 100_000
    return min(timeit.repeat(one_generate, number=number, repeat=5)) / number


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds per pass, best kept (default 8)")
    parser.add_argument("--seconds", type=float, default=0.25, help="length of one round (default 0.25)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over every setting, best kept (default 3)")
    args = parser.parse_args()
    try:
        import opentelemetry.sdk  # noqa: F401 - only to fail early with a clear message
    except ImportError:
        raise SystemExit("bench_observe needs opentelemetry-sdk: pip install -e '.[test]'") from None

    best = dict.fromkeys(SETTINGS, float("inf"))
    for number in range(args.repeats):
        order = SETTINGS if number % 2 == 0 else tuple(reversed(SETTINGS))
        for setting in order:
            best[setting] = min(best[setting], measure(setting, args.rounds, args.seconds))

    hooks = noop_hooks()
    base, log_base = best["absent"], best["log-off"]
    print(f"tool loop (bench_loop: 5 model calls, 4 tool runs per generate); best of {args.repeats} passes "
          f"x {args.rounds} rounds")
    for setting in SETTINGS:
        against = log_base if setting == "log-on" else base
        extra = best[setting] - against
        print(f"  {setting:<12} {best[setting] * 1e6:8.1f} µs per generate  "
              f"{extra * 1e6:+7.1f} µs ({extra / against * 100:+5.1f} %)")
    print(f"  the loop's hooks when nothing is traced: {hooks * 1e6:.2f} µs per generate "
          f"({hooks / base * 100:.1f} % of `absent`), timed alone")
    results = [
        Result("tracing hooks, nothing traced", f"{hooks * 1e6:.1f} µs per generate ({hooks / base * 100:.1f} %)",
               "nil", True, informational=True),
        Result("tracing on (SDK, 10 spans)", f"+{(best['sdk-on'] - base) * 1e6:.0f} µs per generate", "none", True,
               informational=True),
        Result("run log on", f"+{(best['log-on'] - log_base) * 1e6:.0f} µs per run", "none", True, informational=True),
    ]
    report_all(results, args.json)


if __name__ == "__main__":
    main()
