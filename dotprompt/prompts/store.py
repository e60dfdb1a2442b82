"""The file store of a prompt folder: which prompt and partial files it holds, each read whole and
safely, and hot reload.

File names: `name.prompt`, `name.variant.prompt`, `_partial.prompt`; a subfolder is a namespace
(`billing/extract.prompt` is `billing/extract`).

Files are read through `document/files.py`: a prompt, partial or namespace folder whose real path
leaves the folder is refused, as is anything that is not a regular file (FIFO, socket, directory,
dangling link), each with a PromptFileError naming the file. Hot reload: a render uses a whole
version of the file, old or new (see `PromptFiles.is_stale` / `PromptFiles.refresh`).
"""

from __future__ import annotations

import dataclasses
import os
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..document import files as file_reads
from ..document.files import FileChangingError, Snapshot, file_stamp, read_confirmed, read_settled, read_snapshot
from ..errors import InvalidPromptNameError, PromptFileError, PromptNotFoundError
from .compiler import CompiledPrompt, Dependency

__all__ = ["MAX_NAME_LENGTH", "MAX_NAME_PART_BYTES", "RELOAD_EMPTIED_SECONDS", "RELOAD_GRACE_SECONDS",
           "RELOAD_REHASH_SECONDS", "PromptFiles", "PromptInfo", "check_name", "current_stamp"]

MAX_NAME_LENGTH: Final = 1024
"""Characters a prompt or partial name (with its namespace folders) may have; longer is an InvalidPromptNameError."""

MAX_NAME_PART_BYTES: Final = 200
"""UTF-8 bytes one part of a name may have: with `_`, `.variant` and `.prompt` it must fit a file name (255)."""

RELOAD_GRACE_SECONDS: Final = 0.5
"""Hot reload: a changed file that fails to compile (empty, cut off: a save that stalled half-way) raises
its error only once it is this old; until then renders keep the last whole version."""

RELOAD_EMPTIED_SECONDS: Final = 2.0
"""Hot reload: a file that had content and is now blank (an in-place save stalled between truncating and
writing looks exactly like it, timestamps and all) is used only once this reader has seen it hold still,
blank, this long; until then renders keep the last whole version without waiting."""

RELOAD_REHASH_SECONDS: Final = 2.0
"""Hot reload: a file whose stat looks unchanged is still re-read and hashed this often, so an edit that
keeps size, mtime and ctime (coarse file system clocks) is seen too."""


@dataclass(frozen=True)
class PromptInfo:
    """One prompt file found in the library's folder."""

    name: str
    variant: str | None
    path: str

    @property
    def label(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name


class PromptFiles:
    """The `.prompt` files of one folder (or none: nothing is found, nothing is read)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        # path -> ((digest, stamp), time.monotonic() after the read) of a file first seen blank after it
        # had content: used once it is seen the same RELOAD_EMPTIED_SECONDS later
        self._blank_since: dict[str, tuple[tuple[str, Any], float]] = {}

    # -- what the folder holds ----------------------------------------------------------------

    def prompts(self) -> list[PromptInfo]:
        """Every prompt file in the folder, sorted by name then variant (partials excluded)."""
        found = [info for info in self._scan() if not os.path.basename(info.path).startswith("_")]
        return sorted(found, key=lambda i: (i.name, i.variant or ""))

    def partial_names(self) -> list[str]:
        """The names of the partial files (`_name.prompt`), sorted."""
        return sorted({info.name for info in self._scan() if os.path.basename(info.path).startswith("_")})

    def _scan(self) -> list[PromptInfo]:
        if self.directory is None or not self.directory.is_dir():
            return []
        out = []
        for path in self.directory.rglob("*.prompt"):
            rel = path.relative_to(self.directory).with_suffix("")
            stem = rel.name
            if stem.startswith("_"):
                out.append(PromptInfo(str(rel.with_name(stem[1:]).as_posix()), None, str(path)))
                continue
            base, _, variant = stem.partition(".")
            out.append(PromptInfo(str(rel.with_name(base).as_posix()), variant or None, str(path)))
        return out

    def prompt_path(self, name: str, variant: str | None) -> str | None:
        """The file for the name, if anything by that name is there (a FIFO or a link too: reading it says what is wrong)."""
        if self.directory is None:
            return None
        for form in (name, *{unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)} - {name}):
            # Names compare in NFC: a file saved decomposed (macOS writes NFD) answers to the composed name.
            path = self.directory / (f"{form}.{variant}.prompt" if variant else f"{form}.prompt")
            if _entry_exists(path):
                return str(path)
        return None

    def partial_path(self, name: str) -> str | None:
        """The partial file `_name.prompt` (in its namespace folder), if there is one."""
        if self.directory is None or _name_problem(name) is not None:
            return None
        head, _, tail = name.rpartition("/")
        path = self.directory / head / f"_{tail}.prompt"
        return str(path) if _entry_exists(path) else None

    # -- reading --------------------------------------------------------------------------------

    def read_prompt(self, path: str, name: str, variant: str | None) -> Snapshot:
        """The prompt file, read once as it settles; a file that keeps changing is a PromptFileError."""
        try:
            return read_settled(path, self.directory)
        except FileNotFoundError:
            raise PromptNotFoundError(name, variant, [], f"{path} (deleted)") from None
        except FileChangingError:
            raise _still_changing(path) from None

    def read_partial(self, path: str) -> Snapshot | None:
        """The partial file, read once as it settles; None when it went since it was found."""
        try:
            return read_settled(path, self.directory, "partial file")
        except FileNotFoundError:
            return None  # gone since we looked: as if it never was
        except FileChangingError:
            raise _still_changing(path) from None

    # -- hot reload -----------------------------------------------------------------------------

    def read_as(self, compiled: CompiledPrompt, snapshot: Snapshot, depends: list[Dependency]) -> CompiledPrompt:
        """`compiled`, compiled from `snapshot`'s bytes, marked with what hot reload compares later:
        their digest, the partial files read (`depends`), and when they were checked."""
        return dataclasses.replace(compiled, digest=snapshot.digest, depends=tuple(dict.fromkeys(depends)),
                                   checked_at=time.monotonic())


    def is_stale(self, path: str, compiled: CompiledPrompt) -> bool:
        """Whether the file's or a partial's stat changed (mtime, size, inode, ctime) since `compiled`
        was read, or its periodic re-hash is due. Cheap: stats only."""
        if compiled.stamp is None or current_stamp(path) != compiled.stamp:
            return True
        if any(current_stamp(partial) != stamp for partial, stamp, _ in compiled.depends):
            return True
        return time.monotonic() - compiled.checked_at >= RELOAD_REHASH_SECONDS

    def refresh(self, path: str, label: tuple[str | None, str | None], compiled: CompiledPrompt, *, current: bool,
                compile_snapshot: Callable[[Snapshot], CompiledPrompt],
                partials_changed: Callable[[], None]) -> CompiledPrompt:
        """The compiled form a render should use now. `label`: the prompt's (name, variant); `current`:
        whether `compiled` was compiled at the library's revision; `compile_snapshot` compiles bytes;
        `partials_changed` is told when a partial's bytes changed under the same prompt file.

        The file is read once (waiting out a save in progress) and compiled from exactly those bytes;
        if its bytes and its partials' hash as before, `compiled` is kept (only its stamps move on).
        New bytes are used only once a second read RELOAD_SETTLE_SECONDS later gives them again
        (`read_confirmed`): a save stalled half-way has old timestamps but is not done. A file that
        keeps changing keeps `compiled` (the last whole version) until it holds still; a
        file gone for good raises PromptNotFoundError; a new version that does not compile raises its
        PromptFileError once it has stayed so for RELOAD_GRACE_SECONDS (a stalled save is not an error);
        a file that had content and is now blank is used only once it has stayed so for
        RELOAD_EMPTIED_SECONDS (`_once_blank_long_enough`)."""
        read_ns, read_at = time.time_ns(), time.monotonic()  # before the read: what it sees held still since
        try:
            snapshot = self._reread(path, label)
        except FileChangingError:
            return compiled
        if current and snapshot.digest == compiled.digest:
            depends = _same_partials(compiled.depends, self.directory)
            if depends is not None:
                return dataclasses.replace(compiled, stamp=snapshot.stamp, depends=depends, checked_at=time.monotonic())
            partials_changed()
        elif snapshot.digest != compiled.digest:
            if _became_blank(snapshot, compiled):
                return self._once_blank_long_enough(path, snapshot, compiled, read_at, compile_snapshot)
            try:
                snapshot = read_confirmed(snapshot, path, self.directory)
            except FileChangingError:  # it never held still: the last whole version until it does
                return compiled
        while True:
            # A save that stalls half-way (a cut-off file) can hold still longer than the settle time: a
            # file that fails to compile is an error only once a read that began RELOAD_GRACE_SECONDS after
            # its last change (mtime or ctime, which no tool sets back) still sees it. Until then this thread
            # waits for it and other renders keep the last whole version.
            changed = max(snapshot.stamp[0], snapshot.stamp[3])
            trusted = read_ns - changed >= RELOAD_GRACE_SECONDS * 1e9
            try:
                return compile_snapshot(snapshot)
            except PromptFileError:
                if trusted:
                    raise
            time.sleep(file_reads.RELOAD_SETTLE_SECONDS)  # read at the call: a test may change it
            read_ns, read_at = time.time_ns(), time.monotonic()
            try:
                snapshot = self._reread(path, label)
                snapshot = read_confirmed(snapshot, path, self.directory)
            except FileChangingError:
                return compiled
            if _became_blank(snapshot, compiled):
                return self._once_blank_long_enough(path, snapshot, compiled, read_at, compile_snapshot)

    def _once_blank_long_enough(self, path: str, snapshot: Snapshot, compiled: CompiledPrompt, read_at: float,
                                compile_snapshot: Callable[[Snapshot], CompiledPrompt]) -> CompiledPrompt:
        """`compiled` (which has content) until blank `snapshot` has held still for RELOAD_EMPTIED_SECONDS as
        this reader saw it: first seen blank by one read, then the same bytes and stamp by a read that began
        (`read_at`, monotonic) that long after. A stalled in-place save cannot be told from a file emptied on
        purpose by its timestamps; only by staying blank longer than a stall lasts. Nobody waits meanwhile."""
        seen = (snapshot.digest, snapshot.stamp)
        first = self._blank_since.get(path)
        if first is None or first[0] != seen:
            self._blank_since[path] = (seen, time.monotonic())
            return compiled
        if read_at - first[1] < RELOAD_EMPTIED_SECONDS:  # read at the call: a test may change it
            return compiled
        del self._blank_since[path]
        return compile_snapshot(snapshot)

    def _reread(self, path: str, label: tuple[str | None, str | None]) -> Snapshot:
        """The prompt's file, read once as it settles; gone for good is PromptNotFoundError."""
        try:
            return read_settled(path, self.directory)
        except FileNotFoundError:
            name, variant = label
            raise PromptNotFoundError(name or path, variant, [], f"{path} (deleted)") from None


def current_stamp(path: str) -> Any:
    """The file's stamp now (`document/files.py`), None when it cannot be read."""
    try:
        return file_stamp(path)
    except (OSError, ValueError):
        return None


def _became_blank(snapshot: Snapshot, compiled: CompiledPrompt) -> bool:
    """Whether `snapshot` is blank while `compiled`, the version served, had content (frontmatter or text)."""
    source = compiled.source
    return not snapshot.data.strip() and bool(source.yaml_line or source.template.strip())


def _still_changing(path: str) -> PromptFileError:
    return PromptFileError("this file keeps changing while it is read", path=path,
                           hint="try again once the save has finished")


def _entry_exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def _same_partials(depends: tuple[Dependency, ...], root: Path | None) -> tuple[Dependency, ...] | None:
    """The partial files with their current stamps if every one still hashes as before, else None."""
    out = []
    for path, stamp, digest in depends:
        if current_stamp(path) == stamp:
            out.append((path, stamp, digest))
            continue
        try:
            snapshot = read_snapshot(path, root, "partial file")
        except (OSError, PromptFileError):
            return None
        if snapshot.digest != digest:
            return None
        out.append((path, snapshot.stamp, digest))
    return tuple(out)


def _name_problem(name: str) -> str | None:
    if not name or os.path.isabs(name) or "\\" in name or name.startswith("/") \
            or any(part in ("..", "") for part in name.split("/")):
        return "names are relative paths inside the prompt folder, without '..', empty parts or a leading '/'"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "names cannot hold control characters (such as NUL or a newline)"
    if len(name) > MAX_NAME_LENGTH:
        return f"names are at most {MAX_NAME_LENGTH} characters, this one has {len(name)}"
    if any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_PART_BYTES for part in name.split("/")):
        return f"each part of a name (between '/') is at most {MAX_NAME_PART_BYTES} bytes, to fit a file name"
    return None


def check_name(name: str) -> None:
    """Refuse names that are absolute, climb out of the prompt folder, or cannot be a file name."""
    problem = _name_problem(name) if isinstance(name, str) else "a name is a string"
    if problem is not None:
        shown = repr(name) if not isinstance(name, str) or len(name) <= 80 else repr(name[:60]) + f"... ({len(name)} characters)"
        raise InvalidPromptNameError(f"invalid prompt name {shown}: {problem}")
