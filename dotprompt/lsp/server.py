"""The language server: pygls wiring of the folder's analysis to LSP requests and notifications.

The only module of the package that imports pygls and lsprotocol (the `[lsp]` extra). Diagnostics
are computed off the event loop (`analysis.py`) so that completion and hover answer while a file is
being checked; positions are converted to the encoding the client negotiated (UTF-16 by default).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ..lint.check import Diagnostic
from .analysis import Analyser, Job, call_with_limit
from .completion import Item, complete
from .definition import Location, definition, references
from .edits import TextEdit, code_actions, rename
from .hover import hover
from .preview import preview
from .project import Project, file_kind
from .ranges import span_of

__all__ = ["DotpromptServer", "make_server"]

SOURCE = "dotprompt"
PREVIEW_COMMAND = "dotprompt.renderPreview"
_KINDS = {"key": types.CompletionItemKind.Property, "value": types.CompletionItemKind.Value,
          "variable": types.CompletionItemKind.Variable, "field": types.CompletionItemKind.Field,
          "partial": types.CompletionItemKind.File, "helper": types.CompletionItemKind.Function,
          "filter": types.CompletionItemKind.Function, "role": types.CompletionItemKind.EnumMember,
          "tool": types.CompletionItemKind.Function, "model": types.CompletionItemKind.Module}
DEFAULT_TIMEOUT = 5.0  # seconds one file's analysis may take before it is stopped and reported
DEFAULT_DEBOUNCE = 0.015  # seconds an edit close behind another of its file waits for the next one


class DotpromptServer(LanguageServer):
    """A LanguageServer holding the project it serves and the analysis worker."""

    def __init__(self, version: str) -> None:
        super().__init__("dotprompt", version)
        self.project: Project | None = None
        self.analyser: Analyser | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    # -- the project and its analysis --------------------------------------------------------

    def start_project(self, root: Path, options: dict[str, Any]) -> None:
        self.project = Project.open(root)
        self.loop = asyncio.get_running_loop()
        timeout = _number(options.get("analysisTimeout"), DEFAULT_TIMEOUT)
        debounce = _number(options.get("debounceMs"), DEFAULT_DEBOUNCE * 1000) / 1000
        self.analyser = Analyser(self._analyse, self._from_worker(self._publish),
                                 self._from_worker(self._report_timeout), timeout=timeout, debounce=debounce,
                                 on_stop=self.project.forget)

    def _from_worker(self, callback: Any) -> Any:
        """`callback`, run on the event loop when the worker calls it (pygls writes from the loop only)."""
        def call(*args: Any) -> None:
            if self.loop is not None and not self.loop.is_closed():
                self.loop.call_soon_threadsafe(callback, *args)
        return call

    def check(self, uri: str) -> None:
        """Queue an analysis of `uri`: the editor's text when the file is open, else the file on disk."""
        if self.analyser is None or file_kind(to_fs_path(uri) or "") is None:
            return
        doc = self.workspace.text_documents.get(uri)
        text = doc.source if doc is not None else None
        self.analyser.submit(Job(uri, doc.version if doc is not None else None, text))

    def _analyse(self, job: Job) -> list[Diagnostic]:
        assert self.project is not None
        return self.project.diagnostics(to_fs_path(job.key) or job.key, job.text)

    def _publish(self, job: Job, found: list[Diagnostic]) -> None:
        doc = self.workspace.text_documents.get(job.key)
        if doc is not None and job.version is not None and doc.version != job.version:
            return  # stale: a newer text is queued
        lines = doc.lines if doc is not None else _disk_lines(job.key)
        diagnostics = [self.lsp_diagnostic(d, lines) for d in found]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(job.key, diagnostics, job.version))

    def _report_timeout(self, job: Job, seconds: float) -> None:
        assert self.analyser is not None
        message = (f"analysis stopped after {seconds:.1f} s (the limit is {self.analyser.timeout:g} s): the file is "
                   "too large or too complex to check as you type; run `dotprompt check` on it, or raise "
                   "`analysisTimeout` in the server's settings")
        diagnostic = types.Diagnostic(types.Range(types.Position(0, 0), types.Position(0, 0)), message,
                                      severity=types.DiagnosticSeverity.Warning, source=SOURCE)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(job.key, [diagnostic], job.version))

    def lsp_diagnostic(self, found: Diagnostic, lines: list[str]) -> types.Diagnostic:
        span = span_of(found, lines)
        codec = self.workspace.position_codec
        start = codec.position_to_client_units(lines, types.Position(span.line, span.start))
        end = codec.position_to_client_units(lines, types.Position(span.line, span.end))
        severity = types.DiagnosticSeverity.Error if found.level == "error" else types.DiagnosticSeverity.Warning
        return types.Diagnostic(types.Range(start, end), found.message, severity=severity, code=found.code, source=SOURCE)

    def files_changed(self, paths: list[str]) -> None:
        """Files changed on disk (saved, or changed by another program): the library is built again and
        the changed files and their dependants are checked again."""
        if self.project is None:
            return
        self.project.forget()
        again: dict[str, None] = {}
        for path in paths:
            again[path] = None
            for dependant in self.project.dependants(path):
                again[dependant] = None
        for uri in self.workspace.text_documents:
            path = to_fs_path(uri) or ""
            if path in again or _uri(path) in again:
                again.pop(path, None)
                self.check(uri)
        for path in again:
            self.check(_uri(path))


def _file_lines(ls: DotpromptServer, path: str) -> list[str]:
    doc = ls.workspace.text_documents.get(_uri(path))
    return list(doc.lines) if doc is not None else _disk_lines(_uri(path))


def _range(ls: DotpromptServer, lines: list[str], line: int, start: int, end: int,
           end_line: int | None = None) -> types.Range:
    codec = ls.workspace.position_codec
    return types.Range(codec.position_to_client_units(lines, types.Position(line, start)),
                       codec.position_to_client_units(lines, types.Position(line if end_line is None else end_line, end)))


def _location(ls: DotpromptServer, found: Location) -> types.Location:
    lines = _file_lines(ls, found.path)
    return types.Location(_uri(found.path), _range(ls, lines, found.line, found.start, found.end))


def _text_edits(ls: DotpromptServer, path: str, edits: list[TextEdit]) -> list[types.TextEdit]:
    lines = _file_lines(ls, path)
    return [types.TextEdit(_range(ls, lines, e.where.line, e.where.start, e.where.end, e.end_line), e.new_text)
            for e in edits]


def _workspace_edit(ls: DotpromptServer, path: str, edits: list[TextEdit],
                    renamed: tuple[str, str] | None = None) -> types.WorkspaceEdit:
    by_file: dict[str, list[TextEdit]] = {}
    for edit in edits:
        by_file.setdefault(edit.where.path or path, []).append(edit)
    changes: list[Any] = [types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(_uri(file), None),
                                                 _text_edits(ls, file, file_edits))
                          for file, file_edits in by_file.items()]
    if renamed is not None:
        changes.append(types.RenameFile(_uri(renamed[0]), _uri(renamed[1])))
    return types.WorkspaceEdit(document_changes=changes)


def _completion_item(item: Item) -> types.CompletionItem:
    documentation = types.MarkupContent(types.MarkupKind.PlainText, item.documentation) if item.documentation else None
    return types.CompletionItem(item.label, kind=_KINDS[item.kind], detail=item.detail or None,
                                documentation=documentation)


def _uri(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()


def _disk_lines(uri: str) -> list[str]:
    try:
        return Path(to_fs_path(uri) or "").read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except OSError:
        return []


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else default


def make_server(version: str) -> DotpromptServer:
    server = DotpromptServer(version)
    _register(server)
    return server


def _register(server: DotpromptServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: DotpromptServer, params: types.InitializeParams) -> None:
        root = ls.workspace.root_path or os.getcwd()
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.start_project(Path(root), options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DotpromptServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DotpromptServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DotpromptServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.files_changed([to_fs_path(params.text_document.uri) or ""])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DotpromptServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(params.text_document.uri, []))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: DotpromptServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed([to_fs_path(change.uri) or "" for change in params.changes])

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[".", ">", "|", "'", '"', " ", ":", "-"]))
    def completion(ls: DotpromptServer, params: types.CompletionParams) -> types.CompletionList:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        at = doc.position_from_client_units(params.position)
        items = complete(ls.project, doc.path, doc.source, at.line, at.character)
        return types.CompletionList(is_incomplete=False, items=[_completion_item(item) for item in items])

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: DotpromptServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        at = doc.position_from_client_units(params.position)
        found = hover(ls.project, doc.path, doc.source, at.line, at.character)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, found)) if found else None

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: DotpromptServer, params: types.DefinitionParams) -> list[types.Location]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        at = doc.position_from_client_units(params.position)
        if ls.project is None:
            return []
        return [_location(ls, found) for found in definition(ls.project, doc.path, doc.source, at.line, at.character)]

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def on_references(ls: DotpromptServer, params: types.ReferenceParams) -> list[types.Location]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        at = doc.position_from_client_units(params.position)
        if ls.project is None:
            return []
        return [_location(ls, found) for found in references(ls.project, doc.path, doc.source, at.line, at.character)]

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def on_rename(ls: DotpromptServer, params: types.RenameParams) -> types.WorkspaceEdit:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        at = doc.position_from_client_units(params.position)
        if ls.project is None:
            raise ValueError("the server has no workspace yet (initialize first)")
        found = rename(ls.project, doc.path, doc.source, at.line, at.character, params.new_name)
        if found.error is not None:
            raise ValueError(found.error)  # pygls answers with a JSON-RPC error carrying the message
        return _workspace_edit(ls, doc.path, found.edits, found.renamed_file)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]))
    def on_code_action(ls: DotpromptServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        wanted = []
        for diagnostic in params.context.diagnostics:
            span = doc.range_from_client_units(diagnostic.range)
            wanted.append((diagnostic.message, span.start.line, span.start.character, span.end.character))
        out = []
        for action in code_actions(doc.path, doc.source, wanted):
            fixed = [d for d in params.context.diagnostics if d.message == action.fixes]
            kind = types.CodeActionKind.QuickFix if action.fixes else types.CodeActionKind.RefactorRewrite
            out.append(types.CodeAction(action.title, kind=kind, diagnostics=fixed or None,
                                        edit=_workspace_edit(ls, doc.path, list(action.edits))))
        return out

    @server.command(PREVIEW_COMMAND)
    async def render_preview(ls: DotpromptServer, uri: str) -> dict[str, Any]:
        """The messages the prompt at `uri` would send, for its test cases' inputs or its defaults."""
        if ls.project is None:
            return {"error": "the server has no workspace yet (initialize first)"}
        doc = ls.workspace.get_text_document(uri)
        project, path, text = ls.project, doc.path, doc.source
        limit = ls.analyser.timeout if ls.analyser is not None else DEFAULT_TIMEOUT
        try:
            return await asyncio.to_thread(call_with_limit, lambda: preview(project, path, text), limit)
        except TimeoutError:
            project.forget()  # stopped half-way through the library's caches
            return {"prompt": project.info_for(path).label, "renders": [],
                    "error": f"the preview was stopped after {limit:g} s (`analysisTimeout`): the file is too large "
                             "or complex to render as you type; run `dotprompt render` on it"}

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DotpromptServer, params: Any) -> None:
        if ls.analyser is not None:
            ls.analyser.close()
