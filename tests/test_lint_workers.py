"""The fork plus `gc.freeze` executor of `dotprompt check` (`dotprompt/lint/workers.py`), alone.

The checker (`lint/check.py`) says what to check; this module only runs slices of work in worker
processes. Its results equal the plain way (the work called in this process), and the checker
holds none of the trick itself.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from dotprompt.lint import workers
from tests.conftest import ROOT


def pid_and_share(item: int) -> tuple[int, int, object]:
    return item, os.getpid(), workers.inherited()


def test_work_in_workers_gives_what_the_plain_way_gives():
    slices = [[1, 2], [3], [4, 5, 6]]
    got = workers.map_in_workers(_square_all, slices, jobs=2, shared=None)
    assert got == [_square_all(s) for s in slices]


def _square_all(items: list[int]) -> list[int]:
    return [item * item for item in items]


def test_forked_workers_inherit_the_shared_object_and_the_parent_keeps_none():
    shared = {"built in": "the parent"}
    # Without fork a worker starts afresh and builds its state from its slice: it inherits nothing.
    expected = shared if workers.can_fork() else None
    got = workers.map_in_workers(pid_and_share, [1, 2], jobs=2, shared=shared)
    assert [item for item, _, _ in got] == [1, 2]
    assert all(pid != os.getpid() for _, pid, _ in got)
    assert all(seen == expected for _, _, seen in got)
    assert workers.inherited() is None


def test_the_checker_holds_no_process_or_collector_trick():
    tree = ast.parse(Path(ROOT / "dotprompt/lint/check.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not imported & {"gc", "multiprocessing", "concurrent.futures", "threading"}, imported
