"""Recordings: every model call made while testing, keyed by a hash of the exact request.

One JSON-lines file per prompt (`prompts/__recordings__/extract.jsonl`), one call per line, sorted
by case and call so a diff shows what changed. A case is known by its test file and its name: a
line without `file` belongs to the prompt's own test file (`extract.test.yaml`), any other test file
is named in `file`, so two test files with a case of the same name never touch each other's lines.
A recordings file or folder that is a symbolic link out of its test folder is refused.

Only what a real model returned is ever written (`"source": "recorded"`); a reply written by hand
must say `"source": "fixture"`. Requests and replies are our own message model, never HTTP: no
header, and so no key, can reach a file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from .._util import finite
from .._util.redact import redacted_json
from ..document.files import is_inside, read_snapshot
from ..errors import DotpromptError, PromptFileError, RecordingMissingError
from ..identity import PromptIdentity
from ..providers.base import Model, ModelInfo, OnChunk
from ..types import GenerateRequest, ModelChunk, ModelResponse, Usage

__all__ = ["CallStats", "CorruptLine", "Entry", "Mode", "RecordingModel", "RecordingStore", "request_key"]

Mode = Literal["record", "replay", "auto", "live"]
_CASE_FIELD = re.compile(r'"case"\s*:\s*"((?:[^"\\]|\\.)*)"')


def request_key(model: str, request: GenerateRequest) -> str:
    canonical = json.dumps({"model": model, "request": request.to_dict()}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


# ModelInfo fields that were never read and have been removed; recordings made before still carry them.
_RETIRED_INFO_FIELDS = ("system_role", "multiturn", "streaming")


def _model_info(recorded: dict[str, Any]) -> ModelInfo:
    return ModelInfo(**{k: v for k, v in recorded.items() if k not in _RETIRED_INFO_FIELDS})


@dataclass
class Entry:
    key: str
    case: str
    call: int
    model: str
    info: dict[str, Any]
    request: dict[str, Any]
    response: dict[str, Any]
    latency_ms: float
    chunks: list[dict[str, Any]] | None = None
    source: str = "recorded"
    file: str | None = None  # the test file, unless it is the prompt's own (NAME.test.yaml)
    prompt: dict[str, Any] | None = None  # the identity of the prompt recorded (name, variant, hash, partials)

    @property
    def identity(self) -> tuple[str | None, str, str]:
        return self.file, self.case, self.key

    def line(self) -> str:
        data = dataclasses.asdict(self)
        for optional in ("file", "prompt"):
            if data[optional] is None:
                del data[optional]  # lines as they always were
        # Recordings are committed: a key a model or prompt happened to carry must not reach one. Masked
        # before encoding: JSON writes a key holding `"` or `\` escaped, and it would match no more.
        return redacted_json(data, sort_keys=True)


_TEXT_FIELDS = ("key", "case", "model", "source")


def _check_shape(entry: Entry) -> None:
    """A ValueError naming the first field of the wrong shape: found at load, it fails the case the
    line belongs to, instead of a traceback when the case replays (a line edited by hand, a newer version)."""
    for name in _TEXT_FIELDS:
        if not isinstance(getattr(entry, name), str):
            raise ValueError(f"`{name}` must be a string")
    if not isinstance(entry.call, int) or isinstance(entry.call, bool):
        raise ValueError("`call` must be a whole number")
    if not isinstance(entry.latency_ms, int | float) or isinstance(entry.latency_ms, bool):
        raise ValueError("`latency_ms` must be a number")
    for name in ("info", "request", "response"):
        if not isinstance(getattr(entry, name), dict):
            raise ValueError(f"`{name}` must be an object")
    if entry.chunks is not None and not (isinstance(entry.chunks, list) and all(isinstance(c, dict) for c in entry.chunks)):
        raise ValueError("`chunks` must be a list of objects")
    try:
        _model_info(entry.info)
    except TypeError as exc:
        raise ValueError(f"`info` does not fit this version: {exc}") from None
    try:
        ModelResponse.model_validate(entry.response)
        for chunk in entry.chunks or ():
            ModelChunk.model_validate(chunk)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"`{exc.title}` at {where or '$'}: {first['msg']}") from None


@dataclass
class CorruptLine:
    line: int
    message: str
    case: str | None


@dataclass
class RecordingStore:
    """The recordings of one prompt: loaded once, saved once at the end of a run if anything changed."""

    path: Path
    entries: dict[tuple[str | None, str, str], Entry] = field(default_factory=dict)
    corrupt: list[CorruptLine] = field(default_factory=list)
    changed: bool = False
    root: Path | None = None  # the test folder the recordings must stay inside
    error: str | None = None  # why this store cannot be read or written (every case using it fails)

    @classmethod
    def load(cls, path: Path, root: Path | None = None) -> RecordingStore:
        store = cls(path, root=root)
        if root is not None and not (is_inside(path.parent, root) and is_inside(path, root)):
            store.error = (f"{path}: the recordings file or its folder is a symbolic link that leads outside the "
                           f"test folder {root}; replace the link with a real folder or file")
            return store
        try:
            data = read_snapshot(str(path), root, "recordings file", "test folder").data
        except FileNotFoundError:
            return store
        except PromptFileError as exc:
            store.error = str(exc)
            return store
        except OSError as exc:
            store.error = f"{path}: cannot read the recordings file: {exc.strerror or exc}"
            return store
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            store.error = f"{path}: the recordings file is not UTF-8 text; re-record with `dotprompt test --record`"
            return store
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                store._read_line(number, line)
        return store

    def _read_line(self, number: int, text: str) -> None:
        try:
            entry = Entry(**finite.loads(text))  # a NaN in a recording is no reply a model could send
            _check_shape(entry)
        except (ValueError, TypeError) as exc:
            # Find the case even in a broken line, so the error lands on the case it belongs to.
            found = _CASE_FIELD.search(text)
            self.corrupt.append(CorruptLine(number, f"corrupt recording line: {exc}", found[1] if found else None))
            return
        self.entries[entry.identity] = entry

    def find(self, key: str, case: str, file: str | None = None) -> Entry | None:
        """The recording of this request for this case, else one of the identical request for any case."""
        found = self.entries.get((file, case, key))
        if found is None:
            found = next((e for e in self.entries.values() if e.key == key), None)
        return found

    def for_case(self, case: str, file: str | None = None) -> list[Entry]:
        return sorted((e for e in self.entries.values() if e.case == case and e.file == file), key=lambda e: e.call)

    def info_for(self, model: str) -> ModelInfo | None:
        for entry in self.entries.values():
            if entry.model == model:
                return _model_info(entry.info)
        return None

    def add(self, entry: Entry) -> None:
        # Re-recording a case replaces its earlier calls, so stale lines do not pile up.
        # Only this test file's case: another test file's case of the same name keeps its lines.
        if entry.call == 0:
            for key in [k for k, e in self.entries.items() if (e.file, e.case) == (entry.file, entry.case)]:
                del self.entries[key]
        self.entries[entry.identity] = entry
        self.changed = True

    def save(self) -> None:
        if not self.changed or self.error is not None:
            return
        if self.root is not None and not (is_inside(self.path.parent, self.root) and is_inside(self.path, self.root)):
            return  # a link out of the folder appeared since loading: never write through it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ordered = sorted(self.entries.values(), key=lambda e: (e.file or "", e.case, e.call, e.key))
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".recording-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(entry.line() + "\n" for entry in ordered)
        os.replace(temporary, self.path)
        self.changed = False


@dataclass
class CallStats:
    calls: int = 0
    latency_ms: float = 0.0
    tokens: int = 0
    replayed: int = 0
    fixtures: int = 0
    usages: list[Usage | None] = field(default_factory=list)  # each call's, in order: a case's cost is priced per call


class RecordingModel:
    """Stands in for the case's model: replays recorded calls, or calls the real model and records."""

    def __init__(self, name: str, store: RecordingStore, mode: Mode, case: str, real: Callable[[], Model],
                 file: str | None = None, prompt: PromptIdentity | None = None,
                 record_hint: str = "re-record with `dotprompt test --record`") -> None:
        self.name = name
        self.record_hint = record_hint  # the command that makes a missing recording (eval rows: `dotprompt eval`)
        self.store = store
        self.mode = mode
        self.case = case
        self.file = file  # the case's test file, None for the prompt's own (see Entry.file)
        self.prompt = prompt  # written on each recording: which prompt text the reply answered
        self._real_factory = real
        self._real: Model | None = None
        self.stats = CallStats()
        self.stale: list[str] = []  # replayed calls whose recording no longer matches the request
        recorded = store.info_for(name) if mode != "record" else None
        self.unreachable: DotpromptError | None = None  # auto: the real model could not be made (a missing key)
        if recorded is None and mode == "auto":
            try:
                recorded = self.real.info
            except DotpromptError as exc:  # replay what exists; a call with no recording says both problems
                recorded, self.unreachable = ModelInfo(), exc
        self.info = recorded or (ModelInfo() if mode == "replay" else self.real.info)

    @property
    def real(self) -> Model:
        if self._real is None:
            self._real = self._real_factory()
        return self._real

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        key = request_key(self.name, request)
        entry = self.store.find(key, self.case, self.file) if self.mode in ("replay", "auto") else None
        call = self.stats.calls
        self.stats.calls += 1
        if entry is not None:
            return self._replay(entry, on_chunk)
        if self.mode == "replay":
            stale = self._stale_entry(call)
            if stale is None:
                raise RecordingMissingError(self._missing_message(call, request))
            # Still replay it, so the case also shows what the old reply means for the changed prompt
            # (e.g. which path of a changed schema it no longer satisfies); the mismatch itself fails the case.
            self.stale.append(self._missing_message(call, request))
            return self._replay(stale, on_chunk)
        if self.mode != "auto":
            return await self._record(key, call, request, on_chunk)
        try:  # auto: no recording, so the model is called; if that fails too, the case says both
            if self.unreachable is not None:
                raise self.unreachable
            return await self._record(key, call, request, on_chunk)
        except DotpromptError as exc:
            raise RecordingMissingError(self._missing_message(call, request, exc)) from exc

    def _stale_entry(self, call: int) -> Entry | None:
        recorded = self.store.for_case(self.case, self.file)
        return recorded[call] if call < len(recorded) else None

    def _replay(self, entry: Entry, on_chunk: OnChunk | None) -> ModelResponse:
        response = ModelResponse.model_validate(entry.response)
        self._count(response, entry.latency_ms)
        self.stats.replayed += 1
        self.stats.fixtures += entry.source != "recorded"
        if on_chunk is not None:
            for chunk in entry.chunks or [{"role": "model", "content": entry.response["message"]["content"]}]:
                on_chunk(ModelChunk.model_validate(chunk))
        return response

    async def _record(self, key: str, call: int, request: GenerateRequest, on_chunk: OnChunk | None) -> ModelResponse:
        chunks: list[dict[str, Any]] = []

        def collect(chunk: ModelChunk) -> None:
            chunks.append(chunk.to_dict())
            if on_chunk is not None:
                on_chunk(chunk)

        started = time.perf_counter()
        response = await self.real.generate(request, collect if on_chunk is not None else None)
        latency = round((time.perf_counter() - started) * 1000, 1)
        self._count(response, latency)
        if self.mode != "live":
            self.store.add(Entry(key, self.case, call, self.name, dataclasses.asdict(self.real.info), request.to_dict(),
                                 response.to_dict(), latency, chunks or None, file=self.file,
                                 prompt=self.prompt.to_dict() if self.prompt is not None else None))
        return response

    def _count(self, response: ModelResponse, latency_ms: float) -> None:
        self.stats.latency_ms += latency_ms
        self.stats.usages.append(response.usage)
        if response.usage is not None and response.usage.total_tokens:
            self.stats.tokens += response.usage.total_tokens

    def _missing_message(self, call: int, request: GenerateRequest, live: DotpromptError | None = None) -> str:
        """Why a call has no reply to replay, and the command that records one; with `live`, the error of
        the live call tried instead (auto mode), so a server that is down is not all the case says."""
        recorded = self.store.for_case(self.case, self.file)
        base = f"no recording for case {self.case!r}, model call {call + 1} ({self.store.path})"
        if call < len(recorded):
            fields = _differing_fields(recorded[call].request, request.to_dict())
            what = f" ({', '.join(fields)} differ)" if fields else ""
            base = (f"the recording of case {self.case!r}, model call {call + 1}, no longer matches its request{what} "
                    f"({self.store.path})")
        if live is not None:
            return f"{base}; tried the model live: {type(live).__name__}: {live}; {self.record_hint} once the model answers"
        return f"{base}: {self.record_hint}"


def _differing_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
