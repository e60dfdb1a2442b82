"""The workbench as an ASGI app: the page, its static modules, and the JSON API under /api.

Routes are thin: each reads its parameters, calls folder.py / rendering.py / live.py / runs.py (in
a worker thread when it reads files or the log), and answers with SafeJSON. A DotpromptError is the
page's to show (400, its message redacted); anything else is a 500 that names the exception's type
only, so no stack, path or value leaks through an error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from .. import __version__
from ..errors import DotpromptError, UsageError
from ..prompts.library import PromptLibrary
from ..providers.registry import list_models
from . import rendering
from . import runs as runlog
from .folder import Folder
from .guard import Guard, new_token
from .limits import UI_CHANGES_POLL_SECONDS as CHANGES_POLL_SECONDS
from .limits import UI_MAX_BODY as MAX_BODY
from .live import LiveRuns, sse
from .pdfpage import page_image
from .safejson import SafeJSON

__all__ = [
    "CHANGES_POLL_SECONDS",
    "MAX_BODY",
    "STATIC_TYPES",
    "Handler",
    "Workbench",
    "api",
    "body",
    "create_app",
    "log",
    "read_capped",
    "static_files",
    "workbench_of",
]

log = logging.getLogger("dotprompt.ui")
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


@dataclass
class Workbench:
    library: PromptLibrary
    log_path: Path | None
    token: str = field(default_factory=new_token)

    def __post_init__(self) -> None:
        self.folder = Folder(self.library)
        self.live = LiveRuns(self.library)
        self.stopping = asyncio.Event()  # set when the server stops: every open stream ends

    def stop(self) -> None:
        """End every stream and cancel every run, so the server stops at once (Ctrl-C) and quietly."""
        self.stopping.set()
        self.live.stop()


def workbench_of(app: ASGIApp) -> Workbench:
    """The Workbench behind an app `create_app` made."""
    inner = app.app if isinstance(app, Guard) else app
    bench = getattr(getattr(inner, "state", None), "workbench", None)
    if not isinstance(bench, Workbench):
        raise TypeError("not an app that create_app made")
    return bench


def static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files by name, read once: the only files the server sends that are not the API's."""
    root = resources.files(__package__) / "static"
    return {entry.name: (entry.read_bytes(), STATIC_TYPES[Path(entry.name).suffix])
            for entry in root.iterdir() if Path(entry.name).suffix in STATIC_TYPES}


Handler = Callable[[Request], Awaitable[Any]]


def api(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            result = await handler(request)
        except DotpromptError as exc:
            return SafeJSON({"error": {"type": type(exc).__name__, "message": str(exc)}}, status_code=400)
        except HTTPException as exc:  # a limit of the workbench's own: too large, too many runs
            kind = HTTPStatus(exc.status_code).phrase.replace(" ", "")
            return SafeJSON({"error": {"type": kind, "message": exc.detail}}, status_code=exc.status_code)
        except Exception as exc:
            log.exception("workbench request failed")
            return SafeJSON({"error": {"type": type(exc).__name__, "message": "the server failed; see its log"}},
                            status_code=500)
        return result if isinstance(result, Response) else SafeJSON(result)

    return endpoint


async def body(request: Request) -> dict[str, Any]:
    try:
        value = json.loads(await read_capped(request) or b"{}")
    except ValueError as exc:
        raise UsageError(f"the request is not JSON: {exc}") from None
    except RecursionError:
        raise UsageError("the request is nested too deeply") from None
    if not isinstance(value, dict):
        raise UsageError("the request is a JSON object")
    return value


async def read_capped(request: Request, cap: int = MAX_BODY) -> bytes:
    """The body, refused (413) before it is read when it says it is over `cap`, and as soon as it passes
    `cap` when it does not say (chunked): a huge POST never sits in the server's memory."""
    declared = request.headers.get("content-length")
    too_large = HTTPException(413, f"the request is over {cap:,} bytes, the most the workbench reads")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise too_large
    pieces, size = [], 0
    async for piece in request.stream():
        size += len(piece)
        if size > cap:
            raise too_large
        pieces.append(piece)
    return b"".join(pieces)


def create_app(library: PromptLibrary, *, log_path: Path | None, hosts: frozenset[str] | set[str],
               token: str | None = None) -> ASGIApp:
    """The app for `library`'s folder; only requests whose Host is one of `hosts` are answered."""
    if library.directory is None:
        raise UsageError("the workbench needs a prompt folder")
    bench = Workbench(library, log_path, **({"token": token} if token else {}))
    files = static_files()

    async def page(request: Request) -> Response:
        content, kind = files["index.html"]
        return Response(content, media_type=kind)

    async def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return SafeJSON({"error": {"type": "NotFound", "message": "no such file"}}, status_code=404)
        return Response(found[0], media_type=found[1])

    async def session(request: Request) -> Any:
        return {"token": bench.token, "folder": bench.folder.root.name, "version": __version__,
                "log": bench.log_path.name if bench.log_path else None, "models": list_models()}

    async def prompts(request: Request) -> Any:
        return await run_in_threadpool(bench.folder.tree)

    async def check(request: Request) -> Any:
        return {"diagnostics": await run_in_threadpool(bench.folder.diagnostics)}

    async def prompt(request: Request) -> Any:
        name, variant = request.query_params.get("name", ""), request.query_params.get("variant") or None
        return await run_in_threadpool(bench.folder.prompt, name, variant)

    async def partial(request: Request) -> Any:
        return await run_in_threadpool(bench.folder.partial, request.query_params.get("name", ""))

    async def render(request: Request) -> Any:
        data = await body(request)
        return await run_in_threadpool(rendering.render, library, str(data.get("name", "")), data.get("variant") or None,
                                       data.get("input"), data.get("context"))

    async def start(request: Request) -> Any:
        data = await body(request)
        live = bench.live.start(str(data.get("name", "")), data.get("variant") or None, data.get("input"),
                                data.get("context"), str(data.get("model") or "") or None)
        return {"id": live.id}

    async def cancel(request: Request) -> Any:
        live = bench.live.get(request.path_params["id"])
        if live is None:
            return SafeJSON({"error": {"type": "NotFound", "message": "no such live run"}}, status_code=404)
        return {"id": live.id, "cancelled": live.cancel("cancelled from the page")}

    async def resume(request: Request) -> Any:
        data = await body(request)
        respond, restart = data.get("respond") or [], data.get("restart") or []
        if not isinstance(respond, list) or not isinstance(restart, list):
            raise UsageError("respond and restart are lists")
        live = bench.live.resume(request.path_params["id"], respond, restart)
        return {"id": live.id}

    async def events(request: Request) -> Response:
        live = bench.live.get(request.path_params["id"])
        if live is None:
            return SafeJSON({"error": {"type": "NotFound", "message": "no such live run"}}, status_code=404)
        start_at = _int(request.headers.get("last-event-id"), -1) + 1

        async def stream():
            with live.followed(bench.live.grace):
                async for batch in live.follow(start_at):
                    yield sse(batch, live.secrets(batch))
            yield 'event: end\ndata: {"type": "end"}\n\n'

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})

    async def pdf_page(request: Request) -> Response:
        live = bench.live.get(request.path_params["id"])
        if live is None:
            return SafeJSON({"error": {"type": "NotFound", "message": "no such live run"}}, status_code=404)
        png = await run_in_threadpool(page_image, live, request.query_params.get("variable", ""),
                                      _int(request.query_params.get("page"), 1))
        return Response(png, media_type="image/png")

    async def changes(request: Request) -> Response:
        async def stream():
            before = await run_in_threadpool(bench.folder.signature)
            yield "event: ready\ndata: {}\n\n"
            while not await _stopped(bench.stopping, CHANGES_POLL_SECONDS):
                now = await run_in_threadpool(bench.folder.signature)
                yield "event: changed\ndata: {}\n\n" if now != before else ": keep-alive\n\n"
                before = now

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def run_list(request: Request) -> Any:
        return await run_in_threadpool(runlog.runs, bench.log_path, dict(request.query_params))

    async def run_one(request: Request) -> Any:
        found = await run_in_threadpool(runlog.run, bench.log_path, _int(request.path_params["id"], -1))
        if found is None:
            return SafeJSON({"error": {"type": "NotFound", "message": "no such run in the log"}}, status_code=404)
        return found

    async def evals(request: Request) -> Any:
        return {"reports": await run_in_threadpool(bench.folder.reports)}

    async def report(request: Request) -> Any:
        return await run_in_threadpool(bench.folder.report, request.query_params.get("path", ""))

    routes = [
        Route("/", page), Route("/static/{name}", static),
        Route("/api/session", api(session)), Route("/api/prompts", api(prompts)), Route("/api/check", api(check)),
        Route("/api/prompt", api(prompt)), Route("/api/partial", api(partial)),
        Route("/api/render", api(render), methods=["POST"]), Route("/api/live", api(start), methods=["POST"]),
        Route("/api/live/{id}/events", events), Route("/api/live/{id}/resume", api(resume), methods=["POST"]),
        Route("/api/live/{id}/cancel", api(cancel), methods=["POST"]),
        Route("/api/live/{id}/pdf", api(pdf_page)),
        Route("/api/changes", changes), Route("/api/runs", api(run_list)), Route("/api/runs/{id}", api(run_one)),
        Route("/api/evals", api(evals)), Route("/api/evals/report", api(report)),
    ]
    app = Starlette(routes=routes)
    app.state.workbench = bench
    return Guard(app, hosts=hosts, token=bench.token)


async def _stopped(stopping: asyncio.Event, seconds: float) -> bool:
    """Wait `seconds`; True at once if the server stops meanwhile."""
    try:
        await asyncio.wait_for(stopping.wait(), seconds)
    except TimeoutError:
        return False
    return True


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
