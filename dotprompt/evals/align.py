"""Order-free alignment of two lists: the pairing with the greatest total similarity (Hungarian method).

Pure Python on purpose: the lists are an invoice's line items (tens, rarely hundreds), where this
O(n^3) method takes milliseconds, and it spares the package numpy and scipy (~80 MB) for one
function. Lists past EVAL_MAX_ALIGN_ITEMS pair their extra items by position instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .limits import EVAL_MAX_ALIGN_ITEMS

__all__ = ["align", "best_assignment"]


def best_assignment(similarity: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """The (row, column) pairs, each row and column used at most once, maximising the summed similarity.

    `similarity` is rows x columns with values in [0, 1]; a rectangular matrix leaves some rows or
    columns unpaired. Ties keep the earlier columns first, so equal lists pair in order."""
    rows = len(similarity)
    cols = len(similarity[0]) if rows else 0
    size = max(rows, cols)
    if size == 0:
        return []
    # Minimise cost = 1 - similarity on a square matrix padded with cost 1 (a pairing with nothing).
    cost = [[1.0 - similarity[r][c] if r < rows and c < cols else 1.0 for c in range(size)] for r in range(size)]
    owner = _minimum_assignment(cost, size)
    return sorted((row, col) for col, row in enumerate(owner) if row < rows and col < cols)


def _minimum_assignment(cost: list[list[float]], size: int) -> list[int]:
    """For each column, the row assigned to it (shortest augmenting paths with row/column potentials)."""
    infinity = float("inf")
    row_potential = [0.0] * (size + 1)
    col_potential = [0.0] * (size + 1)
    owner = [0] * (size + 1)  # owner[c] = 1-based row holding column c; column 0 is the virtual start
    for row in range(1, size + 1):
        owner[0] = row
        col = 0
        slack = [infinity] * (size + 1)
        previous = [0] * (size + 1)
        used = [False] * (size + 1)
        while owner[col] != 0:
            used[col] = True
            current_row, delta, next_col = owner[col], infinity, 0
            for c in range(1, size + 1):
                if used[c]:
                    continue
                reduced = cost[current_row - 1][c - 1] - row_potential[current_row] - col_potential[c]
                if reduced < slack[c]:
                    slack[c], previous[c] = reduced, col
                if slack[c] < delta:
                    delta, next_col = slack[c], c
            for c in range(size + 1):
                if used[c]:
                    row_potential[owner[c]] += delta
                    col_potential[c] -= delta
                else:
                    slack[c] -= delta
            col = next_col
        while col:
            prior = previous[col]
            owner[col] = owner[prior]
            col = prior
    return [owner[c] - 1 for c in range(1, size + 1)]


def align(expected: Sequence[Any], predicted: Sequence[Any], similar: Callable[[Any, Any], float],
          min_similarity: float = 0.0) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """(pairs, unpaired expected indexes, unpaired predicted indexes). A pair needs a similarity above
    `min_similarity`; items past EVAL_MAX_ALIGN_ITEMS on either side pair by position."""
    head_e, head_p = min(len(expected), EVAL_MAX_ALIGN_ITEMS), min(len(predicted), EVAL_MAX_ALIGN_ITEMS)
    matrix = [[similar(expected[e], predicted[p]) for p in range(head_p)] for e in range(head_e)]
    pairs = [(e, p) for e, p in best_assignment(matrix) if matrix[e][p] > min_similarity]
    tail = range(EVAL_MAX_ALIGN_ITEMS, min(len(expected), len(predicted)))
    pairs += [(i, i) for i in tail]
    paired_e, paired_p = {e for e, _ in pairs}, {p for _, p in pairs}
    return (pairs, [e for e in range(len(expected)) if e not in paired_e],
            [p for p in range(len(predicted)) if p not in paired_p])
