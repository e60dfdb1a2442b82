"""The newcomer's flow (issue 30), end to end through the real CLI, offline, timed.

    python bench/e2e_newcomer.py                      # steps 2-5 below, in a temporary folder
    python bench/e2e_newcomer.py --keep DIR           # build the app in DIR and leave it there
    python bench/e2e_newcomer.py --browser PYTHON     # also step 6, driving Debian's chromium with
                                                      # PYTHON (an interpreter with playwright)

It builds an application as a Genkit user would bring one: its own pyproject.toml, a `prompts/`
folder (a plain `{{name}}` file, a Handlebars file with a partial, one with an output schema, one
with tools from the package `myapp.tools` beside pyproject.toml, one with a JSON label), test files,
a partly labelled gold set and 200 batch rows with an `id` column. Its model is a loopback
OpenAI-compatible server in this process that answers fixed JSON (three of them: prompt, failing
with HTTP 500, slow at 50 ms a reply). Then, with `dotprompt` from the interpreter that runs this
script (`python -m dotprompt.cli`):

2. `check` (also `--format sarif`), `render`;
3. `test --record`, then `test --junit reports/junit.xml` replayed (the folder does not exist yet);
4. `eval` with a `min:` gate, `--save-baseline`, a comparison, a worse variant that fails it, and an
   eval whose every model call fails (HTTP 500) exiting 1;
5. a 200-row batch interrupted with SIGINT midway and resumed: each id once in the output, and
   `dotprompt logs` shows no CancelledError and only this project's runs (another project logs to
   the same run log first); also a run that stops on two interrupts must not pass as a success;
6. (`--browser`) `dotprompt ui`: a streamed tool call is one block, two interrupts of one turn are
   answered together, Cancel stops a run, Ctrl-C stops the server with nothing on stderr.

Each check prints PASS or FAIL with the seconds it took and the load average; the exit status is 1
when any check failed. The run log is a file in the work folder (DOTPROMPT_LOG_PATH), never yours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

RESULTS: list[tuple[str, bool, str]] = []


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "-"


def record(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f"  [{detail}]" if detail else ""), flush=True)


# --- the loopback model ------------------------------------------------------------------------


def said_by_user(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        if message["role"] == "user":
            content = message.get("content")
            parts.append(content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or []))
    return " ".join(parts)


def decide(body: dict[str, Any]) -> tuple[str | None, list[tuple[str, str, dict[str, Any]]]]:
    """What the model answers: fixed, from what the request holds."""
    messages = body["messages"]
    said = said_by_user(messages)
    everything = json.dumps(body)
    tools_done = sum(m["role"] == "tool" for m in messages)
    if body.get("tools"):
        if "two approvals" in said and tools_done == 0:
            return None, [("c1", "approve_refund", {"order_id": "A1", "amount": 5}),
                          ("c2", "approve_refund", {"order_id": "A2", "amount": 7})]
        if tools_done == 0:
            number = re.search(r"\b(\d{3,})\b", said)
            return None, [("call_1", "lookup_order", {"order_id": number.group(1) if number else "0"})]
        return "Your order is on its way; refunds are done.", []
    if '"email"' in everything:
        email = re.search(r"[\w.+-]+@[\w-]+\.[\w.]+", said)
        name = re.search(r"(?:from|by|Regards,|Thanks,)\s+([A-Z][a-z]+ [A-Z][a-z]+)", said)
        return json.dumps({"name": name.group(1) if name else "Unknown", "email": email.group(0) if email else None,
                           "urgent": "urgent" in said.lower()}), []
    if '"sentiment"' in everything:
        return json.dumps({"sentiment": "negative" if re.search(r"broken|angry|late", said, re.I) else "positive"}), []
    return "Summary: " + said.strip()[:60], []


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    delay: ClassVar[float] = 0.0
    fail: ClassVar[bool] = False
    pause: ClassVar[float] = 0.05  # between streamed pieces

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        time.sleep(self.delay)
        try:
            if self.fail:
                self.send_bytes(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
                return
            text, calls = decide(body)
            if body.get("stream"):
                self.stream(text, calls)
                return
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [{"id": ref, "type": "function",
                                          "function": {"name": name, "arguments": json.dumps(args)}}
                                         for ref, name, args in calls]
            self.send_bytes(200, json.dumps({
                "id": "r", "object": "chat.completion", "model": body["model"], "usage": USAGE,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send_bytes(self, status: int, raw: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def event(self, data: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def stream(self, text: str | None, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        if calls:
            for position, (ref, name, args) in enumerate(calls):
                arguments = json.dumps(args)
                for start in range(0, len(arguments), 6):  # the arguments arrive in pieces
                    fragment: dict[str, Any] = {"index": position, "function": {"arguments": arguments[start:start + 6]}}
                    if start == 0:
                        fragment.update(id=ref, type="function")
                        fragment["function"]["name"] = name
                    self.event({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [fragment]}}]})
                    time.sleep(self.pause)
            self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        else:
            assert text is not None
            for start in range(0, len(text), 4):
                self.event({"choices": [{"index": 0, "delta": {"content": text[start:start + 4]}}]})
                time.sleep(self.pause)
            self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.event({"choices": [], "usage": USAGE})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


USAGE = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}


def serve(**settings: Any) -> ThreadingHTTPServer:
    handler = type("ScriptedModel", (Model,), settings)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# --- the application ---------------------------------------------------------------------------

PROMPTS = {
    "summarize.prompt": """\
        ---
        model: fake/gpt-mini
        config: {temperature: 0.2}
        input:
          schema:
            text: string, the text to summarize
        ---
        Summarize the following in one sentence:

        {{text}}
        """,
    "greeting.prompt": """\
        ---
        model: fake/gpt-mini
        input:
          schema:
            name?: string
            products(array): string
          default:
            products: []
        ---
        {{role "system"}}
        You are a friendly shop assistant. {{> tone}}
        {{role "user"}}
        {{#if name}}Greet {{name}} by name.{{else}}Greet the customer.{{/if}}
        {{#each products}}Mention {{this}}{{#unless @last}}, {{/unless}}{{/each}}
        """,
    "_tone.prompt": "Keep it short and warm.\n",
    "contact.prompt": """\
        ---
        model: fake/gpt-mini
        config: {temperature: 0}
        input:
          schema:
            email_body: string
        output:
          format: json
          schema:
            name: string, the sender's full name
            email?: string, the sender's address
            urgent: boolean
        ---
        {{role "system"}}
        Extract the sender of this support email.
        {{role "user"}}
        {{email_body}}
        """,
    "support.prompt": """\
        ---
        model: fake/gpt-mini
        tools: [lookup_order, approve_refund]
        maxTurns: 4
        input:
          schema:
            question: string
        ---
        {{role "system"}}
        You answer customer questions about orders. Use the tools; ask for approval before any refund.
        {{role "user"}}
        {{question}}
        """,
    "triage.prompt": """\
        ---
        model: fake/gpt-mini
        input:
          schema:
            message: string
        output:
          format: json
          schema:
            sentiment: string, positive or negative
        ---
        Classify the sentiment of this customer message: {{message}}
        """,
    "contact.test.yaml": """\
        cases:
          - name: plain email
            input: {email_body: "Hello, my parcel is late. Regards, Maria Lopez (maria.lopez@example.org)"}
            expect:
              output_subset: {name: Maria Lopez, urgent: false}
              paths:
                - {path: $.email, matches: "@example\\\\.org$"}
              no_repairs: true
          - name: urgent email
            input: {email_body: "URGENT: the invoice is wrong. Thanks, Tom Baker tom@baker.io"}
            expect:
              output_subset: {urgent: true}
        eval:
          dataset: ../data/contacts.jsonl
          strict: false
          ignore: [urgent]
          fields:
            name: text
          min: {f1: 0.8, fields: {name: 0.8, email: {recall: 0.6}}}
          max_regression: 0.02
          max_failure_rate: 0
        """,
    "support.test.yaml": """\
        cases:
          - name: where is my order
            input: {question: "Where is order 1042?"}
            expect:
              tool_called: lookup_order
              text_contains: on its way
              max_turns_used: 2
        """,
    "triage.test.yaml": """\
        cases:
          - name: angry
            input: {message: "The mug arrived broken and I am angry"}
            expect:
              output: {sentiment: negative}
        """,
}

TOOLS = '''\
"""Tools the support prompt calls."""
from dotprompt import ToolContext, tool

ORDERS = {"1042": {"order_id": "1042", "status": "shipped", "total": 59.9}}


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order's status and total by its id."""
    return ORDERS.get(order_id, {"error": f"no order {order_id}"})


@tool
def approve_refund(order_id: str, amount: float, ctx: ToolContext) -> dict:
    """Ask a human to approve a refund before it is issued."""
    if not ctx.resumed:
        ctx.interrupt({"question": f"approve a refund of {amount} on order {order_id}?"})
    return {"approved": True, "order_id": order_id, "amount": amount}
'''

GOLD = [  # partly labelled: a row scores only the fields it names
    ("c1", "Where is my refund? Regards, Maria Lopez maria.lopez@example.org",
     {"name": "Maria Lopez", "email": "maria.lopez@example.org", "urgent": False}),
    ("c2", "URGENT: wrong invoice. Thanks, Tom Baker tom@baker.io", {"name": "Tom Baker", "urgent": True}),
    ("c3", "Sent by Ana Silva, ana@silva.pt. The mug is lovely.", {"email": "ana@silva.pt"}),  # the model keeps the "."
    ("c4", "no signature here, reach me at x@y.com", {"name": "Unknown"}),
    ("c5", "Regards, Li Wei (urgent please) li.wei@corp.cn", {"name": "Li Wei", "urgent": True, "email": "li.wei@corp.cn"}),
    ("c6", "Thanks, Sam Cole", {"name": "Sam Cole", "email": None}),
]

WORSE = PROMPTS["contact.prompt"].replace("{{email_body}}", "Forwarded by Help Desk: {{email_body}}")


def pyproject(fake: int, broken: int, slow: int) -> str:
    return textwrap.dedent(f"""\
        [project]
        name = "myapp"
        version = "0.1.0"

        [tool.dotprompt]
        prompts_dir = "prompts"
        tools = ["myapp.tools"]

        [tool.dotprompt.providers.fake]
        base_url = "http://127.0.0.1:{fake}/v1"

        [tool.dotprompt.providers.broken]
        base_url = "http://127.0.0.1:{broken}/v1"

        [tool.dotprompt.providers.slow]
        base_url = "http://127.0.0.1:{slow}/v1"
        """)


def make_app(root: Path, ports: tuple[int, int, int]) -> None:
    (root / "prompts").mkdir(parents=True)
    (root / "myapp").mkdir()
    (root / "data").mkdir()
    (root / "pyproject.toml").write_text(pyproject(*ports))
    (root / "myapp" / "__init__.py").write_text("")
    (root / "myapp" / "tools.py").write_text(TOOLS)
    for name, text in PROMPTS.items():
        (root / "prompts" / name).write_text(textwrap.dedent(text))
    (root / "prompts" / "contact.worse.prompt").write_text(textwrap.dedent(WORSE))
    (root / "data" / "contacts.jsonl").write_text(
        "".join(json.dumps({"id": i, "input": {"email_body": t}, "expected": e}) + "\n" for i, t, e in GOLD))
    names = ["Maria Lopez", "Tom Baker", "Ana Silva", "Li Wei", "Sam Cole"]
    (root / "rows.jsonl").write_text("".join(
        json.dumps({"id": f"r{i:03d}", "email_body": f"Order {1000 + i}. Regards, {names[i % 5]} "
                                                      f"{names[i % 5].split()[0].lower()}{i}@example.org"}) + "\n"
        for i in range(200)))


# --- the steps ---------------------------------------------------------------------------------


class Cli:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env

    def __call__(self, *args: str, ci: bool = False, timeout: float = 300) -> tuple[int, str, str, float]:
        env = dict(self.env, CI="1") if ci else self.env
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "dotprompt.cli", *args], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr, time.monotonic() - started

    def step(self, name: str, *args: str, expect: int = 0, ci: bool = False, must: str = "") -> tuple[str, str]:
        code, out, err, seconds = self(*args, ci=ci)
        ok = code == expect and (not must or must in out + err)
        tail = (out + err).strip().splitlines()[-1:] if not ok else []
        record(name, ok, f"rc={code} {seconds:.1f}s load {load()}" + (f"; {tail[0][:200]}" if tail else ""))
        return out, err

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "dotprompt.cli", *args], cwd=self.root, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def step_check_render(cli: Cli) -> None:
    cli.step("check", "check", "--strict", must="0 error(s), 0 warning(s)")
    out, _ = cli.step("check --format sarif", "check", "--format", "sarif")
    record("sarif has no results", json.loads(out)["runs"][0]["results"] == [])
    out, _ = cli.step("render greeting (Handlebars + partial)", "render", "greeting",
                      "--input", '{"name": "Ada", "products": ["tea", "mugs"]}')
    record("Handlebars rendered as Handlebars", "Keep it short and warm." in out and "Mention tea, Mention mugs" in out
           and "Greet Ada by name." in out)


def step_test(cli: Cli) -> None:
    cli.step("test --record", "test", "--record", must="0 failed")
    cli.step("test --junit into a new folder (CI: replay)", "test", "--junit", "reports/junit.xml", ci=True, must="0 failed")
    junit = (cli.root / "reports" / "junit.xml").read_text()
    record("junit written", 'failures="0"' in junit and 'tests="4"' in junit)


def step_eval(cli: Cli) -> None:
    test = "prompts/contact.test.yaml"
    out, _ = cli.step("eval --record (gate passes)", "eval", test, "--record", must="1 eval(s) passed")
    record("partly labelled gold scored right", bool(re.search(r"\(overall F1\)\s+8\s+0\.875", out))
           and bool(re.search(r"email\s+3\s+0\.667 \(1w 0m 0x\)", out)), "overall 8 values F1 0.875, email 1 wrong")
    cli.step("eval --save-baseline into a new folder", "eval", test, "--save-baseline", "baselines/contact.json")
    cli.step("eval --baseline (unchanged)", "eval", test, "--baseline", "baselines/contact.json", ci=True)
    cli.step("eval worse variant --auto --baseline fails", "eval", test, "--variant", "worse", "--auto",
             "--baseline", "baselines/contact.json", expect=1, must="name: f1 regressed")
    cli.step("eval where every call fails (HTTP 500) exits 1", "eval", test, "--model", "broken/m", "--record",
             expect=1, must="6 of 6 rows failed to run")
    cli("eval", test, "--json", "reports/eval.json", ci=True)
    grounding = json.loads((cli.root / "reports" / "eval.json").read_text())["evals"][0]["grounding"]
    email = grounding["email"]
    # Nothing flagged: flag precision is undefined (null), never a figure a gate could pass on.
    vacuous = email["flagged_wrong"] + email["flagged_right"] == 0 and email["flag_precision"] is not None
    record("no vacuous flag precision (nothing flagged)", not vacuous,
           f"email: flagged 0, flag_precision {email['flag_precision']}")


def step_batch(cli: Cli) -> None:
    args = ("run", "contact", "--model", "slow/gpt-mini", "--input-file", "rows.jsonl", "--output", "out/out.jsonl",
            "--concurrency", "2")
    started = time.monotonic()
    batch = cli.popen(*args)
    output = cli.root / "out" / "out.jsonl"
    while time.monotonic() - started < 120:  # midway: about a third of the rows written
        if output.exists() and output.read_text().count("\n") >= 60:
            break
        time.sleep(0.1)
    written = output.read_text().count("\n") if output.exists() else 0
    batch.send_signal(signal.SIGINT)
    _, err = batch.communicate(timeout=60)
    record("batch interrupted with SIGINT midway", batch.returncode == 130 and 0 < written < 200
           and "run the same command again" in err and "Traceback" not in err,
           f"rc={batch.returncode} at {written} rows, {time.monotonic() - started:.1f}s load {load()}")
    cli.step("batch resumed", *args, must="skipped (already done)")
    records = [json.loads(line) for line in output.read_text().splitlines()]
    ids = Counter(r["input"]["id"] for r in records)
    record("each id once in the output", len(records) == 200 and set(ids) == {f"r{i:03d}" for i in range(200)}
           and max(ids.values()) == 1 and not any("error" in r for r in records), f"{len(records)} records, {len(ids)} ids")
    _, out, _, _ = cli("logs", "--json")
    runs = [json.loads(line) for line in out.splitlines() if line.strip()]
    record("logs: no CancelledError", not any("CancelledError" in json.dumps(r) for r in runs), f"{len(runs)} runs")
    foreign = [r for r in runs if "other-project" in json.dumps(r)]
    record("logs: only this project's runs", runs != [] and foreign == [], f"{len(foreign)} of another project")


def step_interrupts_on_the_command_line(cli: Cli) -> None:
    code, out, err, _ = cli("run", "support", "--input", '{"question": "I need two approvals"}')
    record("a run stopped on two interrupts does not pass as a success", not (code == 0 and out.strip() == "null"),
           f"rc={code} stdout={out.strip()[:40]!r} stderr={err.strip()[:80]!r}")


def other_project(root: Path, env: dict[str, str], port: int) -> None:
    """Another project that writes to the same run log first."""
    (root / "prompts").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[tool.dotprompt.providers.fake]\nbase_url = "http://127.0.0.1:{port}/v1"\n')
    (root / "prompts" / "hello.prompt").write_text("---\nmodel: fake/m\n---\nsay hi from other-project\n")
    subprocess.run([sys.executable, "-m", "dotprompt.cli", "run", "hello"], cwd=root, env=env, capture_output=True, timeout=120)


# --- the browser (step 6) ----------------------------------------------------------------------

DRIVER = r'''
import json, sys, time
from playwright.sync_api import sync_playwright
url, out = sys.argv[1], {}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
        "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"])
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    def ready():
        page.wait_for_selector("#view[data-testid=ready]", timeout=30000)
    page.goto(url + "#/prompt/support"); ready()
    page.fill("#field-question", "Where is order 1042?")
    page.click("#run")
    counts, texts = set(), set()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        calls = page.locator(".turn.model li.tool-request").all_inner_texts()
        counts.add(len(calls)); texts.update(calls[:1])
        if page.locator("#final-output").count() or "on its way" in page.locator("#view").inner_text():
            break
        time.sleep(0.05)
    out["streamed tool call is one block"] = max(counts) == 1 and len(texts) > 1
    page.goto(url + "#/prompt/support"); ready()
    page.fill("#field-question", "I need two approvals for orders A1 and A2")
    page.click("#run")
    page.wait_for_selector("#interrupts .interrupt >> nth=1", timeout=60000)
    first, second = page.locator("#interrupts .interrupt").all()
    first.locator(".approve").click()
    time.sleep(0.5)
    out["one answer of two sends nothing"] = (page.locator("#interrupts .interrupt").count() == 2
                                              and "1 of 2" in page.locator("#interrupts").inner_text())
    second.locator(".restart").click()
    end = time.monotonic() + 60
    while time.monotonic() < end and "on its way" not in page.locator("#view").inner_text():
        time.sleep(0.1)
    out["both interrupts answered together"] = ("on its way" in page.locator("#view").inner_text()
                                                and page.locator("#view .error").count() == 0)
    page.goto(url + "#/prompt/summarize"); ready()
    page.fill("#field-text", "A long text about tea, mugs and the opening hours of the shop, summarized slowly.")
    page.click("#run")
    page.wait_for_selector("#cancel", timeout=30000)
    time.sleep(0.5)
    page.click("#cancel")
    page.wait_for_selector("#run-status:has-text('cancelled')", timeout=30000)
    out["cancel"] = page.locator("#final-output").count() == 0
    out["no page errors"] = errors == []
    browser.close()
print(json.dumps(out))
'''


def step_browser(cli: Cli, python: str, work: Path) -> None:
    Model.pause = 0.3  # slow enough to watch a call grow and to cancel a run
    ui = cli.popen("ui", "--port", "0")
    assert ui.stdout is not None
    line = ui.stdout.readline()
    url = re.search(r"http://\S+", line)
    if url is None:
        ui.kill()
        record("dotprompt ui starts", False, line.strip() or (ui.stderr.read() if ui.stderr else "")[:200])
        return
    driver = work / "drive_ui.py"
    driver.write_text(DRIVER)
    started = time.monotonic()
    for _ in range(2):  # twice: the second session is what left tasks pending at Ctrl-C
        done = subprocess.run([python, str(driver), url.group(0)], capture_output=True, text=True, timeout=300)
        try:
            checks = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            record("browser driver", False, done.stderr.strip()[-300:])
            break
    else:
        for name, ok in checks.items():
            record(f"ui: {name}", ok, f"{time.monotonic() - started:.1f}s for two sessions")
    ui.send_signal(signal.SIGINT)
    _, err = ui.communicate(timeout=30)
    record("ui: Ctrl-C stops it with nothing on stderr", err.strip() == "", err.strip()[:160])
    Model.pause = 0.05


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build the app in this (new) folder and keep it")
    parser.add_argument("--browser", metavar="PYTHON", help="also drive `dotprompt ui` in chromium with this interpreter")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="e2e-newcomer-"))
    app = work / "app"
    servers = serve(), serve(fail=True), serve(delay=0.05)
    ports = tuple(s.server_address[1] for s in servers)
    make_app(app, ports)  # type: ignore[arg-type]
    env = dict(os.environ, DOTPROMPT_LOG_PATH=str(work / "logs.db"), PYTHONUNBUFFERED="1")
    env.pop("CI", None)
    other_project(work / "other-project", env, ports[0])
    cli = Cli(app, env)
    started = time.monotonic()
    print(f"app in {app}; load {load()}", flush=True)
    step_check_render(cli)
    step_test(cli)
    step_eval(cli)
    step_batch(cli)
    step_interrupts_on_the_command_line(cli)
    if args.browser:
        step_browser(cli, args.browser, work)
    failed = [name for name, ok, _ in RESULTS if not ok]
    print(f"\n{len(RESULTS) - len(failed)} passed, {len(failed)} failed in {time.monotonic() - started:.1f}s"
          + (f": {', '.join(failed)}" if failed else ""))
    for server in servers:
        server.shutdown()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
