"""A small thread-safe LRU map: the bounded home of every memo (parsed partials and templates, output
plans, strict schemas, prices, the parsed pyproject.toml).

Entries are keyed by what they are (a partial's file or name), and each holds the content hash it
was made from, so an edit replaces an entry instead of adding one, and the size never passes `size`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """`get(key, digest)` is the value stored for `key` from content `digest`, else None."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._items: OrderedDict[Hashable, tuple[str, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, digest: str) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] != digest:
                return None
            self._items.move_to_end(key)
            return found[1]

    def put(self, key: Hashable, digest: str, value: V) -> None:
        with self._lock:
            self._items[key] = (digest, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
