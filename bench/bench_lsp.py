"""`dotprompt lsp` driven over stdio by a real LSP client (pygls's), in a folder of 500 prompts.

The folder is bench_check.py's (five namespaces, variants, Picoschema input and output, a shared
partial), plus one 200-line prompt that is edited. Measured, each from the client's side:

- initial index: `initialized` sent -> the answer to the first request that reads the whole folder
  (the completion of partial names after `{% include "`, which lists the folder's files), with the
  file open; the process's start (until `initialize` is answered: Python, pygls) is shown beside it;
- diagnostics: a change to the 200-line prompt sent -> its `publishDiagnostics` received (the
  server's debounce included), p50 and p95 of `--edits` changes, each awaited before the next;
- completion (input variables after `{{ `) and hover (a variable), p50 and p95 of `--requests`;
- resident memory of the server process at the end (VmRSS) and its peak (VmHWM).

Run it with the project's venv (the [lsp] extra): `.venv/bin/python bench/bench_lsp.py`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import Result, arg_parser, report_all
from bench_check import generate
from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGETS = {"index": 1.0, "diagnostics": 0.050, "completion": 0.020, "hover": 0.020, "rss_mb": 150}
BODY_LINE = "Line {n}: consider {{{{ text }}}} in {{{{ language }}}} with tone {{{{ tone }}}}."


def long_prompt() -> str:
    """A 200-line prompt: frontmatter, then template lines using its variables."""
    head = ("---\nmodel: openai/gpt-4o-mini\ninput:\n  schema:\n    text: string, the text\n"
            "    language?: string\n    tone?(enum): [formal, friendly]\n    customer(object):\n"
            "      name: string\n      email: string\n---\n")
    lines = [BODY_LINE.format(n=n) for n in range(188)]
    return head + "\n".join(lines) + '\n{% include "house_rules" %}\n'


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


async def measure(root: Path, edits: int, requests: int) -> dict[str, float]:
    client = LanguageClient("bench", "1")
    published: dict[str, asyncio.Event] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.setdefault(params.uri, asyncio.Event()).set()

    launched = time.perf_counter()
    await client.start_io(sys.executable, "-m", "dotprompt", "lsp", cwd=str(root))
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=root.as_uri()))
    started = time.perf_counter()
    client.initialized(types.InitializedParams())
    path = root / "prompts" / "long.prompt"
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    doc = types.TextDocumentIdentifier(uri)
    published[uri] = asyncio.Event()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "dotprompt", 1, text)))
    include = text.split("\n").index('{% include "house_rules" %}')
    first = await client.text_document_completion_async(types.CompletionParams(doc, types.Position(include, 13)))
    index = time.perf_counter() - started
    assert first is not None and "house_rules" in [i.label for i in first.items], first
    await asyncio.wait_for(published[uri].wait(), 60)

    diagnostics = []
    for version in range(2, edits + 2):
        published[uri] = asyncio.Event()
        changed = text.replace("Line 100:", f"Line 100 (edit {version}):")
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(changed)]))
        await asyncio.wait_for(published[uri].wait(), 60)
        diagnostics.append(time.perf_counter() - sent)

    body = text.split("\n").index(BODY_LINE.format(n=50))
    completion, hover = [], []
    for _ in range(requests):
        sent = time.perf_counter()
        items = await client.text_document_completion_async(types.CompletionParams(doc, types.Position(body, 23)))
        completion.append(time.perf_counter() - sent)
        assert items is not None and "text" in [i.label for i in items.items]
        sent = time.perf_counter()
        found = await client.text_document_hover_async(types.HoverParams(doc, types.Position(body, 25)))
        hover.append(time.perf_counter() - sent)
        assert found is not None
    rss, peak = rss_mb(client._server.pid)  # type: ignore[union-attr]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"index": index, "start": started - launched, "diagnostics_p50": statistics.median(diagnostics),
            "diagnostics": percentile(diagnostics, 0.95), "completion_p50": statistics.median(completion),
            "completion": percentile(completion, 0.95), "hover_p50": statistics.median(hover),
            "hover": percentile(hover, 0.95), "rss_mb": rss, "peak_mb": peak}


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="prompt files in the folder")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "prompts").mkdir()
        generate(root / "prompts", args.count)
        (root / "prompts" / "long.prompt").write_text(long_prompt(), encoding="utf-8")
        found = asyncio.run(measure(root, args.edits, args.requests))
    ms = {key: value * 1000 for key, value in found.items() if not key.endswith("mb")}
    report_all([
        Result("lsp initial index (500 prompts)", f"{found['index']:.2f} s (process start {found['start']:.2f} s)",
               "<= 1 s",
               found["index"] <= TARGETS["index"]),
        Result("lsp diagnostics after a change (200-line prompt)",
               f"p95 {ms['diagnostics']:.1f} ms, p50 {ms['diagnostics_p50']:.1f} ms", "p95 <= 50 ms",
               found["diagnostics"] <= TARGETS["diagnostics"]),
        Result("lsp completion", f"p95 {ms['completion']:.1f} ms, p50 {ms['completion_p50']:.1f} ms", "p95 <= 20 ms",
               found["completion"] <= TARGETS["completion"]),
        Result("lsp hover", f"p95 {ms['hover']:.1f} ms, p50 {ms['hover_p50']:.1f} ms", "p95 <= 20 ms",
               found["hover"] <= TARGETS["hover"]),
        Result("lsp resident memory", f"{found['rss_mb']:.0f} MB (peak {found['peak_mb']:.0f} MB)", "<= 150 MB",
               found["rss_mb"] <= TARGETS["rss_mb"]),
    ], args.json)


if __name__ == "__main__":
    main()
