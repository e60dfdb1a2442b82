"""Snapshots of the streaming parser's value, each built by extending the last one nobody holds.

A snapshot is a copy of the open spine (the containers on the current path), truncated to the
lengths they had, with the open string's prefix; complete values are shared, never copied. Reading
every chunk's snapshot would copy the whole spine each time: quadratic for a big flat object or
array (a 1 MB object of 100k keys took 25 s in 8-character chunks). So the last copies built are
kept, and one that nobody else holds any more (CPython's reference count says so) is extended in
place into the next snapshot: only what was added since is copied, and the total is linear. A copy
somebody holds is never touched; the next one is then built afresh. Where reference counts cannot
be trusted (PyPy, a free-threaded build) every snapshot is a fresh copy: the plain way, which
tests/formats/test_stream_linear.py measures against this one (`copied` counts the work).

An open string cannot be extended (a `str` is immutable), so each snapshot showing one holds a
copy of its prefix; those copies are bounded by STREAM_STRING_COPIES characters per character
read, and past the budget a snapshot shows the prefix last copied (at most 1/STREAM_STRING_COPIES
of the string behind). A duplicate key is the one change to a container that is not an append:
the parser logs each overwritten value (`overwritten`), and an older snapshot restores it.
"""

from __future__ import annotations

import sys
from itertools import islice
from typing import Any, Final, Protocol

from .limits import STREAM_STRING_COPIES

__all__ = ["Frame", "OpenStrings", "SpineCopies"]

_POOL: Final = 2  # built outputs kept to extend; two, so `out = stream.feed(chunk)` holding the last still finds one


def _refs(holder: Any, key: Any) -> int:
    return sys.getrefcount(holder[key])


# What `_refs` counts for a value held only by `holder[key]`; more means someone else holds it too.
_ALONE: Final = _refs([[]], 0)
# Counting references needs CPython with the GIL (PyPy has no getrefcount; a free-threaded build's
# counts are approximate): elsewhere every output is a fresh copy, as before.
_COUNTS_REFS: Final = hasattr(sys, "getrefcount") and getattr(sys, "_is_gil_enabled", lambda: True)()


class OpenStrings(Protocol):
    """What the copies ask of the parser: the text so far of the open string numbered `serial`."""

    def open_string_text(self, serial: Any) -> str | None: ...


class Frame:
    """One open container, shared by every lazy snapshot taken while it is open."""

    __slots__ = ("container", "parent", "parent_len", "slot")

    def __init__(self, container: Any, parent: Frame | None, slot: Any, parent_len: int) -> None:
        self.container = container
        self.parent = parent
        self.slot = slot  # where it sits in the parent
        self.parent_len = parent_len  # the parent's length while this one is open (it cannot grow)


class _Built:
    """An output `build` made and still holds (`holder[0]`), and the snapshot it equals:
    the open containers' frames root first, each copy's length, the open string and the version.
    While nobody else holds it, it is extended in place into a later snapshot (`_extend`)."""

    __slots__ = ("frames", "holder", "lengths", "string", "string_len", "version")

    def __init__(self, holder: list[Any], frames: list[Frame], lengths: list[int], string: Any, string_len: int,
                 version: int) -> None:
        self.holder = holder
        self.frames = frames
        self.lengths = lengths
        self.string = string
        self.string_len = string_len
        self.version = version


class SpineCopies:
    """The snapshots one parser built: at most _POOL kept to extend, and what building them cost."""

    def __init__(self, overwritten: dict[int, list[tuple[int, Any, Any]]]) -> None:
        self._overwritten = overwritten  # the parser's log: id(dict) -> (version, key, old value)
        self._built: list[_Built] = []  # the last outputs built (at most _POOL), oldest first
        self._copied = 0  # open-string characters copied into outputs, against STREAM_STRING_COPIES per `_fed`
        self._members_copied = 0  # container members copied into outputs
        self._shown: tuple[Any, str] = (None, "")  # the open string's prefix as last copied: (serial, prefix)
        self._fed = 0  # characters the parser had read at the snapshot being built
        self._source: OpenStrings | None = None  # the parser, while a snapshot is built

    @property
    def copied(self) -> int:
        """Container members and open-string characters copied into outputs so far."""
        return self._members_copied + self._copied

    def build(self, frame: Frame | None, inner_len: int, string: Any, string_len: int, version: int, fed: int,
              source: OpenStrings) -> Any:
        """The output as it stood at a snapshot: `frame` the innermost open container, the length it
        had, the open string (its serial and length), the overwrite count; `fed`: characters read so
        far (the open-string budget); `source` gives an open string's text (not kept: no cycle)."""
        assert frame is not None  # a snapshot is taken only while a container is open
        self._fed, self._source = fed, source
        try:
            return self._build(frame, inner_len, string, string_len, version)
        finally:
            self._source = None

    def _build(self, frame: Frame, inner_len: int, string: Any, string_len: int, version: int) -> Any:
        built = self._built
        for index in range(len(built) - 1, -1, -1):  # the common case first: the same innermost container, grown
            record = built[index]
            if record.frames[-1] is frame and record.version == version:
                if record.lengths[-1] == inner_len and record.string is string and record.string_len == string_len:
                    return record.holder[0]  # nothing visible changed: the same output, held or not (never changed while held)
                if self._grow(record, inner_len, string, string_len):
                    return self._reused(index)
        frames = []
        walk: Frame | None = frame
        while walk is not None:
            frames.append(walk)
            walk = walk.parent
        frames.reverse()
        lengths = [child.parent_len for child in frames[1:]]
        lengths.append(inner_len)
        for index in range(len(built) - 1, -1, -1):
            if self._extend(built[index], frames, lengths, string, string_len, version):
                return self._reused(index)
        root = self._fresh(frames, lengths, string, string_len, version)
        if _COUNTS_REFS:
            built.append(_Built([root], frames, lengths, string, string_len, version))
            if len(built) > _POOL:
                del built[0]
        return root

    def _reused(self, index: int) -> Any:
        """The output `_built[index]` now holds, made the newest; spares nobody holds are let go."""
        built = self._built
        record = built[index]
        if len(built) > 1:
            del built[index]
            for other in range(len(built) - 1, -1, -1):
                if _refs(built[other].holder, 0) <= _ALONE:
                    del built[other]
            built.append(record)
        return record.holder[0]

    def _fresh(self, frames: list[Frame], lengths: list[int], string: Any, string_len: int, version: int) -> Any:
        """Copies of the spine as it stood: truncated, old values of later overwrites restored."""
        copy = self._truncated(frames[-1].container, lengths[-1], version)
        if string is not None:
            copy[string[0]] = self._open_string(string, copy[string[0]], string_len)
        for depth in range(len(frames) - 2, -1, -1):
            parent = self._truncated(frames[depth].container, lengths[depth], version)
            parent[frames[depth + 1].slot] = copy
            copy = parent
        return copy

    def _grow(self, built: _Built, inner_len: int, string: Any, string_len: int) -> bool:
        """`_extend` when the innermost open container is the same: only it can have changed."""
        frames = built.frames
        holder, key = built.holder, 0
        count = sys.getrefcount  # `_refs`, inlined: this runs for every chunk
        for depth in range(1, len(frames)):
            if count(holder[key]) > _ALONE:
                return False
            holder, key = holder[key], frames[depth].slot
        if count(holder[key]) > _ALONE:
            return False
        copy = holder[key]
        lengths = built.lengths
        start = lengths[-1]
        if len(copy) != start or inner_len < start:
            return False
        container = frames[-1].container
        if self._overwritten and self._overwritten_since(container, built.version):
            return False  # as in `_extend`
        if built.string is not None:
            slot = built.string[0]
            copy[slot] = container[slot]
        if inner_len > start:
            if type(container) is list:
                copy += container[start:inner_len]
                self._members_copied += inner_len - start
            else:
                self._copy_members(container, copy, start, inner_len)
        if string is not None:
            copy[string[0]] = self._open_string(string, copy[string[0]], string_len)
        lengths[-1] = inner_len
        built.string, built.string_len = string, string_len
        return True

    def _copy_members(self, container: dict[Any, Any], copy: dict[Any, Any], start: int, stop: int) -> None:
        """Members `start` to `stop` of an object, into its copy. An object only grows at its end (a
        replaced member keeps its place), so they are found from the end: reading in step with the
        parser, that walks the new members only."""
        self._members_copied += stop - start
        newest = reversed(container.items())
        if stop - start == 1 and stop == len(container):  # one member, the last: the usual chunk
            member, value = next(newest)
            copy[member] = value
            return
        members = list(islice(newest, len(container) - stop, len(container) - start))
        for member, value in reversed(members):
            copy[member] = value

    def _extend(self, built: _Built, frames: list[Frame], lengths: list[int], string: Any, string_len: int,
                version: int) -> bool:
        """Turn `built` into the snapshot given, in place, if nobody else holds any of its copies that
        change; False (nothing touched) otherwise.

        Containers open and close as a stack, so the two spines share a head: the same frames, root
        first. Above the deepest shared one nothing was added (a child stayed open in each), so those
        copies stand. The deepest shared one gets the members added since, and its entries that were
        open in `built` (a child since closed, the open string) their values now; below it, every
        container opened since is copied afresh (all of it arrived since)."""
        old_frames, old_lengths = built.frames, built.lengths
        shared = 0
        limit = min(len(frames), len(old_frames))
        while shared < limit and frames[shared] is old_frames[shared]:
            shared += 1
        if shared == 0:
            return False
        deepest = shared - 1
        container = frames[deepest].container
        start, stop = old_lengths[deepest], lengths[deepest]
        if stop < start or version < built.version or self._overwritten_since(container, built.version):
            # An older snapshot (copies only grow), or a member replaced since `built`: then the
            # container's values read below may not be the snapshot's (a late read of an old one).
            return False
        # Each copy on the path to the deepest shared one: held only by us (the pool, or its parent copy).
        holder, key = built.holder, 0
        for depth in range(shared):
            if _refs(holder, key) > _ALONE or len(holder[key]) != old_lengths[depth]:
                return False
            if depth < deepest:
                holder, key = holder[key], old_frames[depth + 1].slot
        copy = holder[key]
        if len(old_frames) > shared:  # the child open in `built`: closed since, complete
            slot = old_frames[shared].slot
            copy[slot] = container[slot]
        elif built.string is not None:  # the string open in `built`: longer now, or closed
            slot = built.string[0]
            copy[slot] = container[slot]
        if type(container) is list:
            copy += container[start:stop]
            self._members_copied += stop - start
        else:
            self._copy_members(container, copy, start, stop)
        for depth in range(shared, len(frames)):  # containers opened since
            child = self._truncated(frames[depth].container, lengths[depth], version)
            copy[frames[depth].slot] = child
            copy = child
        if string is not None:
            copy[string[0]] = self._open_string(string, copy[string[0]], string_len)
        built.frames, built.lengths, built.string, built.string_len = frames, lengths, string, string_len
        built.version = version
        return True

    def _overwritten_since(self, container: Any, version: int) -> bool:
        log = self._overwritten.get(id(container))
        return log is not None and log[-1][0] > version

    def _truncated(self, container: Any, length: int, version: int) -> Any:
        self._members_copied += min(length, len(container))
        if type(container) is list:
            return container[:length]
        copy = container.copy() if length >= len(container) else dict(islice(container.items(), length))
        for changed, key, old in reversed(self._overwritten.get(id(container), ())):
            if changed <= version:
                break
            if key in copy:  # a key past the snapshot's length was not there yet
                copy[key] = old
        return copy

    def _open_string(self, string: Any, settled: Any, length: int) -> str:
        """The prefix of `length` characters a snapshot saw of an open string (still open, or since
        closed: `settled`). Each one is a copy; past the STREAM_STRING_COPIES budget, the prefix last
        copied is shown instead, when it is no longer than the snapshot's."""
        shown_serial, shown = self._shown
        if shown_serial is string and len(shown) == length:
            return shown
        if (shown_serial is string and len(shown) < length
                and self._copied + length > STREAM_STRING_COPIES * self._fed):
            return shown  # over the budget: a prefix a little behind, copied once more later
        assert self._source is not None  # set by `build`
        joined = self._source.open_string_text(string)
        prefix = joined[:length] if joined is not None else settled[:length]
        self._copied += length
        self._shown = (string, prefix)
        return prefix
