"""`dotprompt ui` load times in Debian's chromium: the prompt list of 500 prompts, and a run of 1,000 chunks.

The folder is bench_check.py's 500 generated prompt files (five namespaces, one in ten a variant,
a shared partial) plus `stream.prompt`, whose model `openai/bench-1000` is the loopback server of
_server.py streaming 1,000 text chunks at once (OPENAI_BASE_URL points the real provider at it).
`dotprompt ui --port 0` runs as a subprocess; Playwright drives /usr/bin/chromium (never a
downloaded browser) with a fresh profile. Figures, each best and median of --repeat runs:

- prompt list: a fresh load of `#/` (page, scripts, /api/prompts) until the tree holds every
  prompt, in ms since navigation start (the check diagnostics arrive after and are timed apart);
- live run: from the click on Run to the final output on the page, every one of the 1,000 chunks
  drawn on the way (their text is checked);
- logged run: a fresh load of that run's page from the run log (`#/runs/ID`) until its turns show.

Beside them, the server alone: GET /api/prompts and a whole 1,000-chunk event stream over httpx.
Needs the project's venv with the `ui` and `test` extras (`.venv/bin/python bench/bench_ui.py`).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import Result, arg_parser, report_all
from _server import spawn
from bench_check import generate

TARGET_MS = 300.0
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STREAM_PROMPT = "---\nmodel: openai/bench-1000\n---\nStream a long answer.\n"


def start_ui(root: Path, port: int) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOTPROMPT_")}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="test", XDG_DATA_HOME=str(root / "data"))
    child = subprocess.Popen([sys.executable, "-m", "dotprompt.cli", "ui", "--port", "0", "--dir", str(root / "prompts")],
                             cwd=root, env=env, stdout=subprocess.PIPE, text=True)
    line = child.stdout.readline() if child.stdout else ""
    found = re.search(r"http://\S+", line)
    if not found:
        child.kill()
        raise SystemExit(f"dotprompt ui did not start: {line!r}")
    return child, found[0]


def ms(samples: list[float]) -> str:
    return f"best {min(samples):.0f} ms, median {statistics.median(samples):.0f} ms"


def server_figures(url: str, repeat: int) -> tuple[list[float], list[float], int]:
    client = httpx.Client(base_url=url, timeout=60)
    token = client.get("/api/session").json()["token"]
    listing = []
    for _ in range(repeat):
        started = time.perf_counter()
        count = len(client.get("/api/prompts").json()["prompts"])
        listing.append((time.perf_counter() - started) * 1000)
    streams = []
    for _ in range(repeat):
        started = time.perf_counter()
        run = client.post("/api/live", json={"name": "stream"}, headers={"x-csrf-token": token}).json()["id"]
        chunks = client.get(f"/api/live/{run}/events").text.count("event: chunk")
        streams.append((time.perf_counter() - started) * 1000)
        assert chunks == 1000, chunks
    return listing, streams, count


def browser_figures(url: str, repeat: int, prompts: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    figures: dict[str, list[float]] = {"list": [], "check": [], "run": [], "logged": []}
    with tempfile.TemporaryDirectory(prefix="bench-ui-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS)
        page = context.new_page()
        names = prompts_in_tree(page, url)
        for _ in range(repeat):
            page.goto("about:blank")
            page.goto(url + "#/")
            figures["list"].append(page.wait_for_function(
                f"() => document.querySelectorAll('li.prompt').length >= {names} && performance.now()").json_value())
            figures["check"].append(page.wait_for_function(
                "() => document.getElementById('check-summary').textContent.startsWith('check:') && performance.now()"
            ).json_value())
        for _ in range(repeat):
            page.goto(url + "#/prompt/stream")
            page.wait_for_selector("#view[data-testid=ready]")
            page.evaluate("() => { window.clicked = performance.now(); document.getElementById('run').click(); }")
            figures["run"].append(page.wait_for_function(
                "() => document.getElementById('final-output') && performance.now() - window.clicked").json_value())
            drawn = page.locator("[data-role=text]").first.text_content()
            assert drawn == page.locator("#final-output").text_content() == "tok " * 1000, "not every chunk was drawn"
        run_id = httpx.get(url + "api/runs", params={"prompt": "stream", "limit": 1}).json()["runs"][0]["id"]
        for _ in range(repeat):
            page.goto("about:blank")
            page.goto(f"{url}#/runs/{run_id}")
            figures["logged"].append(page.wait_for_function(
                "() => document.querySelector('#run-turns .message.model') && performance.now()").json_value())
        context.close()
    return figures


def prompts_in_tree(page, url: str) -> int:
    """Distinct prompt names (a variant is listed under its prompt): what a drawn tree holds."""
    data = httpx.get(url + "api/prompts").json()
    return len({p["name"] for p in data["prompts"]})


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp, spawn() as port:
        root = Path(tmp)
        (root / "prompts").mkdir()
        generate(root / "prompts", args.prompts)
        (root / "prompts" / "stream.prompt").write_text(STREAM_PROMPT)
        child, url = start_ui(root, port)
        try:
            listing, streams, count = server_figures(url, args.repeat)
            print(f"server: GET /api/prompts ({count} files) {ms(listing)}; a 1,000-chunk event stream {ms(streams)}")
            print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
                  + f" on {os.cpu_count()} cores: the figures scale with it")
            if not Path(CHROMIUM).is_file():
                raise SystemExit(f"no browser at {CHROMIUM}: apt-get install chromium")
            figures = browser_figures(url, args.repeat, count)
        finally:
            child.terminate()
            child.wait(10)
    results = [
        Result(f"ui: prompt list ({args.prompts} prompts)", ms(figures["list"]), f"< {TARGET_MS:.0f} ms",
               min(figures["list"]) < TARGET_MS),
        Result("ui: live run page (1,000 chunks)", ms(figures["run"]), f"< {TARGET_MS:.0f} ms",
               min(figures["run"]) < TARGET_MS),
        Result("ui: logged run page (1,000 chunks)", ms(figures["logged"]), f"< {TARGET_MS:.0f} ms",
               min(figures["logged"]) < TARGET_MS),
        Result(f"ui: check diagnostics shown ({args.prompts} prompts)", ms(figures["check"]), "none", True, informational=True),
    ]
    report_all(results, args.json)


if __name__ == "__main__":
    main()
