"""Reading files of a prompt folder safely: inside the folder, regular files only, never blocking, whole.

Prompt files come from pull requests, so a "file" may be a symbolic link out of the folder
(`pw.prompt -> /etc/passwd`), a FIFO that blocks whoever opens it, a directory or a dangling link.
`read_snapshot` refuses each with a PromptFileError naming the file and what to do; it stats
before opening, opens with O_NONBLOCK (a FIFO swapped in after the stat still cannot block) and
checks the open file is the one it stat-ed.

Hot reload reads a file once, as bytes, and hashes them: what is compiled is exactly what was
hashed. `read_settled` also waits out a save in progress (a file changed in the last
`RELOAD_SETTLE_SECONDS` is used only if a second read that long after gives the same bytes and
stamp) and retries a file that is briefly missing (unlink-then-create saves). A file's timestamps
cannot tell a finished save from one stalled half-way (an editor writing in place, then paused by a
loaded machine): `read_confirmed` takes a version that is new to the reader only once a second read,
`RELOAD_SETTLE_SECONDS` after the first, gives the same bytes and stamp, whatever its timestamps say.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass
from typing import Final

from ..errors import PromptFileError

__all__ = ["RELOAD_ATTEMPTS", "RELOAD_SETTLE_SECONDS", "FileChangingError",
           "Snapshot", "Stamp", "check_inside", "decode", "digest_of", "file_stamp", "is_inside",
           "kind_of", "lexically_inside", "read_confirmed", "read_settled", "read_snapshot", "stamp_of"]

RELOAD_SETTLE_SECONDS: Final = 0.05
"""Hot reload: a file changed this recently may still be being written; it is read again after this
long and used only if it did not change meanwhile (a render never sees half a save)."""

RELOAD_ATTEMPTS: Final = 8
"""Hot reload: reads of a changing or briefly missing file (unlink-then-create saves) before giving up;
until then, and when giving up on a file that is still there, renders keep the last whole version."""

Stamp = tuple[int, int, int, int]  # mtime_ns, size, inode, ctime_ns


class FileChangingError(OSError):
    """The file changed while it was read, or was replaced between stat and open: read it again."""


@dataclass(frozen=True)
class Snapshot:
    """One whole read of a file: its bytes, their hash, and the file's stamp while they were read."""

    data: bytes
    stamp: Stamp
    digest: str


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def file_stamp(path: str) -> Stamp:
    return stamp_of(os.stat(path))


def is_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether `path`, every symbolic link followed, is `root` or inside it."""
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def lexically_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether `path`, as written (no link followed), lies inside `root`."""
    here = os.path.normpath(os.path.abspath(path))
    top = os.path.normpath(os.path.abspath(root))
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)


def check_inside(path: str, root: str | os.PathLike[str] | None, what: str = "file",
                 folder: str = "prompt folder") -> None:
    """A PromptFileError if a symbolic link takes `path` out of `root` (nothing to check without a root)."""
    if root is not None and not is_inside(path, root):
        raise PromptFileError(f"this {what} is a symbolic link that leads outside the {folder} {os.fspath(root)}",
                              path=path, hint=f"replace the link with the {what} itself, or move its target into the "
                              f"{folder}")


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def _not_regular(path: str, mode: int, what: str) -> PromptFileError:
    return PromptFileError(f"not a regular file: this {what} is {kind_of(mode)}", path=path,
                           hint=f"a {what} must be a plain file; remove or rename this one")


def read_snapshot(path: str, root: str | os.PathLike[str] | None = None, what: str = "prompt file",
                  folder: str = "prompt folder") -> Snapshot:
    """The whole file, read once. Raises FileNotFoundError (missing), FileChangingError (changed while read)
    or a PromptFileError (outside the folder, not a regular file, a dangling link, unreadable)."""
    try:
        link = os.lstat(path)
    except (ValueError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise PromptFileError(f"cannot read this {what}: {_reason(exc)}", path=path) from None
    check_inside(path, root, what, folder)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if stat.S_ISLNK(link.st_mode):
            raise PromptFileError(f"this {what} is a symbolic link to a missing file", path=path,
                                  hint="remove the link or create its target") from None
        raise
    except OSError as exc:
        raise PromptFileError(f"cannot read this {what}: {_reason(exc)}", path=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise PromptFileError(f"cannot read this {what}: {_reason(exc)}", path=path) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise _not_regular(path, opened.st_mode, what)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            raise FileChangingError(f"{path} was replaced while it was opened")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if stamp_of(after) != stamp_of(opened):
        raise FileChangingError(f"{path} changed while it was read")
    data = b"".join(chunks)
    return Snapshot(data, stamp_of(after), digest_of(data))


def read_settled(path: str, root: str | os.PathLike[str] | None = None, what: str = "prompt file") -> Snapshot:
    """`read_snapshot`, waiting out a save in progress and retrying a briefly missing file.

    Raises FileNotFoundError when the file stays missing, FileChangingError when it never holds still,
    a PromptFileError for a file that can never be read."""
    settle = RELOAD_SETTLE_SECONDS
    failure: OSError = FileNotFoundError(2, "No such file or directory", path)
    seen = False  # the file was there at some attempt: it is being saved, not gone
    for attempt in range(max(1, RELOAD_ATTEMPTS)):
        if attempt:
            time.sleep(settle * min(attempt, 3) / 3)
        try:
            snapshot = read_snapshot(path, root, what)
        except (FileNotFoundError, FileChangingError) as exc:
            seen = seen or isinstance(exc, FileChangingError)
            failure = exc
            continue
        seen = True
        # Written moments ago (by its mtime or its ctime, which no tool can set back): the writer may
        # not be done. Used only if a second read gives the same bytes and stamp.
        if time.time_ns() - max(snapshot.stamp[0], snapshot.stamp[3]) < settle * 1e9 \
                and not _same_after(path, root, what, snapshot, settle):
            failure = FileChangingError(f"{path} keeps changing")
            continue
        return snapshot
    if seen and isinstance(failure, FileNotFoundError):
        raise FileChangingError(f"{path} keeps being replaced")
    raise failure


def read_confirmed(snapshot: Snapshot, path: str, root: str | os.PathLike[str] | None = None,
                   what: str = "prompt file") -> Snapshot:
    """`snapshot` (a version of the file new to the reader) once a read RELOAD_SETTLE_SECONDS later gives
    the same bytes and stamp; the later version when it moved on and then held still; FileChangingError
    when it never holds still within RELOAD_ATTEMPTS reads."""
    settle = RELOAD_SETTLE_SECONDS
    for _ in range(max(1, RELOAD_ATTEMPTS)):
        time.sleep(settle)
        try:
            again = read_snapshot(path, root, what)
        except (FileNotFoundError, FileChangingError):
            continue
        if again.digest == snapshot.digest and again.stamp == snapshot.stamp:
            return snapshot
        snapshot = again
    raise FileChangingError(f"{path} keeps changing")


def _same_after(path: str, root: str | os.PathLike[str] | None, what: str, snapshot: Snapshot, settle: float) -> bool:
    """Whether a read `settle` seconds from now gives the bytes and stamp of `snapshot`: the bytes too,
    because a rewrite in place of the same size can keep every timestamp (a coarse file system clock)."""
    time.sleep(settle)
    try:
        again = read_snapshot(path, root, what)
    except (FileNotFoundError, FileChangingError):
        return False
    return again.digest == snapshot.digest and again.stamp == snapshot.stamp


def decode(data: bytes, path: str | None) -> str:
    """UTF-8 text, or a PromptFileError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PromptFileError(f"file is not UTF-8 text (byte 0x{data[exc.start]:02x})", path=path, line=line,
                              hint="save the file as UTF-8") from None


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
