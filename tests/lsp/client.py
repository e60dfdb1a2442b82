"""A real LSP client (pytest-lsp's) driving `python -m dotprompt lsp` over stdio, in a child process
with a memory limit; every wait has a time limit, so a hung server fails the test instead of CI."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import ROOT

SERVER = [sys.executable, "-m", "dotprompt", "lsp"]
MEMORY_MB = 1024
WAIT = 30.0  # seconds any one answer may take on a loaded machine


def _limit() -> None:
    cap = MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


async def start(root: Path, *, options: dict[str, Any] | None = None,
                encodings: Sequence[str] | None = None) -> LanguageClient:
    client = make_test_lsp_client()
    await client.start_io(*SERVER, cwd=str(root), preexec_fn=_limit,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    capabilities = client_capabilities("visual-studio-code")
    if encodings is not None:
        capabilities.general = types.GeneralClientCapabilities(position_encodings=list(encodings))
    await asyncio.wait_for(client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=root.as_uri(), initialization_options=options)), WAIT)
    return client


@contextlib.asynccontextmanager
async def serving(root: Path, **kwargs: Any) -> AsyncIterator[LanguageClient]:
    client = await start(root, **kwargs)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), WAIT)
        await client.stop()


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    language = "yaml" if path.name.endswith(".yaml") else "dotprompt"
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri, language, version, path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def change_file(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(text)]))


async def diagnostics(client: LanguageClient, uri: str, *, wait: float = WAIT) -> list[types.Diagnostic]:
    """The next diagnostics published for `uri` (since it was last opened or changed through these helpers)."""
    deadline = time.monotonic() + wait
    while uri not in client.diagnostics:
        if client.error is not None:
            raise client.error
        assert time.monotonic() < deadline, f"no diagnostics for {uri} within {wait} s"
        await asyncio.sleep(0.01)
    return list(client.diagnostics.pop(uri))


def at(text: str, needle: str) -> types.Position:
    """The position (UTF-16, the default encoding) of the first `needle` in `text`."""
    offset = text.index(needle)
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    prefix = text.splitlines()[line][:column]
    return types.Position(line, len(prefix.encode("utf-16-le")) // 2)


async def until(client: LanguageClient, uri: str, wanted: Any, *, wait: float = WAIT) -> list[types.Diagnostic]:
    """Wait until the diagnostics last published for `uri` satisfy `wanted(diagnostics)`; returns them."""
    deadline = time.monotonic() + wait
    while True:
        found = client.diagnostics.get(uri)
        if found is not None and wanted(list(found)):
            return list(found)
        if client.error is not None:
            raise client.error
        assert time.monotonic() < deadline, f"diagnostics for {uri} never settled; last: {found}"
        await asyncio.sleep(0.01)
